/* The C API from C99: every function against the reference or the C++ API
 * (capi_cxx.h), the workspace macros against their functions, and the
 * statuses of faults. Prints the Unity transcript the other suites print. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "capi_cxx.h"
#include "tinyattn/tinyattn_c.h"

/* ---- a minimal Unity-style runner -------------------------------------- */

static unsigned g_tests, g_failures, g_case_failed;
static const char* g_case_name;

static void check_at(int ok, int line, const char* what) {
  if (ok) return;
  if (!g_case_failed) printf("capi_test.c:%d:%s:FAIL: %s\n", line, g_case_name, what);
  g_case_failed = 1;
}
#define CHECK(cond) check_at((cond) ? 1 : 0, __LINE__, #cond)
#define CHECK_STATUS(expr, want) check_at((expr) == (want), __LINE__, #expr " == " #want)

static void run(void (*fn)(void), const char* name, int line) {
  g_case_name = name;
  g_case_failed = 0;
  fn();
  ++g_tests;
  if (g_case_failed) ++g_failures;
  else printf("capi_test.c:%d:%s:PASS\n", line, name);
}
#define RUN(fn) run(fn, #fn, __LINE__)

/* ---- fixtures ---------------------------------------------------------- */

enum { N = 5, M = 7, DK = 8, DV = 6, HQ = 4, HKV = 2 };
static const tinyattn_dims kDims = TINYATTN_DIMS_HEADS(N, M, DK, DV, HQ, HKV);

static float q[HQ * N * DK], k[HKV * M * DK], v[HKV * M * DV], dy[HQ * N * DV];
static float y[HQ * N * DV], w[HQ * N * M], lse[HQ * N];
static double ry[HQ * N * DV], rw[HQ * N * M], rlse[HQ * N];
static unsigned char ws[65536];

static uint32_t g_seed = 12345u;
static float uniform(void) { /* in [-1, 1) */
  g_seed = g_seed * 1664525u + 1013904223u;
  return (float)(g_seed >> 8) / 8388608.0f - 1.0f;
}
static void fill(float* x, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) x[i] = uniform();
}
static void fill_inputs(void) {
  fill(q, sizeof q / sizeof q[0]);
  fill(k, sizeof k / sizeof k[0]);
  fill(v, sizeof v / sizeof v[0]);
  fill(dy, sizeof dy / sizeof dy[0]);
}

static double default_scale(size_t dk) { return (double)(1.0f / sqrtf((float)dk)); }

/* Checks a C forward result (y, w, lse of kDims) against the reference and
 * the seed notebook's properties: rows of A sum to 1 (0 when fully masked),
 * masked keys get exactly 0, Y lies in the convex hull of the visible V rows. */
static void check_forward_result_capped(const tinyattn_mask* mask, double scale, double softcap) {
  size_t h, i, j, c;
  capi_ref_forward_softcap(&kDims, q, k, v, mask, scale, softcap, ry, rw, rlse);
  for (h = 0; h < HQ; ++h) {
    const size_t kv = h / (HQ / HKV);
    for (i = 0; i < N; ++i) {
      double sum = 0.0;
      size_t visible = 0;
      for (j = 0; j < M; ++j) {
        const size_t e = (h * N + i) * M + j;
        sum += w[e];
        CHECK(fabs(w[e] - rw[e]) <= 2e-6 + 2e-5 * rw[e]);
        if (capi_ref_visible(&kDims, mask, h, i, j)) ++visible;
        else CHECK(w[e] == 0.0f);
      }
      CHECK(visible == 0 ? sum == 0.0 : fabs(sum - 1.0) <= 1e-5);
      CHECK(visible == 0 ? isinf(lse[h * N + i]) && lse[h * N + i] < 0
                         : fabs(lse[h * N + i] - rlse[h * N + i]) <= 1e-5 + 1e-5 * fabs(rlse[h * N + i]));
      for (c = 0; c < DV; ++c) {
        const size_t e = (h * N + i) * DV + c;
        float lo = 0.0f, hi = 0.0f;
        int any = 0;
        for (j = 0; j < M; ++j) {
          const float x = v[(kv * M + j) * DV + c];
          if (!capi_ref_visible(&kDims, mask, h, i, j)) continue;
          if (!any || x < lo) lo = x;
          if (!any || x > hi) hi = x;
          any = 1;
        }
        CHECK(any ? y[e] >= lo - 1e-6f && y[e] <= hi + 1e-6f : y[e] == 0.0f);
        CHECK(fabs(y[e] - ry[e]) <= 2e-5 + 2e-5 * fabs(ry[e]));
      }
    }
  }
}

static void check_forward_result(const tinyattn_mask* mask, double scale) {
  check_forward_result_capped(mask, scale, 0.0);
}

/* ---- status, ports ----------------------------------------------------- */

static void test_status_strings(void) {
  static const char* const names[TINYATTN_STATUS_COUNT] = {
      "ok",           "null_pointer", "bad_dimension",    "bad_heads",        "bad_scale",        "bad_mask",
      "workspace_too_small", "misaligned", "aliasing", "port_unavailable", "bad_quantization", "unsupported",
      "cache_full"};
  int s;
  for (s = 0; s < TINYATTN_STATUS_COUNT; ++s) {
    CHECK(strcmp(tinyattn_status_string((tinyattn_status)s), names[s]) == 0);
    CHECK(strcmp(tinyattn_status_string((tinyattn_status)s), capi_cxx_status_string(s)) == 0);
  }
  CHECK(tinyattn_status_string(TINYATTN_UNSUPPORTED) != NULL);
}

static void test_ports(void) {
  int p;
  CHECK(strcmp(tinyattn_port_name(TINYATTN_PORT_DEFAULT), "default") == 0);
  CHECK(strcmp(tinyattn_port_name(TINYATTN_PORT_SCALAR), "scalar") == 0);
  CHECK(tinyattn_port_available(TINYATTN_PORT_DEFAULT));
  CHECK(tinyattn_port_available(TINYATTN_PORT_SCALAR));
  CHECK(tinyattn_port_available(tinyattn_default_port()));
  CHECK(tinyattn_default_port() != TINYATTN_PORT_DEFAULT);
  for (p = 0; p < TINYATTN_PORT_COUNT; ++p) CHECK(tinyattn_port_name((tinyattn_port)p) != NULL);
  CHECK(!tinyattn_port_available((tinyattn_port)TINYATTN_PORT_COUNT));
  CHECK(strcmp(tinyattn_port_name((tinyattn_port)TINYATTN_PORT_COUNT), "unknown_port") == 0);
}

/* ---- row softmax -------------------------------------------------------- */

