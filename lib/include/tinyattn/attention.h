// Forward scaled dot-product attention, fp32:
//   Y = softmax(scale * Q K^T + mask) V,  scale = 1/sqrt(Dk) unless set.
//
// Two APIs over one implementation:
//  * run time:     tinyattn::forward(dims, io, workspace, mask, options) with a
//                  caller-owned workspace of forward_workspace_bytes(dims) bytes
//                  (CMSIS-NN style: firmware that picks shapes at run time);
//  * compile time: tinyattn::Attention<Shape<...>> owns its workspace, so a
//                  static instance is its whole RAM cost (sizeof).
// Neither allocates, throws or uses RTTI; both are re-entrant given separate
// workspaces (an Attention object is its own workspace: one per thread).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <type_traits>

#include "tinyattn/mask.h"
#include "tinyattn/port.h"
#include "tinyattn/shape.h"
#include "tinyattn/status.h"
#include "tinyattn/tiling.h"
#include "tinyattn/detail/attention_entry.h"  // Attention<S>'s calls into the library

namespace tinyattn {

struct Options {
  std::optional<float> scale;  // unset: 1/sqrt(Dk). Must be finite when set.
  Port port = Port::kDefault;  // which compiled-in port runs the kernels
  // Logit soft-capping (Gemma 2, ONNX Attention's softcap): each scaled logit
  // s = scale * q.k becomes c * tanh(s / c) before the mask's bias is added
  // and masked keys are dropped (ONNX's order: a -inf bias stays -inf).
  // Unset: no capping. When set, c must be > 0 and finite, else kBadScale.
  // fp32 and fp16 forward, and backward; forward_i8 returns kUnsupported.
  std::optional<float> softcap = std::nullopt;  // initialized: Options{scale, port} stays -Wextra-clean
};

struct Workspace {
  void* data = nullptr;
  size_t bytes = 0;
};

// Which algorithm forward() uses for these dims ("plain" or "tiled").
constexpr bool forward_uses_tiles(const Dims& d, bool with_weights) {
  return !with_weights && d.m > kKeyTile;
}

// Query rows forward() carries through the softmax together: min(N, kBlockRows).
constexpr size_t forward_block_rows(const Dims& d) { return d.n < kBlockRows ? d.n : kBlockRows; }

// What a forward workspace holds beyond the minimum.
enum class Scratch : unsigned char {
  kMinimal,         // the scores (below): the least RAM
  // also one tile of the keys transposed, Dk x min(M, kKeyTile) floats, where
  // forward_transposes_keys(dims): the ports with
  // KernelsF32::scores_block_transposed (Highway, xsimd) then compute full
  // blocks' scores as broadcast products, with no horizontal sums. forward()
  // uses it when ws.bytes is at least that size; results agree with the
  // minimal workspace's within the stated tolerances (the sums run in
  // another order).
  kTransposedKeys,
};

// The workspace forward_workspace_bytes() and Attention<S> size by default:
// the fast one. Where the transposed keys are not built (M-profile) or
// cannot apply (N < kTransposedKeysMinRows, key spans beyond one tile with
// weights) it is the minimal one byte for byte; elsewhere it adds
// Dk * min(M, kKeyTile) floats, and forward() computes full blocks' scores
// from K^T (at (128,128,64,64) and (256,256,64,64) on AVX-512, 14-15% less
// time: docs/performance.md). Scratch::kMinimal is the least RAM.
inline constexpr Scratch kDefaultScratch = Scratch::kTransposedKeys;

// Floats from one row of the transposed keys to the next (a row per key
// element, min(M, kKeyTile) keys each), so each row starts 64-byte aligned.
constexpr size_t forward_transposed_keys_stride(const Dims& d) {
  return align_up(d.m < kKeyTile ? d.m : kKeyTile, kWorkspaceAlign / sizeof(float));
}

// Whether Scratch::kTransposedKeys can apply to these dims: rows enough, and
// a path whose key spans fit one tile (the plain path with M <= kKeyTile, or
// the tiled path). Where it cannot, it adds no bytes.
constexpr bool forward_transposes_keys(const Dims& d, bool with_weights) {
  return kTransposedKeysBuilt && d.n >= kTransposedKeysMinRows &&
         (d.m <= kKeyTile || forward_uses_tiles(d, with_weights));
}

// Scratch for one forward call, in bytes (alignment slack included), for
// R = forward_block_rows(dims) query rows at a time:
//  with_weights = true  (default, always enough): R rows of M scores, or
//                       the no-weights need below where that is larger.
//  with_weights = false (for callers that never ask for A): R rows of
//                       min(M, kKeyTile) scores + 2*R*Dv floats (the tile
//                       sums of a block, and the running max and sum of the
//                       rows that walk the key tiles together, or one row's
//                       accumulator), independent of M.
//  Scratch::kTransposedKeys: + Dk * min(M, kKeyTile) floats where
//                       forward_transposes_keys(dims, false), with weights
//                       too: one buffer serves either call at full speed
//                       (M > kKeyTile: only the call without weights
//                       transposes).
// It never grows with N past kBlockRows, nor with the number of heads.
constexpr size_t forward_score_rows_bytes(const Dims& d, bool tiled) {
  return forward_block_rows(d) * (tiled ? align_up(kKeyTile * sizeof(float), kWorkspaceAlign) +
                                              2 * align_up(d.dv * sizeof(float), kWorkspaceAlign)
                                        : align_up(d.m * sizeof(float), kWorkspaceAlign)) +
         kWorkspaceAlign;
}

constexpr size_t forward_workspace_bytes(const Dims& d, bool with_weights = true,
                                         Scratch scratch = kDefaultScratch) {
  const size_t own = forward_score_rows_bytes(d, forward_uses_tiles(d, with_weights));
  // With weights, also the no-weights path's need (larger where M is just
  // over kKeyTile or Dv is large), so that one buffer serves either call.
  const size_t other = with_weights ? forward_score_rows_bytes(d, forward_uses_tiles(d, false)) : 0;
  return (own > other ? own : other) +
         (scratch == Scratch::kTransposedKeys && forward_transposes_keys(d, false)
              ? d.dk * forward_transposed_keys_stride(d) * sizeof(float)
              : 0);
}

// Which logits ForwardIo::scores receives (ONNX Attention's
// qk_matmul_output_mode 0, 1 and 2; mode 3, after the softmax, is the weights):
enum class ScoreStage : uint8_t {
  kScaled,      // scale * Q K^T, every key (masked ones too)
  kSoftcapped,  // after Options::softcap (kScaled when none is set), every key
  kMasked,      // after the mask: + bias, and -inf for every key the mask drops
};

struct ForwardIo {
  const float* q = nullptr;  // [Hq][N][Dk]
  const float* k = nullptr;  // [Hkv][M][Dk]
  const float* v = nullptr;  // [Hkv][M][Dv]
  float* y = nullptr;        // [Hq][N][Dv]           required
  float* weights = nullptr;  // [Hq][N][M] softmax A   optional
  float* lse = nullptr;      // [Hq][N] log-sum-exp of the scaled, masked logits (natural log),
                             // -inf for a fully masked row; optional (the backward pass's
                             // recompute mode takes it)
  float* scores = nullptr;   // [Hq][N][M] the logits at score_stage; optional. Computed in a
                             // pass of its own when requested, so a call without it pays nothing.
  ScoreStage score_stage = ScoreStage::kScaled;
};

// Validates everything, then computes. On error nothing is written.
// ws.bytes must be at least forward_workspace_bytes(dims, io.weights != nullptr).
Status forward(const Dims& dims, const ForwardIo& io, Workspace ws, const Mask& mask = {},
               const Options& options = {});

// The scale forward() uses for these dims and options (1/sqrt(Dk) by default).
// Defined in the library, so this header needs no <cmath>.
float effective_scale(const Dims& d, const Options& o);

// Compile-time shape, owning its workspace.
//
//   static tinyattn::Attention<tinyattn::Shape<16, 16, 32, 32>> attn;  // RAM: sizeof(attn)
//   tinyattn::Status s = attn(q, k, v, y);                             // std::arrays
//   s = attn(q, k, v, y, lse);  // also the per-row log-sum-exp (AttentionBackward's input)
//
// Attention<S, Scratch::kMinimal> owns the least workspace (Scratch).
template <class S, Scratch kScratch = kDefaultScratch>
class Attention {
 public:
  static constexpr Dims dims = S::dims;
  static constexpr size_t workspace_bytes = forward_workspace_bytes(dims, true, kScratch);
  // Shape checked each extent; this also checks that every tensor is
  // addressable on this target, so no call re-checks the dims.
  static_assert(validate(dims) == Status::kOk, "tinyattn::Attention: a tensor of this shape is not addressable here");

