// One kernel table per architecture translation unit (xsimd_arch_*.cc).
#pragma once

#include "tinyattn/kernels.h"

namespace tinyattn {
namespace xsimd_port {

const KernelsF32* table_sse4_2();
const KernelsF32* table_avx2_fma();
const KernelsF32* table_neon64();
const KernelsF32* table_neon();

}  // namespace xsimd_port
}  // namespace tinyattn