/* The rows of q (HQ * N rows of DK) at once: each row as one call of one row
 * gives it, bit for bit; rows sum to 1; the gradient form likewise (q, ROWS
 * rows of DK, as its upstream gradient too); faults. */
static void test_softmax_rows(void) {
  enum { ROWS = HQ * N, LD = DK + 2 };
  static float p[ROWS * LD], one[DK], dx[ROWS * LD];
  const tinyattn_port ports[2] = {TINYATTN_PORT_DEFAULT, TINYATTN_PORT_SCALAR};
  int pi;
  size_t r, j;
  fill_inputs();
  for (pi = 0; pi < 2; ++pi) {
    int same = 1, sums = 1;
    CHECK_STATUS(tinyattn_softmax_rows(q, p, ROWS, DK, DK, LD, ports[pi]), TINYATTN_OK);
    for (r = 0; r < ROWS; ++r) {
      double sum = 0.0;
      CHECK_STATUS(tinyattn_softmax_rows(q + r * DK, one, 1, DK, DK, DK, ports[pi]), TINYATTN_OK);
      same &= memcmp(one, p + r * LD, sizeof one) == 0;
      for (j = 0; j < DK; ++j) sum += p[r * LD + j];
      sums &= fabs(sum - 1.0) <= 1e-5;
    }
    CHECK(same);
    CHECK(sums);
    CHECK_STATUS(tinyattn_softmax_vjp_rows(p, q, dx, ROWS, DK, LD, DK, LD, ports[pi]), TINYATTN_OK);
    same = 1;
    for (r = 0; r < ROWS; ++r) {
      CHECK_STATUS(tinyattn_softmax_vjp_rows(p + r * LD, q + r * DK, one, 1, DK, DK, DK, DK, ports[pi]), TINYATTN_OK);
      same &= memcmp(one, dx + r * LD, sizeof one) == 0;
    }
    CHECK(same);
  }
  CHECK_STATUS(tinyattn_softmax_rows(NULL, p, ROWS, DK, DK, LD, TINYATTN_PORT_DEFAULT), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_softmax_rows(q, p, 0, DK, DK, LD, TINYATTN_PORT_DEFAULT), TINYATTN_BAD_DIMENSION);
  CHECK_STATUS(tinyattn_softmax_rows(q, p, ROWS, DK, DK - 1, LD, TINYATTN_PORT_DEFAULT), TINYATTN_BAD_DIMENSION);
  CHECK_STATUS(tinyattn_softmax_rows(p, p + 1, ROWS, DK, LD, LD, TINYATTN_PORT_DEFAULT), TINYATTN_ALIASING);
  /* 256 would wrap onto TINYATTN_PORT_DEFAULT in an 8-bit port value. */
  CHECK_STATUS(tinyattn_softmax_rows(q, p, ROWS, DK, DK, LD, (tinyattn_port)256), TINYATTN_PORT_UNAVAILABLE);
  CHECK_STATUS(tinyattn_softmax_vjp_rows(p, q, NULL, ROWS, DK, LD, DK, LD, TINYATTN_PORT_DEFAULT),
               TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_softmax_vjp_rows(p, q, dx, ROWS, DK, LD, DK, LD, (tinyattn_port)TINYATTN_PORT_COUNT),
               TINYATTN_PORT_UNAVAILABLE);
}

/* ---- fp32 forward ------------------------------------------------------ */

static void test_forward_every_mask(void) {
  static uint8_t keep[N * M], keep_heads[HQ * N * M], bits[N * TINYATTN_KEEP_BITS_ROW_BYTES(M)];
  static float bias[N * M];
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y, w, lse);
  tinyattn_mask masks[13];
  size_t i, count = 0;
  memset(masks, 0, sizeof masks);
  fill_inputs();
  for (i = 0; i < N * M; ++i) {
    keep[i] = (uint8_t)((i * 7 + 3) % 5 != 0);
    bias[i] = (i % 11 == 4) ? -INFINITY : 0.5f * uniform();
  }
  for (i = 0; i < HQ * N * M; ++i) keep_heads[i] = (uint8_t)((i * 5 + 1) % 4 != 0);
  for (i = 0; i < sizeof bits; ++i) bits[i] = (uint8_t)(0xA5u ^ (i * 37u));

  ++count;                                                   /* 0: none */
  masks[count++].causal = TINYATTN_CAUSAL_TOP_LEFT;          /* 1 */
  masks[count++].causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;      /* 2 */
  masks[count].use_window = 1;                               /* 3: window, top-left */
  masks[count].window_left = 2;
  masks[count++].window_right = 1;
  masks[count].use_window = 1;                               /* 4: window, bottom-right, open left */
  masks[count].window_left = TINYATTN_UNBOUNDED;
  masks[count].window_right = 0;
  masks[count++].window_align = TINYATTN_ALIGN_BOTTOM_RIGHT;
  masks[count].use_kv_len = 1;                               /* 5: key padding */
  masks[count++].kv_len = 4;
  masks[count].use_kv_len = 1;                               /* 6: no valid key: zero rows, lse -inf */
  masks[count++].kv_len = 0;
  masks[count++].keep = keep;                                /* 7 */
  masks[count++].keep_bits = bits;                           /* 8 */
  masks[count++].bias = bias;                                /* 9 */
  masks[count].keep = keep_heads;                            /* 10: per-head keep */
  masks[count++].head_stride = N * M;
  masks[count].causal = TINYATTN_CAUSAL_TOP_LEFT;            /* 11: causal + window + kv_len + bias */
  masks[count].use_window = 1;
  masks[count].window_left = 3;
  masks[count].window_right = TINYATTN_UNBOUNDED;
  masks[count].use_kv_len = 1;
  masks[count].kv_len = 6;
  masks[count++].bias = bias;
  masks[count].causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;        /* 12: + keep bits */
  masks[count++].keep_bits = bits;

  for (i = 0; i < count; ++i) {
    CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &masks[i], NULL), TINYATTN_OK);
    check_forward_result(&masks[i], default_scale(DK));
  }
}

static void test_forward_defaults_and_options(void) {
  static float y0[HQ * N * DV];
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y0, w, lse);
  tinyattn_mask none;
  tinyattn_options opt;
  memset(&none, 0, sizeof none);
  memset(&opt, 0, sizeof opt);
  fill_inputs();
  /* Null mask/options and zero-initialised ones are the same defaults. */
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, NULL, NULL), TINYATTN_OK);
  io.y = y;
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &none, &opt), TINYATTN_OK);
  CHECK(memcmp(y, y0, sizeof y) == 0);
  /* An explicit scale, on the scalar port. */
  opt.use_scale = 1;
  opt.scale = 0.75f;
  opt.port = TINYATTN_PORT_SCALAR;
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, NULL, &opt), TINYATTN_OK);
  check_forward_result(NULL, 0.75);
}

