/* `tinyattn plan` (the host tool) printed plan_offline.h (native),
 * plan_offline_tflite.h (--int8-mode tflite), plan_offline_i16.h
 * (--dtype i16) and plan_offline_i16_tflite.h (--int16-mode tflite) at
 * build time; this C99 program checks each is exactly what
 * tinyattn_plan_int8 (tinyattn_plan_int16) makes from the same scales and
 * zero points, that each head plan validates, and that forward_i8
 * (forward_i16) gives the same bytes on either. */
#include <stdio.h>
#include <string.h>

#include "plan_offline.h"        /* offline_plan[2]: --dk 16 --heads 2,1, the scheme below */
#include "plan_offline_tflite.h" /* offline_plan_tflite[2]: the same with s= and --int8-mode tflite */
#include "plan_offline_i16.h"    /* offline_plan_i16[2]: --dtype i16, the int16 scheme below */
#include "plan_offline_i16_tflite.h" /* offline_plan_i16_tflite[2]: the same with s= and --int16-mode tflite */
#include "tinyattn/tinyattn_c.h"

enum { N = 4, M = 6, DK = 16, DV = 8, HQ = 2, HKV = 1 };

static int8_t q[HQ * N * DK], k[HKV * M * DK], v[HKV * M * DV], y1[HQ * N * DV], y2[HQ * N * DV];
static unsigned char ws[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(N, M, DK, DV)];
static int16_t q16[HQ * N * DK], k16[HKV * M * DK], v16[HKV * M * DV], y16a[HQ * N * DV], y16b[HQ * N * DV];
static unsigned char ws16[TINYATTN_FORWARD_I16_WORKSPACE_BYTES(N, M, DK, DV)];

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

/* The same for the int16 plan. */
static int differs_i16(const tinyattn_int16_scheme* scheme, const tinyattn_int16_head_plan* offline) {
  const tinyattn_dims dims = TINYATTN_DIMS_HEADS(N, M, DK, DV, HQ, HKV);
  tinyattn_int16_head_plan plan[HQ];
  tinyattn_forward_io_i16 io;
  int h, bad = 0;
  if (tinyattn_plan_int16(&dims, scheme, plan, HQ) != TINYATTN_OK) return 1;
  for (h = 0; h < HQ; ++h) {
    if (memcmp(&plan[h], &offline[h], sizeof plan[h]) != 0) bad = 1;
    if (plan[h].mode != (int32_t)scheme->mode) bad = 1;
    if (tinyattn_validate_int16_head_plan(&offline[h]) != TINYATTN_OK) bad = 1;
  }
  memset(&io, 0, sizeof io);
  io.q = q16;
  io.k = k16;
  io.v = v16;
  io.y = y16a;
  if (tinyattn_forward_i16(&dims, &io, plan, HQ, ws16, sizeof ws16, NULL, NULL) != TINYATTN_OK) bad = 1;
  io.y = y16b;
  if (tinyattn_forward_i16(&dims, &io, offline, HQ, ws16, sizeof ws16, NULL, NULL) != TINYATTN_OK) bad = 1;
  if (memcmp(y16a, y16b, sizeof y16a) != 0) bad = 1;
  return bad;
}

int main(void) {
  static const float q_scale[HQ] = {0.05f, 0.06f}, k_scale = 0.04f, v_scale = 0.02f, y_scale = 0.03f;
  static const float s_scale[HQ] = {0.3f, 0.25f};
  static const int32_t q_zero[HQ] = {3, 0}, y_zero = -1, s_zero[HQ] = {9, 0};
  static const float q16_scale[HQ] = {6e-5f, 8e-5f}, k16_scale = 7e-5f, v16_scale = 1.2e-4f, y16_scale = 1.5e-4f;
  static const float s16_scale[HQ] = {1.5e-3f, 2e-3f};
  tinyattn_int8_scheme scheme;
  tinyattn_int16_scheme scheme16;
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
  for (i = 0; i < HQ * N * DK; ++i) q16[i] = (int16_t)((i * 7919) % 65535 - 32767);
  for (i = 0; i < HKV * M * DK; ++i) k16[i] = (int16_t)((i * 6007) % 65535 - 32767);
  for (i = 0; i < HKV * M * DV; ++i) v16[i] = (int16_t)((i * 4721) % 65535 - 32767);
  memset(&scheme16, 0, sizeof scheme16);
  scheme16.q.scale = q16_scale;
  scheme16.q.count = HQ;
  scheme16.k.scale = &k16_scale;
  scheme16.v.scale = &v16_scale;
  scheme16.y.scale = &y16_scale;
  if (differs_i16(&scheme16, offline_plan_i16)) bad |= 4;
  scheme16.mode = TINYATTN_INT16_MODE_TFLITE;
  scheme16.scores.scale = s16_scale;
  scheme16.scores.count = HQ;
  if (differs_i16(&scheme16, offline_plan_i16_tflite)) bad |= 8;
  printf(
      "plan_offline_test.c:1:offline_plan_equals_plan_int8:%s\n"
      "plan_offline_test.c:1:offline_plan_tflite_equals_plan_int8:%s\n"
      "plan_offline_test.c:1:offline_plan_i16_equals_plan_int16:%s\n"
      "plan_offline_test.c:1:offline_plan_i16_tflite_equals_plan_int16:%s\n-----------------------\n"
      "4 Tests %d Failures 0 Ignored\n%s\n",
      bad & 1 ? "FAIL" : "PASS", bad & 2 ? "FAIL" : "PASS", bad & 4 ? "FAIL" : "PASS", bad & 8 ? "FAIL" : "PASS",
      (bad & 1) + ((bad >> 1) & 1) + ((bad >> 2) & 1) + (bad >> 3), bad ? "FAIL" : "OK");
  return bad;
}
