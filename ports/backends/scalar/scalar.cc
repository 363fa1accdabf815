// The portable port: plain C++17, builds on every target, and the production
// fallback where no SIMD port fits. It uses the same exp algorithm and
// coefficients as the SIMD ports (tinyattn/exp.h), so all ports agree closely.
#include "scalar.h"
#include "port.h"

#include <cmath>

#include "tinyattn/exp.h"

namespace tinyattn {
namespace scalar {

const char* simd_target() { return "scalar"; }

namespace f32 {

void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  for (size_t j = 0; j < count; ++j) {
    const float* kj = k + j * ldk;
    // Four partial sums: shorter dependency chains, and a fixed summation
    // order the compiler may not reassociate further.
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    size_t c = 0;
    for (; c + 4 <= dk; c += 4) {
      a0 += q[c] * kj[c];
      a1 += q[c + 1] * kj[c + 1];
      a2 += q[c + 2] * kj[c + 2];
      a3 += q[c + 3] * kj[c + 3];
    }
    for (; c < dk; ++c) a0 += q[c] * kj[c];
    s[j] = scale * ((a0 + a1) + (a2 + a3));
  }
}

float row_max(const float* x, size_t n) {
  // No NaN test per element: x * 0 is NaN exactly for an inf or NaN x, so
  // one sum of those flags a row that may hold a NaN, rescanned for it (NaN
  // wins). A comparison and a multiply-add per element, without branches.
  float m = x[0], flag = 0.0f;
  for (size_t j = 1; j < n; ++j) {
    m = x[j] > m ? x[j] : m;
    flag += x[j] * 0.0f;
  }
  if (flag != flag)
    for (size_t j = 1; j < n; ++j)
      if (x[j] != x[j]) return x[j];
  return m;  // x[0] NaN: m stayed NaN (no comparison with it is true)
}

float exp_shift_sum(float* x, size_t n, float shift) {
  float sum = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    x[j] = exp_poly(x[j] - shift);
    sum += x[j];
  }
  return sum;
}

void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  for (size_t c = 0; c < dv; ++c) y[c] = 0.0f;
  for (size_t j = 0; j < count; ++j) {
    const float pj = p[j];
    if (pj == 0.0f) continue;  // masked keys contribute nothing, even a NaN/inf value (KernelsF32)
    const float* vj = v + j * ldv;
    for (size_t c = 0; c < dv; ++c) y[c] += pj * vj[c];
  }
  if (a != 1.0f)
    for (size_t c = 0; c < dv; ++c) y[c] *= a;
}

void axpy(float a, const float* x, float* y, size_t n) {
  for (size_t c = 0; c < n; ++c) y[c] += a * x[c];
}

void scale(float* x, size_t n, float a) {
  for (size_t c = 0; c < n; ++c) x[c] *= a;
}

void exp(const float* x, float* out, size_t n) {
  for (size_t j = 0; j < n; ++j) out[j] = exp_poly(x[j]);
}

// Blocks: each key or value element is loaded once for all the block's rows
// (four rows' sums stay in registers), instead of once per row.
void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                  float scale, float* s, size_t lds) {
  if (rows != kBlockRows) {
    for (size_t r = 0; r < rows; ++r) scores(q + r * ldq, k, ldk, count, dk, scale, s + r * lds);
    return;
  }
  const float *q0 = q, *q1 = q + ldq, *q2 = q + 2 * ldq, *q3 = q + 3 * ldq;
  for (size_t j = 0; j < count; ++j) {
    const float* kj = k + j * ldk;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (size_t c = 0; c < dk; ++c) {
      const float kc = kj[c];
      a0 += q0[c] * kc;
      a1 += q1[c] * kc;
      a2 += q2[c] * kc;
      a3 += q3[c] * kc;
    }
    s[j] = scale * a0;
    s[lds + j] = scale * a1;
    s[2 * lds + j] = scale * a2;
    s[3 * lds + j] = scale * a3;
  }
}

void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count, size_t dv,
                        const float* a, float* y, size_t ldy) {
  if (rows != kBlockRows) {  // row by row, inline: no nested kernel frame on the stack
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < dv; ++c) {
        float acc = 0.0f;
        for (size_t j = 0; j < count; ++j) acc += p[r * ldp + j] * v[j * ldv + c];
        y[r * ldy + c] = a[r] * acc;
      }
    return;
  }
  const float *p0 = p, *p1 = p + ldp, *p2 = p + 2 * ldp, *p3 = p + 3 * ldp;
  for (size_t c = 0; c < dv; ++c) {
    float y0 = 0.0f, y1 = 0.0f, y2 = 0.0f, y3 = 0.0f;
    const float* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) {
      const float x = *vc;  // finite (KernelsF32::weighted_sum_block): zero weights add nothing
      y0 += p0[j] * x;
      y1 += p1[j] * x;
      y2 += p2[j] * x;
      y3 += p3[j] * x;
    }
    y[c] = a[0] * y0;
    y[ldy + c] = a[1] * y1;
    y[2 * ldy + c] = a[2] * y2;
    y[3 * ldy + c] = a[3] * y3;
  }
}

}  // namespace f32

namespace {
constexpr KernelsF32 kKernels = table_f32("scalar");
}  // namespace

const KernelsF32& kernels_f32() { return kKernels; }

}  // namespace scalar

template <>
const KernelsF32* port_kernels_f32<Port::kScalar>() {
  return &scalar::kernels_f32();
}
// Attention<S>'s plain calls run on the whole table: it is small.
TINYATTN_PORT_EXTENT_TABLES_ARE_THE_TABLE(kScalar)
}  // namespace tinyattn
