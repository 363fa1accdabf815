/* int8 from C99 in both modes (tinyattn_int8_scheme::mode): tinyattn_plan_int8
 * equal to the C++ plan_int8, field for field, for the native and the TFLite
 * mode; tinyattn_forward_i8 on every compiled port giving the C++
 * forward_i8's bytes (Y and the weights), the same on each port; the
 * scheme's statuses (a mode outside the enum, a TFLite scheme without its
 * score tensor or with a bias), with nothing written. Heap-free and without
 * stdio on the boards, where it is an image of its own; prints the Unity
 * transcript the other suites print. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "capi_int8_cxx.h"
#include "tinyattn/tinyattn_c.h"

#ifdef CAPI_INT8_BOARD
#include "board.h"
static void out(const char* text) { tinyattn_board_write(text); }
#else
#include <stdio.h>
static void out(const char* text) { fputs(text, stdout); }
#endif

#define CAPI_RUNNER_FILE "capi_int8_test.c"
#include "capi_runner.h"

/* ---- the problem: grouped-query heads, lengths past a vector ------------ */

enum { N = 5, M = 13, DK = 35, DV = 19, HQ = 4, HKV = 2 };
static const tinyattn_dims kDims = TINYATTN_DIMS_HEADS(N, M, DK, DV, HQ, HKV);

static int8_t g_q[HQ * N * DK], g_k[HKV * M * DK], g_v[HKV * M * DV];
static int8_t g_y[HQ * N * DV], g_y_cxx[HQ * N * DV], g_y_first[HQ * N * DV];
static uint16_t g_w[HQ * N * M], g_w_cxx[HQ * N * M], g_w_first[HQ * N * M];
static uint8_t g_keep[HQ * N * M];
static unsigned char g_ws[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(N, M, DK, DV)];
static unsigned char g_ws_cxx[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(N, M, DK, DV)];
static tinyattn_int8_head_plan g_plans[HQ], g_plans_cxx[HQ];

/* The scales: K and V per KV head, the score tensor per query head. */
static const float kSq = 0.04f, kSk[HKV] = {0.05f, 0.045f}, kSv[HKV] = {0.05f, 0.06f}, kSy = 0.03f;
static const float kSs[HQ] = {0.3f, 0.35f, 0.25f, 0.4f}, kSb = 0.1f;
static const int32_t kZq = 3, kZk[HKV] = {-7, 2}, kZv[HKV] = {11, 0}, kZy = -4, kZs[HQ] = {9, 6, 0, -3};

static uint32_t g_rng = 12345u;
static int8_t next_int8(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (int8_t)((int)(g_rng >> 24) - 128);
}
static void fill(int8_t* x, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) x[i] = next_int8();
}

/* The native scheme, zero-initialised otherwise; TFLITE adds the score tensor. */
static void make_scheme(tinyattn_int8_scheme* s, tinyattn_int8_mode mode) {
  memset(s, 0, sizeof *s);
  s->q.scale = &kSq;
  s->q.zero_point = &kZq;
  s->k.scale = kSk;
  s->k.zero_point = kZk;
  s->k.count = HKV;
  s->v.scale = kSv;
  s->v.zero_point = kZv;
  s->v.count = HKV;
  s->y.scale = &kSy;
  s->y.zero_point = &kZy;
  s->use_softmax_scale = 1;
  s->softmax_scale = 0.2f;
  s->mode = mode;
  if (mode == TINYATTN_INT8_MODE_TFLITE) {
    s->scores.scale = kSs;
    s->scores.zero_point = kZs;
    s->scores.count = HQ;
  }
}

static const char* mode_name(tinyattn_int8_mode mode) {
  return mode == TINYATTN_INT8_MODE_TFLITE ? "tflite" : "native";
}

static int all_zero(const void* p, size_t bytes) {
  const unsigned char* b = (const unsigned char*)p;
  size_t i;
  for (i = 0; i < bytes; ++i)
    if (b[i]) return 0;
  return 1;
}

/* ---- cases -------------------------------------------------------------- */

