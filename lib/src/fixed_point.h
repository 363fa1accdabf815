// Inline forms of quant.h's rounding_rshift() and apply(), for the drivers'
// per-row calls (fixed_point.cc defines the public functions with them).
#pragma once

#include <cstdint>

#include "tinyattn/quant.h"

namespace tinyattn {
namespace detail {

inline int64_t rounding_rshift_inline(int64_t x, int s) {
  if (s <= 0) return x;
  // Work on the magnitude in unsigned arithmetic: x + 2^(s-1) may not fit int64.
  const uint64_t half = uint64_t{1} << (s - 1);
  if (x >= 0) return static_cast<int64_t>((static_cast<uint64_t>(x) + half) >> s);
  const uint64_t mag = static_cast<uint64_t>(-(x + 1)) + 1u;
  return -static_cast<int64_t>((mag + half) >> s);
}

inline int64_t apply_inline(FixedMultiplier m, int64_t x) { return rounding_rshift_inline(x * m.multiplier, m.shift); }

}  // namespace detail
}  // namespace tinyattn