/* ONNX Attention's pieces: the causal offset (a cache holding past keys and
 * the N new ones), the offset-aligned window, softcap, and the score output
 * at each stage, against the reference. */
static void test_forward_onnx_features(void) {
  static float scores[HQ * N * M];
  static float bias[N * M];
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y, w, lse);
  tinyattn_mask masks[4];
  tinyattn_options opt;
  size_t i, h, r, j;
  int stage;
  memset(masks, 0, sizeof masks);
  memset(&opt, 0, sizeof opt);
  fill_inputs();
  for (i = 0; i < N * M; ++i) bias[i] = (i % 9 == 5) ? -INFINITY : 0.5f * uniform();
  masks[0].causal = TINYATTN_CAUSAL_OFFSET; /* a cache of 2 past keys and the N = 5 new ones */
  masks[0].offset = M - N;
  masks[0].use_kv_len = 1;
  masks[0].kv_len = M;
  masks[1].causal = TINYATTN_CAUSAL_OFFSET; /* query 0 sees no key: a zero row, lse -inf */
  masks[1].offset = -1;
  masks[2].use_window = 1;                  /* window around key i + 1 */
  masks[2].window_left = 1;
  masks[2].window_right = 1;
  masks[2].window_align = TINYATTN_ALIGN_OFFSET;
  masks[2].offset = 1;
  masks[3] = masks[0];                      /* with a bias */
  masks[3].bias = bias;
  for (i = 0; i < 4; ++i) {
    CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &masks[i], NULL), TINYATTN_OK);
    check_forward_result(&masks[i], default_scale(DK));
  }
  /* Softcap 0.75 (the logits reach about +-2 here, so it bites). */
  opt.use_softcap = 1;
  opt.softcap = 0.75f;
  for (i = 0; i < 4; ++i) {
    CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &masks[i], &opt), TINYATTN_OK);
    check_forward_result_capped(&masks[i], default_scale(DK), 0.75);
  }
  /* The scores at each stage: scaled, then capped, then masked. */
  io.scores = scores;
  for (stage = TINYATTN_SCORES_SCALED; stage <= TINYATTN_SCORES_MASKED; ++stage) {
    io.score_stage = (tinyattn_score_stage)stage;
    CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &masks[3], &opt), TINYATTN_OK);
    for (h = 0; h < HQ; ++h)
      for (r = 0; r < N; ++r)
        for (j = 0; j < M; ++j) {
          const double want = capi_ref_logit(&kDims, q, k, stage == TINYATTN_SCORES_MASKED ? &masks[3] : NULL,
                                             default_scale(DK), stage == TINYATTN_SCORES_SCALED ? 0.0 : 0.75, h, r, j);
          const float got = scores[(h * N + r) * M + j];
          CHECK(isinf(want) ? got == (float)want : fabs(got - want) <= 1e-5 + 1e-5 * fabs(want));
        }
  }
  /* Values C may hold that no enumerator names. */
  io.score_stage = (tinyattn_score_stage)3;
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, NULL, NULL), TINYATTN_UNSUPPORTED);
  io.score_stage = TINYATTN_SCORES_SCALED;
  masks[0].causal = (tinyattn_causal)4;
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &masks[0], NULL), TINYATTN_BAD_MASK);
  /* An offset without an offset mask, and a softcap that is not > 0. */
  memset(masks, 0, sizeof masks);
  masks[0].offset = 1;
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &masks[0], NULL), TINYATTN_BAD_MASK);
  opt.softcap = 0.0f;
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, NULL, &opt), TINYATTN_BAD_SCALE);
}

/* M just over the key tile and no weights: the tiled path, in exactly the
 * bytes the macro gives (a static buffer of that size). */
enum { TN = 3, TM = 257, TDK = 4, TDV = 1 };
static float tq[TN * TDK], tk[TM * TDK], tv[TM * TDV], ty[TN * TDV];
static double try_[TN * TDV];
static unsigned char tiled_ws[TINYATTN_FORWARD_WORKSPACE_BYTES(TN, TM, TDK, TDV, 0)];
static unsigned char weights_ws[TINYATTN_FORWARD_WORKSPACE_BYTES(TN, TM, TDK, TDV, 1)];

static void test_forward_tiled_static_workspace(void) {
  const tinyattn_dims d = TINYATTN_DIMS(TN, TM, TDK, TDV);
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(tq, tk, tv, ty, NULL, NULL);
  size_t i;
  fill(tq, TN * TDK);
  fill(tk, TM * TDK);
  fill(tv, TM * TDV);
  CHECK(sizeof tiled_ws == tinyattn_forward_workspace_bytes(&d, 0, TINYATTN_SCRATCH_DEFAULT));
  CHECK_STATUS(tinyattn_forward(&d, &io, tiled_ws, sizeof tiled_ws, NULL, NULL), TINYATTN_OK);
  capi_ref_forward(&d, tq, tk, tv, NULL, default_scale(TDK), try_, NULL, NULL);
  for (i = 0; i < TN * TDV; ++i) CHECK(fabs(ty[i] - try_[i]) <= 2e-5 + 2e-5 * fabs(try_[i]));
  /* The with-weights size serves the no-weights call too (it is the larger one here). */
  CHECK(sizeof weights_ws >= sizeof tiled_ws);
  CHECK_STATUS(tinyattn_forward(&d, &io, weights_ws, sizeof weights_ws, NULL, NULL), TINYATTN_OK);
  CHECK_STATUS(tinyattn_forward(&d, &io, tiled_ws, sizeof tiled_ws - 1, NULL, NULL), TINYATTN_WORKSPACE_TOO_SMALL);
}

/* ---- fp16 -------------------------------------------------------------- */

