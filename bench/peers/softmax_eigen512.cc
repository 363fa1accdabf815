// Eigen's row softmax built for AVX-512 (this file only: -mavx512f
// -mavx512dq), the Eigen peer at the widest vectors such a CPU has, beside
// the bench's AVX2 build of it (peers.cc). Eigen's namespace is renamed for
// this file, so none of its templates, instantiated here with 16-lane
// packets, can be merged by the linker with the same ones of the AVX2 build
// (the one-definition rule: their names would be equal, their code not).
// Called only where the CPU has AVX-512F and DQ (eigen512_available).
// GCC 12's AVX-512 headers start some reductions from an "undefined"
// vector, which -Wuninitialized reports at every inlined use (GCC bug
// 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define Eigen Eigen512
#include <Eigen/Core>

#include "peers.h"

namespace bench {

bool eigen512_available() { return avx512_in_use() && __builtin_cpu_supports("avx512dq"); }

void softmax_row_eigen512(float* x, size_t n) {
  Eigen512::Map<Eigen512::ArrayXf> row(x, static_cast<Eigen512::Index>(n));
  row = (row - row.maxCoeff()).exp();
  row *= 1.0f / row.sum();
}

}  // namespace bench
