// Fixed-point pieces of the int8 kernels (kernels_i8.h) shared by the ports
// that compute them in 32-bit words (mve, dsp): the constants of exp2_q30
// and the per-row reciprocal of the probabilities (also the scalar port's),
//   p = floor((e 2^15 + floor(s/2)) / s),  0 <= e <= s.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/quant.h"

namespace tinyattn {

// 2^(i/32) in Q1.30 (forward_i8.cc's table).
alignas(16) inline constexpr int32_t kExp2TableQ30[32] = {
    1073741824, 1097253708, 1121280436, 1145833280, 1170923762, 1196563654, 1222764986, 1249540052,
    1276901417, 1304861917, 1333434672, 1362633090, 1392470869, 1422962010, 1454120821, 1485961921,
    1518500250, 1551751076, 1585730000, 1620452965, 1655936265, 1692196547, 1729250827, 1767116489,
    1805811301, 1845353420, 1885761398, 1927054196, 1969251188, 2012372174, 2056437387, 2101467502};
inline constexpr int32_t kLn2Q30 = 744261118;    // ln(2) * 2^30
inline constexpr int32_t kThirdQ30 = 357913941;  // 2^30 / 3
inline constexpr int32_t kOneQ30 = 1 << 30;

struct ReciprocalQ15 {
  uint64_t s, half;  // the sum and floor(s / 2)
  bool exact;        // false: s is outside [2^23, 2^46), divide instead
  uint32_t r;        // ~ 2^(b+31) / s, 2^(b-1) <= s < 2^b
  int sh;            // b - 16, in [8, 30]
  uint32_t round;    // 2^(sh-1) - 2^(sh-7)
};

// floor((u1 2^32 + u0) / v) for v >= 2^31 and u1 < v (the quotient fits 32
// bits) in two 16-bit digit steps of 32-bit division (Hacker's Delight,
// divlu): on 32-bit cores the 64-bit library division costs about 50
// instructions per call and 750 bytes of libgcc in every int8 image.
inline uint32_t div_64_32(uint32_t u1, uint32_t u0, uint32_t v) {
  const uint32_t vn1 = v >> 16, vn0 = v & 0xffffu;
  const uint32_t un1 = u0 >> 16, un0 = u0 & 0xffffu;
  uint32_t q1 = u1 / vn1, rhat = u1 - q1 * vn1;
  while (q1 > 0xffffu || q1 * vn0 > ((rhat << 16) | un1)) {
    --q1;
    rhat += vn1;
    if (rhat > 0xffffu) break;
  }
  const uint32_t un21 = (u1 << 16) + un1 - q1 * v;  // modulo 2^32: the true value is below v
  uint32_t q0 = un21 / vn1;
  rhat = un21 - q0 * vn1;
  while (q0 > 0xffffu || q0 * vn0 > ((rhat << 16) | un0)) {
    --q0;
    rhat += vn1;
    if (rhat > 0xffffu) break;
  }
  return (q1 << 16) | q0;
}

// r ~ 2^(b+31) / s in [2^31, 2^32) from the top 32 bits of s, so
// e r / 2^(b+16) is e 2^15 / s to within 2^-8 (e <= s). With + 1/2 - 2^-7
// the estimate ((e r) >> 32 + round) >> sh falls in (x - 1, x),
// x = (e 2^15 + floor(s/2)) / s: its floor is p or p - 1, and one exact
// 64-bit comparison (reciprocal_fix) tells which. Outside [2^23, 2^46)
// (sums below the largest e = 2^30 of exp_row, or rows of over 2^16 keys)
// the estimate is not that close.
//   r = floor((2^(bt+31) - 1) / st) = floor((2^63 - 2^(32-bt)) / (st 2^(32-bt))),
// the second form by div_64_32 (st 2^(32-bt) >= 2^31).
inline ReciprocalQ15 reciprocal_q15(int64_t sum) {
  ReciprocalQ15 q{};
  q.s = static_cast<uint64_t>(sum);
  q.half = q.s >> 1;
  const int b = 64 - __builtin_clzll(q.s);
  q.exact = b >= 24 && b <= 46;
  if (!q.exact) return q;
  const int t = b > 32 ? b - 32 : 0;
  const int bt = b - t;  // bit length of s >> t: 24..32
  const uint32_t st = static_cast<uint32_t>(q.s >> t);
  const int k = 32 - bt;  // 0..8
  q.r = div_64_32(0x7fffffffu, 0u - (uint32_t{1} << k), st << k);
  q.sh = b - 16;
  q.round = (uint32_t{1} << (q.sh - 1)) - (uint32_t{1} << (q.sh - 7));
  return q;
}

// p from next = floor(estimate) + 1 (p or p + 1): p = next exactly when
// next * s <= e 2^15 + floor(s/2) (both below 2^63). e 2^15 is formed from
// 32-bit halves: GCC 12 spills a 64-bit shift here on the M55.
inline uint32_t reciprocal_fix(const ReciprocalQ15& q, uint32_t e, uint32_t next) {
  const uint64_t num = ((static_cast<uint64_t>(e >> 17) << 32) | (e << 15)) + q.half;
  return next - (num < next * q.s ? 1u : 0u);
}

// The division itself, for rows where !q.exact (p may be e). Since e <= s
// the quotient is at most 2^15, so 16 + 1 restoring steps give it exactly,
// without the 64-bit library division (rows of over 2^16 keys only: speed
// is no concern here). (rem >> i) >= s exactly when s 2^i <= rem, and then
// s 2^i does not overflow.
inline void reciprocal_divide(const ReciprocalQ15& q, const int32_t* e, size_t n, int32_t* p) {
  for (size_t j = 0; j < n; ++j) {
    uint64_t rem = static_cast<uint64_t>(static_cast<uint32_t>(e[j])) * kProbOne + q.half;
    uint32_t quotient = 0;
    for (int i = 16; i >= 0; --i) {
      if ((rem >> i) >= q.s) {
        rem -= q.s << i;
        quotient |= uint32_t{1} << i;
      }
    }
    p[j] = static_cast<int32_t>(quotient);
  }
}

}  // namespace tinyattn
