/* The KV cache from C99 (tinyattn_kv_cache_*): every configuration of
 * capi_kv_cxx.h run in lock step with the C++ KvCache of the same extents on
 * the same inputs, on every compiled port: the same statuses, lengths and
 * stored slots, and output bytes identical (both run the same code); int8
 * rows equal to one causal (ring: sliding-window) forward_i8 over the whole
 * sequence; random appends, attends and resets, bad sizes and a full cache
 * included, against the C++ cache; the sizing macros (in the static arrays
 * below) against their functions; the statuses of bad input, with nothing
 * written. Heap-free and without stdio on the boards, where it is an image
 * of its own; prints the Unity transcript the other suites print. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "capi_kv_cxx.h"
#include "tinyattn/tinyattn_c.h"

#ifdef CAPI_KV_BOARD
#include "board.h"
static void out(const char* text) { tinyattn_board_write(text); }
#else
#include <stdio.h>
static void out(const char* text) { fputs(text, stdout); }
#endif

#define CAPI_RUNNER_FILE "capi_kv_test.c"
#include "capi_runner.h"

/* ---- the configurations, their buffers sized by the macros ------------- */

/* The workspace of a configuration with RoPE holds the rotated queries too. */
#define CAPI_KV_SCRATCH(hq, dk, dv, capacity, max_new, window, dtype, rope)     \
  (TINYATTN_KV_CACHE_WORKSPACE_BYTES(capacity, dk, dv, max_new, window, dtype) + \
   (rope ? TINYATTN_KV_CACHE_ROPE_BYTES(hq, max_new, dk, dtype) : 0))
#define CAPI_KV_BUFFERS(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope) \
  static unsigned char storage_##name[TINYATTN_KV_CACHE_BYTES(hkv, capacity, dk, dv, dtype)]; \
  static unsigned char scratch_##name[CAPI_KV_SCRATCH(hq, dk, dv, capacity, max_new, window, dtype, rope)];
CAPI_KV_CONFIGS(CAPI_KV_BUFFERS)
#undef CAPI_KV_BUFFERS

typedef struct kv_case {
  const char* name;
  tinyattn_kv_cache_config config;
  unsigned char* storage;
  size_t storage_bytes;
  unsigned char* scratch;
  size_t scratch_bytes; /* the macro's workspace, */
  size_t rope_bytes;    /* and the rotated queries' after it (rope) */
  int rope;
} kv_case;

#define CAPI_KV_CASE(name, dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks, rope)                    \
  {#name,                                                                                                    \
   TINYATTN_KV_CACHE_CONFIG_SINKS(dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks),                 \
   storage_##name,                                                                                           \
   sizeof storage_##name,                                                                                    \
   scratch_##name,                                                                                           \
   TINYATTN_KV_CACHE_WORKSPACE_BYTES(capacity, dk, dv, max_new, window, dtype),                              \
   sizeof scratch_##name - TINYATTN_KV_CACHE_WORKSPACE_BYTES(capacity, dk, dv, max_new, window, dtype),      \
   rope},
static const kv_case kCases[CAPI_KV_CONFIG_COUNT] = {CAPI_KV_CONFIGS(CAPI_KV_CASE)};
#undef CAPI_KV_CASE

/* ---- tensors ------------------------------------------------------------ */

enum { TOKENS = 21 };
enum {
  SEQ_Q = CAPI_KV_MAX_HQ * TOKENS * CAPI_KV_MAX_D,
  SEQ_KV = CAPI_KV_MAX_HKV * TOKENS * CAPI_KV_MAX_D,
  STEP = CAPI_KV_MAX_HQ * CAPI_KV_MAX_NEW * CAPI_KV_MAX_D
};
/* Chunk sizes of the chunked steps (clipped to the configuration's max_new). */
static const size_t kChunks[] = {4, 1, 3, 2, 4, 1, 1, 4, 1, 8, 2};

/* One buffer per tensor, read as the configuration's element type. */
typedef union seq_buf {
  float f[SEQ_Q];
  uint16_t h[SEQ_Q];
  int8_t i[SEQ_Q];
} seq_buf;
typedef union step_buf {
  float f[STEP];
  uint16_t h[STEP];
  int8_t i[STEP];
} step_buf;
static seq_buf g_q, g_k, g_v;
static step_buf g_sq, g_sk, g_sv, g_y, g_y_cxx;
/* The whole sequence's int8 forward [hq][TOKENS][dv] and its workspace. */
static int8_t g_y_full[CAPI_KV_MAX_HQ * TOKENS * CAPI_KV_MAX_D];
static unsigned char g_full_ws[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(TOKENS, TOKENS, CAPI_KV_MAX_D, CAPI_KV_MAX_D)];
static tinyattn_int8_head_plan g_plans[CAPI_KV_MAX_HQ];

