// The fp32 forward driver: validation, heads, masks and the softmax bookkeeping.
// The arithmetic itself is the port's (KernelsF32).
#include <cmath>
#include <cstring>
#include <limits>

#include "detail.h"
#include "tinyattn/attention.h"
#include "tinyattn/exp.h"

namespace tinyattn {
namespace detail {

Extent keep_extent(const Mask& mask, const Dims& d) {
  if (mask.keep) return {mask.keep, mask_rows_bytes(d, d.m, mask.head_stride)};
  if (mask.keep_bits)
    return {mask.keep_bits, mask_rows_bytes(d, keep_bits_row_bytes(d.m), mask.head_stride)};
  return {nullptr, 0};
}

Extent bias_extent(const Mask& mask, const Dims& d) {
  if (!mask.bias) return {nullptr, 0};
  return {mask.bias, mask_rows_bytes(d, uint64_t{d.m} * sizeof(float), uint64_t{mask.head_stride} * sizeof(float))};
}

Status validate_common(const Dims& d, const Mask& mask, const Options& o, const KernelsF32** kernels) {
  if (Status s = validate(d); s != Status::kOk) return s;
  if (Status s = validate(mask, d); s != Status::kOk) return s;
  if (mask.bias && !aligned(mask.bias)) return Status::kMisaligned;
  if (o.scale && !std::isfinite(*o.scale)) return Status::kBadScale;
  const KernelsF32* k = kernels_f32(o.port);
  if (k == nullptr) return Status::kPortUnavailable;
  *kernels = k;
  return Status::kOk;
}

void apply_element_masks(const Mask& mask, const Dims& d, size_t h, size_t i, KeyRange r, float* s) {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  const size_t head_offset = h * mask.head_stride;
  // Bias first, keep mask last: a dropped key must end at exactly -inf even when
  // its bias is +inf or NaN (-inf + inf would be NaN and poison the row).
  if (mask.bias) {
    const float* row = mask.bias + head_offset + i * d.m;
    for (size_t j = r.lo; j < r.hi; ++j) s[j - r.lo] += row[j];
  }
  if (mask.keep) {
    const uint8_t* row = mask.keep + head_offset + i * d.m;
    for (size_t j = r.lo; j < r.hi; ++j)
      if (!row[j]) s[j - r.lo] = minus_inf;
  } else if (mask.keep_bits) {
    const uint8_t* row = mask.keep_bits + head_offset + i * keep_bits_row_bytes(d.m);
    for (size_t j = r.lo; j < r.hi; ++j)
      if (!((row[j >> 3] >> (j & 7)) & 1u)) s[j - r.lo] = minus_inf;
  }
}

}  // namespace detail

namespace {

using detail::Extent;
using detail::fill;

Status validate_forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                        const Options& o, const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  if (!io.q || !io.k || !io.v || !io.y || !ws.data) return Status::kNullPointer;
  if (!detail::aligned(io.q) || !detail::aligned(io.k) || !detail::aligned(io.v) ||
      !detail::aligned(io.y) || !detail::aligned(io.weights) || !detail::aligned(io.lse))
    return Status::kMisaligned;
  // On 32-bit targets Hq*N*M floats may not be addressable (validate(Dims)
  // checks every other tensor).
  if (io.weights && !fits_address_space(uint64_t{d.hq} * d.n * d.m)) return Status::kBadDimension;
  const size_t ws_needed = forward_workspace_bytes(d, io.weights != nullptr);
  if (ws.bytes < ws_needed) return Status::kWorkspaceTooSmall;

