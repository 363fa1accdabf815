// A fixed-capacity key/value cache for on-device decoding: the keys and
// values of the tokens seen so far, per layer, with append and attend.
//
// KvCache<T, Hq, Hkv, Dk, Dv, Capacity, MaxNew, SlidingWindow, Sinks>
//   T:        what a slot stores and the path attend runs: float
//             (forward()), half (forward_f16()), int8_t (forward_i8(), with
//             a plan), or KvInt8<Scale, Value>: int8 rows with a scale per
//             token and KV head (float or half) for a model of Value rows
//             (float, or half), a quarter of fp32's bytes, attended on the
//             port's int8 products (docs/decode.md);
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
//             newest MaxNew queries see;
//   Sinks:    with a ring, the first S tokens stay in slots 0 .. S - 1 for good
//             and every query sees them too (StreamingLLM's attention sinks);
//             the ring is the other slots: Capacity >= S + W + MaxNew - 1.
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
// One token's decode (n = 1) runs a group's query heads as the rows of one
// head over their shared keys and values (float and half), so each KV head's
// keys and values are read once per step, not once per query head.
//
// RAM: sizeof(KvCache<...>) (kStorageBytes of keys and values plus the
// attend's workspace and mask rows), a constant; nothing is allocated.
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
#include <cstring>
#include <type_traits>

#include "tinyattn/attention.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/mask.h"
#include "tinyattn/quant.h"
#include "tinyattn/rope.h"
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
  size_t capacity;   // token slots per KV head
  size_t max_new;    // the most tokens one append/attend takes
  size_t window;     // 0: linear; W > 0: a ring of sliding window W
  size_t sinks = 0;  // a ring's first tokens, kept for good in slots 0 .. sinks - 1
};

