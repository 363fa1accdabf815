// A fixed-capacity key/value cache for on-device decoding: the keys and
// values of the tokens seen so far, per layer, with append and attend.
//
// KvCache<T, Hq, Hkv, Dk, Dv, Capacity, MaxNew, SlidingWindow>
//   T:        storage and compute type: float (forward()), half
//             (forward_f16()) or int8_t (forward_i8(), with a plan);
//   Hq, Hkv:  query and key/value heads (Hq % Hkv == 0: grouped-query);
//   Dk, Dv:   key and value widths;
//   Capacity: token slots per KV head;
//   MaxNew:   the most tokens one append/attend takes (1: decode; more:
//             chunked prefill, several tokens per step);
//   SlidingWindow: 0 keeps the first Capacity tokens (append past them is
//             kCacheFull); W > 0 makes the cache a ring in which each query
//             sees itself and the W - 1 tokens before it (sliding-window
//             models). The ring never moves data: token t lives in slot
//             t % Capacity, and Capacity >= W + MaxNew - 1 keeps every key the
//             newest MaxNew queries see.
//
// Storage is K[Hkv][Capacity][Dk] and V[Hkv][Capacity][Dv], forward()'s
// layout with M = Capacity, so attend runs the library's forward over the
// cache in place, with the mask ONNX Attention gives a cache:
//  * linear: query i of the n newest tokens sits at key position
//    size() - n + i and sees every key up to it (Mask::causal_cache);
//  * ring: the same rule on absolute positions, limited to the window; the
//    visible slots of each query are a keep-bit row (a slot's order does not
//    change a softmax, only the order of its sums: int8 results are the same
//    bytes as a linear cache's, float ones agree within rounding).
// Every step of a decode equals the matching row of one causal (and, in a
// ring, sliding-window) forward over the whole sequence; the tests hold it to
// that on every target.
//
// RAM: sizeof(KvCache<...>) (kStorageBytes of keys and values plus the
// attend's workspace and mask row), a constant; nothing is allocated.
//
// A decode loop over a KvCache:
//
//   static tinyattn::KvCache<float, 2, 1, 16, 16, 64> cache;  // Hq 2, Hkv 1, Dk = Dv = 16, 64 tokens
//   for (size_t t = 0; t < steps; ++t) {
//     model_step(t, q, k, v);  // this token's Q[2][1][16], K[1][1][16], V[1][1][16]
//     tinyattn::Status s = cache.append(k, v, 1);  // kCacheFull after 64 tokens
//     if (s == tinyattn::Status::kOk) s = cache.attend(q, y, 1);  // Y[2][1][16]
//     if (s != tinyattn::Status::kOk) break;
//   }
//
// (tests/kv_cache/kv_cache_example.cc compiles and runs these lines, on every
// target's suite; docs/core.md shows them too.)
//
// append(k, v, n) copies n new tokens (K[Hkv][n][Dk], V[Hkv][n][Dv], the
// layout forward() takes for n keys); attend(q, y, n, extra...) computes the
// n newest tokens' outputs (Q[Hq][n][Dk] -> Y[Hq][n][Dv]), where extra is
// what the type's forward takes after the mask: Options for float, OptionsF16
// for half, an Int8Plan and optionally Options for int8_t. Statuses: those of
// the forward, plus kBadDimension for n == 0, n > MaxNew or (attend) n >
// size(), kNullPointer, kCacheFull; on any status but kOk nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/attention.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/mask.h"
#include "tinyattn/quant.h"
#include "tinyattn/shape.h"
#include "tinyattn/status.h"

