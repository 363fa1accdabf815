/* int16 from C99 in both modes (tinyattn_int16_scheme::mode):
 * tinyattn_plan_int16 equal to the C++ plan_int16, field for field;
 * tinyattn_forward_i16 on every compiled port giving the C++ forward_i16's
 * values (Y and the weights), the same on each port, and the known answer of
 * a single key; the workspace size as a function and as the
 * constant-expression macro (a static buffer below), against the C++
 * formula; every status of the plan and the forward, with nothing written;
 * the int16 self-test through its C wrapper. Heap-free and without stdio on
 * the boards, where it is an image of its own; prints the Unity transcript
 * the other suites print. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "capi_int16_cxx.h"
#include "tinyattn/tinyattn_c.h"

#ifdef CAPI_INT16_BOARD
#include "board.h"
static void out(const char* text) { tinyattn_board_write(text); }
#else
#include <stdio.h>
static void out(const char* text) { fputs(text, stdout); }
#endif

#define CAPI_RUNNER_FILE "capi_int16_test.c"
#include "capi_runner.h"

/* ---- the problem: grouped-query heads, lengths past a vector ------------ */

enum { N = 5, M = 13, DK = 35, DV = 19, HQ = 4, HKV = 2 };
static const tinyattn_dims kDims = TINYATTN_DIMS_HEADS(N, M, DK, DV, HQ, HKV);

static int16_t g_q[HQ * N * DK], g_k[HKV * M * DK], g_v[HKV * M * DV];
static int16_t g_y[HQ * N * DV], g_y_cxx[HQ * N * DV], g_y_first[HQ * N * DV];
static uint16_t g_w[HQ * N * M], g_w_cxx[HQ * N * M], g_w_first[HQ * N * M];
static uint8_t g_keep[HQ * N * M];
/* Static buffers sized by the macro, as firmware declares them. */
static unsigned char g_ws[TINYATTN_FORWARD_I16_WORKSPACE_BYTES(N, M, DK, DV)];
static unsigned char g_ws_cxx[TINYATTN_FORWARD_I16_WORKSPACE_BYTES(N, M, DK, DV)];
static tinyattn_int16_head_plan g_plans[HQ], g_plans_cxx[HQ];

/* Symmetric scales: Q per query head, K and V per KV head, zero points given as zeros. */
static const float kSq[HQ] = {1.0f / 16000, 1.0f / 12000, 1.0f / 20000, 1.0f / 9000};
static const float kSk[HKV] = {1.0f / 15000, 1.0f / 18000}, kSv[HKV] = {1.0f / 8192, 1.0f / 6000};
static const float kSy = 1.0f / 7000;
static const float kSs[HQ] = {0.05f, 0.04f, 0.06f, 0.045f}; /* the TFLite mode's score tensor */
static const int32_t kZeros[HQ] = {0, 0, 0, 0};

static uint32_t g_rng = 54321u;
static int16_t next_int16(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (int16_t)((int32_t)(g_rng >> 16) - 32768);
}
static void fill(int16_t* x, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) x[i] = next_int16();
}

/* The native scheme, zero-initialised otherwise; TFLITE adds the score tensor. */
static void make_scheme(tinyattn_int16_scheme* s, tinyattn_int16_mode mode) {
  memset(s, 0, sizeof *s);
  s->q.scale = kSq;
  s->q.zero_point = kZeros;
  s->q.count = HQ;
  s->k.scale = kSk;
  s->k.count = HKV;
  s->v.scale = kSv;
  s->v.zero_point = kZeros;
  s->v.count = HKV;
  s->y.scale = &kSy; /* count 0 means 1 */
  s->use_softmax_scale = 1;
  s->softmax_scale = 0.2f;
  s->mode = mode;
  if (mode == TINYATTN_INT16_MODE_TFLITE) {
    s->scores.scale = kSs;
    s->scores.zero_point = kZeros;
    s->scores.count = HQ;
  }
}

static const char* mode_name(tinyattn_int16_mode mode) {
  return mode == TINYATTN_INT16_MODE_TFLITE ? "tflite" : "native";
}

static int all_bytes(const void* p, size_t bytes, unsigned char b) {
  const unsigned char* x = (const unsigned char*)p;
  size_t i;
  for (i = 0; i < bytes; ++i)
    if (x[i] != b) return 0;
  return 1;
}

/* ---- cases -------------------------------------------------------------- */