static void test_forward_f16(void) {
  static uint16_t hq_[HQ * N * DK], hk[HKV * M * DK], hv[HKV * M * DV], hy[HQ * N * DV], hw[HQ * N * M];
  tinyattn_forward_io_f16 io = {hq_, hk, hv, hy, hw, lse};
  tinyattn_forward_io io32 = TINYATTN_FORWARD_IO(q, k, v, y, w, NULL);
  tinyattn_options_f16 opt;
  tinyattn_mask mask;
  size_t i;
  tinyattn_status s;
  memset(&opt, 0, sizeof opt);
  memset(&mask, 0, sizeof mask);
  mask.causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;
  fill_inputs();
  /* Inputs rounded to fp16 and back, so fp32 on them is the comparison. */
  for (i = 0; i < HQ * N * DK; ++i) q[i] = tinyattn_half_to_float(hq_[i] = tinyattn_float_to_half(q[i]));
  for (i = 0; i < HKV * M * DK; ++i) k[i] = tinyattn_half_to_float(hk[i] = tinyattn_float_to_half(k[i]));
  for (i = 0; i < HKV * M * DV; ++i) v[i] = tinyattn_half_to_float(hv[i] = tinyattn_float_to_half(v[i]));
  CHECK(tinyattn_float_to_half(1.0f) == 0x3C00u && tinyattn_half_to_float(0xC000u) == -2.0f);
  CHECK(tinyattn_forward_f16_workspace_bytes(&kDims, 1) <= sizeof ws);
  CHECK_STATUS(tinyattn_forward_f16(&kDims, &io, ws, sizeof ws, &mask, NULL), TINYATTN_OK);
  CHECK_STATUS(tinyattn_forward(&kDims, &io32, ws, sizeof ws, &mask, NULL), TINYATTN_OK);
  /* fp32 compute, only Y and A rounded to fp16 (2^-11 relative, |v| < 1). */
  for (i = 0; i < HQ * N * DV; ++i) CHECK(fabs(tinyattn_half_to_float(hy[i]) - y[i]) <= 1e-5 + fabs(y[i]) / 2048.0);
  for (i = 0; i < HQ * N * M; ++i) CHECK(fabs(tinyattn_half_to_float(hw[i]) - w[i]) <= 1e-6 + w[i] / 2048.0);
  /* Native products: where available, the looser bound of docs/quant.md (a
   * generous 2e-3 here); elsewhere UNSUPPORTED and nothing written. */
  opt.compute = TINYATTN_F16_NATIVE_F16_PRODUCTS;
  memset(hy, 0xFF, sizeof hy);
  s = tinyattn_forward_f16(&kDims, &io, ws, sizeof ws, &mask, &opt);
  CHECK(tinyattn_f16_native_products_name() != NULL);
  if (tinyattn_f16_native_products_available()) {
    CHECK_STATUS(s, TINYATTN_OK);
    for (i = 0; i < HQ * N * DV; ++i) CHECK(fabs(tinyattn_half_to_float(hy[i]) - y[i]) <= 2e-3);
  } else {
    CHECK_STATUS(s, TINYATTN_UNSUPPORTED);
    for (i = 0; i < HQ * N * DV; ++i) CHECK(hy[i] == 0xFFFFu);
  }
}

/* ---- int8 -------------------------------------------------------------- */

static int8_t iq[HQ * N * DK], ik[HKV * M * DK], iv[HKV * M * DV], ibias[N * M];
static int8_t iy[HQ * N * DV], iy_cxx[HQ * N * DV];
static uint16_t iw[HQ * N * M], iw_cxx[HQ * N * M];

static void fill_int8(int8_t* x, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) x[i] = (int8_t)(int)floorf(uniform() * 128.0f);
}

static void test_int8_plan_and_forward(void) {
  static const float sq = 0.02f, sk[HKV] = {0.03f, 0.025f}, sv = 0.05f, sy = 0.01f, sb = 0.1f;
  static const int32_t zq = 3, zk[HKV] = {-2, 5}, zv = 0, zy = -1, zb = 7;
  tinyattn_int8_scheme scheme;
  tinyattn_int8_head_plan plans[HQ], plans_cxx[HQ];
  tinyattn_forward_io_i8 io = {iq, ik, iv, iy, iw, NULL};
  tinyattn_forward_io_i8 io_cxx = {iq, ik, iv, iy_cxx, iw_cxx, NULL};
  tinyattn_mask mask;
  tinyattn_options opt;
  size_t i, h, j;
  memset(&scheme, 0, sizeof scheme);
  memset(&mask, 0, sizeof mask);
  memset(&opt, 0, sizeof opt);
  fill_int8(iq, sizeof iq);
  fill_int8(ik, sizeof ik);
  fill_int8(iv, sizeof iv);
  fill_int8(ibias, sizeof ibias);
  scheme.q.scale = &sq; /* count 0: per tensor */
  scheme.q.zero_point = &zq;
  scheme.k.scale = sk; /* per KV head */
  scheme.k.zero_point = zk;
  scheme.k.count = HKV;
  scheme.v.scale = &sv;
  scheme.v.zero_point = &zv;
  scheme.v.count = 1;
  scheme.y.scale = &sy;
  scheme.y.zero_point = &zy;
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, plans, HQ), TINYATTN_OK);
  CHECK_STATUS(capi_cxx_plan_int8(&kDims, &scheme, plans_cxx, HQ), TINYATTN_OK);
  CHECK(memcmp(plans, plans_cxx, sizeof plans) == 0);
  for (h = 0; h < HQ; ++h) CHECK_STATUS(tinyattn_validate_int8_head_plan(&plans[h]), TINYATTN_OK);

  /* Bit-identical to the C++ forward_i8, with a mask and the weights. */
  mask.causal = TINYATTN_CAUSAL_TOP_LEFT;
  mask.use_kv_len = 1;
  mask.kv_len = 6;
  CHECK(tinyattn_forward_i8_workspace_bytes(&kDims) <= sizeof ws);
  CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, plans, HQ, ws, sizeof ws, &mask, NULL), TINYATTN_OK);
  CHECK_STATUS(capi_cxx_forward_i8(&kDims, &io_cxx, plans, HQ, &mask), TINYATTN_OK);
  CHECK(memcmp(iy, iy_cxx, sizeof iy) == 0 && memcmp(iw, iw_cxx, sizeof iw) == 0);
  for (h = 0; h < HQ; ++h)
    for (i = 0; i < N; ++i) {
      uint32_t sum = 0;
      for (j = 0; j < M; ++j) {
        sum += iw[(h * N + i) * M + j];
        if (!capi_ref_visible(&kDims, &mask, h, i, j)) CHECK(iw[(h * N + i) * M + j] == 0);
      }
      CHECK(sum + M >= TINYATTN_PROB_ONE && sum <= TINYATTN_PROB_ONE + M); /* each p_j rounded */
    }
  /* Every port gives the same bytes. */
  opt.port = TINYATTN_PORT_SCALAR;
  memset(iy, 0, sizeof iy);
  CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, plans, HQ, ws, sizeof ws, &mask, &opt), TINYATTN_OK);
  CHECK(memcmp(iy, iy_cxx, sizeof iy) == 0);

  /* An int8 bias needs a plan made with a bias scale. */
  io.bias = io_cxx.bias = ibias;
  CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, plans, HQ, ws, sizeof ws, NULL, NULL), TINYATTN_BAD_QUANTIZATION);
  scheme.bias.scale = &sb;
  scheme.bias.zero_point = &zb;
  scheme.use_softmax_scale = 1;
  scheme.softmax_scale = 0.4f;
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, plans, HQ), TINYATTN_OK);
  CHECK_STATUS(capi_cxx_plan_int8(&kDims, &scheme, plans_cxx, HQ), TINYATTN_OK);
  CHECK(memcmp(plans, plans_cxx, sizeof plans) == 0);
  CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, plans, HQ, ws, sizeof ws, NULL, NULL), TINYATTN_OK);
  CHECK_STATUS(capi_cxx_forward_i8(&kDims, &io_cxx, plans, HQ, NULL), TINYATTN_OK);
  CHECK(memcmp(iy, iy_cxx, sizeof iy) == 0 && memcmp(iw, iw_cxx, sizeof iw) == 0);
}

