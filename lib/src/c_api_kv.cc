// The C API's KV cache and RoPE (tinyattn/tinyattn_c.h): the C struct over
// detail::kv_cache_* (tinyattn/kv_cache.h), the code KvCache runs, so the C
// and C++ caches hold the same bytes.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "c_api_common.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/rope.h"
#include "tinyattn/tinyattn_c.h"

namespace tinyattn {
namespace {

using c_api::as_half;
using c_api::options_f16_status;
using c_api::options_ok;
using c_api::raw;
using c_api::to_c;
using c_api::to_cxx;


// Bytes of one element of a dtype; 0 outside the enum.
size_t kv_element_bytes(tinyattn_kv_dtype dtype) {
  switch (raw(dtype)) {
    case TINYATTN_KV_F32:
      return sizeof(float);
    case TINYATTN_KV_F16:
      return sizeof(half);
    case TINYATTN_KV_I8:
    case TINYATTN_KV_I8_SCALED:
    case TINYATTN_KV_I8_SCALED_F16:
      return sizeof(int8_t);
    default:
      return 0;
  }
}
// Bytes of one scale of an int8-storage dtype (KvInt8); 0 for the others.
size_t kv_scale_bytes(tinyattn_kv_dtype dtype) {
  return raw(dtype) == TINYATTN_KV_I8_SCALED ? sizeof(float) : raw(dtype) == TINYATTN_KV_I8_SCALED_F16 ? sizeof(half) : 0;
}
bool kv_scaled(tinyattn_kv_dtype dtype) { return kv_scale_bytes(dtype) != 0; }

detail::KvCacheShape kv_shape(const tinyattn_kv_cache_config& c) {
  return detail::KvCacheShape{c.hq,     c.hkv, c.dk, c.dv, c.capacity, c.max_new == 0 ? 1 : c.max_new,
                              c.window, c.sinks};
}

// A ring's keep-bit rows, at the start of the workspace (not for int8
// storage, which walks its slots itself).
constexpr size_t kv_keep_bytes(const detail::KvCacheShape& s, size_t scale_bytes = 0) {
  return s.window != 0 && scale_bytes == 0 ? s.max_new * keep_bits_row_bytes(s.capacity) : 0;
}

// The scales, keys and values from an aligned address (as a KvCache's), or
// 0 when they could not be one object here. Each extent is <= kMaxDim once
// the shape is valid, so the product fits 64 bits.
constexpr size_t kv_storage_bytes(const detail::KvCacheShape& s, size_t element_bytes, size_t scale_bytes = 0) {
  const uint64_t bytes =
      uint64_t{s.hkv} * s.capacity * ((uint64_t{s.dk} + s.dv) * element_bytes + 2 * scale_bytes) + kWorkspaceAlign;
  return bytes <= static_cast<uint64_t>(PTRDIFF_MAX) ? static_cast<size_t>(bytes) : 0;
}

template <class T>
constexpr size_t kv_forward_workspace_bytes(const detail::KvCacheShape& s) {
  return detail::KvCacheForward<T>::workspace_bytes(detail::kv_cache_dims(s, s.max_new));
}

// The macros are these sizes (the C test compares them with KvCache's
// constants for each of its configurations, and sweeps them at run time).
constexpr detail::KvCacheShape kKvF32{4, 2, 8, 6, 24, 1, 0}, kKvF16Ring{4, 2, 40, 24, 300, 32, 250},
    kKvI8Chunked{2, 1, 17, 6, 9, 4, 0}, kKvScaledSinks{4, 2, 12, 20, 70, 3, 50, 4};
static_assert(TINYATTN_KV_CACHE_BYTES(2, 24, 8, 6, TINYATTN_KV_F32) == kv_storage_bytes(kKvF32, sizeof(float)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(24, 8, 6, 0, 0, TINYATTN_KV_F32) ==
                      kv_forward_workspace_bytes<float>(kKvF32) + kv_keep_bytes(kKvF32),
              "fp32 KV cache macros");
static_assert(TINYATTN_KV_CACHE_BYTES(2, 300, 40, 24, TINYATTN_KV_F16) == kv_storage_bytes(kKvF16Ring, sizeof(half)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(300, 40, 24, 32, 250, TINYATTN_KV_F16) ==
                      kv_forward_workspace_bytes<half>(kKvF16Ring) + kv_keep_bytes(kKvF16Ring),
              "fp16 KV cache macros");
static_assert(TINYATTN_KV_CACHE_BYTES(1, 9, 17, 6, TINYATTN_KV_I8) == kv_storage_bytes(kKvI8Chunked, sizeof(int8_t)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(9, 17, 6, 4, 0, TINYATTN_KV_I8) ==
                      kv_forward_workspace_bytes<int8_t>(kKvI8Chunked) + kv_keep_bytes(kKvI8Chunked),
              "int8 KV cache macros");
static_assert(TINYATTN_KV_CACHE_BYTES(2, 70, 12, 20, TINYATTN_KV_I8_SCALED_F16) ==
                      kv_storage_bytes(kKvScaledSinks, 1, sizeof(half)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(70, 12, 20, 3, 50, TINYATTN_KV_I8_SCALED) ==
                      detail::kv_int8_workspace_bytes(kKvScaledSinks),
              "int8 storage KV cache macros");
static_assert(TINYATTN_KV_CACHE_ROPE_BYTES(4, 0, 8, TINYATTN_KV_F32) == size_t{4} * 8 * sizeof(float) + sizeof(float) &&
                  TINYATTN_KV_CACHE_ROPE_BYTES(4, 3, 8, TINYATTN_KV_I8_SCALED) == 0,
              "RoPE workspace macro");

// The rotated queries of an fp32 or fp16 cache with RoPE, aligned at any address.
size_t kv_rope_bytes(const detail::KvCacheShape& s, tinyattn_kv_dtype dtype) {
  const int32_t d = raw(dtype);
  return d == TINYATTN_KV_F32 || d == TINYATTN_KV_F16 ? s.hq * s.max_new * s.dk * kv_element_bytes(dtype) + sizeof(float)
                                                      : 0;
}

size_t kv_workspace_bytes(const detail::KvCacheShape& s, tinyattn_kv_dtype dtype) {
  const int32_t d = raw(dtype);
  if (kv_scaled(dtype)) return detail::kv_int8_workspace_bytes(s);
  const size_t forward_bytes = d == TINYATTN_KV_I8    ? kv_forward_workspace_bytes<int8_t>(s)
                               : d == TINYATTN_KV_F16 ? kv_forward_workspace_bytes<half>(s)
                                                      : kv_forward_workspace_bytes<float>(s);
  return forward_bytes + kv_keep_bytes(s);
}

// Whether init accepts the config, as a status.
tinyattn_status kv_config_status(const tinyattn_kv_cache_config* c) {
  if (!c) return TINYATTN_NULL_POINTER;
  const size_t element = kv_element_bytes(c->dtype);
  if (element == 0) return TINYATTN_UNSUPPORTED;
  const detail::KvCacheShape s = kv_shape(*c);
  const Status st = detail::kv_cache_validate(s);
  if (st != Status::kOk) return to_c(st);
  if (kv_scaled(c->dtype) && (s.dk > kMaxDkInt8 || s.capacity >= kMaxMInt8)) return TINYATTN_BAD_DIMENSION;
  return kv_storage_bytes(s, element, kv_scale_bytes(c->dtype)) != 0 ? TINYATTN_OK : TINYATTN_BAD_DIMENSION;
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte (without
// forming an address past either range).
bool overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x <= y ? y - x < a_bytes : x - y < b_bytes;
}

// A cache init set up: init writes every pointer, a {0} cache has none.
bool kv_ready(const tinyattn_kv_cache* c) { return c && c->keys_ && c->values_ && c->scratch_; }

template <class T>
bool aligned_for(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % alignof(T) == 0;
}

// The cache's RoPE as the C++ cache holds it (rope_prepare of a setting
// that set_rope validated).
detail::KvRope kv_rope(const tinyattn_kv_cache* cache) {
  detail::KvRope r;
  if (!cache->rope_on_) return r;
  Rope rope;
  rope.theta = cache->rope_.theta;
  rope.rotary_dim = cache->rope_.rotary_dim;
  rope.style = static_cast<RopeStyle>(raw(cache->rope_.style));
  r.on = detail::rope_prepare(rope, cache->config_.dk, &r.row) == Status::kOk;
  r.origin = cache->rope_origin_;
  return r;
}

// The workspace past the keep rows; what the forward or the int8 storage may use.
Workspace kv_workspace(const tinyattn_kv_cache* cache) {
  const detail::KvCacheShape s = kv_shape(cache->config_);
  const size_t keep = kv_keep_bytes(s, kv_scale_bytes(cache->config_.dtype));
  return Workspace{cache->scratch_ + keep, kv_workspace_bytes(s, cache->config_.dtype) - keep};
}

detail::KvInt8Slots kv_int8_slots(const tinyattn_kv_cache* cache) {
  return detail::KvInt8Slots{static_cast<int8_t*>(cache->keys_), static_cast<int8_t*>(cache->values_),
                             cache->key_scales_, cache->value_scales_,
                             raw(cache->config_.dtype) == TINYATTN_KV_I8_SCALED_F16};
}

// append for element type T (C pointers of type C), when the cache holds `dtype`.
template <class T, class C>
tinyattn_status kv_append(tinyattn_kv_cache* cache, tinyattn_kv_dtype dtype, const C* k, const C* v, size_t n) {
  static_assert(sizeof(T) == sizeof(C) && alignof(T) == alignof(C), "C and C++ elements differ");
  if (!kv_ready(cache)) return TINYATTN_NULL_POINTER;
  const bool scaled = kv_scaled(cache->config_.dtype) && raw(dtype) == TINYATTN_KV_F32;
  if (raw(cache->config_.dtype) != raw(dtype) && !scaled) return TINYATTN_UNSUPPORTED;
  if (!k || !v) return TINYATTN_NULL_POINTER;
  if (!aligned_for<T>(k) || !aligned_for<T>(v)) return TINYATTN_MISALIGNED;
  size_t position = cache->position_;
  Status s;
  if constexpr (std::is_same<T, float>::value) {
    if (scaled) {
      s = detail::kv_int8_append(kv_shape(cache->config_), kv_int8_slots(cache), position, k, v, n, kv_rope(cache),
                                 kv_workspace(cache));
      cache->position_ = position;
      return to_c(s);
    }
  }
  s = detail::kv_cache_append(kv_shape(cache->config_), static_cast<T*>(cache->keys_), static_cast<T*>(cache->values_),
                              position, reinterpret_cast<const T*>(k), reinterpret_cast<const T*>(v), n,
                              kv_rope(cache));
  cache->position_ = position;
  return to_c(s);
}

// attend for element type T, past the dtype and options checks.
template <class T, class... Extra>
tinyattn_status kv_attend(tinyattn_kv_cache* cache, const T* q, T* y, size_t n, const Extra&... extra) {
  const detail::KvCacheShape s = kv_shape(cache->config_);
  const detail::KvRope rope = kv_rope(cache);
  if constexpr (std::is_same<T, float>::value) {
    if (kv_scaled(cache->config_.dtype))
      return to_c(detail::kv_int8_attend(
          s, detail::KvInt8View{static_cast<const int8_t*>(cache->keys_), static_cast<const int8_t*>(cache->values_),
                                cache->key_scales_, cache->value_scales_,
                                raw(cache->config_.dtype) == TINYATTN_KV_I8_SCALED_F16},
          rope, cache->position_, kv_workspace(cache), q, y, n, extra...));
  }
  const Workspace ws = kv_workspace(cache);
  if constexpr (!std::is_same<T, int8_t>::value) {
    // RoPE: the rotated queries, after the forward's workspace (set_rope checked the room).
    // A q off its alignment goes through unrotated, for the forward to refuse.
    if (rope.on && q != nullptr && aligned_for<T>(q) && n != 0 && n <= s.max_new && n <= cache->position_) {
      unsigned char* end = static_cast<unsigned char*>(ws.data) + ws.bytes;
      T* rotated = reinterpret_cast<T*>(end + (alignof(T) - reinterpret_cast<uintptr_t>(end) % alignof(T)) % alignof(T));
      detail::kv_cache_copy(q, rotated, s.hq * n * s.dk);
      for (size_t h = 0; h < s.hq; ++h)
        for (size_t i = 0; i < n; ++i) detail::kv_rope_key(rope, rotated + (h * n + i) * s.dk, cache->position_ - n + i);
      q = rotated;
    }
  }
  return to_c(detail::kv_cache_attend(s, static_cast<const T*>(cache->keys_), static_cast<const T*>(cache->values_),
                                      cache->position_, ws, cache->scratch_, s.window != 0 ? s.max_new : 0, q, y, n,
                                      extra...));
}

tinyattn_status kv_attend_status(const tinyattn_kv_cache* cache, tinyattn_kv_dtype dtype) {
  if (!kv_ready(cache)) return TINYATTN_NULL_POINTER;
  if (raw(dtype) == TINYATTN_KV_F32 && kv_scaled(cache->config_.dtype)) return TINYATTN_OK;
  return raw(cache->config_.dtype) == raw(dtype) ? TINYATTN_OK : TINYATTN_UNSUPPORTED;
}

// The rope as C++'s, or kUnsupported for a style outside the enum.
Status rope_from_c(const tinyattn_rope* rope, Rope* out) {
  const int32_t style = raw(rope->style);
  if (style != TINYATTN_ROPE_HALF_SPLIT && style != TINYATTN_ROPE_INTERLEAVED) return Status::kUnsupported;
  out->theta = rope->theta;
  out->rotary_dim = rope->rotary_dim;
  out->style = static_cast<RopeStyle>(style);
  return Status::kOk;
}

}  // namespace
}  // namespace tinyattn

using namespace tinyattn;  // NOLINT(google-build-using-namespace): this file only wraps it

extern "C" {

size_t tinyattn_kv_cache_storage_bytes(const tinyattn_kv_cache_config* config) {
  if (kv_config_status(config) != TINYATTN_OK) return 0;
  return kv_storage_bytes(kv_shape(*config), kv_element_bytes(config->dtype), kv_scale_bytes(config->dtype));
}

size_t tinyattn_kv_cache_workspace_bytes(const tinyattn_kv_cache_config* config) {
  if (kv_config_status(config) != TINYATTN_OK) return 0;
  return kv_workspace_bytes(kv_shape(*config), config->dtype);
}

tinyattn_status tinyattn_kv_cache_init(tinyattn_kv_cache* cache, const tinyattn_kv_cache_config* config,
                                       void* storage, size_t storage_bytes, void* workspace, size_t workspace_bytes) {
  if (!cache || !config || !storage || !workspace) return TINYATTN_NULL_POINTER;
  if (tinyattn_status s = kv_config_status(config); s != TINYATTN_OK) return s;
  const detail::KvCacheShape s = kv_shape(*config);
  const size_t element = kv_element_bytes(config->dtype), scale = kv_scale_bytes(config->dtype);
  if (storage_bytes < kv_storage_bytes(s, element, scale) || workspace_bytes < kv_workspace_bytes(s, config->dtype))
    return TINYATTN_WORKSPACE_TOO_SMALL;
  if (overlap(storage, storage_bytes, workspace, workspace_bytes)) return TINYATTN_ALIASING;
  const auto misalignment = reinterpret_cast<uintptr_t>(storage) % kWorkspaceAlign;
  unsigned char* base = static_cast<unsigned char*>(storage) + (misalignment ? kWorkspaceAlign - misalignment : 0);
  tinyattn_kv_cache c{};
  c.config_ = *config;
  c.config_.max_new = s.max_new;
  // The scales first (aligned for their type), then the int8 or float rows.
  c.key_scales_ = scale ? base : nullptr;
  c.value_scales_ = scale ? base + s.hkv * s.capacity * scale : nullptr;
  unsigned char* keys = base + 2 * s.hkv * s.capacity * scale;
  c.keys_ = keys;
  c.values_ = keys + s.hkv * s.capacity * s.dk * element;
  c.scratch_ = static_cast<uint8_t*>(workspace);
  c.scratch_bytes_ = workspace_bytes;
  c.position_ = 0;
  *cache = c;
  return TINYATTN_OK;
}

tinyattn_status tinyattn_kv_cache_append(tinyattn_kv_cache* cache, const float* k, const float* v, size_t n) {
  return kv_append<float>(cache, TINYATTN_KV_F32, k, v, n);
}

tinyattn_status tinyattn_kv_cache_append_f16(tinyattn_kv_cache* cache, const uint16_t* k, const uint16_t* v,
                                             size_t n) {
  return kv_append<half>(cache, TINYATTN_KV_F16, k, v, n);
}

tinyattn_status tinyattn_kv_cache_append_i8(tinyattn_kv_cache* cache, const int8_t* k, const int8_t* v, size_t n) {
  return kv_append<int8_t>(cache, TINYATTN_KV_I8, k, v, n);
}

tinyattn_status tinyattn_kv_cache_attend(tinyattn_kv_cache* cache, const float* q, float* y, size_t n,
                                         const tinyattn_options* options) {
  if (tinyattn_status s = kv_attend_status(cache, TINYATTN_KV_F32); s != TINYATTN_OK) return s;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  return kv_attend(cache, q, y, n, to_cxx(options));
}

tinyattn_status tinyattn_kv_cache_attend_f16(tinyattn_kv_cache* cache, const uint16_t* q, uint16_t* y, size_t n,
                                             const tinyattn_options_f16* options) {
  if (tinyattn_status s = kv_attend_status(cache, TINYATTN_KV_F16); s != TINYATTN_OK) return s;
  if (tinyattn_status s = options_f16_status(options); s != TINYATTN_OK) return s;
  return kv_attend(cache, as_half(q), as_half(y), n, to_cxx(options));
}

tinyattn_status tinyattn_kv_cache_attend_i8(tinyattn_kv_cache* cache, const int8_t* q, int8_t* y, size_t n,
                                            const tinyattn_int8_head_plan* plans, size_t plan_count,
                                            const tinyattn_options* options) {
  if (tinyattn_status s = kv_attend_status(cache, TINYATTN_KV_I8); s != TINYATTN_OK) return s;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  const Int8Plan plan{reinterpret_cast<const Int8HeadPlan*>(plans), plan_count};
  return kv_attend(cache, q, y, n, plan, to_cxx(options));
}

tinyattn_status tinyattn_kv_cache_set_rope(tinyattn_kv_cache* cache, const tinyattn_rope* rope,
                                           size_t first_position) {
  if (!kv_ready(cache) || !rope) return TINYATTN_NULL_POINTER;
  if (cache->position_ != 0 || raw(cache->config_.dtype) == TINYATTN_KV_I8) return TINYATTN_UNSUPPORTED;
  const detail::KvCacheShape s = kv_shape(cache->config_);
  if (cache->scratch_bytes_ - kv_workspace_bytes(s, cache->config_.dtype) < kv_rope_bytes(s, cache->config_.dtype))
    return TINYATTN_WORKSPACE_TOO_SMALL;
  const int32_t style = raw(rope->style);
  if (style != TINYATTN_ROPE_HALF_SPLIT && style != TINYATTN_ROPE_INTERLEAVED) return TINYATTN_UNSUPPORTED;
  Rope r;
  r.theta = rope->theta;
  r.rotary_dim = rope->rotary_dim;
  r.style = static_cast<RopeStyle>(style);
  if (Status st = validate(r, s.dk); st != Status::kOk) return to_c(st);
  cache->rope_ = *rope;
  cache->rope_origin_ = first_position;
  cache->rope_on_ = 1;
  return TINYATTN_OK;
}

tinyattn_status tinyattn_kv_cache_reset(tinyattn_kv_cache* cache) {
  if (!kv_ready(cache)) return TINYATTN_NULL_POINTER;
  cache->position_ = 0;
  return TINYATTN_OK;
}

size_t tinyattn_kv_cache_length(const tinyattn_kv_cache* cache) {
  return kv_ready(cache) ? detail::kv_cache_size(kv_shape(cache->config_), cache->position_) : 0;
}

size_t tinyattn_kv_cache_position(const tinyattn_kv_cache* cache) { return kv_ready(cache) ? cache->position_ : 0; }

const void* tinyattn_kv_cache_keys(const tinyattn_kv_cache* cache) { return kv_ready(cache) ? cache->keys_ : nullptr; }

const void* tinyattn_kv_cache_values(const tinyattn_kv_cache* cache) {
  return kv_ready(cache) ? cache->values_ : nullptr;
}

tinyattn_status tinyattn_apply_rope(const tinyattn_rope* rope, float* x, size_t heads, size_t n, size_t dim,
                                    size_t first_position) {
  if (!rope) return TINYATTN_NULL_POINTER;
  Rope r;
  if (Status s = rope_from_c(rope, &r); s != Status::kOk) return to_c(s);
  return to_c(apply_rope(r, x, heads, n, dim, first_position));
}

tinyattn_status tinyattn_apply_rope_f16(const tinyattn_rope* rope, uint16_t* x, size_t heads, size_t n, size_t dim,
                                        size_t first_position) {
  if (!rope) return TINYATTN_NULL_POINTER;
  Rope r;
  if (Status s = rope_from_c(rope, &r); s != Status::kOk) return to_c(s);
  return to_c(apply_rope(r, reinterpret_cast<half*>(x), heads, n, dim, first_position));
}

}  // extern "C"
