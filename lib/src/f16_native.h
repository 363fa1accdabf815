// The fp16 driver's arithmetic for F16Compute::kNativeF16Products: Q K^T and
// P V read straight from fp16 tensors, with the products in native fp16
// (forward_f16.h states exactly what is fp16 and what is fp32).
#pragma once

#include <cmath>
#include <cstddef>

#include "tinyattn/half.h"

namespace tinyattn {
namespace detail {

struct KernelsF16Native {
  const char* name;  // "armv8.2-a-fp16", "mve-fp16"

  // s[j] = scale * dot(q, k + j*ldk) over dk, for j < count: 8 fp16 lanes,
  // kF16NativeChunk fused multiply-adds each, partial sums widened and added
  // in fp32; a non-finite result is recomputed in fp32.
  void (*scores)(const half* q, const half* k, size_t ldk, size_t count, size_t dk, float scale, float* s);

  // y[c] = a * sum_j fp16(p[j]) * v[j*ldv + c] for c < dv, j < count: the
  // products of two halves are exact in fp32, the sums fp32. Keys whose p
  // rounds to 0 contribute nothing (as KernelsF32::weighted_sum).
  void (*weighted_sum)(const float* p, const half* v, size_t ldv, size_t count, size_t dv, float a, float* y);
};

// The native kernels this build can run on this CPU, or nullptr.
const KernelsF16Native* f16_native_kernels();

// Defined only in builds that compile them (forward_f16_native_*.cc).
extern const KernelsF16Native kF16NativeA64;
extern const KernelsF16Native kF16NativeMve;

// fp32 recomputation of one score (fp16 overflow): exact products of the
// halves, fp32 sums.
inline float dot_f32(const half* q, const half* k, size_t dk) {
  float sum = 0.0f;
  for (size_t i = 0; i < dk; ++i) sum += to_float(q[i]) * to_float(k[i]);
  return sum;
}

// The two kernels around a target's own pieces, so each target writes only
// its vector code: Dot(q, k, dk), the native fp16 dot product, and
// Columns8(y, pr, n, v, ldv), which adds sum_j pr[j] v[j*ldv + c] to y[c]
// for 8 columns (skipping pr[j] == 0: never 0 * inf).
template <float (*Dot)(const half*, const half*, size_t)>
void native_scores(const half* q, const half* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  for (size_t j = 0; j < count; ++j) {
    const half* kj = k + j * ldk;
    float d = Dot(q, kj, dk);
    if (!std::isfinite(d)) d = dot_f32(q, kj, dk);  // fp16 overflow (or non-finite input)
    s[j] = scale * d;
  }
}

// Keys per group: their weights are rounded to fp16 once, then each 8-column
// block of y accumulates the group's keys in registers.
inline constexpr size_t kF16NativeGroup = 8;

template <void (*Columns8)(float* y, const float* pr, size_t n, const half* v, size_t ldv)>
void native_weighted_sum(const float* p, const half* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  for (size_t c = 0; c < dv; ++c) y[c] = 0.0f;
  for (size_t j0 = 0; j0 < count; j0 += kF16NativeGroup) {
    const size_t n = count - j0 < kF16NativeGroup ? count - j0 : kF16NativeGroup;
    half ph[kF16NativeGroup];
    float pr[kF16NativeGroup];
    to_half(p + j0, ph, n);
    to_float(ph, pr, n);  // the fp16 weights, exactly
    const half* vg = v + j0 * ldv;
    size_t c = 0;
    for (; c + 8 <= dv; c += 8) Columns8(y + c, pr, n, vg + c, ldv);
    for (; c < dv; ++c) {
      float acc = y[c];
      for (size_t j = 0; j < n; ++j)
        if (pr[j] != 0.0f) acc += pr[j] * to_float(vg[j * ldv + c]);
      y[c] = acc;
    }
  }
  for (size_t c = 0; c < dv; ++c) y[c] *= a;
}

}  // namespace detail
}  // namespace tinyattn
