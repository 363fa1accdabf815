// Allocation freedom: forward() and Attention<> never touch the heap, for every
// port and every mask kind. This binary counts every heap allocation in the
// process (tests/alloc/counting_allocator.cc):
//  * normal builds replace malloc/calloc/realloc/free (and the aligned
//    variants) with a counting bump allocator over a static buffer, and the
//    global operator new/delete family with counting versions on top of it;
//    no libc internals are needed, so it also links statically;
//  * ASan builds keep ASan's allocator (replacing malloc under ASan is not
//    supported) and count through its malloc hook, which sees malloc, calloc,
//    realloc and operator new alike.
// The first case proves the counter moves for each kind of allocation, so a
// zero later on means "no allocation", not "hook not installed".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

#if defined(__SANITIZE_ADDRESS__)
#define TINYATTN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TINYATTN_ASAN 1
#endif
#endif

// From counting_allocator.cc.
unsigned long tinyattn_test_allocations();
#if TINYATTN_ASAN
bool tinyattn_test_hooks_installed();
#endif

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using namespace tatest;

namespace {

unsigned long allocations() { return tinyattn_test_allocations(); }

// Keeps the compiler from proving an allocation unused and removing it.
void* volatile g_sink;

using Gqa = tinyattn::Attention<tinyattn::Shape<9, 13, 7, 5, 4, 2>>;
Gqa g_attention;
Gqa::Q g_q;
Gqa::K g_k;
Gqa::V g_v;
Gqa::Y g_y;
Gqa::Weights g_w;

}  // namespace

TA_CASE("alloc: the counter sees malloc, calloc, realloc and every operator new") {
#if TINYATTN_ASAN
  TA_CHECK_MSG(tinyattn_test_hooks_installed(), "ASan refused the malloc hook");
#endif
  unsigned long before = allocations();
  g_sink = std::malloc(24);
  TA_CHECK_MSG(allocations() > before, "malloc not counted");
  before = allocations();
  void* r = std::realloc(g_sink, 4096);
  g_sink = r;
  TA_CHECK_MSG(allocations() > before, "realloc not counted");
  std::free(g_sink);
  before = allocations();
  g_sink = std::calloc(3, 40);
  TA_CHECK_MSG(allocations() > before, "calloc not counted");
  std::free(g_sink);
  before = allocations();
  int* one = new int(3);
  g_sink = one;
  TA_CHECK_MSG(allocations() > before, "operator new not counted");
  delete one;
  before = allocations();
  float* many = new float[100];
  g_sink = many;
  TA_CHECK_MSG(allocations() > before, "operator new[] not counted");
  delete[] many;
  struct alignas(128) Wide {
    float x[32];
  };
  before = allocations();
  Wide* wide = new Wide;
  g_sink = wide;
  TA_CHECK_MSG(allocations() > before, "aligned operator new not counted");
  delete wide;
}

TA_CASE("alloc: forward() allocates nothing, for every port, mask kind and output combination") {
  const Dims d{9, 13, 7, 5, 4, 2};
  Arena::Scope scope;
  Problem p = make_problem(d, 17);
  uint8_t* keep = alloc<uint8_t>(d.n * d.m);
  uint8_t* bits = alloc<uint8_t>(d.n * tinyattn::keep_bits_row_bytes(d.m));
  float* bias = alloc<float>(d.n * d.m);
  TA_CHECK((p.ok && keep && bits && bias));
  if (!(p.ok && keep && bits && bias)) return;
  Rng rng(3);
  for (size_t x = 0; x < d.n * d.m; ++x) {
    keep[x] = rng.uniform(0.0f, 1.0f) < 0.6f;
    bias[x] = x % 7 == 0 ? -std::numeric_limits<float>::infinity() : rng.uniform(-1.0f, 1.0f);
  }
  for (size_t x = 0; x < d.n * tinyattn::keep_bits_row_bytes(d.m); ++x) bits[x] = static_cast<uint8_t>(rng.next_u64());
  Mask combined = Mask::causal_bottom_right();
  combined.window = {3, tinyattn::kUnbounded, tinyattn::Align::kBottomRight};
  combined.kv_len = 11;
  combined.keep_bits = bits;
  combined.bias = bias;
  const Mask masks[] = {Mask::none(),
                        Mask::causal_top_left(),
                        Mask::causal_bottom_right(),
                        Mask::sliding_window(2, 2, tinyattn::Align::kTopLeft),
                        Mask::key_padding(0),
                        Mask::key_padding(6),
                        Mask::keep_bytes(keep),
                        Mask::keep_bitmask(bits),
                        Mask::additive(bias),
                        combined};
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi)
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; ++mi)
      for (int outputs = 0; outputs < 3; ++outputs) {  // Y only; Y + A; Y + A + lse
        tinyattn::Options o;
        o.port = ports[pi];
        const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, outputs >= 1 ? p.weights : nullptr,
                                     outputs >= 2 ? p.lse : nullptr};
        const unsigned long before = allocations();
        const Status s = tinyattn::forward(d, io, {p.workspace, tinyattn::forward_workspace_bytes(d)}, masks[mi], o);
        const unsigned long used = allocations() - before;
        TA_CHECK_MSG(s == Status::kOk, "%s mask %zu: %s", tinyattn::port_name(ports[pi]), mi, tinyattn::to_string(s));
        TA_CHECK_MSG(used == 0, "%s mask %zu outputs %d: %lu heap allocations", tinyattn::port_name(ports[pi]), mi,
                     outputs, used);
      }
}

