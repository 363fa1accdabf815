// The template port: the smallest complete port, built and tested with the
// host tests so that the recipe of docs/ports.md stays true. To start a port,
// copy this folder to ports/backends/<name>/, rename Port::kTemplate and
// "template" below, add its line to tinyattn/port_list.h and replace these
// kernels, which forward to the scalar port's, one at a time with your own:
// every suite runs each compiled port against the contract (tinyattn/kernels.h).
#include "backends/scalar/scalar.h"
#include "port.h"

namespace tinyattn {
namespace template_port {
namespace {

// What this table executes ("NEON", "AVX2", ...): kernels that only forward
// run the scalar port's code.
const char* simd_target() { return "scalar"; }

const KernelsF32& base() { return scalar::kernels_f32(); }

void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  base().scores(q, k, ldk, count, dk, scale, s);
}

float row_max(const float* x, size_t n) { return base().row_max(x, n); }

float exp_shift_sum(float* x, size_t n, float shift) { return base().exp_shift_sum(x, n, shift); }

void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  base().weighted_sum(p, v, ldv, count, dv, a, y);
}

void axpy(float a, const float* x, float* y, size_t n) { base().axpy(a, x, y, n); }

void scale(float* x, size_t n, float a) { base().scale(x, n, a); }

void exp(const float* x, float* out, size_t n) { base().exp(x, out, n); }

// The optional block primitives (scores_block, weighted_sum_block,
// attend_block, scores_block_transposed) stay nullptr: the driver then runs
// the row kernels above. A port that sets attend_block or
// scores_block_transposed says so in its list line (the fused column).
constexpr KernelsF32 kKernels{"template", simd_target, scores, row_max, exp_shift_sum, weighted_sum,
                              axpy,       scale,       exp};

}  // namespace
}  // namespace template_port

template <>
const KernelsF32* port_kernels_f32<Port::kTemplate>() {
  return &template_port::kKernels;
}

}  // namespace tinyattn