namespace tinyattn {

namespace detail {

// What attend runs for each storage type: one forward call over the cache.
template <class T>
struct KvCacheForward;

template <>
struct KvCacheForward<float> {
  static constexpr size_t workspace_bytes(const Dims& d) { return forward_workspace_bytes(d, false); }
  static Status run(const Dims& d, const float* q, const float* k, const float* v, float* y, Workspace ws,
                    const Mask& mask, const Options& options = {}) {
    return forward(d, ForwardIo{q, k, v, y, nullptr, nullptr}, ws, mask, options);
  }
};

template <>
struct KvCacheForward<half> {
  static constexpr size_t workspace_bytes(const Dims& d) { return forward_f16_workspace_bytes(d, false); }
  static Status run(const Dims& d, const half* q, const half* k, const half* v, half* y, Workspace ws,
                    const Mask& mask, const OptionsF16& options = {}) {
    return forward_f16(d, ForwardIoF16{q, k, v, y, nullptr, nullptr}, ws, mask, options);
  }
};

template <>
struct KvCacheForward<int8_t> {
  static constexpr size_t workspace_bytes(const Dims& d) { return forward_i8_workspace_bytes(d); }
  static Status run(const Dims& d, const int8_t* q, const int8_t* k, const int8_t* v, int8_t* y, Workspace ws,
                    const Mask& mask, const Int8Plan& plan, const Options& options = {}) {
    return forward_i8(d, ForwardIoI8{q, k, v, y, nullptr, nullptr}, plan, ws, mask, options);
  }
};

// The cache itself at run-time extents: KvCache runs it on its template
// arguments (constants the compiler folds in) and the C API's
// tinyattn_kv_cache on the extents given to tinyattn_kv_cache_init, so both
// append, mask and attend with the same code.
struct KvCacheShape {
  size_t hq, hkv, dk, dv;
  size_t capacity;  // token slots per KV head
  size_t max_new;   // the most tokens one append/attend takes
  size_t window;    // 0: linear; W > 0: a ring of sliding window W
};

// The dims attend's forward runs with for n new tokens.
constexpr Dims kv_cache_dims(const KvCacheShape& s, size_t n) { return Dims{n, s.capacity, s.dk, s.dv, s.hq, s.hkv}; }
constexpr bool kv_cache_max_new_fits(const KvCacheShape& s) { return s.max_new <= s.capacity; }
// A ring holds every key its newest max_new queries see.
constexpr bool kv_cache_ring_fits(const KvCacheShape& s) {
  return s.window == 0 || (s.max_new <= s.capacity && s.window <= s.capacity - s.max_new + 1);
}
// kOk when a cache of this shape can exist: what KvCache's static_asserts
// require, as a status for run-time extents.
constexpr Status kv_cache_validate(const KvCacheShape& s) {
  const Status dims = validate(kv_cache_dims(s, s.max_new));
  if (dims != Status::kOk) return dims;
  return kv_cache_max_new_fits(s) && kv_cache_ring_fits(s) ? Status::kOk : Status::kBadDimension;
}
// Tokens the slots hold: all appended (linear), the last capacity of them (ring).
constexpr size_t kv_cache_size(const KvCacheShape& s, size_t position) {
  return position < s.capacity ? position : s.capacity;
}

template <class T>
void kv_cache_copy(const T* from, T* to, size_t count) {
  for (size_t i = 0; i < count; ++i) to[i] = from[i];
}

// Copies n new tokens (K[hkv][n][dk], V[hkv][n][dv]) into their slots and
// advances position; on any status but kOk nothing changes.
template <class T>
Status kv_cache_append(const KvCacheShape& s, T* keys, T* values, size_t& position, const T* k, const T* v, size_t n) {
  if (k == nullptr || v == nullptr) return Status::kNullPointer;
  if (n == 0 || n > s.max_new) return Status::kBadDimension;
  if (s.window == 0 && position + n > s.capacity) return Status::kCacheFull;
  for (size_t h = 0; h < s.hkv; ++h) {
    for (size_t t = 0; t < n; ++t) {
      const size_t slot = (position + t) % s.capacity;
      kv_cache_copy(k + (h * n + t) * s.dk, &keys[(h * s.capacity + slot) * s.dk], s.dk);
      kv_cache_copy(v + (h * n + t) * s.dv, &values[(h * s.capacity + slot) * s.dv], s.dv);
    }
  }
  position += n;
  return Status::kOk;
}

// The mask of the n newest tokens' queries. A ring writes their keep-bit
// rows (n rows of keep_bits_row_bytes(capacity) bytes) to `keep`.
inline Mask kv_cache_mask(const KvCacheShape& s, size_t position, size_t n, uint8_t* keep) {
  const auto filled = static_cast<uint32_t>(kv_cache_size(s, position));
  if (s.window == 0) return Mask::causal_cache(filled, static_cast<uint32_t>(n));
  // Query i is token p = position - n + i; it sees tokens max(0, p - W + 1) .. p,
  // each in slot t % capacity (all still held: capacity >= W + n - 1).
  const size_t row_bytes = keep_bits_row_bytes(s.capacity);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* row = keep + i * row_bytes;
    for (size_t b = 0; b < row_bytes; ++b) row[b] = 0;
    const size_t p = position - n + i;
    for (size_t t = p + 1 > s.window ? p + 1 - s.window : 0; t <= p; ++t) {
      const size_t slot = t % s.capacity;
      row[slot / 8] = static_cast<uint8_t>(row[slot / 8] | (1u << (slot % 8)));
    }
  }
  Mask m = Mask::keep_bitmask(keep);
  m.kv_len = filled;
  return m;
}

// The n newest tokens attend to the cache: one forward over its slots.
template <class T, class... Extra>
Status kv_cache_attend(const KvCacheShape& s, const T* keys, const T* values, size_t position, Workspace ws,
                       uint8_t* keep, const T* q, T* y, size_t n, const Extra&... extra) {
  if (n == 0 || n > s.max_new || n > position) return Status::kBadDimension;
  return KvCacheForward<T>::run(kv_cache_dims(s, n), q, keys, values, y, ws, kv_cache_mask(s, position, n, keep),
                                extra...);
}

}  // namespace detail

