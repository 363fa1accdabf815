// Softmax rows with glibc's vectorized expf (libmvec). Built with -O3
// -ffast-math -fopenmp-simd -mavx2 -mfma: the widest libmvec variant this
// bench's CPUs without AVX-512 have, _ZGVdN8v_expf (8 lanes), two ways:
// vectorised by GCC from a simd loop over std::exp (max and sum as simd
// reductions), and called directly on AVX2 vectors.
#include <immintrin.h>

#include <cmath>

#include "peers.h"

extern "C" __m256 _ZGVdN8v_expf(__m256);

namespace bench {

void softmax_row_libmvec(float* x, size_t n) {
  float mx = x[0];
#pragma omp simd reduction(max : mx)
  for (size_t j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (size_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - mx);
    sum += x[j];
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (size_t j = 0; j < n; ++j) x[j] *= inv;
}

namespace {

float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The lanes of a row's last partial vector: -inf beyond n (exp gives 0).
__m256 load_tail(const float* x, size_t rest) {
  alignas(32) float t[8];
  for (size_t i = 0; i < 8; ++i) t[i] = i < rest ? x[i] : -INFINITY;
  return _mm256_load_ps(t);
}

// x[j] = exp(x[j] - shift) for j < n, a multiple of 16, two vectors per
// step, their sums added to s0 and s1.
void exp_pairs(float* x, size_t n, __m256 shift, __m256& s0, __m256& s1) {
  for (size_t j = 0; j < n; j += 16) {
    const __m256 e0 = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_loadu_ps(x + j), shift));
    const __m256 e1 = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_loadu_ps(x + j + 8), shift));
    _mm256_storeu_ps(x + j, e0);
    _mm256_storeu_ps(x + j + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
  }
}

}  // namespace

// Two vectors per step in each pass, as the vectorised loop has.
void softmax_row_libmvec_direct(float* x, size_t n) {
  const size_t full = n / 8 * 8;
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
  size_t j = 0;
  for (; j + 16 <= full; j += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + j + 8));
  }
  if (j < full) m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
  if (full < n) m1 = _mm256_max_ps(m1, load_tail(x + full, n - full));
  const __m256 mx = _mm256_set1_ps(hmax(_mm256_max_ps(m0, m1)));
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  j = full & ~size_t{15};
  exp_pairs(x, j, mx, s0, s1);
  if (j < full) {
    const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_loadu_ps(x + j), mx));
    _mm256_storeu_ps(x + j, e);
    s0 = _mm256_add_ps(s0, e);
  }
  alignas(32) float tail[8];
  if (full < n) {
    const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(load_tail(x + full, n - full), mx));
    _mm256_store_ps(tail, e);
    for (size_t i = 0; i < n - full; ++i) x[full + i] = tail[i];
    s1 = _mm256_add_ps(s1, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hsum(_mm256_add_ps(s0, s1)));
  for (j = 0; j < full; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), inv));
  for (; j < n; ++j) x[j] *= _mm256_cvtss_f32(inv);
}

// The exp pass alone: x[j] = exp(x[j] - shift) and their sum, n a multiple of 16.
float exp_shift_sum_libmvec_direct(float* x, size_t n, float shift) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  exp_pairs(x, n & ~size_t{15}, _mm256_set1_ps(shift), s0, s1);
  return hsum(_mm256_add_ps(s0, s1));
}

}  // namespace bench
