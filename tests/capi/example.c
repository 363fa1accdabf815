/* The usage example of docs/c_api.md; built as C99 and run by ctest. */
#include <stdio.h>

#include "tinyattn/tinyattn_c.h"

enum { N = 4, M = 6, DK = 8, DV = 8 };

/* Every buffer is static and sized at compile time, the workspace too. */
static float q[N * DK], k[M * DK], v[M * DV], y[N * DV];
static unsigned char workspace[TINYATTN_FORWARD_WORKSPACE_BYTES(N, M, DK, DV, 0)];

int main(void) {
  const tinyattn_dims dims = TINYATTN_DIMS(N, M, DK, DV);
  tinyattn_forward_io io = {0};
  tinyattn_mask mask = {0}; /* zero: no mask */
  tinyattn_status s;
  int i;
  for (i = 0; i < N * DK; ++i) q[i] = 0.1f * (float)(i % 5);
  for (i = 0; i < M * DK; ++i) k[i] = 0.2f * (float)(i % 3);
  for (i = 0; i < M * DV; ++i) v[i] = (float)(i / DV); /* row j holds j */
  io.q = q;
  io.k = k;
  io.v = v;
  io.y = y;
  mask.causal = TINYATTN_CAUSAL_TOP_LEFT;
  s = tinyattn_forward(&dims, &io, workspace, sizeof workspace, &mask, NULL);
  if (s != TINYATTN_OK) {
    printf("error: %s\n", tinyattn_status_string(s));
    return 1;
  }
  printf("y[0] = %g (query 0 sees key 0 only: 0), workspace %u bytes\n", y[0], (unsigned)sizeof workspace);
  return y[0] == 0.0f && y[3 * DV] > 0.0f ? 0 : 1;
}
