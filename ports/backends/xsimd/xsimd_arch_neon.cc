// The xsimd kernels for neon, compiled with that architecture's flags (CMake).
#include "xsimd_kernels.h"
#include "xsimd_tables.h"

namespace tinyattn {
namespace xsimd_port {
namespace {
const char* label() { return "neon"; }
}  // namespace

const KernelsF32* table_neon() { return make_table<xsimd::neon, label>(); }

}  // namespace xsimd_port
}  // namespace tinyattn