static int all_zero(const void* p, size_t bytes) { return all_bytes(p, bytes, 0); }

static void test_plan_both_modes_equal_cxx(void) {
  static const tinyattn_int16_mode kModes[2] = {TINYATTN_INT16_MODE_NATIVE, TINYATTN_INT16_MODE_TFLITE};
  tinyattn_int16_scheme scheme;
  size_t i, h;
  CHECK(sizeof(tinyattn_int16_head_plan) == 44);
  for (i = 0; i < 2; ++i) {
    g_context = mode_name(kModes[i]);
    make_scheme(&scheme, kModes[i]);
    memset(g_plans, 0x5A, sizeof g_plans);
    memset(g_plans_cxx, 0xA5, sizeof g_plans_cxx);
    CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
    CHECK_STATUS(capi_int16_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_OK);
    CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
    for (h = 0; h < HQ; ++h) {
      const tinyattn_int16_head_plan* p = &g_plans[h];
      CHECK_STATUS(tinyattn_validate_int16_head_plan(p), TINYATTN_OK);
      CHECK(p->mode == (int32_t)kModes[i]);
      if (kModes[i] == TINYATTN_INT16_MODE_TFLITE) {
        /* the native fields stay 0 */
        CHECK(all_zero(&p->logit, sizeof p->logit) && all_zero(&p->output, sizeof p->output));
        CHECK(p->tflite.scores.multiplier >= 0x40000000 && p->tflite.beta.multiplier >= 0x40000000 &&
              p->tflite.output.multiplier >= 0x40000000);
      } else {
        CHECK(all_zero(&p->tflite, sizeof p->tflite));
        CHECK(p->logit.multiplier >= 0x40000000 && p->output.multiplier >= 0x40000000);
        CHECK(p->logit.shift >= 0 && p->logit.shift <= 62 && p->output.shift >= 0 && p->output.shift <= 62);
      }
    }
  }
  /* Heads with different Q scales get different logit multipliers. */
  g_context = "native";
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  CHECK(memcmp(&g_plans[0].logit, &g_plans[1].logit, sizeof g_plans[0].logit) != 0);
  /* The native mode ignores a score tensor. */
  g_context = "native with scores set";
  memcpy(g_plans_cxx, g_plans, sizeof g_plans);
  scheme.scores.scale = kSs;
  scheme.scores.count = HQ;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
  /* The default softmax scale (1/sqrt(Dk); TFLite: beta), everything per tensor. */
  for (i = 0; i < 2; ++i) {
    g_context = kModes[i] == TINYATTN_INT16_MODE_TFLITE ? "tflite, default scale" : "native, default scale";
    make_scheme(&scheme, kModes[i]);
    scheme.use_softmax_scale = 0;
    scheme.q.count = 1;
    scheme.k.count = 1;
    scheme.v.count = 0;
    scheme.scores.count = 0; /* 0 means 1 */
    CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
    CHECK_STATUS(capi_int16_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_OK);
    CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
    CHECK(memcmp(&g_plans[0], &g_plans[3], sizeof g_plans[0]) == 0);
  }
}

/* A full positional initialiser of the fields before mode: the native mode. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
static void test_positional_initialiser_is_native(void) {
  const tinyattn_int16_scheme positional = {{kSq, kZeros, HQ}, {kSk, NULL, HKV}, {kSv, kZeros, HKV}, {&kSy, NULL, 1},
                                            1, 0.2f};
  tinyattn_int16_scheme scheme;
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  CHECK(positional.mode == TINYATTN_INT16_MODE_NATIVE && positional.scores.scale == NULL);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &positional, g_plans, HQ), TINYATTN_OK);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_OK);
  CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* Both modes, a keep mask per head (a fully masked row) under a causal
 * mask, on every compiled port: the C++ values, the same on each port. */
