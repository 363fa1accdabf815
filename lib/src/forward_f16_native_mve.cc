// Native fp16 kernels for Cortex-M55 (MVE with floating point, Helium):
// 8 fp16 lanes per vector, as the aarch64 kernels (forward_f16_native_a64.cc).
#include "f16_native.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>

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

// y[c..c+8) += sum_j pr[j] v[j*ldv + c..c+8): columns c, c+2, ... (bottom
// halves) and c+1, c+3, ... (top halves) in two registers.
void columns8(float* y, const float* pr, size_t n, const half* v, size_t ldv) {
  float32x4x2_t acc = vld2q_f32(y);
  for (size_t j = 0; j < n; ++j) {
    if (pr[j] == 0.0f) continue;  // never 0 * inf
    const float16x8_t x = load8(v + j * ldv);
    acc.val[0] = vfmaq_n_f32(acc.val[0], widen_even(x), pr[j]);
    acc.val[1] = vfmaq_n_f32(acc.val[1], widen_odd(x), pr[j]);
  }
  vst2q_f32(y, acc);
}

constexpr KernelsF16Native make_table() {
  KernelsF16Native t{};
  t.name = "mve-fp16";
  t.scores = native_scores<dot>;
  t.weighted_sum = native_weighted_sum<columns8>;
  return t;
}

}  // namespace

const KernelsF16Native kF16NativeMve = make_table();

}  // namespace detail
}  // namespace tinyattn

#endif
