// Masks. A key j is visible to query i only if every mask set below allows it;
// masked keys get weight exactly 0. A query row with no visible key yields a
// zero output row, zero weights and a log-sum-exp of -inf (never NaN, never
// the uniform weights that a large negative fill value such as -1e9 gives).
//
// Structured masks (causal, window, kv_len) give each query row one contiguous
// key range [lo, hi); no key outside the union of the ranges is ever touched
// (four consecutive rows go through the kernels together over the union of
// their ranges, a few keys wider than each; a row's keys outside its own
// range get weight exactly 0). The element masks (keep bytes, keep bits,
// additive bias) are applied inside each row's range.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/shape.h"

namespace tinyattn {

// Where the diagonal of a causal or windowed mask sits when N != M.
//   kTopLeft:     query i sits at key position i (PyTorch is_causal, tril()).
//   kBottomRight: query i sits at key position i + M - N (FlashAttention):
//                 the last query sees key M - 1, the end of the buffer. Right
//                 for a KV cache only when every one of its M keys is valid.
//   kOffset:      query i sits at key position i + Mask::offset (ONNX
//                 Attention, FlashAttention with per-sequence key lengths):
//                 for N new queries after P cached keys, offset = P, however
//                 many keys the buffer has room for.
// Which to use (docs/core.md, "Causal alignment"):
//   prefill (N = M, no cache):          kTopLeft (or kOffset, offset 0);
//   chunked prefill / decode into a fixed buffer of M keys of which
//   `valid` are filled, the N new ones last: Mask::causal_cache(valid, N)
//   (kOffset, offset = valid - N, kv_len = valid);
//   decode over a full buffer (valid = M): kBottomRight equals it.
enum class Align : uint8_t { kTopLeft, kBottomRight, kOffset };

enum class Causal : uint8_t { kNone, kTopLeft, kBottomRight, kOffset };

inline constexpr int32_t kUnbounded = INT32_MAX;
inline constexpr uint32_t kAllKeys = UINT32_MAX;

struct Window {
  // Query i at diagonal position p(i) (see Align; kOffset: i + Mask::offset) sees keys j with
  //   p(i) - left <= j <= p(i) + right.
  // kUnbounded means no limit on that side. left + right must be >= 0.
  int32_t left = kUnbounded;
  int32_t right = kUnbounded;
  Align align = Align::kTopLeft;

  constexpr bool active() const { return left != kUnbounded || right != kUnbounded; }
};

struct Mask {
  Causal causal = Causal::kNone;
  Window window{};
  // Key padding: only keys j < kv_len are valid (a partly filled KV cache).
  uint32_t kv_len = kAllKeys;
  // The diagonal of Causal::kOffset and Align::kOffset: query i sits at key
  // i + offset (may be negative). Must be 0 unless one of them is used, and
  // with kv_len set, offset + N <= kv_len (no query past the valid keys).
  int32_t offset = 0;
  // Boolean keep-mask, true = attend (as PyTorch's boolean attn_mask).
  // keep:      bytes [N][M], nonzero = attend.
  // keep_bits: bits  [N][ceil(M/8)] row-major, each row starting on a byte,
  //            bit (j % 8) of byte j / 8 (LSB first) = key j.
  // At most one of the two may be set.
  const uint8_t* keep = nullptr;
  const uint8_t* keep_bits = nullptr;
  // Additive float bias [N][M] added to the scaled logits; -inf masks a key.
  const float* bias = nullptr;
  // Elements between consecutive heads for keep/keep_bits/bias; 0 (default)
  // broadcasts the same [N][M] mask to every query head.
  size_t head_stride = 0;

  // Readable constructors; fields can also be set directly.
  static constexpr Mask none() { return Mask{}; }
  static constexpr Mask causal_top_left() { Mask m; m.causal = Causal::kTopLeft; return m; }
  static constexpr Mask causal_bottom_right() { Mask m; m.causal = Causal::kBottomRight; return m; }
  // Query i sees keys j <= i + offset.
  static constexpr Mask causal_offset(int32_t offset) { Mask m; m.causal = Causal::kOffset; m.offset = offset; return m; }
  // ONNX Attention's causal mask over a partly filled cache: the N new
  // queries are the last of `valid` keys (offset = valid - N), and keys from
  // `valid` on are padding. With valid < N the first N - valid queries see
  // no key.
  static constexpr Mask causal_cache(uint32_t valid, uint32_t n) {
    Mask m = causal_offset(static_cast<int32_t>(valid) - static_cast<int32_t>(n));
    m.kv_len = valid;
    return m;
  }
  static constexpr Mask sliding_window(int32_t left, int32_t right, Align align) {
    Mask m; m.window = Window{left, right, align}; return m;
  }
  static constexpr Mask key_padding(uint32_t valid_keys) { Mask m; m.kv_len = valid_keys; return m; }
  static constexpr Mask keep_bytes(const uint8_t* k) { Mask m; m.keep = k; return m; }
  static constexpr Mask keep_bitmask(const uint8_t* k) { Mask m; m.keep_bits = k; return m; }
  static constexpr Mask additive(const float* b) { Mask m; m.bias = b; return m; }
};

constexpr size_t keep_bits_row_bytes(size_t m) { return (m + 7) / 8; }

struct KeyRange {
  size_t lo = 0;
  size_t hi = 0;  // exclusive; lo >= hi means no visible key
  constexpr size_t size() const { return hi > lo ? hi - lo : 0; }
  constexpr bool empty() const { return hi <= lo; }
};

// Checks the mask against the dimensions (kv_len <= M, window not empty,
// keep and keep_bits not both set, offset used and within +-kMaxDim, and
// offset + N <= kv_len when both are given).
Status validate(const Mask& mask, const Dims& d);

// The contiguous key range that causal, window and kv_len leave to query row i.
// Defined for valid masks; element masks are not considered here.
KeyRange key_range(const Mask& mask, size_t i, size_t n, size_t m);

}  // namespace tinyattn
