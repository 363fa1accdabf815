// The fp16 forward driver: the fp32 driver's steps (lib/src/forward.cc) on
// rows widened from fp16 into the workspace, a tile of keys at a time, with
// the same port kernels. Results are rounded to fp16 only when stored.
#include <cmath>
#include <limits>

#include "detail.h"
#include "tinyattn/forward_f16.h"

namespace tinyattn {

namespace {

using detail::Extent;

Status validate_forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask, const Options& o,
                            const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  if (!io.q || !io.k || !io.v || !io.y || !ws.data) return Status::kNullPointer;
  if (!detail::aligned(io.q) || !detail::aligned(io.k) || !detail::aligned(io.v) || !detail::aligned(io.y) ||
      !detail::aligned(io.weights) || !detail::aligned(io.lse))
    return Status::kMisaligned;
  if (ws.bytes < forward_f16_workspace_bytes(d)) return Status::kWorkspaceTooSmall;

  const Extent inputs[] = {{io.q, d.q_elems() * sizeof(half)},
                           {io.k, d.k_elems() * sizeof(half)},
                           {io.v, d.v_elems() * sizeof(half)},
                           detail::keep_extent(mask, d),
                           detail::bias_extent(mask, d)};
  const Extent outputs[] = {{io.y, d.y_elems() * sizeof(half)},
                            {io.weights, d.weight_elems() * sizeof(half)},
                            {io.lse, d.lse_elems() * sizeof(float)},
                            {ws.data, ws.bytes}};
  constexpr size_t kOutputs = sizeof outputs / sizeof outputs[0];
  for (size_t a = 0; a < kOutputs; ++a) {
    for (const Extent& in : inputs)
      if (detail::overlaps(outputs[a], in)) return Status::kAliasing;
    for (size_t b = a + 1; b < kOutputs; ++b)
      if (detail::overlaps(outputs[a], outputs[b])) return Status::kAliasing;
  }
  return Status::kOk;
}

void fill(half* p, size_t n, half value) {
  for (size_t c = 0; c < n; ++c) p[c] = value;
}

// The workspace carved into its fp32 arrays (sizes as forward_f16_workspace_bytes).
struct Scratch {
  float *s, *q, *tile, *acc, *part;
};

Scratch carve(const Dims& d, Workspace ws) {
  float* base = detail::workspace_floats(ws);
  auto floats = [](size_t n) { return align_up(n * sizeof(float), kWorkspaceAlign) / sizeof(float); };
  Scratch sc;
  sc.s = base;
  sc.q = sc.s + floats(d.m);
  sc.tile = sc.q + floats(d.dk);
  sc.acc = sc.tile + floats(f16_key_tile(d) * (d.dk > d.dv ? d.dk : d.dv));
  sc.part = sc.acc + floats(d.dv);
  return sc;
}

}  // namespace

Status forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask, const Options& o) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_forward_f16(d, io, ws, mask, o, &kp); s != Status::kOk) return s;
  const KernelsF32& kern = *kp;
  const float scale = effective_scale(d, o);
  const bool element_masks = detail::has_element_masks(mask);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const half zero = half::from_bits(0), half_nan = to_half(nan);
  const size_t tile = f16_key_tile(d);
  const Scratch sc = carve(d, ws);
  float* s = sc.s;

  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv_head = h / d.group();
    const half* k_head = io.k + kv_head * d.m * d.dk;
    const half* v_head = io.v + kv_head * d.m * d.dv;
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      half* y_row = io.y + row * d.dv;
      half* w_row = io.weights ? io.weights + row * d.m : nullptr;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      const size_t len = r.size();

      if (w_row) {
        fill(w_row, r.lo, zero);
        fill(w_row + r.hi, d.m - r.hi, zero);
      }
      float max = -inf;
      if (len > 0) {
        to_float(io.q + row * d.dk, sc.q, d.dk);
        for (size_t j0 = 0; j0 < len; j0 += tile) {
          const size_t count = len - j0 < tile ? len - j0 : tile;
          to_float(k_head + (r.lo + j0) * d.dk, sc.tile, count * d.dk);
          kern.scores(sc.q, sc.tile, d.dk, count, d.dk, scale, s + j0);
        }
        if (element_masks) detail::apply_element_masks(mask, d, h, i, r, s);
        max = kern.row_max(s, len);
      }
      if (max == -inf) {  // no visible key: zero output, zero weights
        fill(y_row, d.dv, zero);
        if (w_row) fill(w_row + r.lo, len, zero);
        if (io.lse) io.lse[row] = -inf;
        continue;
      }
      if (std::isnan(max)) {  // a NaN logit poisons its own row only
        fill(y_row, d.dv, half_nan);
        if (w_row) fill(w_row + r.lo, len, half_nan);
        if (io.lse) io.lse[row] = nan;
        continue;
      }
      float sum;
      if (max == inf) {  // the +inf logits share all the weight
        sum = 0.0f;
        for (size_t j = 0; j < len; ++j) {
          s[j] = s[j] == inf ? 1.0f : 0.0f;
          sum += s[j];
        }
      } else {
        sum = kern.exp_shift_sum(s, len, max);
      }
      const float inv = 1.0f / sum;
      float a = inv;
      if (w_row) {
        kern.scale(s, len, inv);
        to_half(s, w_row + r.lo, len);
        a = 1.0f;
      }
      for (size_t c = 0; c < d.dv; ++c) sc.acc[c] = 0.0f;
      for (size_t j0 = 0; j0 < len; j0 += tile) {
        const size_t count = len - j0 < tile ? len - j0 : tile;
        to_float(v_head + (r.lo + j0) * d.dv, sc.tile, count * d.dv);
        kern.weighted_sum(s + j0, sc.tile, d.dv, count, d.dv, a, sc.part);
        kern.axpy(1.0f, sc.part, sc.acc, d.dv);
      }
      to_half(sc.acc, y_row, d.dv);
      if (io.lse) io.lse[row] = max == inf ? inf : max + std::log(sum);
    }
  }
  return Status::kOk;
}

}  // namespace tinyattn
