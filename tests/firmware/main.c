/* Firmware in C on an installed bare-metal tinyattn: the power-on self-test,
 * then an fp32 causal forward and an int8 forward of the same problem, each
 * checked against the properties of attention. Exit status 0 when all hold. */
#include <math.h>
#include <string.h>

#include "board.h" /* tinyattn_board_write: the runtime's output (the board's UART) */
#include "tinyattn/tinyattn_c.h"

enum { N = 8, M = 8, DK = 16, DV = 16 };

static float q[N * DK], k[M * DK], v[M * DV], y[N * DV], w[N * M];
static int8_t q8[N * DK], k8[M * DK], v8[M * DV], y8[N * DV];
static unsigned char ws[TINYATTN_FORWARD_WORKSPACE_BYTES(N, M, DK, DV, 1)];
static unsigned char ws8[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(N, M, DK, DV)];
static tinyattn_selftest_report report;

static int failures;
static void check(int ok, const char* what) {
  if (ok) return;
  tinyattn_board_write("attention_firmware: FAILED: ");
  tinyattn_board_write(what);
  tinyattn_board_write("\n");
  ++failures;
}

/* Inputs on the int8 grid (multiples of 1/16 in [-1, 1)), so both paths see the same values. */
static void fill(float* x, int8_t* x8, int n, unsigned seed) {
  int i;
  for (i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x8[i] = (int8_t)((int)(seed >> 27) - 16);
    x[i] = (float)x8[i] / 16.0f;
  }
}

int main(void) {
  const tinyattn_dims dims = TINYATTN_DIMS(N, M, DK, DV);
  const float in_scale = 1.0f / 16.0f, out_scale = 1.0f / 64.0f;
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y, w, NULL);
  tinyattn_forward_io_i8 io8;
  tinyattn_int8_scheme scheme;
  tinyattn_int8_head_plan plan;
  tinyattn_mask mask;
  int i, j, c;

  /* Power-on self-test of the default port (Unity lines on the console). */
  check(tinyattn_selftest(&report, TINYATTN_PORT_DEFAULT, tinyattn_board_write, TINYATTN_SELFTEST_UNITY) ==
            TINYATTN_OK && report.passed,
        "self-test");

  fill(q, q8, N * DK, 1u);
  fill(k, k8, M * DK, 2u);
  fill(v, v8, M * DV, 3u);
  memset(&mask, 0, sizeof mask);
  mask.causal = TINYATTN_CAUSAL_TOP_LEFT;
  check(tinyattn_forward(&dims, &io, ws, sizeof ws, &mask, NULL) == TINYATTN_OK, "fp32 forward");
  for (i = 0; i < N; ++i) {
    float sum = 0.0f;
    for (j = 0; j < M; ++j) {
      sum += w[i * M + j];
      if (j > i) check(w[i * M + j] == 0.0f, "a future key has weight 0");
    }
    check(fabsf(sum - 1.0f) <= 1e-5f, "each row of weights sums to 1");
    for (c = 0; c < DV; ++c) { /* Y in the convex hull of the visible values */
      float lo = v[c], hi = v[c];
      for (j = 1; j <= i; ++j) {
        lo = fminf(lo, v[j * DV + c]);
        hi = fmaxf(hi, v[j * DV + c]);
      }
      check(y[i * DV + c] >= lo - 1e-6f && y[i * DV + c] <= hi + 1e-6f, "y in the convex hull of V");
    }
  }

  /* The same problem in int8: scales 1/16 in, 1/64 out, zero points 0. */
  memset(&scheme, 0, sizeof scheme);
  scheme.q.scale = scheme.k.scale = scheme.v.scale = &in_scale;
  scheme.y.scale = &out_scale;
  check(tinyattn_plan_int8(&dims, &scheme, &plan, 1) == TINYATTN_OK, "int8 plan");
  memset(&io8, 0, sizeof io8);
  io8.q = q8;
  io8.k = k8;
  io8.v = v8;
  io8.y = y8;
  check(tinyattn_forward_i8(&dims, &io8, &plan, 1, ws8, sizeof ws8, &mask, NULL) == TINYATTN_OK, "int8 forward");
  for (i = 0; i < N * DV; ++i) /* within two output steps of fp32 (docs/quant.md's bound is tighter) */
    check(fabsf((float)y8[i] * out_scale - y[i]) <= 2.0f * out_scale, "int8 y near fp32 y");

  tinyattn_board_write(failures ? "attention_firmware: FAIL\n" : "attention_firmware: OK\n");
  return failures ? 1 : 0;
}
