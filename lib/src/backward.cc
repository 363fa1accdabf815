// The fp32 backward driver: validation, heads, masks and the softmax
// vector-Jacobian product; the arithmetic is the port's (KernelsF32):
//   scores        Abar_ij = dY_i . V_j   and the recomputed logits S_ij
//   exp_shift_sum A_ij = exp(S_ij - lse_i)
//   weighted_sum  dQ_i = scale * sum_j dS_ij K_j
//   axpy          the rank-1 updates dK_j += scale dS_ij Q_i, dV_j += A_ij dY_i
#include <cmath>
#include <cstring>
#include <limits>

#include "row_core.h"
#include "tinyattn/backward.h"

namespace tinyattn {

namespace {

using detail::Tensor;
using detail::fill;

using detail::kInf;

// False when the call reads or writes an Hq*N*M array this target cannot address.
bool rows_addressable(const Dims& d, bool full_rows) {
  return !full_rows || fits_address_space(uint64_t{d.hq} * d.n * d.m);
}

Status validate_backward(const Dims& d, BackwardMode mode, const BackwardIo& io, Workspace ws,
                         const Mask& mask, const Options& o, const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  if (mode != BackwardMode::kSavedWeights && mode != BackwardMode::kRecompute) return Status::kUnsupported;
  const bool saved = mode == BackwardMode::kSavedWeights;
  constexpr size_t kF = sizeof(float);
  // Only what this mode reads counts as an input (an unused pointer may point anywhere).
  const Tensor inputs[] = {{io.q, d.q_elems() * kF, kF, true},
                           {io.k, d.k_elems() * kF, kF, true},
                           {io.v, d.v_elems() * kF, kF, true},
                           {io.dy, d.y_elems() * kF, kF, true},
                           {io.y, d.y_elems() * kF, kF, false},
                           {io.weights, saved ? d.weight_elems() * kF : 0, kF, saved},
                           {io.lse, saved ? 0 : d.lse_elems() * kF, kF, !saved},
                           detail::keep_tensor(mask, d),
                           detail::bias_tensor(mask, d)};
  const Tensor outputs[] = {{io.dq, d.q_elems() * kF, kF, true},
                            {io.dk, d.k_elems() * kF, kF, true},
                            {io.dv, d.v_elems() * kF, kF, true},
                            {io.ds, d.weight_elems() * kF, kF, false}};
  // On 32-bit targets Hq*N*M floats (weights, dS) may not be addressable.
  return detail::validate_tensors(inputs, outputs, ws, backward_workspace_bytes(d, mode), ws.bytes,
                                  rows_addressable(d, saved || io.ds != nullptr));
}


struct Problem {
  detail::RowContext c;
  const Dims& d;
  const KernelsF32& kern;
  float scale = 1.0f;
  size_t tile = 0;
};

// Everything one query row needs, resolved once by the head/row loops.
// Key-indexed pointers start at key r.lo of the row's KV head.
struct Row {
  const float* q;
  const float* dy;
  const float* y;  // null: rowsum(Abar o A) is computed from A and Abar
  const float* a;  // saved weights, or null (recompute)
  float lse;
  const float* k;
  const float* v;
  float* dq;
  float* dk;
  float* dv;
  float* ds;       // null when not requested
  KeyRange r;
  size_t h, i;
  float inf_share;  // recompute with lse = +inf: weight of each +inf logit
};

size_t tile_len(const Problem& p, const Row& row, size_t off) {
  const size_t left = row.r.size() - off;
  return left < p.tile ? left : p.tile;
}

// Logits of keys [r.lo + off, r.lo + off + n), masks applied (as forward()).
void row_logits(const Problem& p, const Row& row, size_t off, size_t n, float* s) {
  p.kern.scores(row.q, row.k + off * p.d.dk, p.d.dk, n, p.d.dk, p.scale, s);
  detail::finish_logits(p.c, row.q, row.k + off * p.d.dk, row.h, row.i, row.r.lo + off, n, s);
}

// The weights A of one tile: the saved ones, or recomputed into buf.
const float* tile_weights(const Problem& p, const Row& row, size_t off, size_t n, float* buf) {
  if (row.a) return row.a + off;
  row_logits(p, row, off, n, buf);
  if (row.lse == kInf) {
    // The forward's limit of softmax: the +inf logits share all the weight.
    for (size_t j = 0; j < n; ++j) buf[j] = buf[j] == kInf ? row.inf_share : 0.0f;
  } else if (row.lse != row.lse) {
    // A NaN row: NaN weights, but masked keys keep exactly 0, as in the
    // forward's weights (exp(-inf - NaN) would be NaN).
    for (size_t j = 0; j < n; ++j) buf[j] = buf[j] == -kInf ? 0.0f : row.lse;
  } else {
    // exp(S - lse) = exp(S - max) / sum: A without a second pass. A masked
    // logit (-inf) gives exactly 0; a NaN lse gives NaN, which propagates.
    p.kern.exp_shift_sum(buf, n, row.lse);
  }
  return buf;
}

// Abar_ij = dY_i . V_j for the keys of one tile.
void tile_abar(const Problem& p, const Row& row, size_t off, size_t n, float* abar) {
  p.kern.scores(row.dy, row.v + off * p.d.dv, p.d.dv, n, p.d.dv, 1.0f, abar);
}

float dot(const Problem& p, const float* x, const float* y, size_t n) {
  float out;
  p.kern.scores(x, y, n, 1, n, 1.0f, &out);
  return out;
}

// With a softcap, dS so far is dL/dt for the capped logit t = c tanh(u / c)
// of the scaled score u; times dt/du it is dL/du, which dQ and dK take. t is
// recomputed per key that has a gradient (the bias, added after the cap,
// cannot be subtracted back out exactly).
void apply_cap_slope(const Problem& p, const Row& row, size_t off, size_t n, float* ds) {
  const float c = p.c.softcap;
  for (size_t j = 0; j < n; ++j) {
    if (ds[j] == 0.0f) continue;
    const float* k = row.k + (off + j) * p.d.dk;
    float t;
    p.kern.scores(row.q, k, p.d.dk, 1, p.d.dk, p.scale, &t);
    detail::settle_logits(row.q, k, p.d.dk, 1, p.d.dk, p.scale, &t);
    detail::cap_logits(c, &t, 1);
    ds[j] *= detail::cap_slope(c, t);
  }
}

// Recompute mode, lse = +inf: how many logits of the row are +inf.
size_t count_inf_logits(const Problem& p, const Row& row, float* buf) {
  size_t count = 0;
  for (size_t off = 0; off < row.r.size(); off += p.tile) {
    const size_t n = tile_len(p, row, off);
    row_logits(p, row, off, n, buf);
    for (size_t j = 0; j < n; ++j) count += buf[j] == kInf ? 1 : 0;
  }
  return count;
}

void backward_row(const Problem& p, Row row, float* wbuf, float* abar, float* part) {
  const Dims& d = p.d;
  const size_t len = row.r.size();
  // Nothing visible: zero gradients. (lse = -inf is forward's mark for it;
  // with saved weights such a row is all zeros and falls out below.)
  if (len == 0 || (!row.a && row.lse == -kInf)) {
    fill(row.dq, d.dk, 0.0f);
    if (row.ds) fill(row.ds, len, 0.0f);
    return;
  }
  if (!row.a && row.lse == kInf) row.inf_share = 1.0f / static_cast<float>(count_inf_logits(p, row, wbuf));

  const bool one_tile = len <= p.tile;
  // D_i = rowsum(Abar o A)_i. The identity
  //   sum_j Abar_ij A_ij = sum_j A_ij (dY_i . V_j) = dY_i . (sum_j A_ij V_j) = dY_i . Y_i
  // gives it in O(Dv) from the forward's Y instead of a pass over the keys
  // (O(M Dv), the cost of Abar itself) before dS can be formed. Without Y, a
  // single-tile row computes A and Abar once and keeps them for the main pass;
  // a longer row pays one extra pass.
  float dsum;
  const float* a_kept = nullptr;
  if (row.y) {
    dsum = dot(p, row.dy, row.y, d.dv);
  } else {
    dsum = 0.0f;
    for (size_t off = 0; off < len; off += p.tile) {
      const size_t n = tile_len(p, row, off);
      const float* a = tile_weights(p, row, off, n, wbuf);
      tile_abar(p, row, off, n, abar);
      dsum += dot(p, a, abar, n);
      if (one_tile) a_kept = a;
    }
  }

  for (size_t off = 0; off < len; off += p.tile) {
    const size_t n = tile_len(p, row, off);
    const float* a = a_kept;
    if (!a) {
      a = tile_weights(p, row, off, n, wbuf);
      tile_abar(p, row, off, n, abar);
    }
    // dS = A o (Abar - D), in place of Abar. A masked key has A = 0, hence dS = 0,
    // exactly, even when Abar or D is NaN or inf (from dY or V): 0 * NaN would
    // be NaN (found by tests/fuzz/backward_fuzz.cc; the reference skips A = 0).
    float* ds = abar;
    for (size_t j = 0; j < n; ++j) ds[j] = a[j] == 0.0f ? 0.0f : a[j] * (abar[j] - dsum);
    if (row.ds) std::memcpy(row.ds + off, ds, n * sizeof(float));
    if (p.c.softcap != 0.0f) apply_cap_slope(p, row, off, n, ds);

    const float* k = row.k + off * d.dk;
    if (off == 0) {
      p.kern.weighted_sum(ds, k, d.dk, n, d.dk, p.scale, row.dq);
    } else {
      p.kern.weighted_sum(ds, k, d.dk, n, d.dk, p.scale, part);
      p.kern.axpy(1.0f, part, row.dq, d.dk);
    }
    // Rank-1 updates; exact zeros (masked or underflowed keys) are skipped, so
    // masked keys are never touched. A NaN is not zero and propagates.
    for (size_t j = 0; j < n; ++j) {
      const size_t key = off + j;
      if (ds[j] != 0.0f) p.kern.axpy(p.scale * ds[j], row.q, row.dk + key * d.dk, d.dk);
      if (a[j] != 0.0f) p.kern.axpy(a[j], row.dy, row.dv + key * d.dv, d.dv);
    }
  }
}

}  // namespace

Status backward(const Dims& d, BackwardMode mode, const BackwardIo& io, Workspace ws, const Mask& mask,
                const Options& o) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_backward(d, mode, io, ws, mask, o, &kp); s != Status::kOk) return s;
  const float scale = effective_scale(d, o);
  const Problem p{{d, *kp, mask, scale, detail::has_element_masks(mask), detail::softcap_of(o)},
                  d,
                  *kp,
                  scale,
                  backward_tile(d)};
  const bool saved = mode == BackwardMode::kSavedWeights;

  // Workspace layout (backward_workspace_bytes): Abar/dS tile, then the
  // recomputed weights tile (kRecompute), then the partial dQ (M > kKeyTile).
  constexpr size_t kAlignFloats = kWorkspaceAlign / sizeof(float);
  float* abar = detail::workspace_floats(ws);
  float* next = abar + align_up(p.tile, kAlignFloats);
  float* wbuf = saved ? nullptr : next;
  if (!saved) next += align_up(p.tile, kAlignFloats);
  float* part = backward_uses_tiles(d) ? next : nullptr;

  // dK and dV accumulate over query rows and heads.
  fill(io.dk, d.k_elems(), 0.0f);
  fill(io.dv, d.v_elems(), 0.0f);

  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv_head = h / d.group();
    for (size_t i = 0; i < d.n; ++i) {
      const size_t idx = h * d.n + i;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      const size_t key0 = kv_head * d.m + r.lo;
      float* ds_row = io.ds ? io.ds + idx * d.m : nullptr;
      if (ds_row) {  // keys outside the range have dS = 0
        fill(ds_row, r.lo, 0.0f);
        fill(ds_row + r.hi, d.m - r.hi, 0.0f);
      }
      const Row row{io.q + idx * d.dk,
                    io.dy + idx * d.dv,
                    io.y ? io.y + idx * d.dv : nullptr,
                    saved ? io.weights + idx * d.m + r.lo : nullptr,
                    saved ? 0.0f : io.lse[idx],
                    io.k + key0 * d.dk,
                    io.v + key0 * d.dv,
                    io.dq + idx * d.dk,
                    io.dk + key0 * d.dk,
                    io.dv + key0 * d.dv,
                    ds_row ? ds_row + r.lo : nullptr,
                    r,
                    h,
                    i,
                    0.0f};
      backward_row(p, row, wbuf, abar, part);
    }
  }
  return Status::kOk;
}

}  // namespace tinyattn