// The dims attend's forward runs with for n new tokens.
constexpr Dims kv_cache_dims(const KvCacheShape& s, size_t n) { return Dims{n, s.capacity, s.dk, s.dv, s.hq, s.hkv}; }
constexpr bool kv_cache_max_new_fits(const KvCacheShape& s) { return s.max_new <= s.capacity; }
// A ring holds every key its newest max_new queries see: the sinks in their
// own slots, the window's tokens in the rest. Sinks need a ring.
constexpr bool kv_cache_ring_fits(const KvCacheShape& s) {
  if (s.window == 0) return s.sinks == 0;
  const size_t ring = s.sinks < s.capacity ? s.capacity - s.sinks : 0;
  return s.max_new <= ring && s.window <= ring - s.max_new + 1;
}
// The slot of token t: t itself (linear, and a ring's sinks), else its place
// in the ring after the sinks. The ring never moves data.
constexpr size_t kv_cache_slot(const KvCacheShape& s, size_t t) {
  return s.window == 0 || t < s.sinks ? t : s.sinks + (t - s.sinks) % (s.capacity - s.sinks);
}
// Whether the query of token p sees token t: every earlier token (linear);
// in a ring the sinks and the window's last tokens (StreamingLLM's rule).
constexpr bool kv_cache_sees(const KvCacheShape& s, size_t p, size_t t) {
  return t <= p && (s.window == 0 || t < s.sinks || t + s.window > p);
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

// RoPE of a cache: keys rotated as they are appended, queries as they
// attend, token t at position origin + t.
struct KvRope {
  RopeRow row;
  size_t origin = 0;
  bool on = false;
};

// Rotates one key or query row of token t (nothing for int8_t rows).
template <class T>
void kv_rope_key(const KvRope& rope, T* row, size_t t) {
  if (rope.on) rope_row(rope.row, row, rope.origin + t);
}
inline void kv_rope_key(const KvRope&, int8_t*, size_t) {}

// Copies n new tokens (K[hkv][n][dk], V[hkv][n][dv]) into their slots and
// advances position; on any status but kOk nothing changes.
template <class T>
Status kv_cache_append(const KvCacheShape& s, T* keys, T* values, size_t& position, const T* k, const T* v, size_t n,
                       const KvRope& rope = {}) {
  if (k == nullptr || v == nullptr) return Status::kNullPointer;
  if (n == 0 || n > s.max_new) return Status::kBadDimension;
  if (s.window == 0 && position + n > s.capacity) return Status::kCacheFull;
  for (size_t h = 0; h < s.hkv; ++h) {
    for (size_t t = 0; t < n; ++t) {
      const size_t slot = kv_cache_slot(s, position + t);
      kv_cache_copy(k + (h * n + t) * s.dk, &keys[(h * s.capacity + slot) * s.dk], s.dk);
      kv_rope_key(rope, &keys[(h * s.capacity + slot) * s.dk], position + t);
      kv_cache_copy(v + (h * n + t) * s.dv, &values[(h * s.capacity + slot) * s.dv], s.dv);
    }
  }
  position += n;
  return Status::kOk;
}

// One token's queries: a group's query heads see the same keys, and
// Q[Hq][1][Dk] is Q[Hkv][group][Dk], so attend runs each KV head once with
// the group's heads as its rows, reading the keys and values once.
constexpr bool kv_cache_batches_group(const KvCacheShape& s, size_t n) { return n == 1 && s.hq > s.hkv; }
constexpr Dims kv_cache_group_dims(const KvCacheShape& s) {
  return Dims{s.hq / s.hkv, s.capacity, s.dk, s.dv, s.hkv, s.hkv};
}
// Query rows one attend may mask: max_new, or a group's heads.
constexpr size_t kv_cache_mask_rows(const KvCacheShape& s) {
  return s.hq / s.hkv > s.max_new ? s.hq / s.hkv : s.max_new;
}

// The mask of `rows` query rows of the n newest tokens, row r the query of
// token position - n + r % n. A ring writes their keep-bit rows
// (keep_bits_row_bytes(capacity) bytes each) to `keep`.
inline Mask kv_cache_mask(const KvCacheShape& s, size_t position, size_t n, size_t rows, uint8_t* keep) {
  const auto filled = static_cast<uint32_t>(kv_cache_size(s, position));
  if (s.window == 0)  // one token's rows see every key so far
    return n == 1 ? Mask::key_padding(filled) : Mask::causal_cache(filled, static_cast<uint32_t>(n));
  const size_t row_bytes = keep_bits_row_bytes(s.capacity);
  for (size_t r = 0; r < n; ++r) {
    uint8_t* row = keep + r * row_bytes;
    for (size_t b = 0; b < row_bytes; ++b) row[b] = 0;
    const size_t p = position - n + r;
    // Tokens max(0, p - W + 1) .. p and the sinks, each in its slot (all
    // still held: kv_cache_ring_fits).
    const size_t lo = p + 1 > s.window ? p + 1 - s.window : 0;
    for (size_t t = 0; t < s.sinks && t < lo; ++t) row[t / 8] = static_cast<uint8_t>(row[t / 8] | (1u << (t % 8)));
    for (size_t t = lo; t <= p; ++t) {
      const size_t slot = kv_cache_slot(s, t);
      row[slot / 8] = static_cast<uint8_t>(row[slot / 8] | (1u << (slot % 8)));
    }
  }
  // n == 1 (a group's rows): copies of the one query's row. GCC cannot see
  // that rows stays within the caller's keep rows once this is inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
  for (size_t r = n; r < rows; ++r) std::memcpy(keep + r * row_bytes, keep, row_bytes);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  Mask m = Mask::keep_bitmask(keep);
  m.kv_len = filled;
  return m;
}

// Whether a call's extra arguments allow the group's heads as rows of one
// head: an int8 plan has a head plan per query head, so int8 does not.
inline bool kv_cache_rows_may_merge() { return true; }
template <class First, class... Rest>
bool kv_cache_rows_may_merge(const First&, const Rest&... rest) {
  return kv_cache_rows_may_merge(rest...);
}
template <class... Rest>
bool kv_cache_rows_may_merge(const Int8Plan&, const Rest&...) {
  return false;
}

template <class T>
constexpr size_t kv_cache_workspace_bytes(const KvCacheShape& s) {
  const size_t per_head = KvCacheForward<T>::workspace_bytes(kv_cache_dims(s, s.max_new));
  const size_t grouped = s.hq > s.hkv ? KvCacheForward<T>::workspace_bytes(kv_cache_group_dims(s)) : 0;
  return per_head > grouped ? per_head : grouped;
}

// The n newest tokens attend to the cache: one forward over its slots.
// keep has room for keep_rows mask rows (a ring's); a group's heads run as
// rows of one head when it and the workspace have room for them.
template <class T, class... Extra>
Status kv_cache_attend(const KvCacheShape& s, const T* keys, const T* values, size_t position, Workspace ws,
                       uint8_t* keep, size_t keep_rows, const T* q, T* y, size_t n, const Extra&... extra) {
  if (n == 0 || n > s.max_new || n > position) return Status::kBadDimension;
  const bool grouped = kv_cache_batches_group(s, n) && (s.window == 0 || keep_rows >= s.hq / s.hkv) &&
                       ws.bytes >= KvCacheForward<T>::workspace_bytes(kv_cache_group_dims(s)) &&
                       kv_cache_rows_may_merge(extra...);
  // One call site: the forward's frame is not paid twice (the board stack bound).
  const Dims d = grouped ? kv_cache_group_dims(s) : kv_cache_dims(s, n);
  return KvCacheForward<T>::run(d, q, keys, values, y, ws, kv_cache_mask(s, position, n, d.n, keep), extra...);
}

// ---- int8 storage for fp32 compute (KvInt8, lib/src/kv_cache_int8.cc) ----

// The slots of an int8-stored cache: K[hkv][capacity][dk] and
// V[hkv][capacity][dv] as int8, and a scale per token slot and KV head,
// [hkv][capacity] each, float or (half_scales) half.
struct KvInt8Slots {
  int8_t* k;
  int8_t* v;
  void* k_scale;
  void* v_scale;
  bool half_scales;
};
struct KvInt8View {
  const int8_t* k;
  const int8_t* v;
  const void* k_scale;
  const void* v_scale;
  bool half_scales;
};

// attend's scratch: per query row, int32 scores then integer weights and fp32
// logits then exponentials (a word each per slot), two int32 accumulators of
// Dv, the quantized query; aligned at any address.
constexpr size_t kv_int8_workspace_bytes(const KvCacheShape& s) {
  return kWorkspaceAlign + 8 * s.capacity + 8 * s.dv + 4 * (s.dk > s.dv ? s.dk : s.dv) + (s.dk + 3) / 4 * 4;
}

// Quantizes and stores n new tokens (K[hkv][n][dk], V[hkv][n][dv], fp32 or
// fp16, each row taken as fp32 in ws, of kv_int8_workspace_bytes).
// kBadQuantization (nothing stored) for a row int8 cannot hold: an inf or
// NaN, or with fp16 scales an element past 127 * 65504 (as rotated);
// kAliasing for k or v overlapping ws or the cache's rows or scales. With
// rope.on, each key row is rotated before it is quantized.
Status kv_int8_append(const KvCacheShape& s, const KvInt8Slots& slots, size_t& position, const float* k,
                      const float* v, size_t n, const KvRope& rope, Workspace ws);
Status kv_int8_append(const KvCacheShape& s, const KvInt8Slots& slots, size_t& position, const half* k,
                      const half* v, size_t n, const KvRope& rope, Workspace ws);
// The n newest tokens' queries (Q[hq][n][dk], rotated first with rope.on)
// against the stored bytes: Y[hq][n][dv], in fp32 arithmetic whatever the
// rows' type (fp16: the query rows widened, Y rounded). Options: scale,
// softcap and port. kAliasing for y or ws overlapping q, the cache or each
// other.
Status kv_int8_attend(const KvCacheShape& s, const KvInt8View& cache, const KvRope& rope, size_t position,
                      Workspace ws, const float* q, float* y, size_t n, const Options& options = {});
Status kv_int8_attend(const KvCacheShape& s, const KvInt8View& cache, const KvRope& rope, size_t position,
                      Workspace ws, const half* q, half* y, size_t n, const Options& options = {});

// What a KvCache<T, ...> keeps per slot and how it runs append and attend.
template <class T>
struct KvStorage {
  using Value = T;    // what append and attend take
  using Element = T;  // what a slot holds
  static constexpr size_t kScaleBytes = 0;
  static constexpr size_t workspace_bytes(const KvCacheShape& s) { return kv_cache_workspace_bytes<T>(s); }
};

template <class T, size_t KeyElems, size_t ValueElems, size_t Slots>
struct KvSlotArrays {
  T k[KeyElems];
  T v[ValueElems];
};

}  // namespace detail