static void test_forward_both_modes_every_port(void) {
  static const tinyattn_int16_mode kModes[2] = {TINYATTN_INT16_MODE_NATIVE, TINYATTN_INT16_MODE_TFLITE};
  tinyattn_int16_scheme scheme;
  tinyattn_forward_io_i16 io = {g_q, g_k, g_v, g_y, g_w};
  tinyattn_forward_io_i16 io_cxx = {g_q, g_k, g_v, g_y_cxx, g_w_cxx};
  tinyattn_mask mask;
  tinyattn_options opt;
  size_t i, j, mi;
  int p;
  fill(g_q, sizeof g_q / sizeof g_q[0]);
  fill(g_k, sizeof g_k / sizeof g_k[0]);
  fill(g_v, sizeof g_v / sizeof g_v[0]);
  g_q[0] = g_k[0] = g_v[0] = -32768; /* the extremes */
  g_q[1] = g_k[1] = g_v[1] = 32767;
  for (j = 0; j < sizeof g_keep; ++j) g_keep[j] = (uint8_t)((j * 7u + 3u) % 5u != 0u);
  memset(g_keep + 2 * M, 0, M); /* head 0, row 2 sees nothing */
  memset(&mask, 0, sizeof mask);
  mask.causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;
  mask.keep = g_keep;
  mask.head_stride = N * M;
  CHECK(tinyattn_forward_i16_workspace_bytes(&kDims) == sizeof g_ws);
  for (mi = 0; mi < 2; ++mi) {
    const int tflite = kModes[mi] == TINYATTN_INT16_MODE_TFLITE;
    g_context = mode_name(kModes[mi]);
    g_port = -1;
    make_scheme(&scheme, kModes[mi]);
    CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
    /* the reference values: C++ on the default port */
    CHECK_STATUS(
        capi_int16_cxx_forward(&kDims, &io_cxx, g_plans, HQ, &mask, TINYATTN_PORT_DEFAULT, g_ws_cxx, sizeof g_ws_cxx),
        TINYATTN_OK);
    memcpy(g_y_first, g_y_cxx, sizeof g_y_first);
    memcpy(g_w_first, g_w_cxx, sizeof g_w_first);
    for (j = 0; j < HQ * N * M; ++j) CHECK(g_w_first[j] <= (tflite ? 32767u : TINYATTN_PROB_ONE));
    /* the masked row: zeros natively (TFLite's masked keys take part in its softmax) */
    if (!tflite)
      for (i = 0; i < DV; ++i) CHECK(g_y_first[2 * DV + i] == 0 && g_w_first[2 * M + i % M] == 0);
    for (p = TINYATTN_PORT_DEFAULT; p < TINYATTN_PORT_COUNT; ++p) {
      if (!tinyattn_port_available((tinyattn_port)p)) continue;
      g_port = p;
      memset(&opt, 0, sizeof opt);
      opt.port = (tinyattn_port)p;
      memset(g_y, 0x55, sizeof g_y);
      memset(g_w, 0x55, sizeof g_w);
      memset(g_y_cxx, 0xAA, sizeof g_y_cxx);
      memset(g_w_cxx, 0xAA, sizeof g_w_cxx);
      CHECK_STATUS(tinyattn_forward_i16(&kDims, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, &opt), TINYATTN_OK);
      CHECK_STATUS(
          capi_int16_cxx_forward(&kDims, &io_cxx, g_plans, HQ, &mask, (tinyattn_port)p, g_ws_cxx, sizeof g_ws_cxx),
          TINYATTN_OK);
      CHECK(memcmp(g_y, g_y_cxx, sizeof g_y) == 0 && memcmp(g_w, g_w_cxx, sizeof g_w) == 0);
      CHECK(memcmp(g_y, g_y_first, sizeof g_y) == 0 && memcmp(g_w, g_w_first, sizeof g_w) == 0);
    }
  }
  /* The mode is honoured: the TFLite mode's weights are not the native ones. */
  g_context = "native and tflite differ";
  g_port = -1;
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  CHECK_STATUS(tinyattn_forward_i16(&kDims, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, NULL), TINYATTN_OK);
  CHECK(memcmp(g_w, g_w_first, sizeof g_w) != 0);
  /* A plan mixing the modes, head by head: each head as in its own mode's plan. */
  g_context = "mixed plan";
  memcpy(g_plans_cxx, g_plans, sizeof g_plans);
  make_scheme(&scheme, TINYATTN_INT16_MODE_TFLITE);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  memcpy(&g_plans[0], &g_plans_cxx[0], sizeof g_plans[0]); /* head 0 native, the others TFLite */
  CHECK_STATUS(tinyattn_forward_i16(&kDims, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, NULL), TINYATTN_OK);
  CHECK(memcmp(g_w + N * M, g_w_first + N * M, (HQ - 1) * N * M * sizeof g_w[0]) == 0);
  CHECK(memcmp(g_y + N * DV, g_y_first + N * DV, (HQ - 1) * N * DV * sizeof g_y[0]) == 0);
  /* Null mask and options: no mask, the default port; the weights optional. */
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  g_context = "no mask, no weights";
  io.weights = NULL;
  io_cxx.weights = NULL;
  CHECK_STATUS(tinyattn_forward_i16(&kDims, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_OK);
  CHECK_STATUS(capi_int16_cxx_forward(&kDims, &io_cxx, g_plans, HQ, NULL, TINYATTN_PORT_DEFAULT, g_ws_cxx,
                                      sizeof g_ws_cxx),
               TINYATTN_OK);
  CHECK(memcmp(g_y, g_y_cxx, sizeof g_y) == 0);
}

/* One key and sv = sy: every weight is 2^15 and Y is V's row, exactly
 * (2^15 v times the output multiplier 1/2^15). */
static void test_single_key_known_answer(void) {
  static const float kS = 1.0f / 4096;
  static const tinyattn_dims d = TINYATTN_DIMS_HEADS(3, 1, 8, 7, 2, 1);
  static unsigned char ws[TINYATTN_FORWARD_I16_WORKSPACE_BYTES(3, 1, 8, 7)];
  static int16_t y[2 * 3 * 7];
  static uint16_t w[2 * 3];
  tinyattn_int16_scheme scheme;
  tinyattn_int16_head_plan plans[2];
  tinyattn_forward_io_i16 io = {g_q, g_k, g_v, y, w};
  size_t i;
  memset(&scheme, 0, sizeof scheme);
  scheme.q.scale = scheme.k.scale = scheme.v.scale = scheme.y.scale = &kS;
  CHECK_STATUS(tinyattn_plan_int16(&d, &scheme, plans, 2), TINYATTN_OK);
  CHECK(plans[0].output.multiplier == 0x40000000 && plans[0].output.shift == 45);
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, plans, 2, ws, sizeof ws, NULL, NULL), TINYATTN_OK);
  for (i = 0; i < 2 * 3; ++i) CHECK(w[i] == TINYATTN_PROB_ONE);
  for (i = 0; i < 2 * 3 * 7; ++i) CHECK(y[i] == g_v[i % 7]);
}

