// The Armv7E-M DSP port (Cortex-M4, M7, M33, M35P): its int8 kernels
// (dsp_i8.cc) use the dual 16-bit multiply-accumulates. The fp32 table
// forwards to the scalar port's, which GCC already compiles to the FPU.
#include "backends/scalar/scalar.h"
#include "port.h"

namespace tinyattn {
namespace dsp {
namespace {

// The fp32 kernels only forward: they run the scalar port's code.
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

// No block primitives: the driver runs the row kernels above.
constexpr KernelsF32 kKernels{"dsp", simd_target, scores, row_max, exp_shift_sum, weighted_sum,
                              axpy,       scale,       exp};

}  // namespace
}  // namespace dsp

template <>
const KernelsF32* port_kernels_f32<Port::kDsp>() {
  return &dsp::kKernels;
}

}  // namespace tinyattn
