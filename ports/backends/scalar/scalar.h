#pragma once

#include "tinyattn/kernels.h"

namespace tinyattn {
namespace scalar {
const KernelsF32& kernels_f32();
}  // namespace scalar
}  // namespace tinyattn