/* Refused schemes write no plan. */
static void test_scheme_statuses(void) {
  static const int32_t kBadModes[] = {2, -1, 0x7FFFFFFF, -0x7FFFFFFF - 1};
  static const float kZero = 0.0f, kNegative = -0.5f;
  static const int32_t kNonzero[HQ] = {0, 1, 0, 0};
  tinyattn_int16_scheme scheme;
  unsigned char sentinel[sizeof g_plans];
  size_t i;
  memset(sentinel, 0x5A, sizeof sentinel);
  memset(g_plans, 0x5A, sizeof g_plans);
  for (i = 0; i < sizeof kBadModes / sizeof kBadModes[0]; ++i) {
    g_context = "mode outside the enum";
    make_scheme(&scheme, TINYATTN_INT16_MODE_TFLITE);
    scheme.mode = (tinyattn_int16_mode)kBadModes[i];
    CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_UNSUPPORTED);
  }
  g_context = "arguments";
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  CHECK_STATUS(tinyattn_plan_int16(NULL, &scheme, g_plans, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, NULL, g_plans, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, NULL, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ - 1), TINYATTN_BAD_QUANTIZATION);
  scheme.v.scale = NULL;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(capi_int16_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_NULL_POINTER);
  g_context = "a nonzero zero point";
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  scheme.q.zero_point = kNonzero;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(capi_int16_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_BAD_QUANTIZATION);
  g_context = "scales";
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  scheme.k.count = 3; /* neither 1 nor hkv */
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  scheme.y.scale = &kZero;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  scheme.y.scale = &kNegative;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  scheme.softmax_scale = -0.2f; /* the max-subtraction needs a positive scale */
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  scheme.softmax_scale = INFINITY;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_SCALE);
  CHECK_STATUS(capi_int16_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_BAD_SCALE);
  g_context = "tflite";
  make_scheme(&scheme, TINYATTN_INT16_MODE_TFLITE);
  scheme.scores.scale = NULL; /* the score tensor is required */
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(capi_int16_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_NULL_POINTER);
  make_scheme(&scheme, TINYATTN_INT16_MODE_TFLITE);
  scheme.scores.count = 3; /* neither 1 nor hq */
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  make_scheme(&scheme, TINYATTN_INT16_MODE_TFLITE);
  scheme.scores.zero_point = kNonzero; /* symmetric, as every int16 tensor */
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  make_scheme(&scheme, TINYATTN_INT16_MODE_TFLITE);
  scheme.scores.scale = &kZero;
  scheme.scores.count = 1;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(capi_int16_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_BAD_QUANTIZATION);
  CHECK(memcmp(g_plans, sentinel, sizeof g_plans) == 0);
}

