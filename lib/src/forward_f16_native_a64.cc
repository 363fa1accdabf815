// Native fp16 kernels for aarch64 with ARMv8.2-A FP16 (FEAT_FP16, HWCAP_ASIMDHP).
// This file alone is compiled with -march=armv8.2-a+fp16 (lib/CMakeLists.txt);
// forward_f16_native.cc calls it only after checking the CPU.
#include "f16_native.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#include <arm_neon.h>

#include <cmath>

#include "tinyattn/forward_f16.h"

namespace tinyattn {
namespace detail {

namespace {

float16x8_t load8(const half* p) { return vreinterpretq_f16_u16(vld1q_u16(&p->bits)); }

// dot(q, k) over dk: per chunk, 8 fp16 lanes each run kF16NativeChunk fused
// multiply-adds from 0 (fp16 products and partial sums); the chunk's lanes are
// widened (exactly) and added to fp32 accumulators; the dk % 8 tail is fp32.
float dot(const half* q, const half* k, size_t dk) {
  float32x4_t lo = vdupq_n_f32(0.0f), hi = vdupq_n_f32(0.0f);
  size_t i = 0;
  while (i + 8 <= dk) {
    float16x8_t acc = vdupq_n_f16(0);
    for (size_t t = 0; t < kF16NativeChunk && i + 8 <= dk; ++t, i += 8)
      acc = vfmaq_f16(acc, load8(q + i), load8(k + i));
    lo = vaddq_f32(lo, vcvt_f32_f16(vget_low_f16(acc)));
    hi = vaddq_f32(hi, vcvt_high_f32_f16(acc));
  }
  float sum = vaddvq_f32(vaddq_f32(lo, hi));
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

// Keys per group: their weights are rounded to fp16 once, then each 8-column
// block of y accumulates the group's keys in registers.
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
      float32x4_t lo = vld1q_f32(y + c), hi = vld1q_f32(y + c + 4);
      for (size_t j = 0; j < n; ++j) {
        if (pr[j] == 0.0f) continue;  // never 0 * inf
        const float16x8_t x = load8(vg + j * ldv + c);
        lo = vfmaq_n_f32(lo, vcvt_f32_f16(vget_low_f16(x)), pr[j]);
        hi = vfmaq_n_f32(hi, vcvt_high_f32_f16(x), pr[j]);
      }
      vst1q_f32(y + c, lo);
      vst1q_f32(y + c + 4, hi);
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

const KernelsF16Native kF16NativeA64{"armv8.2-a-fp16", scores, weighted_sum};

}  // namespace detail
}  // namespace tinyattn

#endif
