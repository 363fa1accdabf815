// What every fuzz target shares: the input decoder and the invariant check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace tinyattn_fuzz {

// Reads the fuzz input front to back; past the end it yields zeros, so every
// input (even an empty one) decodes to some call.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  uint8_t u8() { return n_ ? (--n_, *p_++) : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | u8();
    return v;
  }
  size_t range(size_t lo, size_t hi) { return lo + u32() % (hi - lo + 1); }  // [lo, hi]
  bool chance(unsigned in256) { return u8() < in256; }
  float any_float() {  // any bit pattern: NaNs, infinities, subnormals included
    const uint32_t bits = u32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  size_t left() const { return n_; }

 private:
  const uint8_t* p_;
  size_t n_;
};

}  // namespace tinyattn_fuzz

// A violated invariant names itself, then traps, which libFuzzer reports as
// a crash (and the replay program as a failed ctest).
#define FUZZ_REQUIRE(cond)                                                                  \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "fuzz_require: %s failed at %s:%d\n", #cond, __FILE__, __LINE__); \
      __builtin_trap();                                                                     \
    }                                                                                       \
  } while (0)
