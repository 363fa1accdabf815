#pragma once

#include "tinyattn/kernels.h"

namespace tinyattn {
namespace mve {
// Arm Helium (M-profile Vector Extension, floating point): Cortex-M55 and
// later. Compiled only when the compiler targets MVE with fp32 lanes
// (__ARM_FEATURE_MVE & 2).
const KernelsF32& kernels_f32();
}  // namespace mve
}  // namespace tinyattn