static uint32_t g_seed = 12345u;
static uint32_t next_u32(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return g_seed;
}
static float uniform(void) { return (float)(next_u32() >> 8) / 8388608.0f - 1.0f; } /* [-1, 1) */

/* The int8 storage dtypes take and give floats. */
static int as_f32(tinyattn_kv_dtype dtype) {
  return dtype == TINYATTN_KV_F32 || dtype == TINYATTN_KV_I8_SCALED || dtype == TINYATTN_KV_I8_SCALED_F16;
}
/* Bytes of a value the calls take, and of a stored element. */
static size_t element_bytes(tinyattn_kv_dtype dtype) {
  return as_f32(dtype) ? sizeof(float) : dtype == TINYATTN_KV_F16 ? sizeof(uint16_t) : sizeof(int8_t);
}
static size_t slot_bytes(tinyattn_kv_dtype dtype) {
  return dtype == TINYATTN_KV_F32 ? sizeof(float) : dtype == TINYATTN_KV_F16 ? sizeof(uint16_t) : sizeof(int8_t);
}

/* count values of the dtype: normal-ish floats, their fp16, any int8. */
static void fill(void* x, tinyattn_kv_dtype dtype, size_t count) {
  size_t i;
  for (i = 0; i < count; ++i) {
    if (as_f32(dtype))
      ((float*)x)[i] = 1.5f * uniform();
    else if (dtype == TINYATTN_KV_F16)
      ((uint16_t*)x)[i] = tinyattn_float_to_half(1.5f * uniform());
    else
      ((int8_t*)x)[i] = (int8_t)((int)(next_u32() >> 24) - 128);
  }
}

/* Tokens [t0, t0 + n) of x[heads][TOKENS][width] as [heads][n][width]. */
static void gather(const void* x, size_t element, size_t heads, size_t width, size_t t0, size_t n, void* to) {
  const size_t row = width * element;
  size_t h, t;
  for (h = 0; h < heads; ++h)
    for (t = 0; t < n; ++t)
      memcpy((unsigned char*)to + (h * n + t) * row, (const unsigned char*)x + (h * TOKENS + t0 + t) * row, row);
}

/* The per-dtype C calls behind one signature. */
static tinyattn_status c_append(tinyattn_kv_cache* cache, tinyattn_kv_dtype dtype, const void* k, const void* v,
                                size_t n) {
  if (as_f32(dtype)) return tinyattn_kv_cache_append(cache, (const float*)k, (const float*)v, n);
  if (dtype == TINYATTN_KV_F16) return tinyattn_kv_cache_append_f16(cache, (const uint16_t*)k, (const uint16_t*)v, n);
  return tinyattn_kv_cache_append_i8(cache, (const int8_t*)k, (const int8_t*)v, n);
}
static tinyattn_status c_attend(tinyattn_kv_cache* cache, tinyattn_kv_dtype dtype, const void* q, void* y, size_t n,
                                tinyattn_port port, size_t plan_count) {
  tinyattn_options options;
  tinyattn_options_f16 options_f16;
  memset(&options, 0, sizeof options);
  memset(&options_f16, 0, sizeof options_f16);
  options.port = port;
  options_f16.options.port = port;
  if (as_f32(dtype)) return tinyattn_kv_cache_attend(cache, (const float*)q, (float*)y, n, &options);
  if (dtype == TINYATTN_KV_F16)
    return tinyattn_kv_cache_attend_f16(cache, (const uint16_t*)q, (uint16_t*)y, n, &options_f16);
  return tinyattn_kv_cache_attend_i8(cache, (const int8_t*)q, (int8_t*)y, n, g_plans, plan_count, &options);
}

/* Per-tensor int8 scales and zero points for the configuration's heads. */
static tinyattn_status make_plans(const tinyattn_kv_cache_config* c) {
  static const float sq = 0.025f, sk = 0.025f, sv = 0.025f, sy = 0.02f;
  static const int32_t zq = 3, zk = -5, zv = 7, zy = -1;
  const tinyattn_dims d = TINYATTN_DIMS_HEADS(TOKENS, TOKENS, c->dk, c->dv, c->hq, c->hkv);
  tinyattn_int8_scheme scheme;
  memset(&scheme, 0, sizeof scheme);
  scheme.q.scale = &sq;
  scheme.q.zero_point = &zq;
  scheme.k.scale = &sk;
  scheme.k.zero_point = &zk;
  scheme.v.scale = &sv;
  scheme.v.zero_point = &zv;
  scheme.y.scale = &sy;
  scheme.y.zero_point = &zy;
  return tinyattn_plan_int8(&d, &scheme, g_plans, CAPI_KV_MAX_HQ);
}

