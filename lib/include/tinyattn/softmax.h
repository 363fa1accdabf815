// Softmax of one row on a port's kernels, and its vector-Jacobian product.
//
// These are the row operations the attention passes are built from, exposed
// for callers that need a plain softmax (a classifier head, a study of softmax
// saturation such as bench/saturation.cc) or its gradient. Allocation-free,
// status-returning; nothing is written on error.
#pragma once

#include <cstddef>

#include "tinyattn/port.h"
#include "tinyattn/status.h"

namespace tinyattn {

// p[j] = exp(x[j] - max x) / sum_k exp(x[k] - max x), for j < n, n in [1, kMaxDim].
// Same semantics as a row of forward(): all -inf -> all 0; a NaN -> all NaN;
// +inf entries share the whole weight. p may equal x (in place); a partial
// overlap is kAliasing.
Status softmax(const float* x, float* p, size_t n, Port port = Port::kDefault);

// dx = J dp with J = diag(p) - p p^T, the Jacobian of softmax at output p
// (J is symmetric, so this is also the vector-Jacobian product dp^T J):
//   dx[j] = p[j] * (dp[j] - sum_k p[k] dp[k]).
// dx may equal p or dp; a partial overlap is kAliasing.
Status softmax_vjp(const float* p, const float* dp, float* dx, size_t n, Port port = Port::kDefault);

}  // namespace tinyattn
