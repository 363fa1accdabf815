// Native fp16 kernels for Cortex-M55 (MVE with floating point, Helium):
// 8 fp16 lanes per vector, as the aarch64 kernels (forward_f16_native_a64.cc).
#include "f16_native.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>

#include <cmath>

#include "tinyattn/forward_f16.h"

namespace tinyattn {
namespace detail {

namespace {

float16x8_t load8(const half* p) { return vreinterpretq_f16_u16(vld1q_u16(&p->bits)); }

// VCVTB/VCVTT.F32.F16 (widen the even / odd fp16 lanes) written as their
// encodings on q0: binutils 2.40 encodes the Q registers of these two
// mnemonics wrongly (q2, q3 become q4, q6), which garbles the result.
float32x4_t widen_even(float16x8_t x) {
  register float16x8_t r asm("q0") = x;
  asm(".inst.w 0xfe3f0e01  @ vcvtb.f32.f16 q0, q0" : "+w"(r));
  return vreinterpretq_f32_f16(r);
}
float32x4_t widen_odd(float16x8_t x) {
  register float16x8_t r asm("q0") = x;
  asm(".inst.w 0xfe3f1e01  @ vcvtt.f32.f16 q0, q0" : "+w"(r));
  return vreinterpretq_f32_f16(r);
}

float sum4(float32x4_t x) {
  return (vgetq_lane_f32(x, 0) + vgetq_lane_f32(x, 1)) + (vgetq_lane_f32(x, 2) + vgetq_lane_f32(x, 3));
}

// As the aarch64 dot: kF16NativeChunk fp16 fused multiply-adds per lane, then
// the even and odd lanes (VCVTB/VCVTT) widened and added in fp32; fp32 tail.
float dot(const half* q, const half* k, size_t dk) {
  float32x4_t ev = vdupq_n_f32(0.0f), od = vdupq_n_f32(0.0f);
  size_t i = 0;
  while (i + 8 <= dk) {
    float16x8_t acc = vdupq_n_f16(0);
    for (size_t t = 0; t < kF16NativeChunk && i + 8 <= dk; ++t, i += 8)
      acc = vfmaq_f16(acc, load8(q + i), load8(k + i));
    ev = vaddq_f32(ev, widen_even(acc));
    od = vaddq_f32(od, widen_odd(acc));
  }
  float sum = sum4(vaddq_f32(ev, od));
  for (; i < dk; ++i) sum += to_float(q[i]) * to_float(k[i]);
  return sum;
}

void scores(const half* q, const half* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  for (size_t j = 0; j < count; ++j) {
    const half* kj = k + j * ldk;
    float d = dot(q, kj, dk);
    if (!std::isfinite(d)) d = dot_f32(q, kj, dk);  // fp16 overflow (or non-finite input)
    s[j] = scale * d;
  }
}

constexpr size_t kGroup = 8;

void weighted_sum(const float* p, const half* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  for (size_t c = 0; c < dv; ++c) y[c] = 0.0f;
  for (size_t j0 = 0; j0 < count; j0 += kGroup) {
    const size_t n = count - j0 < kGroup ? count - j0 : kGroup;
    half ph[kGroup];
    float pr[kGroup];
    to_half(p + j0, ph, n);
    to_float(ph, pr, n);  // the fp16 weights, exactly
    const half* vg = v + j0 * ldv;
    size_t c = 0;
    for (; c + 8 <= dv; c += 8) {
      // Columns c, c+2, ... (bottom halves) and c+1, c+3, ... (top halves).
      float32x4x2_t acc = vld2q_f32(y + c);
      for (size_t j = 0; j < n; ++j) {
        if (pr[j] == 0.0f) continue;  // never 0 * inf
        const float16x8_t x = load8(vg + j * ldv + c);
        acc.val[0] = vfmaq_n_f32(acc.val[0], widen_even(x), pr[j]);
        acc.val[1] = vfmaq_n_f32(acc.val[1], widen_odd(x), pr[j]);
      }
      vst2q_f32(y + c, acc);
    }
    for (; c < dv; ++c) {
      float acc = y[c];
      for (size_t j = 0; j < n; ++j)
        if (pr[j] != 0.0f) acc += pr[j] * to_float(vg[j * ldv + c]);
      y[c] = acc;
    }
  }
  for (size_t c = 0; c < dv; ++c) y[c] *= a;
}

}  // namespace

const KernelsF16Native kF16NativeMve{"mve-fp16", scores, weighted_sum};

}  // namespace detail
}  // namespace tinyattn

#endif
