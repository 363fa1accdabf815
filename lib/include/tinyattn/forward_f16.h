// Forward attention on fp16 tensors: Q, K, V, Y (and the optional weights A)
// stored as IEEE binary16; the log-sum-exp stays fp32.
//
// By default (F16Compute::kWidenToF32) compute is fp32 throughout: rows of
// Q, K and V are widened into the workspace a tile at a time and fed to the
// same port kernels as forward()
// (one pass over a row of M scores, or an online softmax over key tiles when
// the weights are not requested, as forward() does);
// scores, softmax sums and the P V accumulation are fp32 (no fp16
// accumulator anywhere). Only the final Y and A are rounded to fp16 (to
// nearest even). Semantics (masks, fully masked rows, NaN and inf logits,
// heads/GQA, the scale) are those of forward().
//
// OptionsF16::compute = F16Compute::kNativeF16Products instead runs the
// products in native fp16 arithmetic where the target has it (ARMv8.2-A FP16
// on aarch64, checked at run time; MVE on Cortex-M55), reading Q, K and V in
// place (no widening pass):
//  * Q K^T: each 8-lane vector of fp16 lanes accumulates kF16NativeChunk
//    products by fp16 fused multiply-adds (products and these partial sums are
//    fp16, rounded once per step); each chunk's lanes are then widened and
//    added in fp32, as are the Dk % 8 tail products. A score that comes out
//    non-finite (fp16 overflow) is recomputed in fp32 from the same halves.
//  * P V: each weight p is rounded to fp16, the products p * v of two halves
//    are exact in fp32, and their sums are fp32.
//  * The softmax (max, exp, sums, the scaling) stays fp32 on the port's kernels.
// Its error bound is stated separately (docs/quant.md). Where the build or the
// CPU lacks fp16 arithmetic the call returns Status::kUnsupported and writes
// nothing; f16_native_products_available() says which ahead of time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

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

enum class F16Compute : uint8_t {
  kWidenToF32 = 0,     // fp32 products and sums (every build; the default)
  kNativeF16Products,  // fp16 products, fp32 softmax and P V sums (see above)
};

// The fp32 Options plus the compute mode. Converts from Options, so existing
// callers keep working.
struct OptionsF16 : Options {
  F16Compute compute = F16Compute::kWidenToF32;
  OptionsF16() = default;
  // cppcheck-suppress noExplicitConstructor ; implicit on purpose: Options converts
  OptionsF16(const Options& o) : Options(o) {}  // NOLINT(google-explicit-constructor)
};

// Fused multiply-adds each fp16 lane runs before its partial sum is widened
// to fp32 (F16Compute::kNativeF16Products): chunks of 8 * 4 = 32 of Dk.
inline constexpr size_t kF16NativeChunk = 4;

// Whether F16Compute::kNativeF16Products runs in this build on this CPU.
bool f16_native_products_available();
// Which native kernels it runs: "armv8.2-a-fp16", "mve-fp16", or "none".
const char* f16_native_products_name();

// Keys widened per step: bounds the tile buffer independently of M.
inline constexpr size_t kF16KeyTile = 8;

constexpr size_t f16_key_tile(const Dims& d) { return d.m < kF16KeyTile ? d.m : kF16KeyTile; }

// Without weights and with M > kF16KeyTile, forward_f16 runs an online softmax
// over key tiles (as forward() does over kKeyTile), so its scratch does not grow with M.
constexpr bool forward_f16_uses_tiles(const Dims& d, bool with_weights) {
  return !with_weights && d.m > kF16KeyTile;
}

// Scratch, in fp32, each part aligned to kWorkspaceAlign, plus that much slack:
//   scores: M (plain) or kF16KeyTile (tiled);  the widened query row: Dk;
//   a tile of widened K or V rows: min(M, kF16KeyTile) * max(Dk, Dv);
//   the output accumulator and one tile's partial sum: 2 * Dv.
// with_weights = true (default) is always enough.
constexpr size_t forward_f16_workspace_bytes(const Dims& d, bool with_weights = true) {
  return align_up((forward_f16_uses_tiles(d, with_weights) ? kF16KeyTile : d.m) * sizeof(float), kWorkspaceAlign) +
         align_up(d.dk * sizeof(float), kWorkspaceAlign) +
         align_up(f16_key_tile(d) * (d.dk > d.dv ? d.dk : d.dv) * sizeof(float), kWorkspaceAlign) +
         2 * align_up(d.dv * sizeof(float), kWorkspaceAlign) + kWorkspaceAlign;
}

// Validates everything (as forward()), then computes. On error nothing is written.
// ws.bytes must be at least forward_f16_workspace_bytes(d, io.weights != nullptr).
// A compute mode this build or CPU cannot run: kUnsupported.
Status forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask = {},
                   const OptionsF16& options = {});

// Compile-time shape, owning its workspace.
template <class S>
// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): workspace_ is scratch (below)
class AttentionF16 {
 public:
  static constexpr Dims dims = S::dims;
  static constexpr size_t workspace_bytes = forward_f16_workspace_bytes(dims, true);

  using Q = std::array<half, dims.q_elems()>;
  using K = std::array<half, dims.k_elems()>;
  using V = std::array<half, dims.v_elems()>;
  using Y = std::array<half, dims.y_elems()>;
  using Weights = std::array<half, dims.weight_elems()>;
  using Lse = std::array<float, dims.lse_elems()>;

  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask = {}, Weights* weights = nullptr,
                    const OptionsF16& options = {}) {
    return run(ForwardIoF16{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, nullptr},
               mask, options);
  }
  Status run(const ForwardIoF16& io, const Mask& mask = {}, const OptionsF16& options = {}) {
    return forward_f16(dims, io, Workspace{workspace_, sizeof workspace_}, mask, options);
  }

 private:
  // Scratch, written before it is read on every call: left uninitialised (no memset per object).
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
};

}  // namespace tinyattn
