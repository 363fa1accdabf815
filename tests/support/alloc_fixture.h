// The fixture of the suites that hold a path to allocating nothing
// (tests/alloc, tests/backward, tests/quant): a count of every heap
// allocation in the process, and every kind of mask to run the path with.
// Such a suite adds tests/support/counting_allocator.cc to its sources
// (hosted targets only: it replaces the C library's allocator):
//  * normal builds replace malloc/calloc/realloc/free (and the aligned
//    variants) with a counting bump allocator over a static buffer, and the
//    global operator new/delete family with counting versions on top of it;
//    no libc internals are needed, so it also links statically;
//  * ASan builds keep ASan's allocator (replacing malloc under ASan is not
//    supported) and count through its malloc hook, which sees malloc, calloc,
//    realloc and operator new alike.
// check_allocation_counter() proves the counter moves for each kind of
// allocation, so a zero later on means "no allocation", not "hook not
// installed".
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/mask.h"
#include "tinyattn/shape.h"

namespace tatest {

// From counting_allocator.cc: the allocations so far in the whole process,
// and whether the counting is in place (false: ASan refused the hook).
unsigned long heap_allocations();
bool allocation_counter_installed();

// Keeps the compiler from proving an allocation unused and removing it.
inline void* volatile g_allocation_sink;

// Checks, in the calling case, that malloc, realloc, calloc and the plain,
// array and over-aligned operator new each move the counter.
inline void check_allocation_counter() {
  TA_CHECK_MSG(allocation_counter_installed(), "ASan refused the malloc hook");
  unsigned long before = heap_allocations();
  g_allocation_sink = std::malloc(24);
  TA_CHECK_MSG(heap_allocations() > before, "malloc not counted");
  before = heap_allocations();
  void* r = std::realloc(g_allocation_sink, 4096);
  g_allocation_sink = r;
  TA_CHECK_MSG(heap_allocations() > before, "realloc not counted");
  std::free(g_allocation_sink);
  before = heap_allocations();
  g_allocation_sink = std::calloc(3, 40);
  TA_CHECK_MSG(heap_allocations() > before, "calloc not counted");
  std::free(g_allocation_sink);
  before = heap_allocations();
  int* one = new int(3);
  g_allocation_sink = one;
  TA_CHECK_MSG(heap_allocations() > before, "operator new not counted");
  delete one;
  before = heap_allocations();
  float* many = new float[100];
  g_allocation_sink = many;
  TA_CHECK_MSG(heap_allocations() > before, "operator new[] not counted");
  delete[] many;
  struct alignas(128) Wide {
    float x[32];
  };
  before = heap_allocations();
  Wide* wide = new Wide;
  g_allocation_sink = wide;
  TA_CHECK_MSG(heap_allocations() > before, "aligned operator new not counted");
  delete wide;
}

// Every kind of mask for d.n x d.m scores (d.m >= 3): none, both causal
// alignments, a window, key padding (no key left, half of them), keep bytes,
// keep bits, an additive bias with -inf entries, and all of them in one. The
// buffers are in the test arena (the caller's Arena::Scope holds them).
class EveryMask {
 public:
  EveryMask(const tinyattn::Dims& d, uint64_t seed)
      : keep_(alloc<uint8_t>(d.n * d.m)),
        bits_(alloc<uint8_t>(d.n * tinyattn::keep_bits_row_bytes(d.m))),
        bias_(alloc<float>(d.n * d.m)) {
    if (!ok()) return;
    Rng rng(seed);
    for (size_t x = 0; x < d.n * d.m; ++x) {
      keep_[x] = rng.uniform(0.0f, 1.0f) < 0.6f;
      bias_[x] = x % 7 == 0 ? -std::numeric_limits<float>::infinity() : rng.uniform(-1.0f, 1.0f);
    }
    for (size_t x = 0; x < d.n * tinyattn::keep_bits_row_bytes(d.m); ++x)
      bits_[x] = static_cast<uint8_t>(rng.next_u64());
    using tinyattn::Align;
    using tinyattn::Mask;
    Mask combined = Mask::causal_bottom_right();
    combined.window = {3, tinyattn::kUnbounded, Align::kBottomRight};
    combined.kv_len = static_cast<uint32_t>(d.m - 2);
    combined.keep_bits = bits_;
    combined.bias = bias_;
    const Mask masks[kCount] = {Mask::none(),
                                Mask::causal_top_left(),
                                Mask::causal_bottom_right(),
                                Mask::sliding_window(2, 2, Align::kTopLeft),
                                Mask::key_padding(0),
                                Mask::key_padding(static_cast<uint32_t>(d.m / 2)),
                                Mask::keep_bytes(keep_),
                                Mask::keep_bitmask(bits_),
                                Mask::additive(bias_),
                                combined};
    for (size_t i = 0; i < kCount; ++i) masks_[i] = masks[i];
  }

  // Whether the arena held the buffers (else there are no masks).
  bool ok() const { return keep_ && bits_ && bias_; }
  size_t size() const { return ok() ? kCount : 0; }
  const tinyattn::Mask& operator[](size_t i) const { return masks_[i]; }

 private:
  static constexpr size_t kCount = 10;
  uint8_t* keep_;
  uint8_t* bits_;
  float* bias_;
  tinyattn::Mask masks_[kCount];
};

}  // namespace tatest
