// The xsimd kernels for sse4.2, compiled with that architecture's flags (CMake).
#include "xsimd_kernels.h"
#include "xsimd_tables.h"

namespace tinyattn {
namespace xsimd_port {
namespace {
const char* label() { return "sse4.2"; }
}  // namespace

const KernelsF32* table_sse4_2() { return make_table<xsimd::sse4_2, label>(); }

}  // namespace xsimd_port
}  // namespace tinyattn
