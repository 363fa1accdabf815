/* The size images of docs/firmware.md's per-board table: one program, four
 * builds (SIZE_FP32, SIZE_INT8, each with or without SIZE_SELFTEST), so the
 * table's columns differ only by what the image calls. They are linked and
 * measured, not run (the firmware of tests/firmware and tests/firmware/int8
 * is what runs). The int8 forward uses the offline plan int8_plan.h. */
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "tinyattn/tinyattn_c.h"
#if SIZE_INT8
#include "int8_plan.h" /* int8_plan[HQ], printed by `tinyattn plan` */
#endif

enum { N = 8, M = 12, DK = 16, DV = 8, HQ = 2, HKV = 1 };

static tinyattn_mask mask;
#if SIZE_FP32
static float q[HQ * N * DK], k[HKV * M * DK], v[HKV * M * DV], y[HQ * N * DV];
static unsigned char ws[TINYATTN_FORWARD_WORKSPACE_BYTES(N, M, DK, DV, 1)];
#if SIZE_SELFTEST
static tinyattn_selftest_report report;
#endif
#endif
#if SIZE_INT8
static int8_t q8[HQ * N * DK], k8[HKV * M * DK], v8[HKV * M * DV], y8[HQ * N * DV];
static unsigned char ws8[TINYATTN_FORWARD_I8_WORKSPACE_BYTES(N, M, DK, DV)];
#if SIZE_SELFTEST
static tinyattn_selftest_i8_report report8;
#endif
#endif

int main(void) {
  const tinyattn_dims dims = TINYATTN_DIMS_HEADS(N, M, DK, DV, HQ, HKV);
  int failed = 0;
  memset(&mask, 0, sizeof mask);
  mask.causal = TINYATTN_CAUSAL_BOTTOM_RIGHT;
#if SIZE_FP32
  {
    tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y, NULL, NULL);
#if SIZE_SELFTEST
    failed |= tinyattn_selftest(&report, TINYATTN_PORT_DEFAULT, tinyattn_board_write, TINYATTN_SELFTEST_UNITY) !=
              TINYATTN_OK;
#endif
    failed |= tinyattn_forward(&dims, &io, ws, sizeof ws, &mask, NULL) != TINYATTN_OK;
  }
#endif
#if SIZE_INT8
  {
    tinyattn_forward_io_i8 io8;
    memset(&io8, 0, sizeof io8);
    io8.q = q8;
    io8.k = k8;
    io8.v = v8;
    io8.y = y8;
#if SIZE_SELFTEST
    failed |= tinyattn_selftest_int8(&report8, TINYATTN_PORT_DEFAULT, tinyattn_board_write,
                                     TINYATTN_SELFTEST_UNITY) != TINYATTN_OK;
#endif
    failed |= tinyattn_forward_i8(&dims, &io8, int8_plan, HQ, ws8, sizeof ws8, &mask, 0) != TINYATTN_OK;
  }
#endif
  return failed;
}