/* The same slots of the C and the C++ cache hold the same bytes. */
static int same_slots(const tinyattn_kv_cache* cache, int id) {
  const tinyattn_kv_cache_config* c = &kCases[id].config;
  const size_t element = slot_bytes(c->dtype), held = tinyattn_kv_cache_length(cache);
  size_t h;
  for (h = 0; h < c->hkv; ++h) {
    const size_t k_at = h * c->capacity * c->dk * element, v_at = h * c->capacity * c->dv * element;
    if (memcmp((const unsigned char*)tinyattn_kv_cache_keys(cache) + k_at,
               (const unsigned char*)capi_kv_cxx_keys(id) + k_at, held * c->dk * element) != 0 ||
        memcmp((const unsigned char*)tinyattn_kv_cache_values(cache) + v_at,
               (const unsigned char*)capi_kv_cxx_values(id) + v_at, held * c->dv * element) != 0)
      return 0;
  }
  return 1;
}

/* init, and with rope the configurations' RoPE from position 3 (as the C++ side's). */
static tinyattn_status init_case(tinyattn_kv_cache* cache, int id) {
  const kv_case* k = &kCases[id];
  tinyattn_status s = tinyattn_kv_cache_init(cache, &k->config, k->storage, k->storage_bytes, k->scratch,
                                             k->scratch_bytes + k->rope_bytes);
  if (s == TINYATTN_OK && k->rope) {
    const tinyattn_rope rope = capi_kv_rope();
    s = tinyattn_kv_cache_set_rope(cache, &rope, 3);
  }
  return s;
}

/* ---- decode and chunked prefill, C against C++ ------------------------- */

/* The whole sequence's int8 forward: causal, or the ring's sliding window. */
static void full_int8_forward(const tinyattn_kv_cache_config* c) {
  const tinyattn_dims d = TINYATTN_DIMS_HEADS(TOKENS, TOKENS, c->dk, c->dv, c->hq, c->hkv);
  tinyattn_forward_io_i8 io;
  tinyattn_mask mask;
  memset(&io, 0, sizeof io);
  memset(&mask, 0, sizeof mask);
  io.q = g_q.i;
  io.k = g_k.i;
  io.v = g_v.i;
  io.y = g_y_full;
  if (c->window == 0) {
    mask.causal = TINYATTN_CAUSAL_TOP_LEFT;
  } else {
    mask.use_window = 1;
    mask.window_left = (int32_t)c->window - 1;
    mask.window_right = 0;
    mask.window_align = TINYATTN_ALIGN_TOP_LEFT;
  }
  CHECK_STATUS(tinyattn_forward_i8(&d, &io, g_plans, c->hq, g_full_ws, sizeof g_full_ws, &mask, NULL), TINYATTN_OK);
}

/* Runs the configuration over the sequence (chunks of up to max_new) on one
 * port; returns 0 when the port does not serve its dtype (both sides say so). */