/* Refused forwards write nothing: Y and the weights keep their bytes. */
static void test_forward_statuses(void) {
  static int16_t odd_y[HQ * N * DV + 1];
  tinyattn_int16_scheme scheme;
  tinyattn_int16_head_plan bad[HQ];
  tinyattn_forward_io_i16 io = {g_q, g_k, g_v, g_y, g_w};
  tinyattn_dims d = kDims;
  tinyattn_mask mask;
  tinyattn_options opt;
  static float fbias[N * M];
  make_scheme(&scheme, TINYATTN_INT16_MODE_NATIVE);
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  memset(g_y, 0x7F, sizeof g_y);
  memset(g_w, 0x7F, sizeof g_w);
  memset(&mask, 0, sizeof mask);
  memset(&opt, 0, sizeof opt);

  g_context = "null arguments";
  CHECK_STATUS(tinyattn_forward_i16(NULL, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_forward_i16(&d, NULL, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, NULL, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, NULL, sizeof g_ws, NULL, NULL), TINYATTN_NULL_POINTER);
  io.y = NULL;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_NULL_POINTER);
  io.y = g_y;
  CHECK_STATUS(tinyattn_validate_int16_head_plan(NULL), TINYATTN_NULL_POINTER);

  g_context = "plans";
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ - 1, g_ws, sizeof g_ws, NULL, NULL),
               TINYATTN_BAD_QUANTIZATION);
  memcpy(bad, g_plans, sizeof bad);
  bad[3].mode = 2;
  CHECK_STATUS(tinyattn_validate_int16_head_plan(&bad[3]), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, bad, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_BAD_QUANTIZATION);
  bad[3].mode = TINYATTN_INT16_MODE_TFLITE; /* with a native head's fields: its TFLite integers are 0 */
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, bad, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_BAD_QUANTIZATION);
  memcpy(bad, g_plans, sizeof bad);
  bad[1].output.multiplier = 0x3FFFFFFF; /* below 2^30 */
  CHECK_STATUS(tinyattn_validate_int16_head_plan(&bad[1]), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, bad, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_BAD_QUANTIZATION);
  memcpy(bad, g_plans, sizeof bad);
  bad[0].logit.shift = 63;
  CHECK_STATUS(tinyattn_validate_int16_head_plan(&bad[0]), TINYATTN_BAD_QUANTIZATION);

  g_context = "dimensions";
  d.dk = TINYATTN_MAX_DK_INT16 + 1;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_BAD_DIMENSION);
  d = kDims;
  d.m = TINYATTN_MAX_M_INT16 + 1;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_BAD_DIMENSION);
  d = kDims;
  d.hq = 3;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_BAD_HEADS);
  d = kDims;

  g_context = "mask and options";
  mask.causal = (tinyattn_causal)7;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, NULL), TINYATTN_BAD_MASK);
  memset(&mask, 0, sizeof mask);
  mask.use_kv_len = 1;
  mask.kv_len = M + 1;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, NULL), TINYATTN_BAD_MASK);
  mask.kv_len = 0xFFFFFFFFu; /* a count of keys through the C struct, never "all keys" */
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, NULL), TINYATTN_BAD_MASK);
  memset(&mask, 0, sizeof mask);
  mask.bias = fbias;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, NULL), TINYATTN_UNSUPPORTED);
  opt.use_scale = 1;
  opt.scale = 0.5f;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, &opt), TINYATTN_UNSUPPORTED);
  memset(&opt, 0, sizeof opt);
  opt.use_softcap = 1;
  opt.softcap = 5.0f;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, &opt), TINYATTN_UNSUPPORTED);
  memset(&opt, 0, sizeof opt);
  opt.port = (tinyattn_port)TINYATTN_PORT_COUNT;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, &opt), TINYATTN_PORT_UNAVAILABLE);
  opt.port = (tinyattn_port)-1;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, &opt), TINYATTN_PORT_UNAVAILABLE);

  g_context = "memory";
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws - 1, NULL, NULL),
               TINYATTN_WORKSPACE_TOO_SMALL);
  io.y = (int16_t*)(void*)((unsigned char*)odd_y + 1);
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_MISALIGNED);
  io.y = g_q;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_ALIASING);
  io.y = g_y;
  io.weights = (uint16_t*)g_y;
  CHECK_STATUS(tinyattn_forward_i16(&d, &io, g_plans, HQ, g_ws, sizeof g_ws, NULL, NULL), TINYATTN_ALIASING);
  CHECK(all_bytes(g_y, sizeof g_y, 0x7F) && all_bytes(g_w, sizeof g_w, 0x7F)); /* nothing written on any error */
}

