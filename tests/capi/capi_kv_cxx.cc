#include "capi_kv_cxx.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tinyattn/kv_cache.h"

namespace {

using namespace tinyattn;

template <int Dtype>
struct Element;
template <>
struct Element<TINYATTN_KV_F32> {
  using type = float;
};
template <>
struct Element<TINYATTN_KV_F16> {
  using type = half;
};
template <>
struct Element<TINYATTN_KV_I8> {
  using type = int8_t;
};

#define CAPI_KV_CACHE(name, dtype, hq, hkv, dk, dv, capacity, max_new, window) \
  KvCache<Element<dtype>::type, hq, hkv, dk, dv, capacity, max_new, window> g_##name;
CAPI_KV_CONFIGS(CAPI_KV_CACHE)
#undef CAPI_KV_CACHE

// The C sizing macros against the C++ class's sizes: the storage from an
// aligned address (one alignment of slack), the workspace with a ring's
// keep-bit rows: the forward's for max_new queries (the C++ class may hold
// more, to run a group's query heads as rows in one pass).
#define CAPI_KV_SIZES(name, dtype, hq, hkv, dk, dv, capacity, max_new, window)                                        \
  static_assert(                                                                                                      \
      TINYATTN_KV_CACHE_BYTES(hkv, capacity, dk, dv, dtype) == decltype(g_##name)::kStorageBytes + kWorkspaceAlign,   \
      #name ": storage macro");                                                                                       \
  static_assert(TINYATTN_KV_CACHE_WORKSPACE_BYTES(capacity, dk, dv, max_new, window, dtype) ==                        \
                    detail::KvCacheForward<Element<dtype>::type>::workspace_bytes(decltype(g_##name)::dims) +         \
                        (window ? max_new * decltype(g_##name)::kKeepRowBytes : 0),                                   \
                #name ": workspace macro");                                                                           \
  static_assert(decltype(g_##name)::workspace_bytes >=                                                                \
                    detail::KvCacheForward<Element<dtype>::type>::workspace_bytes(decltype(g_##name)::dims),          \
                #name ": the class holds at least the forward's workspace");
CAPI_KV_CONFIGS(CAPI_KV_SIZES)
#undef CAPI_KV_SIZES

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
#define CAPI_KV_CASE(name, dtype, hq, hkv, dk, dv, capacity, max_new, window) \
  case CAPI_KV_##name:                                                        \
    op(g_##name, Tag<Element<dtype>::type>{});                                \
    break;
    CAPI_KV_CONFIGS(CAPI_KV_CASE)
#undef CAPI_KV_CASE
    default:
      break;
  }
}

}  // namespace

extern "C" {

void capi_kv_cxx_clear(int id) {
  with_cache(id, [](auto& cache, auto) { cache.clear(); });
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
