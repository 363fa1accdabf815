// The Helium kernels of Int16Mode::kTflite (KernelsI16Tflite): the integers
// of lib/src/tflite16_ops.h. Included by mve_i16.cc (one translation unit),
// after the helpers it defines (tail32).
//
// The int64 requantization runs one value at a time on the core's long
// shifts (no 64-bit lanes): the product x m16 from a MUL and a UMLAL, then
// SQRSHRL by t, which adds 2^(t - 1) before its arithmetic shift: TFLite's
// floor((x m16 + 2^(t - 1)) / 2^t) exactly (|x m16| < 2^62, so neither the
// sum nor the 64-bit saturation ever changes it); the row maximum after, four
// lanes at a time. The softmax passes run four int32 lanes: the int32 MBQM
// as i8_tflite-inl.h does it, the table lookups as halfword gathers.
#ifndef TINYATTN_MVE_I16_TFLITE_INL_H_
#define TINYATTN_MVE_I16_TFLITE_INL_H_

#include <arm_acle.h>
#include <arm_mve.h>

#include <climits>

namespace tinyattn {
namespace mve {
namespace {

// tflite16_ops.h's multiplier rounded to 16 bits.
inline uint32_t tflite16_reduced(TfliteMultiplier m) {
  return m.multiplier < 0x7FFF0000 ? (static_cast<uint32_t>(m.multiplier) + (1u << 15)) >> 16 : 0x7FFFu;
}

// requantize_i16 of x = hi:lo: the product (one MUL, one UMLAL), SQRSHRL by
// 15 - shift (in [8, 46]), the low word (TFLite's int64 -> int32
// conversion) saturated to int16.
inline int32_t tflite16_requantize_one(uint32_t lo, int32_t hi, uint32_t reduced, int32_t total_shift) {
  uint32_t p_lo = 0;
  int32_t p_hi = static_cast<int32_t>(static_cast<uint32_t>(hi) * reduced);
  __asm__("umlal %0, %1, %2, %3" : "+r"(p_lo), "+r"(p_hi) : "r"(lo), "r"(reduced));
  const int64_t p = static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(p_hi)) << 32) | p_lo);
  return __ssat(static_cast<int32_t>(sqrshrl(p, total_shift)), 16);
}

// The maximum of n >= 1 values, four lanes at a time.
inline int32_t tflite16_max(const int32_t* x, size_t n) {
  int32_t max = -32768;
  size_t j = 0;
  for (; j + 4 <= n; j += 4) max = vmaxvq_s32(max, vld1q_s32(x + j));
  for (; j < n; ++j) max = x[j] > max ? x[j] : max;
  return max;
}

int32_t tflite16_requantize(const int64_t* s, size_t n, TfliteMultiplier m, int32_t* out) {
  const uint32_t reduced = tflite16_reduced(m);
  const int32_t total_shift = 15 - m.shift;
  for (size_t j = 0; j < n; ++j) {
    const uint64_t x = static_cast<uint64_t>(s[j]);
    out[j] = tflite16_requantize_one(static_cast<uint32_t>(x), static_cast<int32_t>(x >> 32), reduced, total_shift);
  }
  return tflite16_max(out, n);
}

void tflite16_requantize_y(const int32_t* acc, size_t n, TfliteMultiplier m, int16_t* y) {
  const uint32_t reduced = tflite16_reduced(m);
  const int32_t total_shift = 15 - m.shift;
  for (size_t c = 0; c < n; ++c) {
    const int32_t wide = static_cast<int32_t>(sqrshrl(int64_t{acc[c]} * static_cast<int32_t>(reduced), total_shift));
    y[c] = static_cast<int16_t>(__ssat(wide, 16));
  }
}

// lut_lookup of four values in [-32768, 32767]: entries u >> 7 and the next
// (u = value + 32768) by gathers, the slope times the low 7 bits rounded by
// VRSHR (floor of the sum with 64, as TFLite's arithmetic shift).
inline int32x4_t tflite16_lut_lanes(int32x4_t value, const int16_t* lut) {
  const uint32x4_t u = vreinterpretq_u32_s32(vaddq_n_s32(value, 32768));
  const uint32x4_t idx = vshrq_n_u32(u, 7);
  const int32x4_t base = vldrhq_gather_shifted_offset_s32(lut, idx);
  const int32x4_t next = vldrhq_gather_shifted_offset_s32(lut + 1, idx);
  const int32x4_t offset = vreinterpretq_s32_u32(vandq_u32(u, vdupq_n_u32(0x7f)));
  return vaddq_s32(base, vrshrq_n_s32(vmulq_s32(vsubq_s32(next, base), offset), 7));
}

