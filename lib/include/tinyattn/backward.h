// Backward scaled dot-product attention, fp32: the analytic gradients of
//   Y = softmax(S) V,  S = scale * Q K^T + mask
// with respect to Q, K and V, given dY = dL/dY:
//   dV   = A^T dY
//   Abar = dY V^T
//   dS   = A o (Abar - rowsum(Abar o A))      (o: elementwise product)
//   dQ   = scale * dS K
//   dK   = scale * dS^T Q
// With Options::softcap c, S = T + mask, T = c tanh(U / c), U = scale * Q K^T,
// and dQ, dK take dU = dS o (1 - (T / c)^2) in place of dS.
// Masked keys have A = 0, so they get exactly dS = 0 and add nothing to dK or
// dV; a query row with no visible key has zero gradients. With grouped-query
// attention the gradients of a shared KV head sum over its query heads.
//
// Two ways to obtain A:
//  * BackwardMode::kSavedWeights  reads the weights forward() wrote (io.weights);
//  * BackwardMode::kRecompute     recomputes them from Q, K and the per-row
//    log-sum-exp forward() wrote (io.lse): A_ij = exp(S_ij - lse_i), so nothing
//    of size N*M is kept between the passes (FlashAttention style).
// Either way keys are processed in tiles of at most kKeyTile, and the
// workspace is O(kKeyTile + Dk), independent of N, M and the heads.
//
// Same two APIs as forward(): backward(dims, mode, io, workspace, mask, options)
// with a caller workspace of backward_workspace_bytes(dims, mode) bytes, and
// AttentionBackward<Shape<...>, mode> owning its workspace. No allocation,
// exceptions or RTTI; status codes; nothing is written on error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tinyattn/attention.h"

namespace tinyattn {

enum class BackwardMode : uint8_t {
  kSavedWeights,  // A from io.weights (forward's weights output)
  kRecompute,     // A recomputed from Q, K and io.lse (forward's lse output)
};

// Keys per tile in backward(): the key range of a row is walked in tiles of
// at most this many (the forward's tile length).
constexpr size_t backward_tile(const Dims& d) { return d.m < kKeyTile ? d.m : kKeyTile; }

// True when some row may span more than one tile: dQ is then accumulated
// tile by tile through a Dk-float buffer.
constexpr bool backward_uses_tiles(const Dims& d) { return d.m > kKeyTile; }

// Scratch for one backward call, in bytes (alignment slack included):
//   T = min(M, kKeyTile) floats for Abar (overwritten by dS),
//   + T floats for the recomputed weights      (kRecompute only),
//   + Dk floats for the partial dQ of a tile   (M > kKeyTile only),
// each rounded up to kWorkspaceAlign, plus kWorkspaceAlign of slack.
// It never grows with N or the number of heads, nor with M beyond kKeyTile.
constexpr size_t backward_workspace_bytes(const Dims& d, BackwardMode mode) {
  const size_t tile = align_up(backward_tile(d) * sizeof(float), kWorkspaceAlign);
  return tile * (mode == BackwardMode::kRecompute ? 2 : 1) +
         (backward_uses_tiles(d) ? align_up(d.dk * sizeof(float), kWorkspaceAlign) : 0) + kWorkspaceAlign;
}

struct BackwardIo {
  const float* q = nullptr;        // [Hq][N][Dk]   required
  const float* k = nullptr;        // [Hkv][M][Dk]  required
  const float* v = nullptr;        // [Hkv][M][Dv]  required
  const float* dy = nullptr;       // [Hq][N][Dv]   dL/dY, required
  const float* weights = nullptr;  // [Hq][N][M]    forward's A: required by kSavedWeights
  const float* lse = nullptr;      // [Hq][N]       forward's lse: required by kRecompute
  const float* y = nullptr;        // [Hq][N][Dv]   forward's Y, optional: when given,
                                   //               rowsum(Abar o A) is dY_i . Y_i (saves a pass)
  float* dq = nullptr;             // [Hq][N][Dk]   required, overwritten
  float* dk = nullptr;             // [Hkv][M][Dk]  required, overwritten
  float* dv = nullptr;             // [Hkv][M][Dv]  required, overwritten
  float* ds = nullptr;             // [Hq][N][M]    optional: dL/dS, which is also the
                                   //               gradient of an additive bias (per head)
};

// Validates everything, then computes. On error nothing is written.
// The mask and options must be those of the forward call that produced
// weights / lse (the scale is the same effective_scale()).
Status backward(const Dims& dims, BackwardMode mode, const BackwardIo& io, Workspace ws,
                const Mask& mask = {}, const Options& options = {});

// Compile-time shape, owning its workspace.
//
//   static tinyattn::Attention<S> attn;
//   static tinyattn::AttentionBackward<S> grad;  // kRecompute by default
//   attn(q, k, v, y, lse);                       // forward, keeping lse
//   grad(q, k, v, dy, lse, dq, dk, dv);          // RAM: sizeof(grad)
//
// (tests/api/backward_example.cc compiles and runs these lines.)
template <class S, BackwardMode Mode = BackwardMode::kRecompute>
class AttentionBackward {
 public:
  static constexpr Dims dims = S::dims;
  static constexpr BackwardMode mode = Mode;
  static constexpr size_t workspace_bytes = backward_workspace_bytes(dims, Mode);

  using Q = std::array<float, dims.q_elems()>;
  using K = std::array<float, dims.k_elems()>;
  using V = std::array<float, dims.v_elems()>;
  using Y = std::array<float, dims.y_elems()>;
  using Weights = std::array<float, dims.weight_elems()>;
  using Lse = std::array<float, dims.lse_elems()>;
  // What the forward pass must have kept: lse (kRecompute) or A (kSavedWeights).
  using Saved = std::conditional_t<Mode == BackwardMode::kRecompute, Lse, Weights>;

  Status operator()(const Q& q, const K& k, const V& v, const Y& dy, const Saved& saved, Q& dq, K& dk, V& dv,
                    const Mask& mask = {}, const Options& options = {}) {
    BackwardIo io;
    io.q = q.data();
    io.k = k.data();
    io.v = v.data();
    io.dy = dy.data();
    if constexpr (Mode == BackwardMode::kRecompute) io.lse = saved.data();
    else io.weights = saved.data();
    io.dq = dq.data();
    io.dk = dk.data();
    io.dv = dv.data();
    return run(io, mask, options);
  }

  // Pointer form, for tensors that live elsewhere (same layouts as backward()).
  Status run(const BackwardIo& io, const Mask& mask = {}, const Options& options = {}) {
    return backward(dims, Mode, io, Workspace{workspace_, sizeof workspace_}, mask, options);
  }

 private:
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
};

}  // namespace tinyattn
