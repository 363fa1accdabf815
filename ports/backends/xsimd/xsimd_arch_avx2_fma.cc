// The xsimd kernels for avx2+fma, compiled with that architecture's flags (CMake).
#include "xsimd_kernels.h"
#include "xsimd_tables.h"

namespace tinyattn {
namespace xsimd_port {
namespace {
const char* label() { return "avx2+fma"; }
}  // namespace

const KernelsF32* table_avx2_fma() { return make_table<xsimd::fma3<xsimd::avx2>, label>(); }

}  // namespace xsimd_port
}  // namespace tinyattn
