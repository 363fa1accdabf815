/* The KV cache example of docs/c_api.md; built as C99 and run by ctest. */
#include <stdio.h>

#include "tinyattn/tinyattn_c.h"

enum { HQ = 2, HKV = 1, D = 16, CAPACITY = 64, STEPS = 70 };

/* Keys and values, and attend's workspace: static, sized at compile time
 * (decode: max_new 1; window 0: no ring). */
static unsigned char kv_storage[TINYATTN_KV_CACHE_BYTES(HKV, CAPACITY, D, D, TINYATTN_KV_F32)];
static unsigned char kv_workspace[TINYATTN_KV_CACHE_WORKSPACE_BYTES(CAPACITY, D, D, 1, 0, TINYATTN_KV_F32)];
static tinyattn_kv_cache cache;

/* The model's step t: this token's query (both heads), key and value. */
static void model_step(int t, float* q, float* k, float* v) {
  int c;
  for (c = 0; c < D; ++c) {
    q[c] = q[D + c] = 0.1f * (float)((t + c) % 7);
    k[c] = 0.1f * (float)((2 * t + c) % 5);
    v[c] = (float)t; /* token t's values are all t */
  }
}

int main(void) {
  const tinyattn_kv_cache_config config = TINYATTN_KV_CACHE_CONFIG(TINYATTN_KV_F32, HQ, HKV, D, D, CAPACITY, 1, 0);
  float q[HQ * D], k[HKV * D], v[HKV * D], y[HQ * D] = {0};
  int t;
  tinyattn_status s =
      tinyattn_kv_cache_init(&cache, &config, kv_storage, sizeof kv_storage, kv_workspace, sizeof kv_workspace);
  for (t = 0; s == TINYATTN_OK && t < STEPS; ++t) {
    model_step(t, q, k, v);
    s = tinyattn_kv_cache_append(&cache, k, v, 1); /* TINYATTN_CACHE_FULL after 64 tokens */
    if (s == TINYATTN_OK) s = tinyattn_kv_cache_attend(&cache, q, y, 1, NULL); /* y: [HQ][1][D] */
  }
  printf("%u tokens cached, then %s; y[0] = %g (a weighted mean of 0..63)\n",
         (unsigned)tinyattn_kv_cache_length(&cache), tinyattn_status_string(s), y[0]);
  if (s != TINYATTN_CACHE_FULL || tinyattn_kv_cache_length(&cache) != CAPACITY) return 1;
  return y[0] > 0.0f && y[0] < 63.0f ? 0 : 1;
}