  using Q = std::array<float, dims.q_elems()>;
  using K = std::array<float, dims.k_elems()>;
  using V = std::array<float, dims.v_elems()>;
  using Y = std::array<float, dims.y_elems()>;
  using Weights = std::array<float, dims.weight_elems()>;
  using Lse = std::array<float, dims.lse_elems()>;

  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask, Weights* weights,
                    const Options& options) {
    ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, nullptr};
    return detail::forward_compile_time<kKeyTiles>(dims, io, workspace(), mask, options,
                                            arrays_fault(q, k, v, y, weights, nullptr), kExtent);
  }
  // Without Options: the default port, bound at compile time, so the image
  // links only that port's kernels.
  Status operator()(const Q& q, const K& k, const V& v, Y& y) {
    if constexpr (kExtentEntry) {
      return detail::forward_plain_extent<kExtent>(dims, q.data(), k.data(), v.data(), y.data(), kScale, workspace(),
                                                   arrays_fault(q, k, v, y, nullptr, nullptr));
    } else {
      return detail::forward_plain_default_port<kKeyTiles>(dims, q.data(), k.data(), v.data(), y.data(), kScale,
                                                           workspace(), arrays_fault(q, k, v, y, nullptr, nullptr),
                                                           kExtent);
    }
  }
  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask, Weights* weights = nullptr) {
    ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, nullptr};
    return detail::forward_compile_time_default_port<kKeyTiles>(dims, io, workspace(), mask,
                                                         arrays_fault(q, k, v, y, weights, nullptr), kExtent);
  }

  // The same, also writing each query row's log-sum-exp (ForwardIo::lse), which
  // AttentionBackward<S> (kRecompute) takes instead of the weights.
  Status operator()(const Q& q, const K& k, const V& v, Y& y, Lse& lse, const Mask& mask, Weights* weights,
                    const Options& options) {
    ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, lse.data()};
    return detail::forward_compile_time<kKeyTiles>(dims, io, workspace(), mask, options,
                                            arrays_fault(q, k, v, y, weights, &lse), kExtent);
  }
  Status operator()(const Q& q, const K& k, const V& v, Y& y, Lse& lse, const Mask& mask = {},
                    Weights* weights = nullptr) {
    ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, lse.data()};
    return detail::forward_compile_time_default_port<kKeyTiles>(dims, io, workspace(), mask,
                                                         arrays_fault(q, k, v, y, weights, &lse), kExtent);
  }

  // Pointer form, for tensors that live elsewhere (same layouts as forward()):
  // forward() on the object's workspace, so every pointer is checked at run
  // time and ForwardIo::scores may be requested.
  Status run(const ForwardIo& io, const Mask& mask = {}, const Options& options = {}) {
    return forward(dims, io, workspace(), mask, options);
  }

 private:
  static constexpr bool kKeyTiles = forward_uses_tiles(dims, false);
  static constexpr int kExtent = detail::fixed_extent(dims.dk, dims.dv);
  static constexpr float kScale = detail::default_scale_of(dims.dk);
  // Whether the plain call's plan is a fixed-extent kernel on full blocks
  // for every finite call (Dk = Dv fixed, N a multiple of kBlockRows, one key
  // tile, no transposed keys): its entry then binds the table of that extent
  // alone (forward_plain_extent).
  static constexpr bool kExtentEntry = kExtent >= 0 && dims.dk == dims.dv && dims.n % kBlockRows == 0 &&
                                       !kKeyTiles && !(kTransposedKeysBuilt && forward_transposes_keys(dims, false));

  static_assert(workspace_bytes >= forward_workspace_bytes(dims, true, Scratch::kMinimal), "room for either forward path");

  Workspace workspace() { return Workspace{workspace_, sizeof workspace_}; }

  // Whether a is b: arrays of different types are different objects, which
  // cannot overlap, so those comparisons vanish at compile time.
  template <class A, class B>
  static bool same_array(const A* a, const B* b) {
    return std::is_same<A, B>::value && a != nullptr && static_cast<const void*>(a) == static_cast<const void*>(b);
  }

  // What forward() would find wrong with these arrays (kOk: nothing), in its order.
  static Status arrays_fault(const Q& q, const K& k, const V& v, const Y& y, const Weights* w, const Lse* lse) {
    if (w != nullptr && !fits_address_space(uint64_t{dims.hq} * dims.n * dims.m)) return Status::kBadDimension;
    const bool aliased = same_array(&y, &q) || same_array(&y, &k) || same_array(&y, &v) ||  //
                         same_array(w, &q) || same_array(w, &k) || same_array(w, &v) || same_array(w, &y) ||
                         same_array(lse, &q) || same_array(lse, &k) || same_array(lse, &v) ||
                         same_array(lse, &y) || same_array(lse, w);
    return aliased ? Status::kAliasing : Status::kOk;
  }

  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
};

}  // namespace tinyattn
