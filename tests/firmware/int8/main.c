/* int8 attention with an offline plan: integer arithmetic only. Runs the
 * integer-only int8 self-test first (its Unity lines; exit 1 if it fails),
 * then prints the output bytes' checksum; the int8 path is bit-exact, so the
 * board and the host (TINYATTN_FIRMWARE_HOSTED) must print the same
 * "int8 checksum" line. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "int8_plan.h" /* int8_plan[HQ], printed by `tinyattn plan` */
#include "tinyattn/tinyattn_c.h"

#ifdef TINYATTN_FIRMWARE_HOSTED
static void emit(const char* text) { fputs(text, stdout); }
#else
#include "board.h"
static void emit(const char* text) { tinyattn_board_write(text); }
#endif

enum { N = 8, M = 12, DK = 16, DV = 8, HQ = 2, HKV = 1 };

static int8_t q[HQ * N * DK], k[HKV * M * DK], v[HKV * M * DV], y[HQ * N * DV];
static uint16_t w[HQ * N * M];
static unsigned char ws[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(N, M, DK, DV)];
static tinyattn_selftest_i8_report report;

static void fill(int8_t* x, int n, uint32_t seed) {
  int i;
  for (i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (int8_t)(seed >> 24);
  }
}

static void hex32(char* out, uint32_t x) {
  static const char digits[] = "0123456789abcdef";
  int i;
  for (i = 7; i >= 0; --i, x >>= 4) out[i] = digits[x & 15u];
}

int main(void) {
  const tinyattn_dims dims = TINYATTN_DIMS_HEADS(N, M, DK, DV, HQ, HKV);
  tinyattn_forward_io_i8 io;
  tinyattn_mask mask;
  uint32_t sum = 2166136261u; /* FNV-1a over y, then the weights */
  char line[] = "int8 checksum ........ status ........\n";
  tinyattn_status st;
  int i;
  /* Power-on self-test of the kernels this image ships, in integers only. */
  if (tinyattn_selftest_int8(&report, TINYATTN_PORT_DEFAULT, emit, TINYATTN_SELFTEST_UNITY) != TINYATTN_OK ||
      !report.passed) {
    emit("int8 selftest FAILED\n");
    return 1;
  }
  fill(q, HQ * N * DK, 1u);
  fill(k, HKV * M * DK, 2u);
  fill(v, HKV * M * DV, 3u);
  io.q = q;
  io.k = k;
  io.v = v;
  io.y = y;
  io.weights = w;
  io.bias = 0;
  memset(&mask, 0, sizeof mask);
  mask.causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;
  st = tinyattn_forward_i8(&dims, &io, int8_plan, HQ, ws, sizeof ws, &mask, 0);
  hex32(line + 30, (uint32_t)st);
  for (i = 0; i < HQ * N * DV; ++i) sum = (sum ^ (uint8_t)y[i]) * 16777619u;
  for (i = 0; i < HQ * N * M; ++i) sum = ((sum ^ (w[i] & 0xFFu)) * 16777619u ^ (w[i] >> 8)) * 16777619u;
  hex32(line + 14, sum);
  emit(line);
  return st == TINYATTN_OK ? 0 : 1;
}
