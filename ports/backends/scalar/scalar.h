#pragma once

#include "tinyattn/kernels.h"
#include "tinyattn/kernels_i8.h"

namespace tinyattn {
namespace scalar {
const KernelsF32& kernels_f32();
const KernelsI8& kernels_i8();
}  // namespace scalar
}  // namespace tinyattn
