// The checks every entry point shares (detail.h), and the element masks
// every float path applies to its logits.
#include <cmath>
#include <limits>

#include "detail.h"

namespace tinyattn {
namespace detail {

Tensor keep_tensor(const Mask& mask, const Dims& d) {
  if (mask.keep) return {mask.keep, mask_rows_bytes(d, d.m, mask.head_stride)};
  if (mask.keep_bits) return {mask.keep_bits, mask_rows_bytes(d, keep_bits_row_bytes(d.m), mask.head_stride)};
  return {};
}

Tensor bias_tensor(const Mask& mask, const Dims& d) {
  if (!mask.bias) return {};
  return {mask.bias, mask_rows_bytes(d, uint64_t{d.m} * sizeof(float), uint64_t{mask.head_stride} * sizeof(float)),
          alignof(float)};
}

Status validate_common(const Dims& d, const Mask& mask, const Options& o, const KernelsF32** kernels) {
  if (Status s = validate(d); s != Status::kOk) return s;
  return validate_call(d, mask, o, kernels);
}

Status validate_call(const Dims& d, const Mask& mask, const Options& o, const KernelsF32** kernels) {
  return validate_call_on(d, mask, o, kernels_f32(o.port), kernels);
}

Status validate_call_on(const Dims& d, const Mask& mask, const Options& o, const KernelsF32* table,
                        const KernelsF32** kernels) {
  if (!plain_call(mask, o)) {
    if (Status s = validate(mask, d); s != Status::kOk) return s;
    if (mask.bias && !aligned(mask.bias)) return Status::kMisaligned;
    if (o.scale && !std::isfinite(*o.scale)) return Status::kBadScale;
    if (o.softcap && !(*o.softcap > 0.0f && std::isfinite(*o.softcap))) return Status::kBadScale;
  }
  if (table == nullptr) return Status::kPortUnavailable;
  *kernels = table;
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
}  // namespace tinyattn
