// The xsimd port: the kernel table written once with xsimd as a template over
// the architecture, instantiated in one translation unit per architecture
// (compiled with that architecture's flags) and chosen at run time.
#pragma once

#include "tinyattn/kernels.h"

namespace tinyattn {
namespace xsimd_port {

// The table of the best compiled architecture this CPU supports (or of the
// forced one), nullptr when none of them can run here.
const KernelsF32* kernels_f32();

// Forces one architecture by its simd_target() name ("sse4.2", "avx2+fma",
// "neon64", "neon"); nullptr returns to automatic choice. Returns false (and
// changes nothing) if that architecture is not compiled in or cannot run here.
bool force_arch(const char* name);

}  // namespace xsimd_port
}  // namespace tinyattn
