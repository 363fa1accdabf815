#include "capi_kv_cxx.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tinyattn/kv_cache.h"

namespace {

using namespace tinyattn;

// What KvCache stores for a C dtype, and the type its append and attend take.
template <int Dtype>
struct Storage;
template <>
struct Storage<TINYATTN_KV_F32> {
  using type = float;
};
template <>
struct Storage<TINYATTN_KV_F16> {
  using type = half;
};
template <>
struct Storage<TINYATTN_KV_I8> {
  using type = int8_t;
};
template <>
struct Storage<TINYATTN_KV_I8_SCALED> {
  using type = KvInt8<float>;
};
template <>
struct Storage<TINYATTN_KV_I8_SCALED_F16> {
  using type = KvInt8<half>;
};
template <int Dtype>
using Element = typename KvCache<typename Storage<Dtype>::type, 1, 1, 1, 1, 1>::Value;

#define CAPI_KV_CACHE(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope) \
  KvCache<Storage<dtype>::type, hq, hkv, dk, dv, capacity, max_new, window, sinks> g_##name;
CAPI_KV_CONFIGS(CAPI_KV_CACHE)
#undef CAPI_KV_CACHE

// The workspace the C macro gives: the forward's for max_new queries with a
// ring's keep-bit rows (the C++ class may hold more, to run a group's query
// heads as rows in one pass), or the int8 storage's scratch (the class's).
template <class Cache, int Dtype>
constexpr size_t c_workspace_bytes() {
  if constexpr (Dtype == TINYATTN_KV_I8_SCALED || Dtype == TINYATTN_KV_I8_SCALED_F16)
    return Cache::workspace_bytes;
  else
    return detail::KvCacheForward<Element<Dtype>>::workspace_bytes(Cache::dims) +
           (Cache::kRing ? Cache::dims.n * Cache::kKeepRowBytes : 0);
}

// The C sizing macros against the C++ class's sizes: the storage from an
// aligned address (one alignment of slack), the workspace above.
#define CAPI_KV_SIZES(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope)                         \
  static_assert(                                                                                                    \
      TINYATTN_KV_CACHE_BYTES(hkv, capacity, dk, dv, dtype) == decltype(g_##name)::kStorageBytes + kWorkspaceAlign, \
      #name ": storage macro");                                                                                     \
  static_assert(TINYATTN_KV_CACHE_WORKSPACE_BYTES(capacity, dk, dv, max_new, window, dtype) ==                      \
                    c_workspace_bytes<decltype(g_##name), dtype>(),                                                 \
                #name ": workspace macro");                                                                         \
  static_assert(decltype(g_##name)::workspace_bytes + (window ? max_new * decltype(g_##name)::kKeepRowBytes : 0) >= \
                    c_workspace_bytes<decltype(g_##name), dtype>(),                                                 \
                #name ": the class holds at least the C workspace");
CAPI_KV_CONFIGS(CAPI_KV_SIZES)
#undef CAPI_KV_SIZES

// The rope flag of each configuration, by id.
#define CAPI_KV_ROPE(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope) rope,
constexpr int kRope[] = {CAPI_KV_CONFIGS(CAPI_KV_ROPE)};
#undef CAPI_KV_ROPE

// The C plans copied into the C++ type (not cast: this side maps the structs
// apart from lib/src/c_api.cc); null when the C call passes none.
Int8HeadPlan g_plan_copy[CAPI_KV_MAX_HQ];
const Int8HeadPlan* g_plans = nullptr;

template <class T>
struct Tag {
  using type = T;
};

template <class Cache>
Status attend_as(Cache& cache, const float* q, float* y, size_t n, Port port, size_t) {
  Options o;
  o.port = port;
  return cache.attend(q, y, n, o);
}
template <class Cache>
Status attend_as(Cache& cache, const half* q, half* y, size_t n, Port port, size_t) {
  OptionsF16 o;
  o.port = port;
  return cache.attend(q, y, n, o);
}
template <class Cache>
Status attend_as(Cache& cache, const int8_t* q, int8_t* y, size_t n, Port port, size_t plan_count) {
  Options o;
  o.port = port;
  return cache.attend(q, y, n, Int8Plan{g_plans, plan_count}, o);
}

// Runs `op` on the cache of configuration `id`, with its element type.
template <class Op>
void with_cache(int id, Op op) {
  switch (id) {
#define CAPI_KV_CASE(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope) \
  case CAPI_KV_##name:                                                                     \
    op(g_##name, Tag<Element<dtype>>{});                                                   \
    break;
    CAPI_KV_CONFIGS(CAPI_KV_CASE)
#undef CAPI_KV_CASE
    default:
      break;
  }
}

}  // namespace

extern "C" {

tinyattn_rope capi_kv_rope(void) {
  tinyattn_rope r;
  r.theta = 5e5f;
  r.rotary_dim = 4;
  r.style = TINYATTN_ROPE_INTERLEAVED;
  return r;
}

void capi_kv_cxx_clear(int id) {
  with_cache(id, [id](auto& cache, auto) {
    cache.reset();
    if (kRope[id]) {
      Rope r;
      r.theta = 5e5f;
      r.rotary_dim = 4;
      r.style = RopeStyle::kInterleaved;
      cache.set_rope(r, 3);
    }
  });
}

tinyattn_status capi_kv_cxx_append(int id, const void* k, const void* v, size_t n) {
  Status s = Status::kUnsupported;
  with_cache(id, [&](auto& cache, auto tag) {
    using T = typename decltype(tag)::type;
    s = cache.append(static_cast<const T*>(k), static_cast<const T*>(v), n);
  });
  return static_cast<tinyattn_status>(s);
}

tinyattn_status capi_kv_cxx_attend(int id, const void* q, void* y, size_t n, tinyattn_port port,
                                   const tinyattn_int8_head_plan* plans, size_t plan_count) {
  g_plans = nullptr;
  if (plans) {
    const size_t copied = plan_count < size_t{CAPI_KV_MAX_HQ} ? plan_count : size_t{CAPI_KV_MAX_HQ};
    std::memcpy(static_cast<void*>(g_plan_copy), plans, copied * sizeof *plans);
    g_plans = g_plan_copy;
  }
  Status s = Status::kUnsupported;
  with_cache(id, [&](auto& cache, auto tag) {
    using T = typename decltype(tag)::type;
    s = attend_as(cache, static_cast<const T*>(q), static_cast<T*>(y), n, static_cast<Port>(port), plan_count);
  });
  return static_cast<tinyattn_status>(s);
}

size_t capi_kv_cxx_size(int id) {
  size_t r = 0;
  with_cache(id, [&](auto& cache, auto) { r = cache.size(); });
  return r;
}

size_t capi_kv_cxx_position(int id) {
  size_t r = 0;
  with_cache(id, [&](auto& cache, auto) { r = cache.position(); });
  return r;
}

const void* capi_kv_cxx_keys(int id) {
  const void* r = nullptr;
  with_cache(id, [&](auto& cache, auto) { r = cache.keys(); });
  return r;
}

const void* capi_kv_cxx_values(int id) {
  const void* r = nullptr;
  with_cache(id, [&](auto& cache, auto) { r = cache.values(); });
  return r;
}

}  // extern "C"