static int decode_case(int id, tinyattn_port port) {
  const tinyattn_kv_cache_config* c = &kCases[id].config;
  const size_t element = element_bytes(c->dtype);
  tinyattn_kv_cache cache;
  size_t t0 = 0, step = 0, h, i;
  CHECK_STATUS(init_case(&cache, id), TINYATTN_OK);
  capi_kv_cxx_clear(id);
  while (t0 < TOKENS) {
    size_t n = c->max_new == 1 ? 1 : kChunks[step % (sizeof kChunks / sizeof kChunks[0])];
    tinyattn_status sc, sx;
    if (n > c->max_new) n = c->max_new;
    if (n > TOKENS - t0) n = TOKENS - t0;
    gather(g_q.f, element, c->hq, c->dk, t0, n, g_sq.f);
    gather(g_k.f, element, c->hkv, c->dk, t0, n, g_sk.f);
    gather(g_v.f, element, c->hkv, c->dv, t0, n, g_sv.f);
    sc = c_append(&cache, c->dtype, g_sk.f, g_sv.f, n);
    sx = capi_kv_cxx_append(id, g_sk.f, g_sv.f, n);
    CHECK_STATUS(sc, TINYATTN_OK);
    CHECK(sc == sx);
    memset(&g_y, 0xA5, sizeof g_y);
    memset(&g_y_cxx, 0xA5, sizeof g_y_cxx);
    sc = c_attend(&cache, c->dtype, g_sq.f, g_y.f, n, port, c->hq);
    sx = capi_kv_cxx_attend(id, g_sq.f, g_y_cxx.f, n, port, g_plans, c->hq);
    CHECK(sc == sx);
    if (sc == TINYATTN_PORT_UNAVAILABLE && sx == sc) return 0;
    CHECK_STATUS(sc, TINYATTN_OK);
    if (sc != TINYATTN_OK || sx != TINYATTN_OK) return 1;
    CHECK(memcmp(&g_y, &g_y_cxx, sizeof g_y) == 0); /* every byte, the unwritten ones too */
    CHECK(tinyattn_kv_cache_position(&cache) == t0 + n && capi_kv_cxx_position(id) == t0 + n);
    CHECK(tinyattn_kv_cache_length(&cache) == capi_kv_cxx_size(id));
    if (c->dtype == TINYATTN_KV_I8)
      for (h = 0; h < c->hq; ++h)
        for (i = 0; i < n; ++i)
          CHECK(memcmp(&g_y.i[(h * n + i) * c->dv], &g_y_full[(h * TOKENS + t0 + i) * c->dv], c->dv) == 0);
    t0 += n;
    ++step;
  }
  CHECK(same_slots(&cache, id));
  CHECK(tinyattn_kv_cache_length(&cache) == (c->window == 0 ? TOKENS : c->capacity));
  return 1;
}

static void test_decode_equals_cxx_cache_every_port(void) {
  int id, p, ran = 0;
  for (id = 0; id < CAPI_KV_CONFIG_COUNT; ++id) {
    const tinyattn_kv_cache_config* c = &kCases[id].config;
    g_context = kCases[id].name;
    fill(g_q.f, c->dtype, c->hq * TOKENS * c->dk);
    fill(g_k.f, c->dtype, c->hkv * TOKENS * c->dk);
    fill(g_v.f, c->dtype, c->hkv * TOKENS * c->dv);
    if (c->dtype == TINYATTN_KV_I8) {
      CHECK_STATUS(make_plans(c), TINYATTN_OK);
      full_int8_forward(c);
    }
    for (p = TINYATTN_PORT_SCALAR; p < TINYATTN_PORT_COUNT; ++p) {
      if (!tinyattn_port_available((tinyattn_port)p)) continue;
      g_port = p;
      ran += decode_case(id, (tinyattn_port)p);
    }
    g_port = -1;
  }
  CHECK(ran >= CAPI_KV_CONFIG_COUNT);
}

/* ---- random operations, bad sizes and a full cache included ------------ */

static void test_random_operations_equal_cxx_cache(void) {
  int id, op;
  for (id = 0; id < CAPI_KV_CONFIG_COUNT; ++id) {
    const tinyattn_kv_cache_config* c = &kCases[id].config;
    tinyattn_kv_cache cache;
    size_t appended = 0, attended = 0;
    g_context = kCases[id].name;
    if (c->dtype == TINYATTN_KV_I8) CHECK_STATUS(make_plans(c), TINYATTN_OK);
    CHECK_STATUS(init_case(&cache, id), TINYATTN_OK);
    capi_kv_cxx_clear(id);
    for (op = 0; op < 160; ++op) {
      const uint32_t r = next_u32();
      const size_t n = (size_t)((r >> 8) % (uint32_t)(c->max_new + 2)); /* 0 .. max_new + 1 */
      tinyattn_status sc, sx;
      if (r % 16u == 0) {
        CHECK_STATUS(tinyattn_kv_cache_reset(&cache), TINYATTN_OK); /* keeps the RoPE */
        capi_kv_cxx_clear(id);
      } else if (r % 2u == 0) {
        fill(g_sk.f, c->dtype, c->hkv * CAPI_KV_MAX_NEW * c->dk);
        fill(g_sv.f, c->dtype, c->hkv * CAPI_KV_MAX_NEW * c->dv);
        sc = c_append(&cache, c->dtype, g_sk.f, g_sv.f, n);
        sx = capi_kv_cxx_append(id, g_sk.f, g_sv.f, n);
        CHECK(sc == sx);
        appended += sc == TINYATTN_OK;
      } else {
        fill(g_sq.f, c->dtype, c->hq * CAPI_KV_MAX_NEW * c->dk);
        memset(&g_y, 0x5A, sizeof g_y);
        memset(&g_y_cxx, 0x5A, sizeof g_y_cxx);
        sc = c_attend(&cache, c->dtype, g_sq.f, g_y.f, n, TINYATTN_PORT_DEFAULT, c->hq);
        sx = capi_kv_cxx_attend(id, g_sq.f, g_y_cxx.f, n, TINYATTN_PORT_DEFAULT, g_plans, c->hq);
        CHECK(sc == sx);
        CHECK(memcmp(&g_y, &g_y_cxx, sizeof g_y) == 0);
        attended += sc == TINYATTN_OK;
      }
      CHECK(tinyattn_kv_cache_position(&cache) == capi_kv_cxx_position(id));
      CHECK(tinyattn_kv_cache_length(&cache) == capi_kv_cxx_size(id));
      CHECK(same_slots(&cache, id));
    }
    CHECK(appended > 10 && attended > 10);
  }
}

