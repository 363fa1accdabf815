// Chooses the xsimd architecture at run time: the best one compiled in that
// the CPU reports (xsimd::available_architectures), unless a test forced one.
// Compiled with the baseline flags: it only asks the CPU, never runs kernels.
#include "xsimd_port.h"
#include "port.h"

#include <atomic>

#include <xsimd/config/xsimd_arch.hpp>

#include "xsimd_tables.h"

namespace tinyattn {
namespace xsimd_port {
namespace {

struct Arch {
  const KernelsF32* (*table)();
  bool (*runnable)();
};

// Best first. Each entry exists only where CMake compiled its translation unit.
const Arch kArchs[] = {
#if TINYATTN_XSIMD_AVX2_FMA
    {table_avx2_fma, [] { return xsimd::available_architectures().fma3_avx2 != 0; }},
#endif
#if TINYATTN_XSIMD_SSE4_2
    {table_sse4_2, [] { return xsimd::available_architectures().sse4_2 != 0; }},
#endif
#if TINYATTN_XSIMD_NEON64
    {table_neon64, [] { return xsimd::available_architectures().neon64 != 0; }},
#endif
#if TINYATTN_XSIMD_NEON
    {table_neon, [] { return xsimd::available_architectures().neon != 0; }},
#endif
    {nullptr, nullptr},
};

// Set only by force_arch() (tests, benchmarks); atomic so that forcing an
// architecture while other threads run forward() is not a data race.
std::atomic<const KernelsF32*> g_forced{nullptr};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

bool same(const char* a, const char* b) {
  for (; *a && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}

}  // namespace

const KernelsF32* kernels_f32() {
  if (const KernelsF32* forced = g_forced.load(std::memory_order_relaxed)) return forced;
  for (const Arch& a : kArchs)
    if (a.table && a.runnable()) return a.table();
  return nullptr;
}

bool force_arch(const char* name) {
  if (name == nullptr) {
    g_forced.store(nullptr, std::memory_order_relaxed);
    return true;
  }
  for (const Arch& a : kArchs)
    if (a.table && same(a.table()->simd_target(), name)) {
      if (!a.runnable()) return false;
      g_forced.store(a.table(), std::memory_order_relaxed);
      return true;
    }
  return false;
}

}  // namespace xsimd_port

template <>
const KernelsF32* port_kernels_f32<Port::kXsimd>() {
  return xsimd_port::kernels_f32();
}
// Attention<S>'s plain calls run on the whole table: host images are not
// short of flash.
TINYATTN_PORT_EXTENT_TABLES_ARE_THE_TABLE(kXsimd)

}  // namespace tinyattn