template <class T, size_t Hq, size_t Hkv, size_t Dk, size_t Dv, size_t Capacity, size_t MaxNew = 1,
          size_t SlidingWindow = 0>
// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): the slots and the scratch are written before read (below)
class KvCache {
  static constexpr detail::KvCacheShape kShape{Hq, Hkv, Dk, Dv, Capacity, MaxNew, SlidingWindow};
  static_assert(detail::kv_cache_max_new_fits(kShape), "tinyattn::KvCache: MaxNew must be <= Capacity");
  static_assert(
      detail::kv_cache_ring_fits(kShape),
      "tinyattn::KvCache: a ring needs Capacity >= SlidingWindow + MaxNew - 1 (the keys its newest queries see)");

 public:
  static constexpr bool kRing = SlidingWindow != 0;
  // The dims attend's forward runs with for n = MaxNew new tokens (Shape
  // checks each extent at compile time).
  static constexpr Dims dims = Shape<MaxNew, Capacity, Dk, Dv, Hq, Hkv>::dims;
  static_assert(validate(dims) == Status::kOk, "tinyattn::KvCache: a tensor of this shape is not addressable here");
  static constexpr size_t kStorageBytes = (Hkv * Capacity * (Dk + Dv)) * sizeof(T);
  static constexpr size_t workspace_bytes = detail::KvCacheForward<T>::workspace_bytes(dims);
  static constexpr size_t kKeepRowBytes = keep_bits_row_bytes(Capacity);

  // Tokens the slots hold: all appended (linear), the last Capacity of them (ring).
  size_t size() const { return detail::kv_cache_size(kShape, position_); }
  // Tokens appended since the last clear(): the next token's position.
  size_t position() const { return position_; }
  // Forgets every token (storage is not cleared: unfilled slots are never read).
  void clear() { position_ = 0; }

  Status append(const T* k, const T* v, size_t n) {
    return detail::kv_cache_append(kShape, k_, v_, position_, k, v, n);
  }

  // The n newest tokens attend to the cache (they must have been appended).
  template <class... Extra>
  Status attend(const T* q, T* y, size_t n, const Extra&... extra) {
    return detail::kv_cache_attend(kShape, k_, v_, position_, Workspace{workspace_, sizeof workspace_}, keep_, q, y, n,
                                   extra...);
  }

  const T* keys() const { return k_; }    // [Hkv][Capacity][Dk]
  const T* values() const { return v_; }  // [Hkv][Capacity][Dv]

 private:
  T k_[Hkv * Capacity * Dk];
  T v_[Hkv * Capacity * Dv];
  size_t position_ = 0;
  // attend's scratch and (ring) keep-bit rows: rewritten by every call.
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
  uint8_t keep_[kRing ? MaxNew * kKeepRowBytes : 1];
};

}  // namespace tinyattn