/* ---- sizes --------------------------------------------------------------- */

static void test_sizes_equal_macros(void) {
  static const size_t capacities[] = {1, 7, 64, 300, 1000}, widths[] = {1, 8, 33}, max_news[] = {0, 1, 4, 40},
                      windows[] = {0, 1, 5, 200};
  size_t a, b, c, e, w, compared = 0;
  int id, dtype;
  for (id = 0; id < CAPI_KV_CONFIG_COUNT; ++id) {
    const kv_case* k = &kCases[id];
    g_context = k->name;
    CHECK(tinyattn_kv_cache_storage_bytes(&k->config) == k->storage_bytes);
    CHECK(tinyattn_kv_cache_workspace_bytes(&k->config) == k->scratch_bytes);
  }
  g_context = "sweep";
  for (dtype = TINYATTN_KV_F32; dtype <= TINYATTN_KV_I8_SCALED_F16; ++dtype)
    for (a = 0; a < sizeof capacities / sizeof capacities[0]; ++a)
      for (b = 0; b < sizeof widths / sizeof widths[0]; ++b)
        for (c = 0; c < sizeof widths / sizeof widths[0]; ++c)
          for (e = 0; e < sizeof max_news / sizeof max_news[0]; ++e)
            for (w = 0; w < sizeof windows / sizeof windows[0]; ++w) {
              const tinyattn_kv_cache_config cfg = TINYATTN_KV_CACHE_CONFIG(
                  (tinyattn_kv_dtype)dtype, 6, 3, widths[b], widths[c], capacities[a], max_news[e], windows[w]);
              const size_t storage = tinyattn_kv_cache_storage_bytes(&cfg);
              const size_t scratch = tinyattn_kv_cache_workspace_bytes(&cfg);
              const int valid = max_news[e] <= capacities[a] &&
                                (windows[w] == 0 || windows[w] + (max_news[e] ? max_news[e] : 1) - 1 <= capacities[a]);
              CHECK((storage != 0) == valid && (scratch != 0) == valid);
              if (!valid) continue;
              CHECK(storage == TINYATTN_KV_CACHE_BYTES(3, capacities[a], widths[b], widths[c], dtype));
              CHECK(scratch == TINYATTN_KV_CACHE_WORKSPACE_BYTES(capacities[a], widths[b], widths[c], max_news[e],
                                                                 windows[w], dtype));
              ++compared;
            }
  CHECK(compared > 300);
}

/* ---- bad input: statuses, nothing written -------------------------------- */

