// The reference implementation: the specification every port is tested
// against. Plain loops, double accumulation, std::exp in double, and masks
// evaluated element by element straight from their definitions (it shares no
// code with the driver's key-range logic). Slow on purpose; needs no workspace
// (it recomputes logits rather than storing them) and never allocates.
#pragma once

#include <cstddef>

#include "tinyattn/mask.h"
#include "tinyattn/shape.h"

namespace tinyattn {
namespace ref {

// True when key j is visible to query i of query head h under every part of mask.
bool visible(const Mask& mask, const Dims& d, size_t h, size_t i, size_t j);

// The scaled score u_ij = scale*<q_i, k_j> (double, +-inf where beyond fp32).
double score(const Dims& d, const float* q, const float* k, double scale, size_t h, size_t i, size_t j);

// The scaled, masked logit s_ij (double): scale*<q_i, k_j> + bias_ij, or -inf
// when masked. With softcap c > 0 (0: none) the score is capped first, as
// ONNX Attention does: c*tanh(scale*<q_i, k_j>/c) + bias_ij.
double logit(const Dims& d, const float* q, const float* k, const Mask& mask, double scale, size_t h,
             size_t i, size_t j, double softcap = 0.0);

// Forward attention in double. y: [Hq][N][Dv]; weights [Hq][N][M] and lse
// [Hq][N] may be null. Semantics match tinyattn::forward: fully masked rows are
// zero (lse -inf), a NaN logit makes its row NaN, +inf logits share the weight.
void forward(const Dims& d, const float* q, const float* k, const float* v, const Mask& mask,
             double scale, double* y, double* weights = nullptr, double* lse = nullptr, double softcap = 0.0);

// Backward in double, from the definitions of the seed notebook (section 3):
//   dV = A^T dY;  Abar = dY V^T;  dS = A o (Abar - rowsum(Abar o A));
//   dQ = scale dS K;  dK = scale dS^T Q.
// Gradients of a shared KV head sum over the query heads that use it.
// A fully masked row contributes nothing; a row with +inf logits uses the
// forward's limit weights (the +inf logits share the weight) in the same
// formulas; a NaN logit makes its dQ row, and the dK/dV rows of the keys it
// sees, NaN.
// dq: [Hq][N][Dk], dk: [Hkv][M][Dk], dv: [Hkv][M][Dv] (overwritten);
// ds: [Hq][N][M] = dL/dS, optional (0 where masked).
// With softcap c > 0, dQ and dK take dS o (1 - tanh^2(U / c)), U = scale Q K^T
// (the chain rule through c*tanh(U/c)); ds stays dL/dS.
void backward(const Dims& d, const float* q, const float* k, const float* v, const float* dy,
              const Mask& mask, double scale, double* dq, double* dk, double* dv, double* ds = nullptr,
              double softcap = 0.0);

}  // namespace ref
}  // namespace tinyattn
