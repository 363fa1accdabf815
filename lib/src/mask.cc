#include "tinyattn/mask.h"

#include <cstdint>

namespace tinyattn {

Status validate(const Mask& mask, const Dims& d) {
  if (mask.kv_len != kAllKeys && mask.kv_len > d.m) return Status::kBadMask;
  if (mask.keep != nullptr && mask.keep_bits != nullptr) return Status::kBadMask;
  const Window& w = mask.window;
  if (w.left != kUnbounded && w.right != kUnbounded &&
      static_cast<int64_t>(w.left) + static_cast<int64_t>(w.right) < 0)
    return Status::kBadMask;
  if (w.left < -static_cast<int64_t>(kMaxDim) || w.right < -static_cast<int64_t>(kMaxDim))
    return Status::kBadMask;
  if (static_cast<uint8_t>(mask.causal) > static_cast<uint8_t>(Causal::kOffset) ||
      static_cast<uint8_t>(w.align) > static_cast<uint8_t>(Align::kOffset))
    return Status::kBadMask;
  // An offset that no part of the mask reads is a mistake, not a no-op.
  const bool offset_used = mask.causal == Causal::kOffset || (w.active() && w.align == Align::kOffset);
  if (mask.offset != 0 && !offset_used) return Status::kBadMask;
  if (mask.offset > static_cast<int64_t>(kMaxDim) || mask.offset < -static_cast<int64_t>(kMaxDim))
    return Status::kBadMask;
  // The last query sits at key offset + N - 1; past kv_len it would be a
  // position the cache does not hold (ONNX: offset = valid length - N).
  if (offset_used && mask.kv_len != kAllKeys &&
      static_cast<int64_t>(mask.offset) + static_cast<int64_t>(d.n) > static_cast<int64_t>(mask.kv_len))
    return Status::kBadMask;
  // head_stride may exceed one [N][M] mask (padded per-head masks); it only has
  // to keep the total extent addressable. Computed in 64 bits: kMaxDim^2 is 0
  // in a 32-bit size_t, which made every per-head mask invalid on 32-bit targets.
  const uint64_t stride = mask.head_stride;
  if (stride > uint64_t{kMaxDim} * kMaxDim) return Status::kBadMask;
  const uint64_t span = stride * (uint64_t{d.hq} - uint64_t{1}) + uint64_t{d.n} * d.m;  // elements
  // Two constant limits rather than a division by the element size: a 64-bit
  // division at run time links a 700-byte helper on 32-bit targets.
  const uint64_t limit = mask.bias != nullptr ? static_cast<uint64_t>(PTRDIFF_MAX) / sizeof(float)
                                              : static_cast<uint64_t>(PTRDIFF_MAX);
  if ((mask.bias != nullptr || mask.keep != nullptr || mask.keep_bits != nullptr) && span > limit)
    return Status::kBadMask;
  return Status::kOk;
}

namespace {
// Key position of query row i's diagonal (may be negative or >= m).
int64_t diagonal(Align align, int32_t offset, size_t i, size_t n, size_t m) {
  const int64_t ii = static_cast<int64_t>(i);
  if (align == Align::kOffset) return ii + offset;
  return align == Align::kTopLeft ? ii : ii + static_cast<int64_t>(m) - static_cast<int64_t>(n);
}
}  // namespace

KeyRange key_range(const Mask& mask, size_t i, size_t n, size_t m) {
  int64_t lo = 0;
  int64_t hi = static_cast<int64_t>(m);
  if (mask.causal != Causal::kNone) {
    const Align a = mask.causal == Causal::kTopLeft    ? Align::kTopLeft
                    : mask.causal == Causal::kOffset ? Align::kOffset
                                                     : Align::kBottomRight;
    const int64_t p = diagonal(a, mask.offset, i, n, m);
    if (p + 1 < hi) hi = p + 1;
  }
  const Window& w = mask.window;
  if (w.active()) {
    const int64_t p = diagonal(w.align, mask.offset, i, n, m);
    if (w.left != kUnbounded && p - w.left > lo) lo = p - w.left;
    if (w.right != kUnbounded && p + w.right + 1 < hi) hi = p + w.right + 1;
  }
  if (mask.kv_len != kAllKeys && static_cast<int64_t>(mask.kv_len) < hi) hi = mask.kv_len;
  if (lo < 0) lo = 0;
  if (lo > static_cast<int64_t>(m)) lo = static_cast<int64_t>(m);  // a window right of every key
  if (hi < lo) hi = lo;
  return KeyRange{static_cast<size_t>(lo), static_cast<size_t>(hi)};
}

}  // namespace tinyattn
