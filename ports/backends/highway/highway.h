// The Highway port: the kernel table written once with Google Highway.
// Static dispatch (default): the target the compiler flags select, header-only.
// TINYATTN_HWY_DYNAMIC: every attainable target, chosen at run time.
#pragma once

#include "tinyattn/kernels.h"
#include "tinyattn/kernels_i8.h"

namespace tinyattn {
namespace highway {

// The table of the Highway target that runs now (under dynamic dispatch: the
// best one this CPU supports, re-chosen after hwy::SetSupportedTargetsForTest).
const KernelsF32& kernels_f32();

// The int8 table of that target (highway_kernels_i8.cc): the scalar table on
// HWY_SCALAR/EMU128, SDOT scores on aarch64 NEON when the CPU has them.
const KernelsI8& kernels_i8();

}  // namespace highway
}  // namespace tinyattn