static void test_bad_input_statuses(void) {
  static float k[CAPI_KV_MAX_NEW * 2 * 8], v[CAPI_KV_MAX_NEW * 2 * 6], q[CAPI_KV_MAX_NEW * 4 * 8];
  static float y[CAPI_KV_MAX_NEW * 4 * 6], sentinel[CAPI_KV_MAX_NEW * 4 * 6];
  static int8_t k8[2 * 8], v8[2 * 6];
  static uint16_t k16[2 * 8], v16[2 * 6];
  const kv_case* f32 = &kCases[CAPI_KV_F32_CHUNKED]; /* hq 4, hkv 2, dk 8, dv 6, capacity 21, max_new 4 */
  tinyattn_kv_cache_config cfg = f32->config;
  tinyattn_kv_cache cache, zero, before;
  tinyattn_options opt;
  tinyattn_options_f16 opt16;
  size_t i;
  memset(&zero, 0, sizeof zero);
  memset(&opt, 0, sizeof opt);
  memset(&opt16, 0, sizeof opt16);
  for (i = 0; i < sizeof k / sizeof k[0]; ++i) k[i] = 0.125f * (float)(i % 7);
  for (i = 0; i < sizeof v / sizeof v[0]; ++i) v[i] = (float)(i % 5);
  for (i = 0; i < sizeof q / sizeof q[0]; ++i) q[i] = 0.25f * (float)(i % 3);
  g_context = f32->name;

  /* init: nothing is written on error */
  memset(&cache, 0x3C, sizeof cache);
  memcpy(&before, &cache, sizeof cache);
#define INIT(c) tinyattn_kv_cache_init(&cache, (c), f32->storage, f32->storage_bytes, f32->scratch, f32->scratch_bytes)
  CHECK_STATUS(tinyattn_kv_cache_init(NULL, &cfg, f32->storage, f32->storage_bytes, f32->scratch, f32->scratch_bytes),
               TINYATTN_NULL_POINTER);
  CHECK_STATUS(INIT(NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_init(&cache, &cfg, NULL, f32->storage_bytes, f32->scratch, f32->scratch_bytes),
               TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_init(&cache, &cfg, f32->storage, f32->storage_bytes, NULL, f32->scratch_bytes),
               TINYATTN_NULL_POINTER);
  CHECK_STATUS(
      tinyattn_kv_cache_init(&cache, &cfg, f32->storage, f32->storage_bytes - 1, f32->scratch, f32->scratch_bytes),
      TINYATTN_WORKSPACE_TOO_SMALL);
  CHECK_STATUS(
      tinyattn_kv_cache_init(&cache, &cfg, f32->storage, f32->storage_bytes, f32->scratch, f32->scratch_bytes - 1),
      TINYATTN_WORKSPACE_TOO_SMALL);
  CHECK_STATUS(tinyattn_kv_cache_init(&cache, &cfg, f32->storage, f32->storage_bytes,
                                      f32->storage + f32->storage_bytes - 1, f32->scratch_bytes),
               TINYATTN_ALIASING);
  CHECK_STATUS(
      tinyattn_kv_cache_init(&cache, &cfg, f32->scratch + 8, f32->storage_bytes, f32->scratch, f32->scratch_bytes),
      TINYATTN_ALIASING);
  cfg.dtype = (tinyattn_kv_dtype)(TINYATTN_KV_I8_SCALED_F16 + 1);
  CHECK_STATUS(INIT(&cfg), TINYATTN_UNSUPPORTED);
  cfg.dtype = (tinyattn_kv_dtype)-1;
  CHECK_STATUS(INIT(&cfg), TINYATTN_UNSUPPORTED);
  cfg.dtype = TINYATTN_KV_DTYPE_MIN_;
  CHECK_STATUS(INIT(&cfg), TINYATTN_UNSUPPORTED);
  CHECK(tinyattn_kv_cache_storage_bytes(&cfg) == 0 && tinyattn_kv_cache_workspace_bytes(&cfg) == 0);
  cfg = f32->config;
  cfg.hq = 0;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_HEADS);
  cfg.hq = 3; /* not a multiple of hkv 2 */
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_HEADS);
  cfg = f32->config;
  cfg.hkv = 0;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_HEADS);
  cfg = f32->config;
  cfg.dk = 0;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  cfg.dk = TINYATTN_MAX_DIM + 1;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  cfg = f32->config;
  cfg.capacity = 0;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  cfg.capacity = (size_t)-1;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  cfg = f32->config;
  cfg.max_new = cfg.capacity + 1;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  cfg.max_new = (size_t)-1;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  cfg = f32->config;
  cfg.window = cfg.capacity - cfg.max_new + 2; /* the newest queries' keys would not all be held */
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  cfg.window = (size_t)-1;
  CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  CHECK(tinyattn_kv_cache_storage_bytes(&cfg) == 0 && tinyattn_kv_cache_workspace_bytes(&cfg) == 0);
  CHECK(tinyattn_kv_cache_storage_bytes(NULL) == 0 && tinyattn_kv_cache_workspace_bytes(NULL) == 0);
  /* every extent at its largest: addressable only on 64 bits, never a wrapped size */
  cfg.hq = cfg.hkv = cfg.dk = cfg.dv = cfg.capacity = TINYATTN_MAX_DIM;
  cfg.max_new = 1;
  cfg.window = 0;
  if (tinyattn_kv_cache_storage_bytes(&cfg) == 0) {
    CHECK_STATUS(INIT(&cfg), TINYATTN_BAD_DIMENSION);
  } else {
    CHECK(tinyattn_kv_cache_storage_bytes(&cfg) / 65536u / 65536u / 65536u >= 8u); /* 2^51 + 64 */
    CHECK_STATUS(INIT(&cfg), TINYATTN_WORKSPACE_TOO_SMALL);
  }
  CHECK(memcmp(&cache, &before, sizeof cache) == 0);
