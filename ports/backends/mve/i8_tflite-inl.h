// The Helium TFLite-mode kernels (KernelsI8Tflite): the integers of
// lib/src/tflite_ops.h four int32 lanes at a time. Included by mve_i8.cc
// (one translation unit), after the helpers it defines (tail32).
//
// gemmlowp's SRDHM is VQRDMULH exactly (the rounding, ties toward +infinity,
// and INT32_MIN^2 saturating to INT32_MAX). RoundingDivideByPOT(x, e) rounds
// ties away from zero, VRSHL(x, -e) ties upward: the same after x - [x < 0]
// (e >= 1; no SRDHM by a positive multiplier is INT32_MIN, so it does not
// wrap).
#ifndef TINYATTN_MVE_I8_TFLITE_INL_H_
#define TINYATTN_MVE_I8_TFLITE_INL_H_

#include <arm_mve.h>

#include <climits>

namespace tinyattn {
namespace mve {
namespace {

// ---------------------------------------------------------------- requantize

// Four values through `lanes`, stored as Out (int8: VSTRB narrows).
template <class Out, class Lanes>
inline void requantize_loop(const int32_t* in, size_t n, Out* out, Lanes lanes) {
  for (; n >= 4; n -= 4, in += 4, out += 4) {
    if constexpr (sizeof(Out) == 1)
      vstrbq_s32(out, lanes(vld1q_s32(in)));
    else
      vst1q_s32(out, lanes(vld1q_s32(in)));
  }
  if (n) {
    const mve_pred16_t p = tail32(n, 0);
    if constexpr (sizeof(Out) == 1)
      vstrbq_p_s32(out, lanes(vldrwq_z_s32(in, p)), p);
    else
      vstrwq_p_s32(out, lanes(vldrwq_z_s32(in, p)), p);
  }
}

template <class Out>
void tflite_requantize_lanes(const int32_t* in, size_t n, TfliteMultiplier m, int32_t zero, Out* out) {
  const int32_t mult = m.multiplier;
  const int32x4_t z = vdupq_n_s32(zero), lo = vdupq_n_s32(-128), hi = vdupq_n_s32(127);
  if (m.shift < 0) {  // the scale ratios plan_int8 gives: RDBPOT by -shift >= 1
    const int32x4_t right = vdupq_n_s32(m.shift);
    requantize_loop(in, n, out, [&](int32x4_t a) {
      const int32x4_t x = vqrdmulhq_n_s32(a, mult);
      // saturating: the clamp of the exact sum
      const int32x4_t y = vqaddq_s32(vrshlq_s32(vaddq_s32(x, vshrq_n_s32(x, 31)), right), z);
      return vminq_s32(vmaxq_s32(y, lo), hi);
    });
    return;
  }
  const int32x4_t left = vdupq_n_s32(m.shift);  // x 2^shift wraps, as TFLite's int32 product
  requantize_loop(in, n, out, [&](int32x4_t a) {
    const int32x4_t y = vqaddq_s32(vqrdmulhq_n_s32(vshlq_s32(a, left), mult), z);
    return vminq_s32(vmaxq_s32(y, lo), hi);
  });
}

void tflite_requantize(const int32_t* in, size_t n, TfliteMultiplier m, int32_t zero, int32_t* out32, int8_t* out8) {
  if (out32)
    tflite_requantize_lanes(in, n, m, zero, out32);
  else
    tflite_requantize_lanes(in, n, m, zero, out8);
}

// ---------------------------------------------------------------- exps

// tflite_ops.h's exp_quarter_interval for a in [-2^29, 0): x4 >= 0, so
// RDBPOT(x4, 2) is VRSHR; RDBPOT(v, 1) is (v + 1 - [v < 0]) >> 1.
inline int32x4_t exp_quarter_lanes(int32x4_t a) {
  constexpr int32_t kExpMinusOneEighth = kTfliteExpMinusOneEighth;
  constexpr int32_t kOneThird = kTfliteOneThird;
  const int32x4_t x = vaddq_n_s32(a, 1 << 28);
  const int32x4_t x2 = vqrdmulhq_s32(x, x);
  const int32x4_t x3 = vqrdmulhq_s32(x2, x);
  const int32x4_t x4 = vqrdmulhq_s32(x2, x2);
  const int32x4_t v = vaddq_s32(vqrdmulhq_n_s32(vaddq_s32(vrshrq_n_s32(x4, 2), x3), kOneThird), x2);
  const int32x4_t poly = vshrq_n_s32(vaddq_s32(vaddq_n_s32(v, 1), vshrq_n_s32(v, 31)), 1);
  return vaddq_n_s32(vqrdmulhq_n_s32(vaddq_s32(x, poly), kExpMinusOneEighth), kExpMinusOneEighth);
}

// The barrel: the lanes whose whole quarters of -a have bit k multiplied by
// exp(-2^(k-2)), k = 0..6, in order. For a <= 0 the quarters are
// (a | 0xFF000000) - a, the top bits of a flipped, so bit k is set where bit
// 24 + k of a is clear: a shifted left by 7 - k is >= 0. That predicates a
// VQRDMULH (VPT); in asm, as GCC 12 moves predicates of intrinsics in loops
// through VMRS/VMSR.
inline int32x4_t barrel(int32x4_t r, int32x4_t a, const int32_t (&c)[7]) {
  int32x4_t t;
  __asm__(
      "vshl.i32 %q[t], %q[a], #7\n\t"
      "vpt.s32 ge, %q[t], zr\n\t"
      "vqrdmulht.s32 %q[r], %q[r], %[c0]\n\t"
      "vshl.i32 %q[t], %q[a], #6\n\t"
      "vpt.s32 ge, %q[t], zr\n\t"
      "vqrdmulht.s32 %q[r], %q[r], %[c1]\n\t"
      "vshl.i32 %q[t], %q[a], #5\n\t"
      "vpt.s32 ge, %q[t], zr\n\t"
      "vqrdmulht.s32 %q[r], %q[r], %[c2]\n\t"
      "vshl.i32 %q[t], %q[a], #4\n\t"
      "vpt.s32 ge, %q[t], zr\n\t"
      "vqrdmulht.s32 %q[r], %q[r], %[c3]\n\t"
      "vshl.i32 %q[t], %q[a], #3\n\t"
      "vpt.s32 ge, %q[t], zr\n\t"
      "vqrdmulht.s32 %q[r], %q[r], %[c4]\n\t"
      "vshl.i32 %q[t], %q[a], #2\n\t"
      "vpt.s32 ge, %q[t], zr\n\t"
      "vqrdmulht.s32 %q[r], %q[r], %[c5]\n\t"
      "vshl.i32 %q[t], %q[a], #1\n\t"
      "vpt.s32 ge, %q[t], zr\n\t"
      "vqrdmulht.s32 %q[r], %q[r], %[c6]"
      : [r] "+w"(r), [t] "=&w"(t)
      : [a] "w"(a), [c0] "r"(c[0]), [c1] "r"(c[1]), [c2] "r"(c[2]), [c3] "r"(c[3]),
        [c4] "r"(c[4]), [c5] "r"(c[5]), [c6] "r"(c[6])
      : "p0");  // GCC 12's name of VPR
  return r;
}

// Every entry of the table, four at a time (once per head: fewer
// instructions than computing the entries a head needs one by one).
// tflite_ops.h's softmax_exp of diff = -i: the lanes of diff 0 and of diff
// below diff_min are set after the loop (the scaled a is 0 exactly at
// diff = 0: any other diff 2^shift is at most -2, times a multiplier of at
// least 2^30).
__attribute__((noinline)) void fill_exp_table(const TfliteParams& p, int32_t* exps) {
  const int32_t beta = p.beta.multiplier;
  // diff 2^shift for diff = 0, -1, -2, -3, then 4 less per step (modulo 2^32,
  // as the shift: lanes below diff_min may wrap, and are replaced below)
  const int32_t step = static_cast<int32_t>(0u - (4u << p.beta.shift));
  int32x4_t scaled = vshlq_s32(vsubq_s32(vdupq_n_s32(0), vreinterpretq_s32_u32(vidupq_n_u32(0, 1))),
                               vdupq_n_s32(p.beta.shift));
  for (size_t i = 0; i < kTfliteExpTableSize; i += 4) {
    const int32x4_t a = vqrdmulhq_n_s32(scaled, beta);  // Q5.26
    // ((a mod 1/4) - 1/4) * 32: the low 24 bits of a minus 2^24, times 32,
    // is a shifted left by 5 with the top three bits set
    const int32x4_t r = exp_quarter_lanes(vorrq_n_s32(vshlq_n_s32(a, 5), static_cast<int32_t>(0xE0000000u)));
    vst1q_s32(exps + i, barrel(r, a, kTfliteExpBarrel));
    scaled = vaddq_n_s32(scaled, step);
  }
  exps[0] = INT32_MAX;
  for (size_t i = static_cast<size_t>(-static_cast<int64_t>(p.diff_min)) + 1; i < kTfliteExpTableSize; ++i) exps[i] = 0;
}

// The table is either all -1 (a head's first row) or as an earlier call on it
// left it, i.e. complete: entry 0 tells which.
int32_t tflite_exps(int32_t* s, size_t n, int32_t max, const TfliteParams& p, int32_t* exps) {
  if (exps[0] < 0) fill_exp_table(p, exps);
  const int32x4_t vmax = vdupq_n_s32(max);
  int32_t sum = 0;  // Q12.19: RDBPOT(e, 12) of e >= 0 is VRSHR
  for (; n >= 4; n -= 4, s += 4) {
    const uint32x4_t i = vreinterpretq_u32_s32(vsubq_s32(vmax, vld1q_s32(s)));
    const int32x4_t e = vldrwq_gather_shifted_offset_s32(exps, i);
    vst1q_s32(s, e);
    sum = vaddvaq_s32(sum, vrshrq_n_s32(e, 12));
  }
  if (n) {
    const mve_pred16_t pr = tail32(n, 0);
    const uint32x4_t i = vreinterpretq_u32_s32(vsubq_s32(vmax, vldrwq_z_s32(s, pr)));
    const int32x4_t e = vldrwq_gather_shifted_offset_z_s32(exps, i, pr);  // zeroed lanes add 0
    vstrwq_p_s32(s, e, pr);
    sum = vaddvaq_s32(sum, vrshrq_n_s32(e, 12));
  }
  return sum;
}

// ---------------------------------------------------------------- outputs

void tflite_outputs(int32_t* e, size_t n, int32_t scale, int exponent) {
  // SRDHM(scale, e) >= 0 and < 2^31: VRSHL rounds it; by 32 or more to 0
  const int32x4_t shift = vdupq_n_s32(exponent >= 32 ? -32 : -exponent);
  const int32x4_t top = vdupq_n_s32(255);
  for (; n >= 4; n -= 4, e += 4) vst1q_s32(e, vminq_s32(vrshlq_s32(vqrdmulhq_n_s32(vld1q_s32(e), scale), shift), top));
  if (n) {
    const mve_pred16_t pr = tail32(n, 0);
    vstrwq_p_s32(e, vminq_s32(vrshlq_s32(vqrdmulhq_n_s32(vldrwq_z_s32(e, pr), scale), shift), top), pr);
  }
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_I8_TFLITE_INL_H_
