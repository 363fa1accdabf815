// The Armv7E-M DSP port (Cortex-M4, M7, M33, M35P): its int8 kernels
// (dsp_i8.cc) use the dual 16-bit multiply-accumulates. Its fp32 table is
// the scalar port's, which GCC already compiles to the FPU: the same
// functions under the port's name, so an image with both ports holds them once.
#include "backends/scalar/scalar.h"
#include "port.h"

namespace tinyattn {
namespace dsp {
namespace {
constexpr KernelsF32 kKernels = scalar::table_f32("dsp");
}  // namespace
}  // namespace dsp

template <>
const KernelsF32* port_kernels_f32<Port::kDsp>() {
  return &dsp::kKernels;
}

}  // namespace tinyattn