/* The macro equals the function and the C++ formula over a sweep of dims
 * (N and Dk never matter); null dims give 0. */
static void test_workspace_macro(void) {
  static const size_t ms[] = {1, 2, 7, 8, 9, 15, 16, 17, 63, 255, 256, 257, 4096, 65535};
  static const size_t dvs[] = {1, 5, 16, 17, 64, 512, 65536};
  size_t a, b;
  for (a = 0; a < sizeof ms / sizeof ms[0]; ++a)
    for (b = 0; b < sizeof dvs / sizeof dvs[0]; ++b) {
      const size_t m = ms[a], dv = dvs[b];
      const tinyattn_dims d = TINYATTN_DIMS_HEADS(3, m, 40, dv, 4, 2);
      CHECK(TINYATTN_FORWARD_I16_WORKSPACE_BYTES(3, m, 40, dv) == tinyattn_forward_i16_workspace_bytes(&d));
      CHECK(TINYATTN_FORWARD_I16_WORKSPACE_BYTES(3, m, 40, dv) == capi_int16_cxx_workspace_bytes(&d));
      CHECK(TINYATTN_FORWARD_I16_WORKSPACE_BYTES(1000, m, 1, dv) == TINYATTN_FORWARD_I16_WORKSPACE_BYTES(3, m, 40, dv));
    }
  CHECK(tinyattn_forward_i16_workspace_bytes(NULL) == 0);
}

static unsigned long g_written;
static void count_text(const char* text) { g_written += (unsigned long)strlen(text); }

static void test_selftest_int16(void) {
  static tinyattn_selftest_i16_report report;
  unsigned count = 0, failures = 1;
  uint32_t i;
  g_written = 0;
  CHECK_STATUS(tinyattn_selftest_int16(&report, TINYATTN_PORT_DEFAULT, count_text, TINYATTN_SELFTEST_BOTH),
               TINYATTN_OK);
  CHECK(report.passed && report.count == 17 && report.failures == 0 && g_written > 0);
  for (i = 0; i < report.count; ++i)
    CHECK(report.checks[i].passed && report.checks[i].name != NULL && report.checks[i].property != NULL &&
          report.checks[i].measured <= report.checks[i].bound && strncmp(report.checks[i].name, "i16_", 4) == 0);
  CHECK(capi_int16_cxx_selftest(&count, &failures) && count == report.count && failures == 0);
  CHECK_STATUS(tinyattn_selftest_int16(&report, TINYATTN_PORT_SCALAR, NULL, TINYATTN_SELFTEST_UNITY), TINYATTN_OK);
  CHECK(report.passed);
  memset(&report, 0x5A, sizeof report);
  CHECK_STATUS(tinyattn_selftest_int16(NULL, TINYATTN_PORT_DEFAULT, NULL, TINYATTN_SELFTEST_NONE),
               TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_selftest_int16(&report, (tinyattn_port)TINYATTN_PORT_COUNT, NULL, TINYATTN_SELFTEST_NONE),
               TINYATTN_PORT_UNAVAILABLE);
  CHECK_STATUS(tinyattn_selftest_int16(&report, TINYATTN_PORT_DEFAULT, NULL, (tinyattn_selftest_format)9),
               TINYATTN_UNSUPPORTED);
  CHECK(all_bytes(&report, sizeof report, 0x5A));
}

int main(void) {
  RUN(test_plan_both_modes_equal_cxx);
  RUN(test_positional_initialiser_is_native);
  RUN(test_forward_both_modes_every_port);
  RUN(test_single_key_known_answer);
  RUN(test_scheme_statuses);
  RUN(test_forward_statuses);
  RUN(test_workspace_macro);
  RUN(test_selftest_int16);
  return finish();
}
