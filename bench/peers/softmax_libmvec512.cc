// Softmax rows with libmvec's 16-lane expf, _ZGVeN16v_expf, for CPUs with
// AVX-512F: the peer at the widest vectors such a CPU has. Built with -O3
// -ffast-math -fopenmp-simd -mavx512f -mprefer-vector-width=512 (this file
// only) and called only where the CPU has AVX-512F (libmvec512_available).
// It calls expf (a C function) rather than std::exp, so no inline C++
// function compiled for AVX-512 is emitted here for the linker to share
// with the rest of the bench.
// GCC 12's AVX-512 headers start some reductions and extracts from an
// "undefined" vector, which -Wuninitialized reports at every inlined call
// (GCC bug 105593, fixed in GCC 13); only this file includes them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#include <math.h>

#include "peers.h"

extern "C" __m512 _ZGVeN16v_expf(__m512);

namespace bench {

bool libmvec512_available() { return avx512_in_use(); }

// The same loops as softmax_row_libmvec; GCC vectorises them with zmm
// registers and calls _ZGVeN16v_expf.
void softmax_row_libmvec512(float* x, size_t n) {
  float mx = x[0];
#pragma omp simd reduction(max : mx)
  for (size_t j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (size_t j = 0; j < n; ++j) {
    x[j] = expf(x[j] - mx);
    sum += x[j];
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (size_t j = 0; j < n; ++j) x[j] *= inv;
}

namespace {

// x[j] = exp(x[j] - shift) for j < n, a multiple of 32, two vectors per
// step, their sums added to s0 and s1.
void exp_pairs512(float* x, size_t n, __m512 shift, __m512& s0, __m512& s1) {
  for (size_t j = 0; j < n; j += 32) {
    const __m512 e0 = _ZGVeN16v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + j), shift));
    const __m512 e1 = _ZGVeN16v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + j + 16), shift));
    _mm512_storeu_ps(x + j, e0);
    _mm512_storeu_ps(x + j + 16, e1);
    s0 = _mm512_add_ps(s0, e0);
    s1 = _mm512_add_ps(s1, e1);
  }
}

}  // namespace

// As softmax_row_libmvec_direct, on 16-lane vectors: two per step, the
// last partial one masked (-inf beyond n in the max and the exp, so 0).
void softmax_row_libmvec512_direct(float* x, size_t n) {
  const size_t full = n / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - full)) - 1u);
  const __m512 minus_inf = _mm512_set1_ps(-INFINITY);
  __m512 m0 = minus_inf, m1 = m0;
  size_t j = 0;
  for (; j + 32 <= full; j += 32) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + j));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + j + 16));
  }
  if (j < full) m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + j));
  if (full < n) m1 = _mm512_max_ps(m1, _mm512_mask_loadu_ps(minus_inf, tail, x + full));
  const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(_mm512_max_ps(m0, m1)));
  __m512 s0 = _mm512_setzero_ps(), s1 = s0;
  j = full & ~size_t{31};
  exp_pairs512(x, j, mx, s0, s1);
  if (j < full) {
    const __m512 e = _ZGVeN16v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + j), mx));
    _mm512_storeu_ps(x + j, e);
    s0 = _mm512_add_ps(s0, e);
  }
  if (full < n) {
    const __m512 e = _ZGVeN16v_expf(_mm512_sub_ps(_mm512_mask_loadu_ps(minus_inf, tail, x + full), mx));
    _mm512_mask_storeu_ps(x + full, tail, e);
    s1 = _mm512_add_ps(s1, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)));
  for (j = 0; j < full; j += 16) _mm512_storeu_ps(x + j, _mm512_mul_ps(_mm512_loadu_ps(x + j), inv));
  if (full < n) _mm512_mask_storeu_ps(x + full, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + full), inv));
}

// The exp pass alone: x[j] = exp(x[j] - shift) and their sum, n a multiple of 32.
float exp_shift_sum_libmvec512_direct(float* x, size_t n, float shift) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0;
  exp_pairs512(x, n & ~size_t{31}, _mm512_set1_ps(shift), s0, s1);
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

}  // namespace bench
