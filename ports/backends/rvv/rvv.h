// The RISC-V Vector port (RVV 1.0 intrinsics, riscv_vector.h), vector-length
// agnostic: the same code runs at every VLEN. Compiled only where the
// compiler targets vectors with fp32 lanes (V, or Zve32f) and has the
// __riscv_-prefixed intrinsics (clang 16, GCC 13).
#pragma once

#include "tinyattn/kernels.h"
#include "tinyattn/kernels_i8.h"

#if defined(__riscv_vector) && defined(__riscv_zve32f) && defined(__riscv_v_intrinsic) && \
    __riscv_v_intrinsic >= 11000
#define TINYATTN_RVV_BUILT 1
#endif

namespace tinyattn {
namespace rvv {
// "RVV_<VLEN>", the vector length this CPU runs (one build serves every VLEN).
const char* simd_target();
const KernelsF32& kernels_f32();
const KernelsI8& kernels_i8();
}  // namespace rvv
}  // namespace tinyattn