// The storage type of a KvCache that keeps its keys and values as int8,
// each token's row of each KV head with a symmetric scale of its own (x =
// scale * q, q in [-127, 127]), stored as Scale (float, or half to save 4
// bytes per token and head), for a model whose rows are Value (float, or
// half: an fp16 model). append quantizes the rows; attend quantizes each
// query row likewise and runs the port's int8 products over the stored
// bytes in fp32 arithmetic: a key's scale multiplies its dot product, a
// value row's scale its weight. Error bound against the fp32 cache:
// docs/decode.md.
template <class Scale = float, class Value = float>
struct KvInt8 {
  static_assert(std::is_same<Scale, float>::value || std::is_same<Scale, half>::value,
                "tinyattn::KvInt8: scales are float or half");
  static_assert(std::is_same<Value, float>::value || std::is_same<Value, half>::value,
                "tinyattn::KvInt8: rows are float or half");
};

namespace detail {

template <class Scale, class V>
struct KvStorage<KvInt8<Scale, V>> {
  using Value = V;
  using Element = int8_t;
  static constexpr size_t kScaleBytes = sizeof(Scale);
  static constexpr size_t workspace_bytes(const KvCacheShape& s) { return kv_int8_workspace_bytes(s); }
};

template <class Scale, class V, size_t KeyElems, size_t ValueElems, size_t Slots>
struct KvSlotArrays<KvInt8<Scale, V>, KeyElems, ValueElems, Slots> {
  int8_t k[KeyElems];
  int8_t v[ValueElems];
  Scale k_scale[Slots];
  Scale v_scale[Slots];
};

template <class T, size_t K, size_t V, size_t S>
Status kv_slots_append(const KvCacheShape& s, KvSlotArrays<T, K, V, S>& a, size_t& position, const T* k, const T* v,
                       size_t n, const KvRope& rope, Workspace) {
  return kv_cache_append(s, a.k, a.v, position, k, v, n, rope);
}
template <class Scale, class IO, size_t K, size_t V, size_t S>
Status kv_slots_append(const KvCacheShape& s, KvSlotArrays<KvInt8<Scale, IO>, K, V, S>& a, size_t& position,
                       const IO* k, const IO* v, size_t n, const KvRope& rope, Workspace ws) {
  return kv_int8_append(s, KvInt8Slots{a.k, a.v, a.k_scale, a.v_scale, std::is_same<Scale, half>::value}, position, k,
                        v, n, rope, ws);
}

// attend for stored types: with RoPE the queries are rotated into qrot
// (Q[hq][n][dk]) first.
template <class T, size_t K, size_t V, size_t S, class... Extra>
Status kv_slots_attend(const KvCacheShape& s, const KvSlotArrays<T, K, V, S>& a, const KvRope& rope, T* qrot,
                       size_t position, Workspace ws, uint8_t* keep, size_t keep_rows, const T* q, T* y, size_t n,
                       const Extra&... extra) {
  if constexpr (!std::is_same<T, int8_t>::value) {  // int8_t caches have no RoPE (set_rope)
    if (rope.on && q != nullptr && n != 0 && n <= s.max_new && n <= position) {
      kv_cache_copy(q, qrot, s.hq * n * s.dk);
      for (size_t h = 0; h < s.hq; ++h)
        for (size_t i = 0; i < n; ++i) kv_rope_key(rope, qrot + (h * n + i) * s.dk, position - n + i);
      q = qrot;
    }
  }
  return kv_cache_attend(s, a.k, a.v, position, ws, keep, keep_rows, q, y, n, extra...);
}
template <class Scale, class IO, size_t K, size_t V, size_t S, class... Extra>
Status kv_slots_attend(const KvCacheShape& s, const KvSlotArrays<KvInt8<Scale, IO>, K, V, S>& a, const KvRope& rope,
                       IO*, size_t position, Workspace ws, uint8_t*, size_t, const IO* q, IO* y, size_t n,
                       const Extra&... extra) {
  return kv_int8_attend(s, KvInt8View{a.k, a.v, a.k_scale, a.v_scale, std::is_same<Scale, half>::value}, rope,
                        position, ws, q, y, n, extra...);
}

// Rotated queries a cache keeps for attend: none for int8 compute (no RoPE)
// and int8 storage (rotated row by row in its scratch).
template <class T>
constexpr size_t kv_rope_query_elems(size_t elems) {
  return elems;
}
template <>
constexpr size_t kv_rope_query_elems<int8_t>(size_t) {
  return 0;
}

}  // namespace detail