// softmax16_exp of four differences, with the int32 MBQM of `scale`.
template <class Scale>
inline int32x4_t tflite16_exp_lanes(int32x4_t diff, Scale scale, const int16_t* lut) {
  const int32x4_t scaled = scale(diff);
  // clamp(scaled + 32767, -32768, 32767); past INT32_MAX - 32767 the int32 sum wraps below -32768
  const int32x4_t sym = vaddq_n_s32(vminq_s32(vmaxq_s32(scaled, vdupq_n_s32(-65535)), vdupq_n_s32(0)), 32767);
  const mve_pred16_t wraps = vcmpgtq_n_s32(scaled, INT32_MAX - 32767);
  return tflite16_lut_lanes(vpselq_s32(vdupq_n_s32(-32768), sym, wraps), lut);
}

template <class Scale>
int32_t tflite16_exps_loop(int32_t* x, size_t n, int32_t max, Scale scale, const int16_t* lut) {
  const int32x4_t top = vdupq_n_s32(max);
  int32_t sum = 0;
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const int32x4_t e = tflite16_exp_lanes(vsubq_s32(vld1q_s32(x + j), top), scale, lut);
    vst1q_s32(x + j, e);
    sum = vaddvaq_s32(sum, e);
  }
  if (j < n) {
    const mve_pred16_t p = tail32(n, j);
    const int32x4_t e = tflite16_exp_lanes(vsubq_s32(vldrwq_z_s32(x + j, p), top), scale, lut);
    vstrwq_p_s32(x + j, e, p);
    sum = vaddvaq_p_s32(sum, e, p);
  }
  return sum;
}

int32_t tflite16_exps(int32_t* x, size_t n, int32_t max, TfliteMultiplier beta, const int16_t* lut) {
  const int32_t mult = beta.multiplier;
  if (beta.shift < 0) {  // RDBPOT by -shift >= 1: VRSHL after x - [x < 0] (i8_tflite-inl.h)
    const int32x4_t right = vdupq_n_s32(beta.shift);
    return tflite16_exps_loop(
        x, n, max,
        [&](int32x4_t d) {
          const int32x4_t a = vqrdmulhq_n_s32(d, mult);
          return vrshlq_s32(vaddq_s32(a, vshrq_n_s32(a, 31)), right);
        },
        lut);
  }
  const int32x4_t left = vdupq_n_s32(beta.shift);  // x 2^shift wraps, as TFLite's int32 product
  return tflite16_exps_loop(
      x, n, max, [&](int32x4_t d) { return vqrdmulhq_n_s32(vshlq_s32(d, left), mult); }, lut);
}

// softmax16_output: e * reciprocal < 2^30, VRSHL by -right_shift rounds ties up.
inline int32x4_t tflite16_output_lanes(int32x4_t e, int32_t reciprocal, int32x4_t right) {
  return vminq_s32(vrshlq_s32(vmulq_n_s32(e, reciprocal), right), vdupq_n_s32(32767));
}

int32_t tflite16_outputs(int32_t* x, size_t n, int32_t reciprocal, int right_shift) {
  const int32x4_t right = vdupq_n_s32(-right_shift);
  int32_t sum = 0;
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const int32x4_t o = tflite16_output_lanes(vld1q_s32(x + j), reciprocal, right);
    vst1q_s32(x + j, o);
    sum = vaddvaq_s32(sum, o);
  }
  if (j < n) {
    const mve_pred16_t p = tail32(n, j);
    const int32x4_t o = tflite16_output_lanes(vldrwq_z_s32(x + j, p), reciprocal, right);
    vstrwq_p_s32(x + j, o, p);
    sum = vaddvaq_p_s32(sum, o, p);
  }
  return sum;
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_I16_TFLITE_INL_H_
