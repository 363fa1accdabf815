// The fp32 forward: validation, then the call's plan (plan.h) run: the
// fixed-extent kernel (forward_core.h), or the route's loop over heads and
// blocks of rows here, into the row core (row_core.h) or the port's block
// primitives (forward_blocks.cc). The arithmetic itself is the port's
// (KernelsF32).
#include "forward_core.h"
#include "tinyattn/attention.h"

namespace tinyattn {

namespace {

using detail::Block;
using detail::Problem;
using detail::Tensor;
using detail::transposes_keys;

// The workspace bytes forward() writes before the transposed keys (with
// weights, forward_workspace_bytes may count more: room for either path).
size_t score_rows_written(const Dims& d, bool with_weights) {
  return forward_score_rows_bytes(d, forward_uses_tiles(d, with_weights));
}
size_t transposed_keys_bytes(const Dims& d) { return d.dk * forward_transposed_keys_stride(d) * sizeof(float); }

// A frame of its own: its extent tables are not on the stack while forward()
// runs the blocks (the board stack bound, docs/hardening.md).
TINYATTN_NOINLINE Status validate_forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                                          const Options& o, const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  const bool with_weights = io.weights != nullptr;
  // Only the part forward() writes counts as its output: a larger caller buffer may hold other data.
  const size_t ws_written = score_rows_written(d, with_weights) +
                            (transposes_keys(**kernels, d, with_weights, ws.bytes) ? transposed_keys_bytes(d) : 0);
  constexpr size_t kF = sizeof(float);
  const Tensor inputs[] = {{io.q, d.q_elems() * kF, kF, true},
                           {io.k, d.k_elems() * kF, kF, true},
                           {io.v, d.v_elems() * kF, kF, true},
                           detail::keep_tensor(mask, d),
                           detail::bias_tensor(mask, d)};
  const Tensor outputs[] = {{io.y, d.y_elems() * kF, kF, true},
                            {io.weights, d.weight_elems() * kF, kF, false},
                            {io.lse, d.lse_elems() * kF, kF, false},
                            {io.scores, d.weight_elems() * kF, kF, false}};
  if (io.scores && static_cast<uint8_t>(io.score_stage) > static_cast<uint8_t>(ScoreStage::kMasked))
    return Status::kUnsupported;
  // On 32-bit targets Hq*N*M floats may not be addressable (validate(Dims)
  // checks every other tensor).
  return detail::validate_tensors(inputs, outputs, ws, forward_workspace_bytes(d, with_weights, Scratch::kMinimal),
                                  ws_written,
                                  (!with_weights && !io.scores) || fits_address_space(uint64_t{d.hq} * d.n * d.m));
}

// Rows [i0, i0 + count) of head h as a block: their key span, and whether a
// row among them sees no key. Clears the weights outside each row's range.
Block make_block(const Problem& p, size_t h, size_t i0, size_t count, bool* any_empty) {
  const Dims& d = p.d;
  if (p.io.weights) {  // keys outside a row's range never get weight
    for (size_t i = i0; i < i0 + count; ++i) {
      const KeyRange r = p.range(i);
      float* w = p.io.weights + (h * d.n + i) * d.m;
      detail::fill(w, r.lo, 0.0f);
      detail::fill(w + r.hi, d.m - r.hi, 0.0f);
    }
  }
  const KeyRange u = p.range.span(i0, i0 + count, any_empty);
  const size_t kv_head = h / d.group();
  return Block{h, i0, count, u, p.io.k + (kv_head * d.m + u.lo) * d.dk, p.io.v + (kv_head * d.m + u.lo) * d.dv};
}

// The row algorithms in frames of their own (the board stack bound,
// docs/hardening.md): inlined, their locals would sit under the blocks'.
template <bool kKeyTiles>
TINYATTN_NOINLINE void one_row(const Problem& p, size_t h, size_t i, bool tiled, float* s, float* acc, float* part) {
  const detail::Row row = detail::make_row(p, h, i);
  if (row.r.empty())
    detail::finish_empty(row, p.d.dv);
  else if (kKeyTiles && tiled)
    detail::tiled_row(p, row, s, acc, part);
  else
    detail::plain_row(p, row, s, nullptr, nullptr);
}

// ForwardIo::scores: every key of every row at the requested stage, in the
// row core's order (overflow rule, softcap, masks). A pass of its own over
// all M keys (the softmax never computes the ones the mask drops).
TINYATTN_NOINLINE void write_scores(const KernelsF32& kern, const Dims& d, const ForwardIo& io, const Mask& mask,
                                    float scale, float softcap) {
  const bool element_masks = detail::has_element_masks(mask);
  for (size_t h = 0; h < d.hq; ++h) {
    const float* k = io.k + (h / d.group()) * d.m * d.dk;
    for (size_t i = 0; i < d.n; ++i) {
      const float* q = io.q + (h * d.n + i) * d.dk;
      float* out = io.scores + (h * d.n + i) * d.m;
      kern.scores(q, k, d.dk, d.m, d.dk, scale, out);
      detail::settle_logits(q, k, d.dk, d.m, d.dk, scale, out);
      if (io.score_stage == ScoreStage::kScaled) continue;
      if (softcap != 0.0f) detail::cap_logits(softcap, out, d.m);
      if (io.score_stage == ScoreStage::kSoftcapped) continue;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      detail::fill(out, r.lo, -detail::kInf);
      detail::fill(out + r.hi, d.m - r.hi, -detail::kInf);
      if (element_masks && !r.empty()) detail::apply_element_masks(mask, d, h, i, r, out + r.lo);
    }
  }
}

// validate_forward for the usual call -- Mask{}, Options without scale or
// softcap, no weights, lse or scores -- as one test that passes only where
// validate_forward would return kOk: nine tensors become four and the
// workspace, and nothing is checked that such a call cannot get wrong. Any
// other call, and every fault, goes on to validate_forward, which names it
// (tests/hardening/status_test.cc gives the plain call every fault and
// compares). About 80 instructions where validate_forward takes 500; not on
// microcontrollers (detail::kFastPlainPaths).
[[maybe_unused]] TINYATTN_NOINLINE bool valid_plain_call(const Dims& d, const ForwardIo& io, Workspace ws,
                                                         const Mask& mask, const Options& o,
                                                         const KernelsF32** kernels) {
  if (!detail::plain_call(mask, o) || io.weights || io.lse || io.scores || validate(d) != Status::kOk) return false;
  const KernelsF32* table = kernels_f32(o.port);
  constexpr size_t kF = sizeof(float);
  const uintptr_t addresses = reinterpret_cast<uintptr_t>(io.q) | reinterpret_cast<uintptr_t>(io.k) |
                              reinterpret_cast<uintptr_t>(io.v) | reinterpret_cast<uintptr_t>(io.y);
  if (table == nullptr || !io.q || !io.k || !io.v || !io.y || !ws.data || addresses % kF != 0 ||
      ws.bytes < forward_workspace_bytes(d, false, Scratch::kMinimal))
    return false;
  const size_t ws_written =
      score_rows_written(d, false) + (transposes_keys(*table, d, false, ws.bytes) ? transposed_keys_bytes(d) : 0);
  const detail::Extent inputs[] = {{io.q, d.q_elems() * kF}, {io.k, d.k_elems() * kF}, {io.v, d.v_elems() * kF}};
  const detail::Extent outputs[] = {{io.y, d.y_elems() * kF}, {ws.data, ws_written}};
  if (detail::check_aliasing(inputs, 3, outputs, 2) != Status::kOk) return false;
  *kernels = table;
  return true;
}

// A frame of its own: in forward()'s, the blocks ran 8 ns slower at
// (8,8,16,16) on AVX-512 (forward()'s other paths' registers and saves).
[[maybe_unused]] TINYATTN_NOINLINE void run_plain_call(const KernelsF32& kern, const Dims& d, const ForwardIo& io,
                                                       Workspace ws, float scale) {
  detail::run_plain<true>(kern, d, io, ws, scale, detail::fixed_extent(d.dk, d.dv));
}

}  // namespace

