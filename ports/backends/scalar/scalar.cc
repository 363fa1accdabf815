// The portable port: plain C++17, builds on every target, and the production
// fallback where no SIMD port fits. It uses the same exp algorithm and
// coefficients as the SIMD ports (tinyattn/exp.h), so all ports agree closely.
#include "scalar.h"

#include <cmath>

#include "tinyattn/exp.h"

namespace tinyattn {
namespace scalar {

namespace {

const char* simd_target() { return "scalar"; }

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
  float m = x[0];
  for (size_t j = 1; j < n; ++j) {
    if (x[j] != x[j]) return x[j];  // NaN wins
    if (x[j] > m) m = x[j];
  }
  return m;
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

void exp_array(const float* x, float* out, size_t n) {
  for (size_t j = 0; j < n; ++j) out[j] = exp_poly(x[j]);
}

constexpr KernelsF32 kKernels{"scalar", simd_target, scores, row_max, exp_shift_sum,
                              weighted_sum, axpy,     scale,  exp_array};

}  // namespace

const KernelsF32& kernels_f32() { return kKernels; }

}  // namespace scalar
}  // namespace tinyattn
