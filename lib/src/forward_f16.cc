// The fp16 forward driver: the fp32 driver's steps (lib/src/forward.cc) on
// rows widened from fp16 into the workspace, a tile of keys at a time, with
// the same port kernels. Results are rounded to fp16 only when stored.
// With F16Compute::kNativeF16Products the scores and P V come from the native
// fp16 kernels (f16_native.h) reading the halves in place; the softmax stays
// on the port's fp32 kernels.
#include <cmath>
#include <limits>

#include "detail.h"
#include "f16_native.h"
#include "tinyattn/exp.h"
#include "tinyattn/forward_f16.h"

namespace tinyattn {

namespace {

using detail::Extent;
using detail::fill;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Status validate_forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask, const Options& o,
                            const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  if (!io.q || !io.k || !io.v || !io.y || !ws.data) return Status::kNullPointer;
  if (!detail::aligned(io.q) || !detail::aligned(io.k) || !detail::aligned(io.v) || !detail::aligned(io.y) ||
      !detail::aligned(io.weights) || !detail::aligned(io.lse))
    return Status::kMisaligned;
  if (ws.bytes < forward_f16_workspace_bytes(d, io.weights != nullptr)) return Status::kWorkspaceTooSmall;

  const Extent inputs[] = {{io.q, d.q_elems() * sizeof(half)},
                           {io.k, d.k_elems() * sizeof(half)},
                           {io.v, d.v_elems() * sizeof(half)},
                           detail::keep_extent(mask, d),
                           detail::bias_extent(mask, d)};
  const Extent outputs[] = {{io.y, d.y_elems() * sizeof(half)},
                            {io.weights, d.weight_elems() * sizeof(half)},
                            {io.lse, d.lse_elems() * sizeof(float)},
                            {ws.data, ws.bytes}};
  return detail::check_aliasing(inputs, outputs);
}


// The workspace carved into its fp32 arrays (sizes as forward_f16_workspace_bytes).
struct Scratch {
  float *s, *q, *tile, *acc, *part;
};

Scratch carve(const Dims& d, Workspace ws, bool tiled) {
  float* base = detail::workspace_floats(ws);
  auto floats = [](size_t n) { return align_up(n * sizeof(float), kWorkspaceAlign) / sizeof(float); };
  Scratch sc{};
  sc.s = base;
  sc.q = sc.s + floats(tiled ? kF16KeyTile : d.m);
  sc.tile = sc.q + floats(d.dk);
  sc.acc = sc.tile + floats(f16_key_tile(d) * (d.dk > d.dv ? d.dk : d.dv));
  sc.part = sc.acc + floats(d.dv);
  return sc;
}

struct Problem {
  const Dims& d;
  const KernelsF32& kern;
  const detail::KernelsF16Native* native;  // null: widen to fp32
  const Mask& mask;
  float scale;
  bool element_masks;
  Scratch sc;
};

// Everything one query row needs.
struct Row {
  const half* q = nullptr;  // the query row
  const half* k = nullptr;  // key r.lo of this row's KV head
  const half* v = nullptr;  // value r.lo
  half* y = nullptr;
  half* weights = nullptr;  // full row of M, or null
  float* lse = nullptr;     // one float, or null
  KeyRange r;
  size_t h = 0, i = 0;
};

// Scores of keys [r.lo + off, r.lo + off + count) into s, masks applied.
void tile_scores(const Problem& p, const Row& row, size_t off, size_t count, float* s) {
  if (p.native) {
    p.native->scores(row.q, row.k + off * p.d.dk, p.d.dk, count, p.d.dk, p.scale, s);
  } else {
    to_float(row.k + off * p.d.dk, p.sc.tile, count * p.d.dk);
    p.kern.scores(p.sc.q, p.sc.tile, p.d.dk, count, p.d.dk, p.scale, s);
  }
  if (p.element_masks)
    detail::apply_element_masks(p.mask, p.d, row.h, row.i, KeyRange{row.r.lo + off, row.r.lo + off + count}, s);
}

// acc += a * sum_j s[j] v[r.lo + off + j] over count keys.
void tile_values(const Problem& p, const Row& row, size_t off, size_t count, const float* s, float a) {
  if (p.native) {
    p.native->weighted_sum(s, row.v + off * p.d.dv, p.d.dv, count, p.d.dv, a, p.sc.part);
  } else {
    to_float(row.v + off * p.d.dv, p.sc.tile, count * p.d.dv);
    p.kern.weighted_sum(s, p.sc.tile, p.d.dv, count, p.d.dv, a, p.sc.part);
  }
  p.kern.axpy(1.0f, p.sc.part, p.sc.acc, p.d.dv);
}

void finish_empty(const Problem& p, const Row& row) {  // no visible key: zeros
  fill(row.y, p.d.dv, half::from_bits(0));
  if (row.weights) fill(row.weights + row.r.lo, row.r.size(), half::from_bits(0));
  if (row.lse) *row.lse = -kInf;
}

void finish_nan(const Problem& p, const Row& row) {  // a NaN logit poisons its own row only
  const half nan = to_half(kNaN);
  fill(row.y, p.d.dv, nan);
  if (row.weights) fill(row.weights + row.r.lo, row.r.size(), nan);
  if (row.lse) *row.lse = kNaN;
}

// s[j] -> exp(s[j] - max), returning their sum; with max == +inf the +inf
// logits share all the weight (the limit of softmax).
float exponentiate(const Problem& p, float* s, size_t len, float max) {
  if (max != kInf) return p.kern.exp_shift_sum(s, len, max);
  float sum = 0.0f;
  for (size_t j = 0; j < len; ++j) {
    s[j] = s[j] == kInf ? 1.0f : 0.0f;
    sum += s[j];
  }
  return sum;
}

// One pass over the row's M scores, kept whole (needed for the weights).
void plain_row(const Problem& p, const Row& row) {
  const size_t len = row.r.size(), tile = f16_key_tile(p.d);
  float* s = p.sc.s;
  for (size_t off = 0; off < len; off += tile) tile_scores(p, row, off, len - off < tile ? len - off : tile, s + off);
  const float max = p.kern.row_max(s, len);
  if (max == -kInf) return finish_empty(p, row);
  if (max != max) return finish_nan(p, row);
  const float sum = exponentiate(p, s, len, max);
  const float inv = 1.0f / sum;
  float a = inv;
  if (row.weights) {
    p.kern.scale(s, len, inv);
    to_half(s, row.weights + row.r.lo, len);
    a = 1.0f;
  }
  for (size_t c = 0; c < p.d.dv; ++c) p.sc.acc[c] = 0.0f;
  for (size_t off = 0; off < len; off += tile) tile_values(p, row, off, len - off < tile ? len - off : tile, s + off, a);
  to_half(p.sc.acc, row.y, p.d.dv);
  if (row.lse) *row.lse = max == kInf ? kInf : max + std::log(sum);
}

// Online softmax over key tiles (as forward()'s tiled path): running max m,
// running sum l, unnormalised accumulator rescaled by exp(m_old - m_new).
void tiled_row(const Problem& p, const Row& row) {
  const size_t len = row.r.size(), dv = p.d.dv;
  float* s = p.sc.s;
  float m = -kInf, l = 0.0f;
  for (size_t c = 0; c < dv; ++c) p.sc.acc[c] = 0.0f;
  for (size_t off = 0; off < len; off += kF16KeyTile) {
    const size_t count = len - off < kF16KeyTile ? len - off : kF16KeyTile;
    tile_scores(p, row, off, count, s);
    const float tile_max = p.kern.row_max(s, count);
    if (tile_max != tile_max) return finish_nan(p, row);
    if (tile_max == -kInf) continue;  // nothing visible in this tile
    if (tile_max > m) {
      const float factor = m == -kInf ? 0.0f : tile_max == kInf ? 0.0f : exp_poly(m - tile_max);
      p.kern.scale(p.sc.acc, dv, factor);
      l *= factor;
      m = tile_max;
    }
    l += exponentiate(p, s, count, m);
    tile_values(p, row, off, count, s, 1.0f);
  }
  if (m == -kInf) return finish_empty(p, row);
  p.kern.scale(p.sc.acc, dv, 1.0f / l);
  to_half(p.sc.acc, row.y, dv);
  if (row.lse) *row.lse = m == kInf ? kInf : m + std::log(l);
}

}  // namespace

Status forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask, const OptionsF16& o) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_forward_f16(d, io, ws, mask, o, &kp); s != Status::kOk) return s;
  const detail::KernelsF16Native* native = nullptr;
  if (o.compute == F16Compute::kNativeF16Products) {
    native = detail::f16_native_kernels();
    if (!native) return Status::kUnsupported;  // no fp16 arithmetic in this build or CPU
  } else if (o.compute != F16Compute::kWidenToF32) {
    return Status::kUnsupported;
  }
  const bool tiled = forward_f16_uses_tiles(d, io.weights != nullptr);
  const Problem p{d, *kp, native, mask, effective_scale(d, o), detail::has_element_masks(mask), carve(d, ws, tiled)};

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
        fill(row.weights, r.lo, half::from_bits(0));
        fill(row.weights + r.hi, d.m - r.hi, half::from_bits(0));
      }
      if (r.empty()) {
        finish_empty(p, row);
        continue;
      }
      if (!native) to_float(row.q, p.sc.q, d.dk);
      if (tiled) tiled_row(p, row);
      else plain_row(p, row);
    }
  }
  return Status::kOk;
}

}  // namespace tinyattn
