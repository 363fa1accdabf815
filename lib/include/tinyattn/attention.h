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

// Alignment the library gives its scratch arrays (it aligns inside the
// workspace itself, so callers may pass any pointer; the slack is included).
inline constexpr size_t kWorkspaceAlign = 64;

constexpr size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Keys are processed in tiles of this many when the weights are not requested
// and M is larger (online softmax, FlashAttention style): the workspace then
// stays O(kKeyTile + Dv) however long the key sequence. With M <= kKeyTile, or
// when the weights are requested, each row's scores are kept whole (one pass
// over the keys, no rescaling) -- measured faster for short rows.
inline constexpr size_t kKeyTile = 256;

// Query rows forward() carries through the softmax together: the ports' block
// primitives take this many at once, and the workspace holds this many rows.
inline constexpr size_t kBlockRows = 4;

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

// forward() transposes keys only for N >= this many query rows: the
// transposition moves each key element once, against N multiply-adds (at N =
// 16 and 32 it measured no faster, at 64 to 256 about 10%).
inline constexpr size_t kTransposedKeysMinRows = 32;

// Whether builds for this target have the transposed keys at all: not on
// M-profile cores (Cortex-M), where the SIMD port is Helium, the ports with
// scores_block_transposed run emulated vectors, and RAM and stack are scarce.
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
inline constexpr bool kTransposedKeysBuilt = false;
#else
inline constexpr bool kTransposedKeysBuilt = true;
#endif

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

namespace detail {
// sqrt(a) in double for a >= 1, at compile time: Newton's steps from above,
// which decrease until they reach the root's last bits.
constexpr double sqrt_from_above(double a) {
  double x = a;
  for (int step = 0; step < 64; ++step) {
    const double next = 0.5 * (x + a / x);
    if (!(next < x)) break;
    x = next;
  }
  return x;
}
// effective_scale's default, 1/sqrt(Dk), as a constant expression: the
// root rounded to float, then 1.0f / it, the library's two roundings.
// tests/api/api.cc holds it to effective_scale() for every Dk on every
// target; Attention<S>'s plain call passes it, so its shape costs no sqrt.
constexpr float default_scale_of(size_t dk) {
  return 1.0f / static_cast<float>(sqrt_from_above(static_cast<double>(dk)));
}

// Extents the SIMD ports have fused kernels specialised for (fixed trip
// counts, unrolled tiles; KernelsF32::attend_fixed): Dk and Dv each one of
// 8, 16, 32, 64. The index of (Dk, Dv) in the ports' tables, or -1. The
// SIMD ports compile Dk = Dv of these; other pairs' entries are attend_block.
inline constexpr size_t kFixedExtentWidths = 4;
inline constexpr size_t kFixedExtents = kFixedExtentWidths * kFixedExtentWidths;
constexpr int fixed_width_index(size_t w) { return w == 8 ? 0 : w == 16 ? 1 : w == 32 ? 2 : w == 64 ? 3 : -1; }
constexpr int fixed_extent(size_t dk, size_t dv) {
  return fixed_width_index(dk) < 0 || fixed_width_index(dv) < 0
             ? -1
             : fixed_width_index(dk) * static_cast<int>(kFixedExtentWidths) + fixed_width_index(dv);
}

// Attention<S>'s forward on its std::arrays: forward() without what S and
// the object settle at compile time (the dims, the arrays' sizes and
// alignment, the workspace, which no caller pointer reaches). It checks what
// a call can change -- the mask, the scale, the port, the mask's arrays
// against the outputs -- returns `arrays`, the fault the caller found in its
// arrays (kOk if none), where forward() would, and runs the validated
// forward. kKeyTiles: whether the key-tiled path is linked in (false when
// S's rows fit one tile), so an image holds only the code its shapes run.
// extent: fixed_extent(S's Dk, Dv), chosen at compile time: which of the
// port's fixed-extent kernels runs the call's blocks (-1: none fits).
template <bool kKeyTiles>
Status forward_fixed(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o,
                     Status arrays, int extent);
extern template Status forward_fixed<true>(const Dims&, const ForwardIo&, Workspace, const Mask&, const Options&,
                                           Status, int);
extern template Status forward_fixed<false>(const Dims&, const ForwardIo&, Workspace, const Mask&, const Options&,
                                            Status, int);
// forward_fixed() with default Options on the build's default port, bound at
// compile time (default_kernels_f32): an image whose Attention<S> calls
// pass no Options links no other port's kernels.
template <bool kKeyTiles>
Status forward_fixed_default_port(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, Status arrays,
                                  int extent);
extern template Status forward_fixed_default_port<true>(const Dims&, const ForwardIo&, Workspace, const Mask&, Status,
                                                        int);
extern template Status forward_fixed_default_port<false>(const Dims&, const ForwardIo&, Workspace, const Mask&,
                                                         Status, int);
// The plain call, attn(q, k, v, y): no mask, weights, lse or Options, on the
// default port. The tensors come as pointers, in registers: at the small
// shapes a block is bound by its chain of latencies, and every pointer a
// layer stores and the next reloads delays the first block's loads (this
// entry took the call from 138.5 to 130 ns at (8,8,16,16) on AVX-512;
// docs/performance.md).
// scale: detail::default_scale_of(d.dk), computed at compile time.
template <bool kKeyTiles>
Status forward_plain_default_port(const Dims& d, const float* q, const float* k, const float* v, float* y,
                                  float scale, Workspace ws, Status arrays, int extent);
extern template Status forward_plain_default_port<true>(const Dims&, const float*, const float*, const float*, float*,
                                                        float, Workspace, Status, int);
extern template Status forward_plain_default_port<false>(const Dims&, const float*, const float*, const float*,
                                                         float*, float, Workspace, Status, int);
}  // namespace detail

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
    return detail::forward_fixed<kKeyTiles>(dims, io, workspace(), mask, options,
                                            arrays_fault(q, k, v, y, weights, nullptr), kExtent);
  }
  // Without Options: the default port, bound at compile time, so the image
  // links only that port's kernels.
  Status operator()(const Q& q, const K& k, const V& v, Y& y) {
    return detail::forward_plain_default_port<kKeyTiles>(dims, q.data(), k.data(), v.data(), y.data(), kScale,
                                                         workspace(), arrays_fault(q, k, v, y, nullptr, nullptr),
                                                         kExtent);
  }
  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask, Weights* weights = nullptr) {
    ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, nullptr};
    return detail::forward_fixed_default_port<kKeyTiles>(dims, io, workspace(), mask,
                                                         arrays_fault(q, k, v, y, weights, nullptr), kExtent);
  }

  // The same, also writing each query row's log-sum-exp (ForwardIo::lse), which
  // AttentionBackward<S> (kRecompute) takes instead of the weights.
  Status operator()(const Q& q, const K& k, const V& v, Y& y, Lse& lse, const Mask& mask, Weights* weights,
                    const Options& options) {
    ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, lse.data()};
    return detail::forward_fixed<kKeyTiles>(dims, io, workspace(), mask, options,
                                            arrays_fault(q, k, v, y, weights, &lse), kExtent);
  }
  Status operator()(const Q& q, const K& k, const V& v, Y& y, Lse& lse, const Mask& mask = {},
                    Weights* weights = nullptr) {
    ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr, lse.data()};
    return detail::forward_fixed_default_port<kKeyTiles>(dims, io, workspace(), mask,
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