TA_CASE("alloc: the tiled path (M > kKeyTile, no weights) allocates nothing") {
  const Dims d{3, tinyattn::kKeyTile + 45, 8, 4, 2, 1};
  Arena::Scope scope;
  Problem p = make_problem(d, 23);
  TA_CHECK(p.ok);
  if (!p.ok) return;
  TA_CHECK(tinyattn::forward_uses_tiles(d, false));
  const Mask masks[] = {Mask::none(), Mask::causal_bottom_right(), Mask::key_padding(270),
                        Mask::sliding_window(100, 0, tinyattn::Align::kBottomRight)};
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi)
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; ++mi) {
      tinyattn::Options o;
      o.port = ports[pi];
      const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, nullptr, p.lse};
      const unsigned long before = allocations();
      const Status s =
          tinyattn::forward(d, io, {p.workspace, tinyattn::forward_workspace_bytes(d, false)}, masks[mi], o);
      const unsigned long used = allocations() - before;
      TA_CHECK_MSG(s == Status::kOk, "%s mask %zu: %s", tinyattn::port_name(ports[pi]), mi, tinyattn::to_string(s));
      TA_CHECK_MSG(used == 0, "%s mask %zu: %lu heap allocations", tinyattn::port_name(ports[pi]), mi, used);
    }
}

TA_CASE("alloc: Attention<> and the error paths allocate nothing") {
  Rng rng(5);
  rng.fill_normal(g_q.data(), g_q.size());
  rng.fill_normal(g_k.data(), g_k.size());
  rng.fill_normal(g_v.data(), g_v.size());
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi) {
    tinyattn::Options o;
    o.port = ports[pi];
    unsigned long before = allocations();
    const Status s1 = g_attention(g_q, g_k, g_v, g_y, Mask::causal_top_left(), &g_w, o);
    const Status s2 = g_attention(g_q, g_k, g_v, g_y, Mask::sliding_window(1, 1, tinyattn::Align::kTopLeft), nullptr, o);
    unsigned long used = allocations() - before;
    TA_CHECK((s1 == Status::kOk && s2 == Status::kOk));
    TA_CHECK_MSG(used == 0, "%s: Attention<> made %lu heap allocations", tinyattn::port_name(ports[pi]), used);
    before = allocations();
    const Status bad = g_attention(g_q, g_k, g_v, g_y, Mask::key_padding(99), nullptr, o);
    used = allocations() - before;
    TA_CHECK(bad == Status::kBadMask);
    TA_CHECK_MSG(used == 0, "%s: an error return made %lu heap allocations", tinyattn::port_name(ports[pi]), used);
  }
}

TA_CASE("alloc: the reference allocates nothing either") {
  const Dims d{5, 7, 3, 4, 2, 1};
  Arena::Scope scope;
  Problem p = make_problem(d, 9);
  TA_CHECK(p.ok);
  if (!p.ok) return;
  const unsigned long before = allocations();
  tinyattn::ref::forward(d, p.q, p.k, p.v, Mask::causal_bottom_right(), 0.5, p.y_ref, p.weights_ref, p.lse_ref);
  const unsigned long used = allocations() - before;
  TA_CHECK_MSG(used == 0, "ref::forward made %lu heap allocations", used);
}
