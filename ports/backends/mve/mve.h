#pragma once

#include "tinyattn/kernels.h"
#include "tinyattn/kernels_i8.h"

namespace tinyattn {
namespace mve {
// Arm Helium (M-profile Vector Extension, floating point): Cortex-M55 and
// later. Compiled only when the compiler targets MVE with fp32 lanes
// (__ARM_FEATURE_MVE & 2).
const KernelsF32& kernels_f32();
// The int8 kernels (mve_i8.cc): integer MVE only (__ARM_FEATURE_MVE & 1),
// the same integers as the scalar table.
const KernelsI8& kernels_i8();
}  // namespace mve
}  // namespace tinyattn
