/* The C++ side of the C KV cache test: one tinyattn::KvCache per
 * configuration of CAPI_KV_CONFIGS, driven from C, so the C test can run the
 * C cache (tinyattn_kv_cache_*) and the C++ one in lock step on the same
 * inputs. No heap: the caches are static objects (the test runs on the
 * boards too). */
#ifndef TINYATTN_TESTS_CAPI_KV_CXX_H
#define TINYATTN_TESTS_CAPI_KV_CXX_H

#include "tinyattn/tinyattn_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope):
 * the C config's fields, and KvCache's template arguments in the same
 * order; rope 1: both caches rotate with capi_kv_rope() from position 3. */
#define CAPI_KV_CONFIGS(X)                                                        \
  X(F32_DECODE, TINYATTN_KV_F32, 4, 2, 8, 6, 24, 1, 0, 0, 0)                      \
  X(F32_CHUNKED, TINYATTN_KV_F32, 4, 2, 8, 6, 21, 4, 0, 0, 0)                     \
  X(F32_RING, TINYATTN_KV_F32, 4, 2, 8, 6, 8, 4, 5, 0, 0)                         \
  X(F32_RING_DECODE, TINYATTN_KV_F32, 2, 2, 16, 16, 5, 1, 5, 0, 0)                \
  X(F32_WIDE, TINYATTN_KV_F32, 2, 1, 32, 16, 40, 8, 0, 0, 0)                      \
  X(F32_SINKS_ROPE, TINYATTN_KV_F32, 4, 2, 8, 6, 10, 4, 5, 2, 1)                  \
  X(F16_CHUNKED, TINYATTN_KV_F16, 4, 2, 8, 6, 21, 4, 0, 0, 0)                     \
  X(F16_RING, TINYATTN_KV_F16, 4, 2, 8, 6, 8, 4, 5, 0, 0)                         \
  X(F16_ROPE, TINYATTN_KV_F16, 4, 2, 8, 6, 21, 2, 0, 0, 1)                        \
  X(I8_DECODE, TINYATTN_KV_I8, 4, 2, 8, 6, 24, 1, 0, 0, 0)                        \
  X(I8_RING, TINYATTN_KV_I8, 4, 2, 8, 6, 8, 4, 5, 0, 0)                           \
  X(I8S_DECODE, TINYATTN_KV_I8_SCALED, 4, 2, 8, 6, 24, 1, 0, 0, 0)                \
  X(I8S_SINKS_ROPE, TINYATTN_KV_I8_SCALED, 4, 2, 16, 6, 11, 4, 4, 3, 1)           \
  X(I8S16_CHUNKED_ROPE, TINYATTN_KV_I8_SCALED_F16, 2, 1, 32, 16, 21, 8, 0, 0, 1)

#define CAPI_KV_ID(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope) CAPI_KV_##name,
enum { CAPI_KV_CONFIGS(CAPI_KV_ID) CAPI_KV_CONFIG_COUNT };
#undef CAPI_KV_ID

/* The largest extents of the list: the test's tensors are sized by them. */
enum { CAPI_KV_MAX_HQ = 4, CAPI_KV_MAX_HKV = 2, CAPI_KV_MAX_D = 32, CAPI_KV_MAX_NEW = 8 };

/* The RoPE of the configurations with rope 1: interleaved pairs over half
 * the head, theta 5e5. */
tinyattn_rope capi_kv_rope(void);

/* KvCache of configuration `id`: reset() then (rope 1) set_rope, append(k,
 * v, n), attend(q, y, n, extra) with Options (fp32, int8 storage),
 * OptionsF16 (fp16) or the plan and Options (int8) on `port`, size(),
 * position(), keys(), values(). Tensors are of the configuration's value
 * type (fp16: uint16_t bit patterns; int8 storage: float). */
void capi_kv_cxx_clear(int id);
tinyattn_status capi_kv_cxx_append(int id, const void* k, const void* v, size_t n);
tinyattn_status capi_kv_cxx_attend(int id, const void* q, void* y, size_t n, tinyattn_port port,
                                   const tinyattn_int8_head_plan* plans, size_t plan_count);
size_t capi_kv_cxx_size(int id);
size_t capi_kv_cxx_position(int id);
const void* capi_kv_cxx_keys(int id);
const void* capi_kv_cxx_values(int id);

#ifdef __cplusplus
}
#endif

#endif
