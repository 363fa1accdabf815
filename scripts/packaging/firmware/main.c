/* The firmware every generated package is built with (stage 54-packages):
 * the package's default port, a known-answer fp32 forward and the power-on
 * self-test. Only the C API and the board runtime's output are used, so the
 * same file builds against any package's sources. Exit status 0 when all hold. */
#include <math.h>

#include "board.h" /* tinyattn_board_write: the board runtime's output */
#include "tinyattn/tinyattn_c.h"

enum { N = 4, M = 6, DK = 8, DV = 8 };

/* softmax(Q·Kᵀ/√8)·V of the inputs fill() makes, in float64 (NumPy), rounded
 * to float: a port that computes attention correctly lands within 1e-5. */
static const float kExpected[N * DV] = {
    2.755812079e-01f,  -3.106590725e-01f, -1.417096481e-02f, 1.619597673e-01f,  -1.167156623e-01f,
    -6.065907249e-02f, -4.001539197e-02f, 2.558120794e-02f,  -6.705672662e-03f, -2.277374532e-01f,
    1.320489298e-01f,  2.979173890e-01f,  -2.542886250e-01f, 2.226254676e-02f,  8.272412660e-02f,
    -2.567056727e-01f, -3.141038759e-02f, -3.706657613e-02f, 2.364449808e-01f,  -1.321288509e-01f,
    -1.571512780e-01f, 2.129334239e-01f,  -6.975231360e-02f, -2.814103876e-01f, -1.074522561e-01f,
    9.200816735e-02f,  3.690205258e-01f,  -3.939656424e-01f, -1.357632509e-01f, 3.420081674e-01f,
    -1.458303649e-01f, -3.574522561e-01f};

static float q[N * DK], k[M * DK], v[M * DV], y[N * DV];
static unsigned char ws[TINYATTN_FORWARD_WORKSPACE_BYTES(N, M, DK, DV, 1)];
static tinyattn_selftest_report report;

/* Exactly representable inputs: ((i * mul + add) mod m - off) / div. */
static void fill(float* x, int n, int mul, int add, int m, int off, float div) {
  int i;
  for (i = 0; i < n; ++i) x[i] = (float)((i * mul + add) % m - off) / div;
}

/* "0.0000123" for an error in [0, 1): the runtime has no printf. */
static void write_error(float e) {
  char text[16] = "0.";
  unsigned long scaled = (unsigned long)(e * 1e7f + 0.5f);
  int i;
  if (e >= 1.0f) {
    tinyattn_board_write(">= 1");
    return;
  }
  for (i = 8; i >= 2; --i) {
    text[i] = (char)('0' + scaled % 10);
    scaled /= 10;
  }
  text[9] = '\0';
  tinyattn_board_write(text);
}

int main(void) {
  const tinyattn_dims dims = TINYATTN_DIMS(N, M, DK, DV);
  tinyattn_forward_io io = TINYATTN_FORWARD_IO(q, k, v, y, NULL, NULL);
  float worst = 0.0f;
  int failures = 0, i;

  tinyattn_board_write("tinyattn-package: default port ");
  tinyattn_board_write(tinyattn_port_name(tinyattn_default_port()));
  tinyattn_board_write("\n");

  fill(q, N * DK, 7, 3, 17, 8, 8.0f);
  fill(k, M * DK, 5, 1, 13, 6, 8.0f);
  fill(v, M * DV, 3, 2, 11, 5, 4.0f);
  if (tinyattn_forward(&dims, &io, ws, sizeof ws, NULL, NULL) != TINYATTN_OK) {
    tinyattn_board_write("tinyattn-package: FAILED: forward status\n");
    ++failures;
  }
  for (i = 0; i < N * DV; ++i) {
    const float e = fabsf(y[i] - kExpected[i]);
    if (!(e <= worst)) worst = e; /* NaN too */
  }
  tinyattn_board_write("tinyattn-package: known answer, worst error ");
  write_error(worst);
  tinyattn_board_write("\n");
  if (!(worst <= 1e-5f)) {
    tinyattn_board_write("tinyattn-package: FAILED: known answer\n");
    ++failures;
  }

  /* Power-on self-test of the default port (Unity lines on the console). */
  if (tinyattn_selftest(&report, TINYATTN_PORT_DEFAULT, tinyattn_board_write, TINYATTN_SELFTEST_UNITY) !=
          TINYATTN_OK ||
      !report.passed) {
    tinyattn_board_write("tinyattn-package: FAILED: self-test\n");
    ++failures;
  }

  tinyattn_board_write(failures ? "tinyattn-package: FAIL\n" : "tinyattn-package: OK\n");
  return failures ? 1 : 0;
}