  const Extent inputs[] = {{io.q, d.q_elems() * sizeof(float)},
                           {io.k, d.k_elems() * sizeof(float)},
                           {io.v, d.v_elems() * sizeof(float)},
                           detail::keep_extent(mask, d),
                           detail::bias_extent(mask, d)};
  const Extent outputs[] = {{io.y, d.y_elems() * sizeof(float)},
                            {io.weights, d.weight_elems() * sizeof(float)},
                            {io.lse, d.lse_elems() * sizeof(float)},
                            // only the part forward() writes: a larger caller buffer may hold other data
                            {ws.data, ws_needed}};
  return detail::check_aliasing(inputs, outputs);
}


constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Everything one query row needs, resolved once by the head/row loops.
struct Row {
  const float* q = nullptr;
  const float* k = nullptr;  // key r.lo of this row's KV head
  const float* v = nullptr;  // value r.lo
  float* y = nullptr;
  float* weights = nullptr;  // full row of M, or null
  float* lse = nullptr;      // one float, or null
  KeyRange r;
  size_t h = 0, i = 0;
};

struct Problem {
  const Dims& d;
  const KernelsF32& kern;
  const Mask& mask;
  float scale;
  bool element_masks;
};

// Scores of keys [r.lo + off, r.lo + off + len) of a row, masks applied.
void row_scores(const Problem& p, const Row& row, size_t off, size_t len, float* s) {
  p.kern.scores(row.q, row.k + off * p.d.dk, p.d.dk, len, p.d.dk, p.scale, s);
  if (p.element_masks)
    detail::apply_element_masks(p.mask, p.d, row.h, row.i, KeyRange{row.r.lo + off, row.r.lo + off + len}, s);
}

void finish_empty(const Problem& p, const Row& row) {  // no visible key: zeros
  fill(row.y, p.d.dv, 0.0f);
  if (row.weights) fill(row.weights + row.r.lo, row.r.size(), 0.0f);
  if (row.lse) *row.lse = -kInf;
}

// A NaN logit poisons its own row only. Masked keys keep weight exactly 0
// even here (s: the row's masked scores; the tiled path has no weights).
void finish_nan(const Problem& p, const Row& row, const float* s) {
  fill(row.y, p.d.dv, kNaN);
  if (row.weights)
    for (size_t j = 0; j < row.r.size(); ++j) row.weights[row.r.lo + j] = s[j] == -kInf ? 0.0f : kNaN;
  if (row.lse) *row.lse = kNaN;
}

// s[j] -> exp(s[j] - max) and their sum; with max == +inf, the limit of
// softmax: the +inf logits share all the weight.
float exponentiate(const Problem& p, float* s, size_t len, float max) {
  if (max != kInf) return p.kern.exp_shift_sum(s, len, max);
  float sum = 0.0f;
  for (size_t j = 0; j < len; ++j) {
    s[j] = s[j] == kInf ? 1.0f : 0.0f;
    sum += s[j];
  }
  return sum;
}

// One pass over the whole row kept in the workspace (M floats).
void plain_row(const Problem& p, const Row& row, float* s) {
  const size_t len = row.r.size();
  row_scores(p, row, 0, len, s);
  const float max = p.kern.row_max(s, len);
  if (max == -kInf) return finish_empty(p, row);
  if (max != max) return finish_nan(p, row, s);
  const float sum = exponentiate(p, s, len, max);
  const float inv = 1.0f / sum;
  if (row.weights) {
    p.kern.scale(s, len, inv);
    std::memcpy(row.weights + row.r.lo, s, len * sizeof(float));
    p.kern.weighted_sum(s, row.v, p.d.dv, len, p.d.dv, 1.0f, row.y);
  } else {
    p.kern.weighted_sum(s, row.v, p.d.dv, len, p.d.dv, inv, row.y);
  }
  if (row.lse) *row.lse = max == kInf ? kInf : max + std::log(sum);
}

// Online softmax over key tiles: a running max m, a running sum l and an
// unnormalised accumulator acc; when a tile raises the max, acc and l are
// rescaled by exp(m_old - m_new). Workspace: kKeyTile scores + 2*Dv floats.
void tiled_row(const Problem& p, const Row& row, float* s, float* acc, float* part) {
  const size_t len = row.r.size();
  const size_t dv = p.d.dv;
  float m = -kInf, l = 0.0f;
  fill(acc, dv, 0.0f);
  for (size_t off = 0; off < len; off += kKeyTile) {
    const size_t n = len - off < kKeyTile ? len - off : kKeyTile;
    row_scores(p, row, off, n, s);
    const float tile_max = p.kern.row_max(s, n);
    if (tile_max != tile_max) return finish_nan(p, row, nullptr);
    if (tile_max == -kInf) continue;  // nothing visible in this tile
    if (tile_max > m) {
      // Rescale what was accumulated under the old max (exp(-inf) = 0 when
      // m was -inf, or when the new max is +inf: earlier finite keys drop out).
      const float factor = m == -kInf ? 0.0f : tile_max == kInf ? 0.0f : exp_poly(m - tile_max);
      // A zero factor drops what came before outright: scaling would turn an
      // infinite value (from V) into NaN, and those keys now have weight 0.
      if (factor == 0.0f) fill(acc, dv, 0.0f);
      else p.kern.scale(acc, dv, factor);
      l *= factor;
      m = tile_max;
    }
    l += exponentiate(p, s, n, m);
    p.kern.weighted_sum(s, row.v + off * dv, dv, n, dv, 1.0f, part);
    p.kern.axpy(1.0f, part, acc, dv);
  }
  if (m == -kInf) return finish_empty(p, row);
  const float inv = 1.0f / l;
  for (size_t c = 0; c < dv; ++c) row.y[c] = acc[c] * inv;
  if (row.lse) *row.lse = m == kInf ? kInf : m + std::log(l);
}

}  // namespace

Status forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_forward(d, io, ws, mask, o, &kp); s != Status::kOk) return s;
  detail::forward_validated(*kp, d, io, ws, mask, effective_scale(d, o));
  return Status::kOk;
}

void detail::forward_validated(const KernelsF32& kern, const Dims& d, const ForwardIo& io, Workspace ws,
                               const Mask& mask, float scale) {
  const Problem p{d, kern, mask, scale, detail::has_element_masks(mask)};
  const bool tiled = forward_uses_tiles(d, io.weights != nullptr);
  float* s = detail::workspace_floats(ws);
  // The tiled path's accumulators follow the score tile (see forward_workspace_bytes).
  float* acc = tiled ? s + align_up(kKeyTile, kWorkspaceAlign / sizeof(float)) : nullptr;
  float* part = tiled ? acc + align_up(d.dv, kWorkspaceAlign / sizeof(float)) : nullptr;

  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv_head = h / d.group();
    for (size_t i = 0; i < d.n; ++i) {
      const size_t idx = h * d.n + i;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      const Row row{io.q + idx * d.dk,
                    io.k + (kv_head * d.m + r.lo) * d.dk,
                    io.v + (kv_head * d.m + r.lo) * d.dv,
                    io.y + idx * d.dv,
                    io.weights ? io.weights + idx * d.m : nullptr,
                    io.lse ? io.lse + idx : nullptr,
                    r, h, i};
      if (row.weights) {  // keys outside the range never get weight
        fill(row.weights, r.lo, 0.0f);
        fill(row.weights + r.hi, d.m - r.hi, 0.0f);
      }
      if (r.empty()) finish_empty(p, row);
      else if (tiled) tiled_row(p, row, s, acc, part);
      else plain_row(p, row, s);
    }
  }
}

}  // namespace tinyattn