static void test_plan_both_modes_equal_cxx(void) {
  static const tinyattn_int8_mode kModes[2] = {TINYATTN_INT8_MODE_NATIVE, TINYATTN_INT8_MODE_TFLITE};
  tinyattn_int8_scheme scheme;
  size_t i, h;
  for (i = 0; i < 2; ++i) {
    g_context = mode_name(kModes[i]);
    make_scheme(&scheme, kModes[i]);
    memset(g_plans, 0x5A, sizeof g_plans);
    memset(g_plans_cxx, 0xA5, sizeof g_plans_cxx);
    CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
    CHECK_STATUS(capi_int8_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_OK);
    CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
    for (h = 0; h < HQ; ++h) {
      const tinyattn_int8_head_plan* p = &g_plans[h];
      CHECK_STATUS(tinyattn_validate_int8_head_plan(p), TINYATTN_OK);
      CHECK(p->mode == (int32_t)kModes[i]);
      CHECK(p->q_zero == kZq && p->k_zero == kZk[h / 2] && p->v_zero == kZv[h / 2] && p->y_zero == kZy);
      if (kModes[i] == TINYATTN_INT8_MODE_TFLITE) {
        /* the native fields stay 0; the score tensor's zero point is the head's */
        CHECK(all_zero(&p->logit, sizeof p->logit) && all_zero(&p->output, sizeof p->output));
        CHECK(all_zero(&p->bias, sizeof p->bias) && p->bias_zero == 0);
        CHECK(p->tflite.scores_zero == kZs[h] && p->tflite.beta.multiplier != 0 && p->tflite.diff_min < 0);
      } else {
        CHECK(all_zero(&p->tflite, sizeof p->tflite) && p->logit.multiplier != 0);
      }
    }
  }
  /* The native mode ignores a score tensor. */
  g_context = "native with scores set";
  make_scheme(&scheme, TINYATTN_INT8_MODE_NATIVE);
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_OK);
  scheme.scores.scale = kSs;
  scheme.scores.count = HQ;
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
  /* The default softmax scale in the TFLite mode (beta = 1/sqrt(Dk)), per-tensor scores. */
  g_context = "tflite, default scale";
  make_scheme(&scheme, TINYATTN_INT8_MODE_TFLITE);
  scheme.use_softmax_scale = 0;
  scheme.scores.count = 0; /* 0 means 1 */
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  CHECK_STATUS(capi_int8_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_OK);
  CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
}

/* A full positional initialiser of the fields before mode (as code written
 * for them has): mode and scores are zero, the native mode. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
static void test_positional_initialiser_is_native(void) {
  const tinyattn_int8_scheme positional = {{&kSq, &kZq, 1}, {kSk, kZk, HKV}, {kSv, kZv, HKV}, {&kSy, &kZy, 1}, 1, 0.2f,
                                           {NULL, NULL, 0}};
  tinyattn_int8_scheme scheme;
  make_scheme(&scheme, TINYATTN_INT8_MODE_NATIVE);
  CHECK(positional.mode == TINYATTN_INT8_MODE_NATIVE && positional.scores.scale == NULL);
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &positional, g_plans, HQ), TINYATTN_OK);
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_OK);
  CHECK(memcmp(g_plans, g_plans_cxx, sizeof g_plans) == 0);
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* Both modes, a keep mask per head (a fully masked row) under a causal mask,
 * on every compiled port: the C++ bytes, the same on each port. */
