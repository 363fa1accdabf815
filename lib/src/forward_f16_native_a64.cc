// Native fp16 kernels for aarch64 with ARMv8.2-A FP16 (FEAT_FP16, HWCAP_ASIMDHP).
// This file alone is compiled with -march=armv8.2-a+fp16 (lib/CMakeLists.txt);
// forward_f16_native.cc calls it only after checking the CPU.
#include "f16_native.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#include <arm_neon.h>

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

// y[c..c+8) += sum_j pr[j] v[j*ldv + c..c+8): two fp32 halves in registers.
void columns8(float* y, const float* pr, size_t n, const half* v, size_t ldv) {
  float32x4_t lo = vld1q_f32(y), hi = vld1q_f32(y + 4);
  for (size_t j = 0; j < n; ++j) {
    if (pr[j] == 0.0f) continue;  // never 0 * inf
    const float16x8_t x = load8(v + j * ldv);
    lo = vfmaq_n_f32(lo, vcvt_f32_f16(vget_low_f16(x)), pr[j]);
    hi = vfmaq_n_f32(hi, vcvt_high_f32_f16(x), pr[j]);
  }
  vst1q_f32(y, lo);
  vst1q_f32(y + 4, hi);
}

constexpr KernelsF16Native make_table() {
  KernelsF16Native t{};
  t.name = "armv8.2-a-fp16";
  t.scores = native_scores<dot>;
  t.weighted_sum = native_weighted_sum<columns8>;
  return t;
}

}  // namespace

const KernelsF16Native kF16NativeA64 = make_table();

}  // namespace detail
}  // namespace tinyattn

#endif
