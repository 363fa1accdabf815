// Softmax row with glibc's vectorized expf. Built with -O3 -ffast-math
// -fopenmp-simd -mavx2 -mfma so the exp loop calls libmvec's _ZGVdN8v_expf
// (8 lanes); the max and the sum are vectorized reductions.
#include <cmath>

#include "peers.h"

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

}  // namespace bench
