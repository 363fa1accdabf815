// Softmax of one row or of many rows on a port's kernels, and its
// vector-Jacobian product.
//
// These are the row operations the attention passes are built from, exposed
// for callers that need a plain softmax (a classifier head, a study of softmax
// saturation such as bench/saturation.cc) or its gradient. Allocation-free,
// status-returning; nothing is written on error. The *_rows forms check
// their arguments once for all rows and run each row exactly as the one-row
// form does (the same bits): for short rows, where the per-call checks and
// the port lookup are a large share of the time, they are the faster way.
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

// softmax() of `rows` rows of n: row r of x at x + r * ld_x, of p at
// p + r * ld_p (ld_x, ld_p >= n; for one contiguous matrix ld = n). Statuses:
// kNullPointer (x or p null); kBadDimension (rows == 0, n outside
// [1, kMaxDim], ld_x < n or ld_p < n, or an extent (rows - 1) * ld + n floats
// beyond PTRDIFF_MAX bytes); kMisaligned; kAliasing (p overlaps x, other than
// in place: p == x with ld_p == ld_x, or one row); kPortUnavailable.
Status softmax_rows(const float* x, float* p, size_t rows, size_t n, size_t ld_x, size_t ld_p,
                    Port port = Port::kDefault);

// dx = J dp with J = diag(p) - p p^T, the Jacobian of softmax at output p
// (J is symmetric, so this is also the vector-Jacobian product dp^T J):
//   dx[j] = p[j] * (dp[j] - sum_k p[k] dp[k]).
// dx may equal p or dp; a partial overlap is kAliasing.
Status softmax_vjp(const float* p, const float* dp, float* dx, size_t n, Port port = Port::kDefault);

// softmax_vjp() of `rows` rows, each matrix with its own row stride (>= n).
// Statuses as softmax_rows(); dx may be p or dp in place (same start and
// stride), any other overlap is kAliasing.
Status softmax_vjp_rows(const float* p, const float* dp, float* dx, size_t rows, size_t n, size_t ld_p, size_t ld_dp,
                        size_t ld_dx, Port port = Port::kDefault);

}  // namespace tinyattn
