// The fp16 driver's arithmetic for F16Compute::kNativeF16Products: Q K^T and
// P V read straight from fp16 tensors, with the products in native fp16
// (forward_f16.h states exactly what is fp16 and what is fp32).
#pragma once

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

}  // namespace detail
}  // namespace tinyattn