/* A plan written out as constants (as firmware keeps it in flash), built
 * here from tinyattn_make_multiplier the way plan_int8 builds it. */
static void test_int8_precomputed_plan(void) {
  tinyattn_int8_head_plan plan[1], planned[1];
  tinyattn_int8_scheme scheme;
  static const float s = 0.05f, sy = 0.02f;
  const tinyattn_dims d = TINYATTN_DIMS(N, M, DK, DV);
  tinyattn_forward_io_i8 io = {iq, ik, iv, iy, NULL, NULL};
  memset(plan, 0, sizeof plan);
  memset(&scheme, 0, sizeof scheme);
  scheme.q.scale = scheme.k.scale = scheme.v.scale = &s;
  scheme.y.scale = &sy;
  fill_int8(iq, sizeof iq);
  CHECK_STATUS(tinyattn_plan_int8(&d, &scheme, planned, 1), TINYATTN_OK);
  CHECK_STATUS(tinyattn_make_multiplier((double)(1.0f / sqrtf((float)DK)) * (double)s * (double)s *
                                            1.4426950408889634 * 67108864.0,
                                        &plan[0].logit),
               TINYATTN_OK);
  CHECK_STATUS(tinyattn_make_multiplier((double)s / ((double)sy * 32768.0), &plan[0].output), TINYATTN_OK);
  CHECK(memcmp(plan, planned, sizeof plan) == 0);
  CHECK_STATUS(tinyattn_validate_int8_head_plan(plan), TINYATTN_OK);
  CHECK_STATUS(tinyattn_forward_i8(&d, &io, plan, 1, ws, sizeof ws, NULL, NULL), TINYATTN_OK);
  CHECK_STATUS(capi_cxx_forward_i8(&d, &io, planned, 1, NULL), TINYATTN_OK);
  /* Rejected plans: an invalid multiplier, a wrong count. */
  plan[0].logit.multiplier = 5;
  CHECK_STATUS(tinyattn_validate_int8_head_plan(plan), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(tinyattn_forward_i8(&d, &io, plan, 1, ws, sizeof ws, NULL, NULL), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(tinyattn_forward_i8(&d, &io, planned, 2, ws, sizeof ws, NULL, NULL), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(tinyattn_make_multiplier(-1.0, &plan[0].logit), TINYATTN_BAD_QUANTIZATION);
}

/* ---- backward ---------------------------------------------------------- */

static void test_backward_both_modes(void) {
  static float dq[HQ * N * DK], dk[HKV * M * DK], dv[HKV * M * DV];
  static double rdq[HQ * N * DK], rdk[HKV * M * DK], rdv[HKV * M * DV];
  tinyattn_forward_io fio = TINYATTN_FORWARD_IO(q, k, v, y, w, lse);
  tinyattn_backward_io bio;
  tinyattn_mask mask;
  int mode;
  size_t i;
  memset(&mask, 0, sizeof mask);
  mask.causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;
  mask.use_window = 1;
  mask.window_left = 3;
  mask.window_right = TINYATTN_UNBOUNDED;
  fill_inputs();
  CHECK_STATUS(tinyattn_forward(&kDims, &fio, ws, sizeof ws, &mask, NULL), TINYATTN_OK);
  capi_ref_backward(&kDims, q, k, v, dy, &mask, default_scale(DK), rdq, rdk, rdv);
  for (mode = TINYATTN_BACKWARD_SAVED_WEIGHTS; mode <= TINYATTN_BACKWARD_RECOMPUTE; ++mode) {
    double big = 0.0;
    memset(&bio, 0, sizeof bio);
    bio.q = q;
    bio.k = k;
    bio.v = v;
    bio.dy = dy;
    if (mode == TINYATTN_BACKWARD_SAVED_WEIGHTS) bio.weights = w;
    else bio.lse = lse;
    bio.dq = dq;
    bio.dk = dk;
    bio.dv = dv;
    CHECK(tinyattn_backward_workspace_bytes(&kDims, (tinyattn_backward_mode)mode) <= sizeof ws);
    CHECK_STATUS(tinyattn_backward(&kDims, (tinyattn_backward_mode)mode, &bio, ws, sizeof ws, &mask, NULL),
                 TINYATTN_OK);
    for (i = 0; i < HQ * N * DK; ++i) big = fabs(rdq[i]) > big ? fabs(rdq[i]) : big;
    for (i = 0; i < HKV * M * DK; ++i) big = fabs(rdk[i]) > big ? fabs(rdk[i]) : big;
    for (i = 0; i < HKV * M * DV; ++i) big = fabs(rdv[i]) > big ? fabs(rdv[i]) : big;
    for (i = 0; i < HQ * N * DK; ++i) CHECK(fabs(dq[i] - rdq[i]) <= 2e-5 * big);
    for (i = 0; i < HKV * M * DK; ++i) CHECK(fabs(dk[i] - rdk[i]) <= 2e-5 * big);
    for (i = 0; i < HKV * M * DV; ++i) CHECK(fabs(dv[i] - rdv[i]) <= 2e-5 * big);
  }
  bio.lse = NULL;
  CHECK_STATUS(tinyattn_backward(&kDims, TINYATTN_BACKWARD_RECOMPUTE, &bio, ws, sizeof ws, &mask, NULL),
               TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_backward(&kDims, (tinyattn_backward_mode)9, &bio, ws, sizeof ws, &mask, NULL),
               TINYATTN_UNSUPPORTED);
}

/* ---- self-test --------------------------------------------------------- */

static size_t g_written;
static int g_saw_ok;
static void count_text(const char* text) {
  g_written += strlen(text);
  if (strstr(text, "OK")) g_saw_ok = 1;
}

static void test_selftest(void) {
  static tinyattn_selftest_report report;
  unsigned count = 0, failures = 1;
  uint32_t i;
  CHECK_STATUS(tinyattn_selftest(&report, TINYATTN_PORT_DEFAULT, count_text, TINYATTN_SELFTEST_UNITY), TINYATTN_OK);
  CHECK(report.passed && report.count > 0 && report.failures == 0);
  CHECK(g_written > 0 && g_saw_ok);
  for (i = 0; i < report.count; ++i)
    CHECK(report.checks[i].passed && report.checks[i].name != NULL && report.checks[i].measured <= report.checks[i].bound);
  CHECK(capi_cxx_selftest(&count, &failures) && count == report.count && failures == 0);
  CHECK_STATUS(tinyattn_selftest(&report, TINYATTN_PORT_SCALAR, NULL, TINYATTN_SELFTEST_BOTH), TINYATTN_OK);
  CHECK(report.passed);
  CHECK_STATUS(tinyattn_selftest(NULL, TINYATTN_PORT_DEFAULT, NULL, TINYATTN_SELFTEST_NONE), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_selftest(&report, (tinyattn_port)TINYATTN_PORT_COUNT, NULL, TINYATTN_SELFTEST_NONE),
               TINYATTN_PORT_UNAVAILABLE);
  CHECK_STATUS(tinyattn_selftest(&report, (tinyattn_port)-1, NULL, TINYATTN_SELFTEST_NONE), TINYATTN_PORT_UNAVAILABLE);
  CHECK_STATUS(tinyattn_selftest(&report, TINYATTN_PORT_DEFAULT, NULL, (tinyattn_selftest_format)9),
               TINYATTN_UNSUPPORTED);
}

static void test_selftest_int8(void) {
  static tinyattn_selftest_i8_report report;
  unsigned count = 0, failures = 1;
  uint32_t i;
  g_written = 0;
  g_saw_ok = 0;
  CHECK_STATUS(tinyattn_selftest_int8(&report, TINYATTN_PORT_DEFAULT, count_text, TINYATTN_SELFTEST_UNITY),
               TINYATTN_OK);
  CHECK(report.passed && report.count >= 16 && report.failures == 0);
  CHECK(g_written > 0 && g_saw_ok);
  for (i = 0; i < report.count; ++i)
    CHECK(report.checks[i].passed && report.checks[i].name != NULL && report.checks[i].property != NULL &&
          report.checks[i].measured <= report.checks[i].bound);
  CHECK(capi_cxx_selftest_int8(&count, &failures) && count == report.count && failures == 0);
  CHECK_STATUS(tinyattn_selftest_int8(&report, TINYATTN_PORT_SCALAR, NULL, TINYATTN_SELFTEST_BOTH), TINYATTN_OK);
  CHECK(report.passed);
  CHECK_STATUS(tinyattn_selftest_int8(NULL, TINYATTN_PORT_DEFAULT, NULL, TINYATTN_SELFTEST_NONE),
               TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_selftest_int8(&report, (tinyattn_port)TINYATTN_PORT_COUNT, NULL, TINYATTN_SELFTEST_NONE),
               TINYATTN_PORT_UNAVAILABLE);
  CHECK_STATUS(tinyattn_selftest_int8(&report, TINYATTN_PORT_DEFAULT, NULL, (tinyattn_selftest_format)9),
               TINYATTN_UNSUPPORTED);
}

/* ---- workspace macros -------------------------------------------------- */

/* Each macro equals its function and the C++ formula for a sweep of dims:
 * M around the key tiles (8, 256), Dv up to large, N around the block rows
 * and the transposed-keys threshold. */
static void test_workspace_macros(void) {
  static const size_t ns[] = {1, 3, 4, 5, 31, 32, 33, 64, 1000};
  static const size_t ms[] = {1, 2, 7, 8, 9, 63, 255, 256, 257, 258, 300, 511, 512, 513, 4096, 65536};
  static const size_t dks[] = {1, 3, 8, 64, 100, 32768};
  static const size_t dvs[] = {1, 5, 16, 64, 512, 4096, 65536};
  size_t a, b, c, e;
  for (a = 0; a < sizeof ns / sizeof ns[0]; ++a)
    for (b = 0; b < sizeof ms / sizeof ms[0]; ++b)
      for (c = 0; c < sizeof dks / sizeof dks[0]; ++c)
        for (e = 0; e < sizeof dvs / sizeof dvs[0]; ++e) {
          const size_t n = ns[a], m = ms[b], dk = dks[c], dv = dvs[e];
          const tinyattn_dims d = TINYATTN_DIMS_HEADS(n, m, dk, dv, 8, 2);
          int ww;
          for (ww = 0; ww <= 1; ++ww) {
            /* the default workspace, in C as in C++ */
            CHECK(TINYATTN_FORWARD_WORKSPACE_BYTES(n, m, dk, dv, ww) ==
                  tinyattn_forward_workspace_bytes(&d, ww, TINYATTN_SCRATCH_DEFAULT));
            CHECK(TINYATTN_FORWARD_WORKSPACE_BYTES(n, m, dk, dv, ww) == capi_cxx_forward_workspace_bytes(&d, ww, -1));
            CHECK(TINYATTN_FORWARD_WORKSPACE_BYTES_SCRATCH(n, m, dk, dv, ww, TINYATTN_SCRATCH_MINIMAL) ==
                  capi_cxx_forward_workspace_bytes(&d, ww, 0));
            CHECK(TINYATTN_FORWARD_WORKSPACE_BYTES_SCRATCH(n, m, dk, dv, ww, TINYATTN_SCRATCH_MINIMAL) ==
                  tinyattn_forward_workspace_bytes(&d, ww, TINYATTN_SCRATCH_MINIMAL));
            CHECK(TINYATTN_FORWARD_WORKSPACE_BYTES_SCRATCH(n, m, dk, dv, ww, TINYATTN_SCRATCH_TRANSPOSED_KEYS) ==
                  tinyattn_forward_workspace_bytes(&d, ww, TINYATTN_SCRATCH_TRANSPOSED_KEYS));
            CHECK(TINYATTN_FORWARD_WORKSPACE_BYTES_SCRATCH(n, m, dk, dv, ww, TINYATTN_SCRATCH_TRANSPOSED_KEYS) ==
                  capi_cxx_forward_workspace_bytes(&d, ww, 1));
            CHECK(TINYATTN_FORWARD_F16_WORKSPACE_BYTES(n, m, dk, dv, ww) ==
                  tinyattn_forward_f16_workspace_bytes(&d, ww));
            CHECK(TINYATTN_FORWARD_F16_WORKSPACE_BYTES(n, m, dk, dv, ww) ==
                  capi_cxx_forward_f16_workspace_bytes(&d, ww));
            /* with weights is always enough */
            CHECK(TINYATTN_FORWARD_WORKSPACE_BYTES(n, m, dk, dv, 1) >= TINYATTN_FORWARD_WORKSPACE_BYTES(n, m, dk, dv, ww));
          }
          CHECK(TINYATTN_FORWARD_I8_WORKSPACE_BYTES(n, m, dk, dv) == tinyattn_forward_i8_workspace_bytes(&d));
          CHECK(TINYATTN_FORWARD_I8_WORKSPACE_BYTES(n, m, dk, dv) == capi_cxx_forward_i8_workspace_bytes(&d));
          CHECK(TINYATTN_FORWARD_I8_TFLITE_WORKSPACE_BYTES(n, m, dk, dv) ==
                tinyattn_forward_i8_tflite_workspace_bytes(&d));
          CHECK(TINYATTN_FORWARD_I8_TFLITE_WORKSPACE_BYTES(n, m, dk, dv) ==
                capi_cxx_forward_i8_tflite_workspace_bytes(&d));
          CHECK(TINYATTN_FORWARD_I16_WORKSPACE_BYTES(n, m, dk, dv) == tinyattn_forward_i16_workspace_bytes(&d));
          CHECK(TINYATTN_BACKWARD_WORKSPACE_BYTES(n, m, dk, dv, TINYATTN_BACKWARD_SAVED_WEIGHTS) ==
                tinyattn_backward_workspace_bytes(&d, TINYATTN_BACKWARD_SAVED_WEIGHTS));
          CHECK(TINYATTN_BACKWARD_WORKSPACE_BYTES(n, m, dk, dv, TINYATTN_BACKWARD_RECOMPUTE) ==
                tinyattn_backward_workspace_bytes(&d, TINYATTN_BACKWARD_RECOMPUTE));
          CHECK(TINYATTN_BACKWARD_WORKSPACE_BYTES(n, m, dk, dv, TINYATTN_BACKWARD_RECOMPUTE) ==
                capi_cxx_backward_workspace_bytes(&d, 1));
          CHECK(TINYATTN_BACKWARD_WORKSPACE_BYTES(n, m, dk, dv, TINYATTN_BACKWARD_SAVED_WEIGHTS) ==
                capi_cxx_backward_workspace_bytes(&d, 0));
        }
  CHECK(tinyattn_forward_workspace_bytes(NULL, 1, TINYATTN_SCRATCH_MINIMAL) == 0);
  CHECK(tinyattn_forward_f16_workspace_bytes(NULL, 1) == 0);
  CHECK(tinyattn_forward_i8_workspace_bytes(NULL) == 0);
  CHECK(tinyattn_forward_i8_tflite_workspace_bytes(NULL) == 0);
  CHECK(tinyattn_forward_i16_workspace_bytes(NULL) == 0);
  CHECK(tinyattn_backward_workspace_bytes(NULL, TINYATTN_BACKWARD_RECOMPUTE) == 0);
}

/* ---- faults ------------------------------------------------------------ */

static void test_fault_statuses(void) {
  static float sentinel[HQ * N * DV];
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y, NULL, NULL);
  tinyattn_forward_io_f16 io16 = {NULL, NULL, NULL, NULL, NULL, NULL};
  tinyattn_forward_io_i8 io8 = {iq, ik, iv, iy, NULL, NULL};
  tinyattn_int8_scheme scheme;
  tinyattn_int8_head_plan plans[HQ];
  tinyattn_dims d = kDims;
  tinyattn_mask mask;
  tinyattn_options opt;
  tinyattn_options_f16 opt16;
  static const float bad_scale = -1.0f;
  memset(&mask, 0, sizeof mask);
  memset(&opt, 0, sizeof opt);
  memset(&opt16, 0, sizeof opt16);
  memset(&scheme, 0, sizeof scheme);
  memset(y, 0x7F, sizeof y);
  memcpy(sentinel, y, sizeof y);

  CHECK_STATUS(tinyattn_forward(NULL, &io, ws, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_forward(&d, NULL, ws, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_forward(&d, &io, NULL, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  io.y = NULL;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  io.y = y;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, 1, NULL, NULL), TINYATTN_WORKSPACE_TOO_SMALL);
  d.n = 0;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, NULL), TINYATTN_BAD_DIMENSION);
  d.n = N;
  d.dk = TINYATTN_MAX_DIM + 1;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, NULL), TINYATTN_BAD_DIMENSION);
  d.dk = DK;
  d.hq = 3;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, NULL), TINYATTN_BAD_HEADS);
  d.hq = 0;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, NULL), TINYATTN_BAD_HEADS);
  d.hq = HQ;
  mask.use_kv_len = 1;
  mask.kv_len = M + 1;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
  memset(&mask, 0, sizeof mask);
  mask.use_window = 1;
  mask.window_left = -3;
  mask.window_right = 1;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
  memset(&mask, 0, sizeof mask);
  mask.keep = (const uint8_t*)ws;
  mask.keep_bits = (const uint8_t*)ws;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
  memset(&mask, 0, sizeof mask);
  mask.causal = (tinyattn_causal)7;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
  memset(&mask, 0, sizeof mask);
  mask.window_align = (tinyattn_align)-1;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
  opt.use_scale = 1;
  opt.scale = NAN;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, &opt), TINYATTN_BAD_SCALE);
  opt.use_scale = 0;
  opt.port = (tinyattn_port)TINYATTN_PORT_COUNT;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, &opt), TINYATTN_PORT_UNAVAILABLE);
  opt.port = TINYATTN_PORT_MVE;
  if (!tinyattn_port_available(TINYATTN_PORT_MVE))
    CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, &opt), TINYATTN_PORT_UNAVAILABLE);
  io.y = (float*)(void*)(ws + 1);
  CHECK_STATUS(tinyattn_forward(&d, &io, ws + 4096, 4096, NULL, NULL), TINYATTN_MISALIGNED);
  io.y = (float*)(void*)q;
  CHECK_STATUS(tinyattn_forward(&d, &io, ws, sizeof ws, NULL, NULL), TINYATTN_ALIASING);
  CHECK(memcmp(y, sentinel, sizeof y) == 0); /* nothing written on any error */

  CHECK_STATUS(tinyattn_forward_f16(&d, NULL, ws, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_forward_f16(&d, &io16, ws, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  opt16.compute = (tinyattn_f16_compute)7;
  CHECK_STATUS(tinyattn_forward_f16(&d, &io16, ws, sizeof ws, NULL, &opt16), TINYATTN_UNSUPPORTED);

  CHECK_STATUS(tinyattn_plan_int8(&d, NULL, plans, HQ), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_plan_int8(&d, &scheme, plans, HQ), TINYATTN_NULL_POINTER);
  scheme.q.scale = scheme.k.scale = scheme.v.scale = scheme.y.scale = &bad_scale;
  CHECK_STATUS(tinyattn_plan_int8(&d, &scheme, plans, HQ), TINYATTN_BAD_QUANTIZATION);
  CHECK_STATUS(tinyattn_forward_i8(&d, &io8, NULL, HQ, ws, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_forward_i8(NULL, &io8, plans, HQ, ws, sizeof ws, NULL, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_make_multiplier(1.0, NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_validate_int8_head_plan(NULL), TINYATTN_NULL_POINTER);
  CHECK_STATUS(tinyattn_backward(&d, TINYATTN_BACKWARD_RECOMPUTE, NULL, ws, sizeof ws, NULL, NULL),
               TINYATTN_NULL_POINTER);
}

/* Whether every byte of x[0..n) is b. */
static int all_bytes(const void* x, size_t n, unsigned char b) {
  const unsigned char* p = (const unsigned char*)x;
  size_t i;
  for (i = 0; i < n; ++i)
    if (p[i] != b) return 0;
  return 1;
}

/* kv_len given through the struct is a count of keys: every value above M is
 * BAD_MASK, UINT32_MAX included (C++ reads that value of Mask::kv_len as "all
 * keys"; through the C struct it must not attend every key). Every entry
 * point that takes a mask; outputs untouched. */
static void test_kv_len_above_m_is_bad_mask(void) {
  static const uint32_t too_long[] = {M + 1, 0x7FFFFFFFu, 0xFFFFFFFEu, 0xFFFFFFFFu};
  static uint16_t hq16[HQ * N * DK], hk16[HKV * M * DK], hv16[HKV * M * DV], hy16[HQ * N * DV];
  static int16_t sq16[HQ * N * DK], sk16[HKV * M * DK], sv16[HKV * M * DV], sy16[HQ * N * DV];
  static float dq[HQ * N * DK], dk[HKV * M * DK], dv[HKV * M * DV];
  static const float s = 0.05f;
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y, w, lse);
  tinyattn_forward_io_f16 io16 = {hq16, hk16, hv16, hy16, NULL, NULL};
  tinyattn_forward_io_i8 io8 = {iq, ik, iv, iy, NULL, NULL};
  tinyattn_forward_io_i16 io_i16 = {sq16, sk16, sv16, sy16, NULL};
  tinyattn_backward_io bio;
  tinyattn_int8_scheme scheme;
  tinyattn_int8_head_plan plans[HQ];
  tinyattn_int16_scheme scheme16;
  tinyattn_int16_head_plan plans16[HQ];
  tinyattn_mask mask;
  size_t t;
  fill_inputs();
  memset(&scheme, 0, sizeof scheme);
  scheme.q.scale = scheme.k.scale = scheme.v.scale = scheme.y.scale = &s;
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, plans, HQ), TINYATTN_OK);
  memset(&scheme16, 0, sizeof scheme16);
  scheme16.q.scale = scheme16.k.scale = scheme16.v.scale = scheme16.y.scale = &s;
  CHECK_STATUS(tinyattn_plan_int16(&kDims, &scheme16, plans16, HQ), TINYATTN_OK);
  memset(&bio, 0, sizeof bio);
  bio.q = q;
  bio.k = k;
  bio.v = v;
  bio.dy = dy;
  bio.lse = lse;
  bio.dq = dq;
  bio.dk = dk;
  bio.dv = dv;
  memset(&mask, 0, sizeof mask);
  mask.use_kv_len = 1;
  mask.kv_len = M; /* the longest valid one */
  CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &mask, NULL), TINYATTN_OK);
  for (t = 0; t < sizeof too_long / sizeof too_long[0]; ++t) {
    memset(y, 0x7F, sizeof y);
    memset(hy16, 0x7F, sizeof hy16);
    memset(iy, 0x7F, sizeof iy);
    memset(sy16, 0x7F, sizeof sy16);
    memset(dq, 0x7F, sizeof dq);
    mask.kv_len = too_long[t];
    CHECK_STATUS(tinyattn_forward(&kDims, &io, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
    CHECK_STATUS(tinyattn_forward_f16(&kDims, &io16, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
    CHECK_STATUS(tinyattn_forward_i8(&kDims, &io8, plans, HQ, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
    CHECK_STATUS(tinyattn_forward_i16(&kDims, &io_i16, plans16, HQ, ws, sizeof ws, &mask, NULL), TINYATTN_BAD_MASK);
    CHECK_STATUS(tinyattn_backward(&kDims, TINYATTN_BACKWARD_RECOMPUTE, &bio, ws, sizeof ws, &mask, NULL),
                 TINYATTN_BAD_MASK);
    CHECK(all_bytes(y, sizeof y, 0x7F) && all_bytes(hy16, sizeof hy16, 0x7F));
    CHECK(all_bytes(iy, sizeof iy, 0x7F) && all_bytes(dq, sizeof dq, 0x7F) && all_bytes(sy16, sizeof sy16, 0x7F));
  }
}

static void test_int8_rejects_float_scale_and_bias(void) {
  static const float s = 0.05f;
  static float fbias[N * M];
  tinyattn_int8_scheme scheme;
  tinyattn_int8_head_plan plans[HQ];
  tinyattn_forward_io_i8 io = {iq, ik, iv, iy, NULL, NULL};
  tinyattn_options opt;
  tinyattn_mask mask;
  memset(&scheme, 0, sizeof scheme);
  memset(&opt, 0, sizeof opt);
  memset(&mask, 0, sizeof mask);
  scheme.q.scale = scheme.k.scale = scheme.v.scale = scheme.y.scale = &s;
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, plans, HQ), TINYATTN_OK);
  CHECK_STATUS(tinyattn_plan_int8(&kDims, &scheme, plans, HQ - 1), TINYATTN_BAD_QUANTIZATION);
  opt.use_scale = 1;
  opt.scale = 0.5f;
  CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, plans, HQ, ws, sizeof ws, NULL, &opt), TINYATTN_UNSUPPORTED);
  mask.bias = fbias;
  CHECK_STATUS(tinyattn_forward_i8(&kDims, &io, plans, HQ, ws, sizeof ws, &mask, NULL), TINYATTN_UNSUPPORTED);
}

int main(void) {
  RUN(test_status_strings);
  RUN(test_ports);
  RUN(test_softmax_rows);
  RUN(test_forward_every_mask);
  RUN(test_forward_defaults_and_options);
  RUN(test_forward_onnx_features);
  RUN(test_forward_tiled_static_workspace);
  RUN(test_forward_f16);
  RUN(test_int8_plan_and_forward);
  RUN(test_int8_precomputed_plan);
  RUN(test_int8_rejects_float_scale_and_bias);
  RUN(test_backward_both_modes);
  RUN(test_selftest);
  RUN(test_selftest_int8);
  RUN(test_workspace_macros);
  RUN(test_fault_statuses);
  RUN(test_kv_len_above_m_is_bad_mask);
  printf("-----------------------\n%u Tests %u Failures 0 Ignored\n%s\n", g_tests, g_failures,
         g_failures ? "FAIL" : "OK");
  return g_failures ? 1 : 0;
}
