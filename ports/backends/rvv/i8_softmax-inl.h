// The RISC-V Vector int8 softmax: exp_row (logits and exp2_q30) and
// probabilities, the scalar port's integers (scalar_i8.cc, int8_fixed.h) in
// 32-bit lanes: no 64-bit elements, so the Zve32 profiles run it too. A
// 64-bit product is its two words, vmulh(u) and vmul; a 64-bit sum is its
// words with the carry from vmadc. No fixed-point instruction is used (their
// rounding would depend on vxrm, and their intrinsics changed signature
// between intrinsic versions): every rounding shift is an add and a shift.
// Included by rvv_i8.cc inside its TINYATTN_RVV_BUILT guard.
#ifndef TINYATTN_RVV_I8_SOFTMAX_INL_H_
#define TINYATTN_RVV_I8_SOFTMAX_INL_H_

#include <riscv_vector.h>

#include <climits>
#include <cstddef>
#include <cstdint>

#include "backends/int8_fixed.h"
#include "backends/scalar/scalar.h"

namespace tinyattn {
namespace rvv {
namespace {

// ---------------------------------------------------------------- exp2_q30

// u below this has n = 32 (u = -n + f / 2^26), where exp2_q30 is 0.
constexpr int32_t kExpFloor = -31 * (int32_t{1} << kLogitFracBits);

// exp2_q30(u) for u in [kExpFloor, 0] (other lanes: any value, no fault).
// With u = -n + f / 2^26, i = f >> 21, r = f mod 2^21, each of the scalar
// steps' rounding_rshift(a b, k) of non-negative a b is
// (floor(a b / 2^(k-1)) + 1) >> 1, and floor(a b / 2^(k-1)) is vmulhu with
// one factor pre-shifted by 33 - k bits (all below 2^32):
//   z  = rounding_rshift(r ln2, 26) = (vmulhu(r 2^11, ln2) + 16) >> 5, kept as 8 z;
//   t1 = 2^30 + rounding_rshift(z third, 30), vmulhu(8 z, third);
//   t2 = 2^30 + rounding_rshift(z t1, 31),    vmulhu(4 z, t1);
//   d3 = rounding_rshift(z t2, 30),           vmulhu(8 z, t2), kept as 8 d3;
//   val = rounding_rshift(tab t3, 30) = tab + rounding_rshift(tab d3, 30), in [2^30, 2^31);
// and rounding_rshift(val, n) = ((2 val >> n) + 1) >> 1 (2 val < 2^32).
inline vuint32m4_t exp2_q30_lanes(vint32m4_t u, size_t vl) {
  const vuint32m4_t uu = __riscv_vreinterpret_v_i32m4_u32m4(u);
  // n = ceil(-u / 2^26) in [0, 31]
  const vuint32m4_t n = __riscv_vsrl_vx_u32m4(__riscv_vrsub_vx_u32m4(uu, (1u << kLogitFracBits) - 1, vl), 26, vl);
  // The table entry's byte offset, 4 i: bits 21..25 of u.
  const vuint32m4_t off = __riscv_vand_vx_u32m4(__riscv_vsrl_vx_u32m4(uu, 19, vl), 31u << 2, vl);
  const vuint32m4_t tab = __riscv_vluxei32_v_u32m4(reinterpret_cast<const uint32_t*>(kExp2TableQ30), off, vl);
  const vuint32m4_t y = __riscv_vmulhu_vx_u32m4(__riscv_vsll_vx_u32m4(uu, 11, vl), kLn2Q30, vl);
  const vuint32m4_t z8 = __riscv_vand_vx_u32m4(__riscv_vsrl_vx_u32m4(__riscv_vadd_vx_u32m4(y, 16, vl), 2, vl), ~7u, vl);
  constexpr uint32_t kOneHalfUp = (uint32_t{kOneQ30} << 1) + 1;  // 2^31 + 1: (x + 1) / 2 + 2^30
  const vuint32m4_t t1 =
      __riscv_vsrl_vx_u32m4(__riscv_vadd_vx_u32m4(__riscv_vmulhu_vx_u32m4(z8, kThirdQ30, vl), kOneHalfUp, vl), 1, vl);
  const vuint32m4_t t2 = __riscv_vsrl_vx_u32m4(
      __riscv_vadd_vx_u32m4(__riscv_vmulhu_vv_u32m4(__riscv_vsrl_vx_u32m4(z8, 1, vl), t1, vl), kOneHalfUp, vl), 1, vl);
  // 8 d3 = ((g + 1) >> 1) << 3 = ((g + 1) << 2) & ~7
  const vuint32m4_t d8 = __riscv_vand_vx_u32m4(
      __riscv_vsll_vx_u32m4(__riscv_vadd_vx_u32m4(__riscv_vmulhu_vv_u32m4(z8, t2, vl), 1, vl), 2, vl), ~7u, vl);
  // 2 val = 2 tab + ((q + 1) & ~1), q = floor(tab d3 / 2^29)
  const vuint32m4_t val2 =
      __riscv_vadd_vv_u32m4(__riscv_vsll_vx_u32m4(tab, 1, vl),
                            __riscv_vand_vx_u32m4(__riscv_vadd_vx_u32m4(__riscv_vmulhu_vv_u32m4(tab, d8, vl), 1, vl),
                                                  ~1u, vl),
                            vl);
  return __riscv_vsrl_vx_u32m4(__riscv_vadd_vx_u32m4(__riscv_vsrl_vv_u32m4(val2, n, vl), 1, vl), 1, vl);
}

// e[j] = exp2_q30(u_j) for the u_j that logits(s vector, vl) gives (int32,
// INT32_MIN for a masked key, anything below kExpFloor for an exp of 0);
// returns sum_j e[j]. The sum's words per lane (a carry into the high word:
// n 2^30 needs up to 53 bits), added across lanes at the end with the low
// words in 16-bit halves, so that no 32-bit lane sum overflows. LMUL 4: the
// logits' and the exp's temporaries and the two sums fit the 32 registers.
template <class Logits>
int64_t exp_pass(const int32_t* s, size_t n, int32_t* e, Logits logits) {
  const size_t vlmax = __riscv_vsetvlmax_e32m4();
  vuint32m4_t lo = __riscv_vmv_v_x_u32m4(0, vlmax);
  vuint32m4_t hi = lo;
  for (size_t j = 0; j < n;) {
    const size_t vl = __riscv_vsetvl_e32m4(n - j);
    const vint32m4_t u = logits(__riscv_vle32_v_i32m4(s + j, vl), vl);
    const vbool8_t flush = __riscv_vmslt_vx_i32m4_b8(u, kExpFloor, vl);
    const vuint32m4_t ev = __riscv_vmerge_vxm_u32m4(exp2_q30_lanes(u, vl), 0, flush, vl);
    __riscv_vse32_v_u32m4(reinterpret_cast<uint32_t*>(e + j), ev, vl);
    hi = __riscv_vadc_vxm_u32m4_tu(hi, hi, 0, __riscv_vmadc_vv_u32m4_b8(lo, ev, vl), vl);
    lo = __riscv_vadd_vv_u32m4_tu(lo, lo, ev, vl);
    j += vl;
  }
  const vuint32m1_t zero = __riscv_vmv_s_x_u32m1(0, 1);
  auto total = [&](vuint32m4_t v) {
    return uint64_t{__riscv_vmv_x_s_u32m1_u32(__riscv_vredsum_vs_u32m4_u32m1(v, zero, vlmax))};
  };
  const uint64_t sum = (total(hi) << 32) + (total(__riscv_vsrl_vx_u32m4(lo, 16, vlmax)) << 16) +
                       total(__riscv_vand_vx_u32m4(lo, 0xffffu, vlmax));
  return static_cast<int64_t>(sum);
}

// ---------------------------------------------------------------- exp_row

// The logits in lanes for a logit shift sh in [8, 31], any max_logit M: with
// x = s m = H 2^32 + L (H = vmulh, L = vmul unsigned), c = 2^(sh-1) - [s < 0]
// (apply() rounds ties away from zero) and k = 32 - sh,
//   apply(s) = floor((x + c) / 2^sh) = (H + carry) 2^k + (S >> sh),
// S = L + c mod 2^32 and carry its carry out. With M = MH 2^k + ML
// (0 <= ML < 2^k),
//   u = apply(s) - M = Q 2^k + (S >> sh) - ML,  Q = H + carry - MH,
// exact in int32 when Q >= Qmin = 1 - 2^(sh-1) (then u > -2^31). H is
// raised to at least MH + Qmin first: a lane so raised had a true
// Q <= Qmin, so its u and the computed one (Q in {Qmin, Qmin + 1}) are both
// below -2^31 + 3 2^k <= kExpFloor (k <= 24), an exp of 0 either way. A kept
// key has u <= 0, so Q <= 0 and MH >= H >= -2^30 (MH is clamped there: only
// rows of masked keys alone go below); MH at or above 2^30 - Qmin leaves
// every Q at most Qmin, every exp 0, and its clamp to 2^30 - Qmin - 1 raises
// every lane, so that it stays so. Q of a masked key may wrap: its u is
// replaced.
struct LogitLanes {
  int32_t m;
  uint32_t half;     // 2^(sh-1)
  int32_t minus_mh;  // -MH
  int32_t h_low;     // MH + Qmin
  uint32_t ml;
  size_t sh, k;
};

inline bool logit_lanes(FixedMultiplier logit, int64_t max_logit, LogitLanes* out) {
  const int32_t sh = logit.shift;
  if (sh < 8 || sh > 31) return false;
  const int k = 32 - sh;
  const int64_t q_min = 1 - (int64_t{1} << (sh - 1));
  int64_t mh = max_logit >> k;  // floor (arithmetic shift)
  const uint32_t ml = static_cast<uint32_t>(static_cast<uint64_t>(max_logit) & ((uint64_t{1} << k) - 1));
  const int64_t mh_lo = -(int64_t{1} << 30), mh_hi = (int64_t{1} << 30) - q_min - 1;
  mh = mh < mh_lo ? mh_lo : (mh > mh_hi ? mh_hi : mh);
  out->m = logit.multiplier;
  out->half = uint32_t{1} << (sh - 1);
  out->minus_mh = static_cast<int32_t>(-mh);
  out->h_low = static_cast<int32_t>(mh + q_min);
  out->ml = ml;
  out->sh = static_cast<size_t>(sh);
  out->k = static_cast<size_t>(k);
  return true;
}

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  LogitLanes ll;
  if (logit_lanes(logit, max_logit, &ll)) {
    return exp_pass(s, n, e, [&ll](vint32m4_t sv, size_t vl) {
      const vint32m4_t h = __riscv_vmax_vx_i32m4(__riscv_vmulh_vx_i32m4(sv, ll.m, vl), ll.h_low, vl);
      const vuint32m4_t l = __riscv_vreinterpret_v_i32m4_u32m4(__riscv_vmul_vx_i32m4(sv, ll.m, vl));
      const vuint32m4_t c = __riscv_vreinterpret_v_i32m4_u32m4(
          __riscv_vadd_vx_i32m4(__riscv_vsra_vx_i32m4(sv, 31, vl), static_cast<int32_t>(ll.half), vl));
      const vbool8_t carry = __riscv_vmadc_vv_u32m4_b8(l, c, vl);
      const vuint32m4_t t = __riscv_vsrl_vx_u32m4(__riscv_vadd_vv_u32m4(l, c, vl), ll.sh, vl);
      const vint32m4_t q = __riscv_vadc_vxm_i32m4(h, ll.minus_mh, carry, vl);
      const vuint32m4_t u = __riscv_vsub_vx_u32m4(
          __riscv_vadd_vv_u32m4(__riscv_vreinterpret_v_i32m4_u32m4(__riscv_vsll_vx_i32m4(q, ll.k, vl)), t, vl), ll.ml,
          vl);
      return __riscv_vmerge_vxm_i32m4(__riscv_vreinterpret_v_u32m4_i32m4(u), INT32_MIN,
                                      __riscv_vmseq_vx_i32m4_b8(sv, INT32_MIN, vl), vl);
    });
  }
  // Other shifts (not from plan_int8 at ordinary scales): the logits in
  // scalar code, saturated below at INT32_MIN (an exp of 0 from there on),
  // then the exp in lanes (e may be s: same index in, same out).
  for (size_t j = 0; j < n; ++j) {
    const int32_t sj = s[j];
    const int64_t u = sj == INT32_MIN ? INT32_MIN : apply(logit, sj) - max_logit;
    e[j] = u < INT32_MIN ? INT32_MIN : static_cast<int32_t>(u);
  }
  return exp_pass(e, n, e, [](vint32m4_t u, size_t) { return u; });
}

// ---------------------------------------------------------------- probabilities

// The scalar port's quotients (int8_fixed.h): est = the reciprocal's
// estimate, p or p - 1, and p = est + 1 exactly when
//   Q = est S + C - e 2^15 < 0,  C = S - floor(S/2) - 1
// (Q = S - 1 - rem when est = p, -rem - 1 when est = p - 1, rem the
// remainder of the division). |Q| < S < 2^46, so Q's sign is that of its
// high word, formed from 32-bit lanes: est S = est S1 2^32 + vmulhu(est, S0)
// 2^32 + vmul(est, S0) (S = S1 2^32 + S0), with the carry of adding C's low
// word and the borrow of subtracting that of e 2^15.
void probabilities(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  const ReciprocalQ15 q = reciprocal_q15(sum);
  if (!q.exact) return reciprocal_divide(q, e, n, p);
  // One division per row (reciprocal_q15), none per key.
  const uint32_t s0 = static_cast<uint32_t>(q.s), s1 = static_cast<uint32_t>(q.s >> 32);
  const uint64_t c = q.s - q.half - 1;
  const uint32_t c0 = static_cast<uint32_t>(c), c1 = static_cast<uint32_t>(c >> 32);
  const size_t sh = static_cast<size_t>(q.sh);
  for (size_t j = 0; j < n;) {
    const size_t vl = __riscv_vsetvl_e32m4(n - j);
    const vuint32m4_t ev = __riscv_vle32_v_u32m4(reinterpret_cast<const uint32_t*>(e + j), vl);
    const vuint32m4_t est =
        __riscv_vsrl_vx_u32m4(__riscv_vadd_vx_u32m4(__riscv_vmulhu_vx_u32m4(ev, q.r, vl), q.round, vl), sh, vl);
    const vuint32m4_t lo = __riscv_vmul_vx_u32m4(est, s0, vl);
    vuint32m4_t hi = __riscv_vmacc_vx_u32m4(__riscv_vmulhu_vx_u32m4(est, s0, vl), s1, est, vl);
    const vbool8_t carry = __riscv_vmadc_vx_u32m4_b8(lo, c0, vl);
    const vbool8_t borrow =
        __riscv_vmsltu_vv_u32m4_b8(__riscv_vadd_vx_u32m4(lo, c0, vl), __riscv_vsll_vx_u32m4(ev, 15, vl), vl);
    hi = __riscv_vadc_vxm_u32m4(hi, c1, carry, vl);
    hi = __riscv_vsbc_vvm_u32m4(hi, __riscv_vsrl_vx_u32m4(ev, 17, vl), borrow, vl);
    const vuint32m4_t pv = __riscv_vadd_vv_u32m4(est, __riscv_vsrl_vx_u32m4(hi, 31, vl), vl);
    __riscv_vse32_v_u32m4(reinterpret_cast<uint32_t*>(p + j), pv, vl);
    j += vl;
  }
}

}  // namespace
}  // namespace rvv
}  // namespace tinyattn

#endif  // TINYATTN_RVV_I8_SOFTMAX_INL_H_