Status forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o) {
  const KernelsF32* kp = nullptr;
  if (detail::kFastPlainPaths && valid_plain_call(d, io, ws, mask, o, &kp)) {
    run_plain_call(*kp, d, io, ws, effective_scale(d, o));
    return Status::kOk;
  }
  if (Status s = validate_forward(d, io, ws, mask, o, &kp); s != Status::kOk) return s;
  detail::run_checked<true>(*kp, d, io, ws, mask, o, detail::fixed_extent(d.dk, d.dv));
  if (io.scores) write_scores(*kp, d, io, mask, effective_scale(d, o), detail::softcap_of(o));
  return Status::kOk;
}

template <bool kKeyTiles>
void detail::run_route(const KernelsF32& kern, const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                       float scale, float softcap) {
  const RouteTraits c = route_traits(mask, softcap != 0.0f, io.weights != nullptr);
  ForwardPlan plan;
  plan_route<kKeyTiles>(kern, d, c, ws.bytes, plan);
  const bool tiled = plan.route == Route::kTiledBlocks || plan.route == Route::kTiledRows;
  const size_t rows = forward_block_rows(d);
  float* s = detail::workspace_floats(ws);
  Problem p{{d, kern, mask, scale, c.element_masks, softcap}, io, detail::Ranges(mask, d)};
  // The transposed keys follow the score rows (forward_workspace_bytes).
  if (plan.transposed_keys) {
    p.kt = s + (score_rows_written(d, io.weights != nullptr) - kWorkspaceAlign) / sizeof(float);
    p.ldkt = forward_transposed_keys_stride(d);
  }
  // Layout (see forward_workspace_bytes): `rows` score rows, lds floats apart;
  // in the tiled path then `rows` accumulators and `rows` tile sums, lda apart.
  // A group of the tiled path accumulates into its rows' outputs and keeps
  // its rows' running max and sum where the accumulators would be: at least
  // 16 floats per row of the block (lda >= 16), so groups of 32 rows and more.
  constexpr size_t kAlignFloats = kWorkspaceAlign / sizeof(float);
  const size_t lds = tiled ? kKeyTile : align_up(d.m, kAlignFloats);
  const size_t lda = align_up(d.dv, kAlignFloats);
  float* acc = tiled ? s + rows * lds : nullptr;
  float* part = tiled ? acc + rows * lda : nullptr;
  const size_t group = rows * lda / 2 / kBlockRows * kBlockRows;  // rows per tiled group

  // Blocks need a V without inf or NaN in the keys any row sees
  // (KernelsF32::weighted_sum_block); checked once per KV head, when a block
  // first needs it. The fused block (attend_block) checks its own outputs
  // instead and declines when one is not finite.
  const bool fused = kFusedBlocksBuilt && plan.route == Route::kFusedBlocks;
  const bool blocks = plan.route == Route::kBlocks || plan.route == Route::kTiledBlocks ||
                      (fused && plan.fallback == Route::kBlocks);
  const KeyRange seen = blocks ? p.range.span(0, d.n) : KeyRange{};
  size_t checked_head = d.hkv;    // none yet
  size_t kt_head = checked_head;  // the KV head in p.kt (plain path): none yet
  bool v_finite = false;

  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv_head = h / d.group();
    auto head_v_finite = [&] {
      if (kv_head != checked_head) {
        checked_head = kv_head;
        v_finite = detail::all_finite(io.v + (kv_head * d.m + seen.lo) * d.dv, seen.size() * d.dv);
      }
      return v_finite;
    };
    if (detail::kTransposedKeysUsed && p.kt && !tiled && kv_head != kt_head && !seen.empty()) {  // M <= kKeyTile
      detail::transpose_keys(p, kv_head, seen.lo, seen.hi);
      kt_head = kv_head;
    }
    if (tiled && blocks && head_v_finite()) {
      for (size_t g0 = 0; g0 < d.n; g0 += group)
        detail::tiled_group(p, h, g0, d.n - g0 < group ? d.n : g0 + group, s, part, lda, acc, acc + group);
      continue;
    }
    for (size_t i0 = 0; i0 < d.n; i0 += kBlockRows) {
      const size_t count = d.n - i0 < kBlockRows ? d.n - i0 : kBlockRows;
      bool any_empty = false;
      Block b = make_block(p, h, i0, count, &any_empty);
      b.kt_lo = seen.lo;
      if (fused && !any_empty && detail::fused_block(p, b, s, lds)) continue;
      if (blocks && i0 + 1 < d.n && !any_empty && head_v_finite()) {  // two rows or more
        detail::plain_block(p, b, s, lds);                            // tiled blocks took the group path above
        continue;
      }
      for (size_t i = i0; i < i0 + count; ++i) one_row<kKeyTiles>(p, h, i, tiled, s, acc, part);
    }
  }
}

template void detail::run_route<true>(const KernelsF32&, const Dims&, const ForwardIo&, Workspace, const Mask&,
                                      float, float);
template void detail::run_route<false>(const KernelsF32&, const Dims&, const ForwardIo&, Workspace, const Mask&,
                                       float, float);

}  // namespace tinyattn
