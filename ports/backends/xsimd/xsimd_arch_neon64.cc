// The xsimd kernels for neon64, compiled with that architecture's flags (CMake).
#include "xsimd_kernels.h"
#include "xsimd_tables.h"

namespace tinyattn {
namespace xsimd_port {
namespace {
const char* label() { return "neon64"; }
}  // namespace

const KernelsF32* table_neon64() { return make_table<xsimd::neon64, label>(); }

}  // namespace xsimd_port
}  // namespace tinyattn