template <class T, size_t Hq, size_t Hkv, size_t Dk, size_t Dv, size_t Capacity, size_t MaxNew = 1,
          size_t SlidingWindow = 0, size_t Sinks = 0>
// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): the slots and the scratch are written before read (below)
class KvCache {
  static constexpr detail::KvCacheShape kShape{Hq, Hkv, Dk, Dv, Capacity, MaxNew, SlidingWindow, Sinks};
  static_assert(detail::kv_cache_max_new_fits(kShape), "tinyattn::KvCache: MaxNew must be <= Capacity");
  static_assert(detail::kv_cache_ring_fits(kShape),
                "tinyattn::KvCache: a ring needs Capacity >= Sinks + SlidingWindow + MaxNew - 1 (the keys its newest "
                "queries see), and sinks need a ring");
  using Storage = detail::KvStorage<T>;

 public:
  using Value = typename Storage::Value;      // what append and attend take
  using Element = typename Storage::Element;  // what a slot holds
  static constexpr bool kRing = SlidingWindow != 0;
  static constexpr detail::KvCacheShape shape = kShape;
  // The dims attend's forward runs with for n = MaxNew new tokens (Shape
  // checks each extent at compile time).
  static constexpr Dims dims = Shape<MaxNew, Capacity, Dk, Dv, Hq, Hkv>::dims;
  static_assert(validate(dims) == Status::kOk, "tinyattn::KvCache: a tensor of this shape is not addressable here");
  static_assert(Storage::kScaleBytes == 0 || (Dk <= kMaxDkInt8 && Capacity < kMaxMInt8),
                "tinyattn::KvCache: int8 storage takes Dk <= kMaxDkInt8 and Capacity < kMaxMInt8");
  // The keys and values (and their scales) per KV head and slot.
  static constexpr size_t kStorageBytes =
      Hkv * Capacity * ((Dk + Dv) * sizeof(Element) + 2 * Storage::kScaleBytes);
  static constexpr size_t workspace_bytes = Storage::workspace_bytes(kShape);
  static constexpr size_t kKeepRowBytes = keep_bits_row_bytes(Capacity);
  static constexpr size_t kKeepRows = kRing && Storage::kScaleBytes == 0 ? detail::kv_cache_mask_rows(kShape) : 0;

