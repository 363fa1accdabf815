// Forward attention on fp16 tensors: Q, K, V, Y (and the optional weights A)
// stored as IEEE binary16; the log-sum-exp stays fp32.
//
// Compute is fp32 throughout: rows of Q, K and V are widened into the
// workspace a tile at a time and fed to the same port kernels as forward();
// scores, softmax sums and the P V accumulation are fp32 (no fp16
// accumulator anywhere). Only the final Y and A are rounded to fp16 (to
// nearest even). Semantics (masks, fully masked rows, NaN and inf logits,
// heads/GQA, the scale) are those of forward().
//
// A mode that computes the Q K^T products in native fp16 arithmetic (ARMv8.2-A
// FP16, MVE) is not provided: every build uses the fp32 compute above.
#pragma once

#include <array>
#include <cstddef>

#include "tinyattn/attention.h"
#include "tinyattn/half.h"

namespace tinyattn {

struct ForwardIoF16 {
  const half* q = nullptr;  // [Hq][N][Dk]
  const half* k = nullptr;  // [Hkv][M][Dk]
  const half* v = nullptr;  // [Hkv][M][Dv]
  half* y = nullptr;        // [Hq][N][Dv]   required
  half* weights = nullptr;  // [Hq][N][M]    optional
  float* lse = nullptr;     // [Hq][N]       optional, fp32 (as forward())
};

// Keys widened per step: bounds the workspace independently of M.
inline constexpr size_t kF16KeyTile = 8;

constexpr size_t f16_key_tile(const Dims& d) { return d.m < kF16KeyTile ? d.m : kF16KeyTile; }

// Scratch, in fp32: the row of M scores, the widened query row (Dk), a tile of
// widened K or V rows (tile * max(Dk, Dv)), the output accumulator and one
// tile's partial sum (2 * Dv); each aligned, plus alignment slack.
constexpr size_t forward_f16_workspace_bytes(const Dims& d) {
  return align_up(d.m * sizeof(float), kWorkspaceAlign) + align_up(d.dk * sizeof(float), kWorkspaceAlign) +
         align_up(f16_key_tile(d) * (d.dk > d.dv ? d.dk : d.dv) * sizeof(float), kWorkspaceAlign) +
         2 * align_up(d.dv * sizeof(float), kWorkspaceAlign) + kWorkspaceAlign;
}

// Validates everything (as forward()), then computes. On error nothing is written.
Status forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask = {},
                   const Options& options = {});

// Compile-time shape, owning its workspace.
template <class S>
class AttentionF16 {
 public:
  static constexpr Dims dims = S::dims;
  static constexpr size_t workspace_bytes = forward_f16_workspace_bytes(dims);

  using Q = std::array<half, dims.q_elems()>;
  using K = std::array<half, dims.k_elems()>;
  using V = std::array<half, dims.v_elems()>;
  using Y = std::array<half, dims.y_elems()>;
  using Weights = std::array<half, dims.weight_elems()>;
  using Lse = std::array<float, dims.lse_elems()>;

  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask = {}, Weights* weights = nullptr,
                    const Options& options = {}) {
    return run(ForwardIoF16{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, nullptr},
               mask, options);
  }
  Status run(const ForwardIoF16& io, const Mask& mask = {}, const Options& options = {}) {
    return forward_f16(dims, io, Workspace{workspace_, sizeof workspace_}, mask, options);
  }

 private:
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
};

}  // namespace tinyattn