#undef INIT

  /* a cache never initialized, and a null one */
  CHECK_STATUS(tinyattn_kv_cache_append(&zero, k, v, 1), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_append(NULL, k, v, 1), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_append_f16(&zero, k16, v16, 1), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_append_i8(&zero, k8, v8, 1), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_attend(&zero, q, y, 1, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_attend(NULL, q, y, 1, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_attend_f16(&zero, k16, k16, 1, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_attend_i8(&zero, k8, k8, 1, g_plans, 4, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_reset(&zero), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_reset(NULL), TINYATTN_NULL_POINTER);
  CHECK(tinyattn_kv_cache_length(&zero) == 0 && tinyattn_kv_cache_length(NULL) == 0);
  CHECK(tinyattn_kv_cache_position(&zero) == 0 && tinyattn_kv_cache_position(NULL) == 0);
  CHECK(tinyattn_kv_cache_keys(&zero) == NULL && tinyattn_kv_cache_values(NULL) == NULL);

  /* an fp32 cache: other dtypes, pointers, sizes, fullness */
  cfg = f32->config;
  CHECK_STATUS(tinyattn_kv_cache_init(&cache, &cfg, f32->storage, f32->storage_bytes, f32->scratch, f32->scratch_bytes),
               TINYATTN_OK);
  CHECK(tinyattn_kv_cache_keys(&cache) != NULL &&
        (uintptr_t)tinyattn_kv_cache_keys(&cache) % TINYATTN_WORKSPACE_ALIGN == 0);
  CHECK((const unsigned char*)tinyattn_kv_cache_values(&cache) ==
        (const unsigned char*)tinyattn_kv_cache_keys(&cache) + cfg.hkv * cfg.capacity * cfg.dk * sizeof(float));
  memset(y, 0x7F, sizeof y);
  memcpy(sentinel, y, sizeof y);
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 1, NULL), TINYATTN_BAD_DIMENSION); /* nothing appended */
  CHECK_STATUS(tinyattn_kv_cache_append_f16(&cache, k16, v16, 1), TINYATTN_UNSUPPORTED);
  CHECK_STATUS(tinyattn_kv_cache_append_i8(&cache, k8, v8, 1), TINYATTN_UNSUPPORTED);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, NULL, v, 1), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, NULL, 1), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, (const float*)(const void*)((const unsigned char*)k + 1), v, 1),
               TINYATTN_MISALIGNED);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, (const float*)(const void*)((const unsigned char*)v + 2), 1),
               TINYATTN_MISALIGNED);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, v, 0), TINYATTN_BAD_DIMENSION);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, v, cfg.max_new + 1), TINYATTN_BAD_DIMENSION);
  CHECK(tinyattn_kv_cache_position(&cache) == 0);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, v, 2), TINYATTN_OK);
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 3, NULL), TINYATTN_BAD_DIMENSION); /* only 2 appended */
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 0, NULL), TINYATTN_BAD_DIMENSION);
  CHECK_STATUS(tinyattn_kv_cache_attend_f16(&cache, k16, k16, 1, NULL), TINYATTN_UNSUPPORTED);
  CHECK_STATUS(tinyattn_kv_cache_attend_i8(&cache, k8, k8, 1, g_plans, 4, NULL), TINYATTN_UNSUPPORTED);
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, NULL, y, 1, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, NULL, 1, NULL), TINYATTN_NULL_POINTER);
  opt.port = (tinyattn_port)TINYATTN_PORT_COUNT;
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 1, &opt), TINYATTN_PORT_UNAVAILABLE);
  opt.port = (tinyattn_port)-1;
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 1, &opt), TINYATTN_PORT_UNAVAILABLE);
  opt.port = TINYATTN_PORT_DEFAULT;
  opt.use_scale = 1;
  opt.scale = 0.0f / 0.0f;
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 1, &opt), TINYATTN_BAD_SCALE);
  opt.use_scale = 0;
  /* y over the cache's own keys */
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, (float*)(void*)tinyattn_kv_cache_keys(&cache), 1, NULL),
               TINYATTN_ALIASING);
  CHECK(memcmp(y, sentinel, sizeof y) == 0); /* no rejected attend wrote */
  CHECK(tinyattn_kv_cache_position(&cache) == 2 && tinyattn_kv_cache_length(&cache) == 2);
  for (i = 2; i + cfg.max_new <= cfg.capacity; i += cfg.max_new)
    CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, v, cfg.max_new), TINYATTN_OK);
  /* 18 of 21 slots hold tokens: 4 more do not fit, 3 do, then none */
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, v, 4), TINYATTN_CACHE_FULL);
  CHECK(tinyattn_kv_cache_position(&cache) == 18);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, v, 3), TINYATTN_OK);
  CHECK_STATUS(tinyattn_kv_cache_append(&cache, k, v, 1), TINYATTN_CACHE_FULL);
  CHECK(tinyattn_kv_cache_position(&cache) == 21 && tinyattn_kv_cache_length(&cache) == 21);
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 4, NULL), TINYATTN_OK);
  CHECK_STATUS(tinyattn_kv_cache_reset(&cache), TINYATTN_OK);
  CHECK(tinyattn_kv_cache_position(&cache) == 0 && tinyattn_kv_cache_length(&cache) == 0);
  CHECK_STATUS(tinyattn_kv_cache_attend(&cache, q, y, 1, NULL), TINYATTN_BAD_DIMENSION);

  /* fp16 options outside their enums */
  g_context = kCases[CAPI_KV_F16_RING].name;
  CHECK_STATUS(init_case(&cache, CAPI_KV_F16_RING), TINYATTN_OK);
  CHECK_STATUS(tinyattn_kv_cache_append_f16(&cache, k16, v16, 1), TINYATTN_OK);
  opt16.compute = (tinyattn_f16_compute)7;
  CHECK_STATUS(tinyattn_kv_cache_attend_f16(&cache, k16, (uint16_t*)(void*)y, 1, &opt16), TINYATTN_UNSUPPORTED);
  opt16.compute = TINYATTN_F16_WIDEN_TO_F32;
  opt16.options.port = (tinyattn_port)TINYATTN_PORT_COUNT;
  CHECK_STATUS(tinyattn_kv_cache_attend_f16(&cache, k16, (uint16_t*)(void*)y, 1, &opt16), TINYATTN_PORT_UNAVAILABLE);
  /* a ring never fills */
  for (i = 0; i < 40; ++i) CHECK_STATUS(tinyattn_kv_cache_append_f16(&cache, k16, v16, 1), TINYATTN_OK);
  CHECK(tinyattn_kv_cache_position(&cache) == 41 && tinyattn_kv_cache_length(&cache) == 8);

  /* int8: the plans' count and presence, float options it cannot take */
  g_context = kCases[CAPI_KV_I8_RING].name;
  CHECK_STATUS(make_plans(&kCases[CAPI_KV_I8_RING].config), TINYATTN_OK);
  CHECK_STATUS(init_case(&cache, CAPI_KV_I8_RING), TINYATTN_OK);
  CHECK_STATUS(tinyattn_kv_cache_append_i8(&cache, k8, v8, 1), TINYATTN_OK);
  memset(y, 0x7F, sizeof y);
  CHECK_STATUS(tinyattn_kv_cache_attend_i8(&cache, (const int8_t*)q, (int8_t*)(void*)y, 1, g_plans, 3, NULL),
               TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(tinyattn_kv_cache_attend_i8(&cache, (const int8_t*)q, (int8_t*)(void*)y, 1, NULL, 4, NULL),
               TINYATTN_NULL_POINTER);
  opt.use_scale = 1;
  opt.scale = 0.5f;
  CHECK_STATUS(tinyattn_kv_cache_attend_i8(&cache, (const int8_t*)q, (int8_t*)(void*)y, 1, g_plans, 4, &opt),
               TINYATTN_UNSUPPORTED);
  CHECK(memcmp(y, sentinel, sizeof y) == 0);
  CHECK_STATUS(tinyattn_kv_cache_attend_i8(&cache, (const int8_t*)q, (int8_t*)(void*)y, 1, g_plans, 4, NULL),
               TINYATTN_OK);
}

int main(void) {
  RUN(test_sizes_equal_macros);
  RUN(test_decode_equals_cxx_cache_every_port);
  RUN(test_random_operations_equal_cxx_cache);
  RUN(test_bad_input_statuses);
  return finish();
}
