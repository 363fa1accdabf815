/* `tinyattn plan` (the host tool) printed plan_offline.h (native) and
 * plan_offline_tflite.h (--int8-mode tflite) at build time; this C99 program
 * checks each is exactly what tinyattn_plan_int8 makes from the same scales
 * and zero points, that each head plan validates, and that forward_i8 gives
 * the same bytes on either. */
#include <stdio.h>
#include <string.h>

#include "plan_offline.h"        /* offline_plan[2]: --dk 16 --heads 2,1, the scheme below */
#include "plan_offline_tflite.h" /* offline_plan_tflite[2]: the same with s= and --int8-mode tflite */
#include "tinyattn/tinyattn_c.h"

enum { N = 4, M = 6, DK = 16, DV = 8, HQ = 2, HKV = 1 };

static int8_t q[HQ * N * DK], k[HKV * M * DK], v[HKV * M * DV], y1[HQ * N * DV], y2[HQ * N * DV];
static unsigned char ws[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(N, M, DK, DV)];

/* 1 when `offline` is not the plan of `scheme` or runs differently. */
static int differs(const tinyattn_int8_scheme* scheme, const tinyattn_int8_head_plan* offline) {
  const tinyattn_dims dims = TINYATTN_DIMS_HEADS(N, M, DK, DV, HQ, HKV);
  tinyattn_int8_head_plan plan[HQ];
  tinyattn_forward_io_i8 io;
  int h, bad = 0;
  if (tinyattn_plan_int8(&dims, scheme, plan, HQ) != TINYATTN_OK) return 1;
  for (h = 0; h < HQ; ++h) {
    if (memcmp(&plan[h], &offline[h], sizeof plan[h]) != 0) bad = 1;
    if (plan[h].mode != (int32_t)scheme->mode) bad = 1;
    if (tinyattn_validate_int8_head_plan(&offline[h]) != TINYATTN_OK) bad = 1;
  }
  memset(&io, 0, sizeof io);
  io.q = q;
  io.k = k;
  io.v = v;
  io.y = y1;
  if (tinyattn_forward_i8(&dims, &io, plan, HQ, ws, sizeof ws, NULL, NULL) != TINYATTN_OK) bad = 1;
  io.y = y2;
  if (tinyattn_forward_i8(&dims, &io, offline, HQ, ws, sizeof ws, NULL, NULL) != TINYATTN_OK) bad = 1;
  if (memcmp(y1, y2, sizeof y1) != 0) bad = 1;
  return bad;
}

int main(void) {
  static const float q_scale[HQ] = {0.05f, 0.06f}, k_scale = 0.04f, v_scale = 0.02f, y_scale = 0.03f;
  static const float s_scale[HQ] = {0.3f, 0.25f};
  static const int32_t q_zero[HQ] = {3, 0}, y_zero = -1, s_zero[HQ] = {9, 0};
  tinyattn_int8_scheme scheme;
  int i, bad = 0;
  for (i = 0; i < HQ * N * DK; ++i) q[i] = (int8_t)((i * 37) % 255 - 127);
  for (i = 0; i < HKV * M * DK; ++i) k[i] = (int8_t)((i * 53) % 255 - 127);
  for (i = 0; i < HKV * M * DV; ++i) v[i] = (int8_t)((i * 71) % 255 - 127);
  memset(&scheme, 0, sizeof scheme);
  scheme.q.scale = q_scale;
  scheme.q.zero_point = q_zero;
  scheme.q.count = HQ;
  scheme.k.scale = &k_scale;
  scheme.v.scale = &v_scale;
  scheme.y.scale = &y_scale;
  scheme.y.zero_point = &y_zero;
  if (differs(&scheme, offline_plan)) bad |= 1;
  scheme.mode = TINYATTN_INT8_MODE_TFLITE;
  scheme.scores.scale = s_scale;
  scheme.scores.zero_point = s_zero;
  scheme.scores.count = HQ;
  if (differs(&scheme, offline_plan_tflite)) bad |= 2;
  printf(
      "plan_offline_test.c:1:offline_plan_equals_plan_int8:%s\n"
      "plan_offline_test.c:1:offline_plan_tflite_equals_plan_int8:%s\n-----------------------\n"
      "2 Tests %d Failures 0 Ignored\n%s\n",
      bad & 1 ? "FAIL" : "PASS", bad & 2 ? "FAIL" : "PASS", (bad & 1) + (bad >> 1), bad ? "FAIL" : "OK");
  return bad;
}