  // Tokens the slots hold: all appended (linear), at most Capacity (ring).
  size_t size() const { return detail::kv_cache_size(kShape, position_); }
  // Tokens appended since the last clear(): the next token's position.
  size_t position() const { return position_; }
  // Forgets every token (storage is not cleared: unfilled slots are never read).
  void clear() { position_ = 0; }

  // Forgets every token and the RoPE setting.
  void reset() {
    position_ = 0;
    rope_ = detail::KvRope{};
  }

  // Rotary position embedding (tinyattn/rope.h) from now on: keys rotated as
  // they are appended, queries as they attend, token t at position
  // first_position + t (a prompt processed elsewhere continues at its
  // length). Only on an empty cache (kUnsupported otherwise, and for int8_t
  // caches, whose rows are another model's integers); validate(rope, Dk)'s
  // statuses. clear() keeps the setting, reset() drops it.
  Status set_rope(const Rope& rope, size_t first_position = 0) {
    if (position_ != 0 || std::is_same<T, int8_t>::value) return Status::kUnsupported;
    detail::KvRope r;
    if (Status s = detail::rope_prepare(rope, Dk, &r.row); s != Status::kOk) return s;
    r.origin = first_position;
    r.on = true;
    rope_ = r;
    return Status::kOk;
  }

  Status append(const Value* k, const Value* v, size_t n) {
    return detail::kv_slots_append(kShape, slots_, position_, k, v, n, rope_,
                                   Workspace{workspace_, sizeof workspace_});
  }

  // The n newest tokens attend to the cache (they must have been appended).
  template <class... Extra>
  Status attend(const Value* q, Value* y, size_t n, const Extra&... extra) {
    return detail::kv_slots_attend(kShape, slots_, rope_, qrot_, position_, Workspace{workspace_, sizeof workspace_},
                                   keep_, kKeepRows, q, y, n, extra...);
  }

  const Element* keys() const { return slots_.k; }    // [Hkv][Capacity][Dk]
  const Element* values() const { return slots_.v; }  // [Hkv][Capacity][Dv]
  // KvInt8 storage: each slot's key and value scale, [Hkv][Capacity].
  const auto* key_scales() const { return slots_.k_scale; }
  const auto* value_scales() const { return slots_.v_scale; }

 private:
  detail::KvSlotArrays<T, Hkv * Capacity * Dk, Hkv * Capacity * Dv, Hkv * Capacity> slots_;
  size_t position_ = 0;
  // attend's scratch and (ring) keep-bit rows: rewritten by every call.
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
  uint8_t keep_[kKeepRows ? kKeepRows * kKeepRowBytes : 1];
  detail::KvRope rope_;
  // attend's rotated queries (RoPE), Q[Hq][MaxNew][Dk].
  Value qrot_[Storage::kScaleBytes == 0 && detail::kv_rope_query_elems<T>(1) ? Hq * MaxNew * Dk : 1];
};

}  // namespace tinyattn