static void test_forward_both_modes_every_port(void) {
  static const tinyattn_int8_mode kModes[2] = {TINYATTN_INT8_MODE_NATIVE, TINYATTN_INT8_MODE_TFLITE};
  tinyattn_int8_scheme scheme;
  tinyattn_forward_io_i8 io = {g_q, g_k, g_v, g_y, g_w, NULL};
  tinyattn_forward_io_i8 io_cxx = {g_q, g_k, g_v, g_y_cxx, g_w_cxx, NULL};
  tinyattn_mask mask;
  tinyattn_options opt;
  size_t i, j;
  int p;
  fill(g_q, sizeof g_q);
  fill(g_k, sizeof g_k);
  fill(g_v, sizeof g_v);
  for (j = 0; j < sizeof g_keep; ++j) g_keep[j] = (uint8_t)((j * 7u + 3u) % 5u != 0u);
  memset(g_keep + 2 * M, 0, M); /* head 0, row 2 sees nothing */
  memset(&mask, 0, sizeof mask);
  mask.causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;
  mask.keep = g_keep;
  mask.head_stride = N * M;
  CHECK(tinyattn_forward_i8_workspace_bytes(&kDims) <= sizeof g_ws);
  for (i = 0; i < 2; ++i) {
    g_context = mode_name(kModes[i]);
    g_port = -1;
    make_scheme(&scheme, kModes[i]);
    CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
    /* the reference bytes: C++ on the default port */
    CHECK_STATUS(
        capi_int8_cxx_forward(&kDims, &io_cxx, g_plans, HQ, &mask, TINYATTN_PORT_DEFAULT, g_ws_cxx, sizeof g_ws_cxx),
        TINYATTN_OK);
    memcpy(g_y_first, g_y_cxx, sizeof g_y_first);
    memcpy(g_w_first, g_w_cxx, sizeof g_w_first);
    for (j = 0; j < HQ * N * M; ++j)
      CHECK(g_w_first[j] <= (kModes[i] == TINYATTN_INT8_MODE_TFLITE ? 255u : TINYATTN_PROB_ONE));
    for (p = TINYATTN_PORT_DEFAULT; p < TINYATTN_PORT_COUNT; ++p) {
      if (!tinyattn_port_available((tinyattn_port)p)) continue;
      g_port = p;
      memset(&opt, 0, sizeof opt);
      opt.port = (tinyattn_port)p;
      memset(g_y, 0x55, sizeof g_y);
      memset(g_w, 0x55, sizeof g_w);
      memset(g_y_cxx, 0xAA, sizeof g_y_cxx);
      memset(g_w_cxx, 0xAA, sizeof g_w_cxx);
      CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, &opt), TINYATTN_OK);
      CHECK_STATUS(
          capi_int8_cxx_forward(&kDims, &io_cxx, g_plans, HQ, &mask, (tinyattn_port)p, g_ws_cxx, sizeof g_ws_cxx),
          TINYATTN_OK);
      CHECK(memcmp(g_y, g_y_cxx, sizeof g_y) == 0 && memcmp(g_w, g_w_cxx, sizeof g_w) == 0);
      CHECK(memcmp(g_y, g_y_first, sizeof g_y) == 0 && memcmp(g_w, g_w_first, sizeof g_w) == 0);
    }
  }
  /* The mode is honoured: the TFLite weights (p * 256) are not the native ones (p * 32768). */
  g_context = "native and tflite differ";
  g_port = -1;
  make_scheme(&scheme, TINYATTN_INT8_MODE_NATIVE);
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_OK);
  CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, g_plans, HQ, g_ws, sizeof g_ws, &mask, NULL), TINYATTN_OK);
  CHECK(memcmp(g_w, g_w_first, sizeof g_w) != 0);
}

/* Refused schemes write no plan. */
static void test_scheme_statuses(void) {
  static const int32_t kBadModes[] = {2, -1, 0x7FFFFFFF, -0x7FFFFFFF - 1};
  static const float kZero = 0.0f;
  tinyattn_int8_scheme scheme;
  unsigned char sentinel[sizeof g_plans];
  size_t i;
  memset(sentinel, 0x5A, sizeof sentinel);
  for (i = 0; i < sizeof kBadModes / sizeof kBadModes[0]; ++i) {
    g_context = "mode outside the enum";
    make_scheme(&scheme, TINYATTN_INT8_MODE_TFLITE);
    scheme.mode = (tinyattn_int8_mode)kBadModes[i];
    memset(g_plans, 0x5A, sizeof g_plans);
    CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_UNSUPPORTED);
    CHECK(memcmp(g_plans, sentinel, sizeof g_plans) == 0);
  }
  memset(g_plans, 0x5A, sizeof g_plans);
  g_context = "tflite";
  make_scheme(&scheme, TINYATTN_INT8_MODE_TFLITE);
  CHECK_STATUS(tinyattn_plan_int8(NULL, &scheme, g_plans, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_plan_int8(&kDims, NULL, g_plans, HQ), TINYATTN_NULL_POINTER);
  scheme.scores.scale = NULL; /* the score tensor is required */
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(capi_int8_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_NULL_POINTER);
  make_scheme(&scheme, TINYATTN_INT8_MODE_TFLITE);
  scheme.scores.count = 3; /* neither 1 nor hq */
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  make_scheme(&scheme, TINYATTN_INT8_MODE_TFLITE);
  scheme.scores.scale = &kZero;
  scheme.scores.count = 1;
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_BAD_QUANTIZATION);
  make_scheme(&scheme, TINYATTN_INT8_MODE_TFLITE);
  scheme.bias.scale = &kSb; /* a TFLite graph adds a bias as an op of its own */
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, g_plans, HQ), TINYATTN_UNSUPPORTED);
  CHECK_STATUS(capi_int8_cxx_plan(&kDims, &scheme, g_plans_cxx, HQ), TINYATTN_UNSUPPORTED);
  CHECK(memcmp(g_plans, sentinel, sizeof g_plans) == 0);
}

int main(void) {
  RUN(test_plan_both_modes_equal_cxx);
  RUN(test_positional_initialiser_is_native);
  RUN(test_forward_both_modes_every_port);
  RUN(test_scheme_statuses);
  return finish();
}
