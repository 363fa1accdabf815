// The fp32 forward driver: validation, heads, masks and the softmax bookkeeping.
// The arithmetic itself is the port's (KernelsF32).
#include <cmath>
#include <cstring>
#include <limits>

#include "detail.h"
#include "tinyattn/attention.h"

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
  return {mask.bias, mask_rows_bytes(d, d.m * sizeof(float), mask.head_stride * sizeof(float))};
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
  if (mask.keep) {
    const uint8_t* row = mask.keep + head_offset + i * d.m;
    for (size_t j = r.lo; j < r.hi; ++j)
      if (!row[j]) s[j - r.lo] = minus_inf;
  } else if (mask.keep_bits) {
    const uint8_t* row = mask.keep_bits + head_offset + i * keep_bits_row_bytes(d.m);
    for (size_t j = r.lo; j < r.hi; ++j)
      if (!((row[j >> 3] >> (j & 7)) & 1u)) s[j - r.lo] = minus_inf;
  }
  if (mask.bias) {
    const float* row = mask.bias + head_offset + i * d.m;
    for (size_t j = r.lo; j < r.hi; ++j) s[j - r.lo] += row[j];
  }
}

}  // namespace detail

namespace {

using detail::Extent;

Status validate_forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                        const Options& o, const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  if (!io.q || !io.k || !io.v || !io.y || !ws.data) return Status::kNullPointer;
  if (!detail::aligned(io.q) || !detail::aligned(io.k) || !detail::aligned(io.v) ||
      !detail::aligned(io.y) || !detail::aligned(io.weights) || !detail::aligned(io.lse))
    return Status::kMisaligned;
  if (ws.bytes < forward_workspace_bytes(d)) return Status::kWorkspaceTooSmall;

  const Extent inputs[] = {{io.q, d.q_elems() * sizeof(float)},
                           {io.k, d.k_elems() * sizeof(float)},
                           {io.v, d.v_elems() * sizeof(float)},
                           detail::keep_extent(mask, d),
                           detail::bias_extent(mask, d)};
  const Extent outputs[] = {{io.y, d.y_elems() * sizeof(float)},
                            {io.weights, d.weight_elems() * sizeof(float)},
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

void fill(float* p, size_t n, float value) {
  for (size_t c = 0; c < n; ++c) p[c] = value;
}

}  // namespace

Status forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_forward(d, io, ws, mask, o, &kp); s != Status::kOk) return s;
  const KernelsF32& kern = *kp;
  const float scale = effective_scale(d, o);
  const bool element_masks = detail::has_element_masks(mask);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float* s = detail::workspace_floats(ws);

  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv_head = h / d.group();
    const float* k_head = io.k + kv_head * d.m * d.dk;
    const float* v_head = io.v + kv_head * d.m * d.dv;
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      const float* q_row = io.q + row * d.dk;
      float* y_row = io.y + row * d.dv;
      float* w_row = io.weights ? io.weights + row * d.m : nullptr;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      const size_t len = r.size();

      if (w_row) {  // keys outside the range never get weight
        fill(w_row, r.lo, 0.0f);
        fill(w_row + r.hi, d.m - r.hi, 0.0f);
      }
      float max = -inf;
      if (len > 0) {
        kern.scores(q_row, k_head + r.lo * d.dk, d.dk, len, d.dk, scale, s);
        if (element_masks) detail::apply_element_masks(mask, d, h, i, r, s);
        max = kern.row_max(s, len);
      }
      if (max == -inf) {  // no visible key: zero output, zero weights
        fill(y_row, d.dv, 0.0f);
        if (w_row) fill(w_row + r.lo, len, 0.0f);
        if (io.lse) io.lse[row] = -inf;
        continue;
      }
      if (std::isnan(max)) {  // a NaN logit poisons its own row only
        fill(y_row, d.dv, nan);
        if (w_row) fill(w_row + r.lo, len, nan);
        if (io.lse) io.lse[row] = nan;
        continue;
      }
      float sum;
      if (max == inf) {
        // The limit of softmax as logits grow: the +inf logits share all the weight.
        sum = 0.0f;
        for (size_t j = 0; j < len; ++j) {
          s[j] = s[j] == inf ? 1.0f : 0.0f;
          sum += s[j];
        }
      } else {
        sum = kern.exp_shift_sum(s, len, max);
      }
      const float inv = 1.0f / sum;
      if (w_row) {
        kern.scale(s, len, inv);
        std::memcpy(w_row + r.lo, s, len * sizeof(float));
        kern.weighted_sum(s, v_head + r.lo * d.dv, d.dv, len, d.dv, 1.0f, y_row);
      } else {
        kern.weighted_sum(s, v_head + r.lo * d.dv, d.dv, len, d.dv, inv, y_row);
      }
      if (io.lse) io.lse[row] = max == inf ? inf : max + std::log(sum);
    }
  }
  return Status::kOk;
}

}  // namespace tinyattn
