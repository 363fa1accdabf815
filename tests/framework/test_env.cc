#include "test_env.h"

#include "format.h"
#include "tinyattn/kernels.h"

#if TATEST_DOCTEST
#include <cstdio>
#include <cstdlib>
#else
extern "C" void tatest_write(const char* text);
#endif

// A port can install a hook that applies an environment selection (e.g. the
// Highway port forcing one SIMD target). Weak, so builds without it link.
extern "C" __attribute__((weak)) const char* tinyattn_test_select_target(const char* request);
// The same for the xsimd port (TINYATTN_XSIMD_ARCH forces one architecture).
extern "C" __attribute__((weak)) const char* tinyattn_test_select_xsimd_arch(const char* request);

namespace tatest {

void out(const char* text) {
#if TATEST_DOCTEST
  std::fputs(text, stdout);
  std::fflush(stdout);
#else
  tatest_write(text);
#endif
}

void announce_environment() {
#if TATEST_DOCTEST
  const char* request = std::getenv("TINYATTN_HWY_TARGET");
  if (request && *request) {
    const char* chosen = tinyattn_test_select_target ? tinyattn_test_select_target(request) : nullptr;
    out(fmt("tinyattn: TINYATTN_HWY_TARGET=%s -> %s\n", request, chosen ? chosen : "not available").c_str());
    if (!chosen) std::exit(3);  // asked for a target that cannot run: never pass silently
  }
  const char* xsimd_request = std::getenv("TINYATTN_XSIMD_ARCH");
  if (xsimd_request && *xsimd_request) {
    const char* chosen =
        tinyattn_test_select_xsimd_arch ? tinyattn_test_select_xsimd_arch(xsimd_request) : nullptr;
    out(fmt("tinyattn: TINYATTN_XSIMD_ARCH=%s -> %s\n", xsimd_request, chosen ? chosen : "not available").c_str());
    if (!chosen) std::exit(3);
  }
#endif
  char line[256];
  size_t n = format(line, sizeof line, "tinyattn ports:");
  for (tinyattn::Port p : tinyattn::kAllPorts) {
    const tinyattn::KernelsF32* k = tinyattn::kernels_f32(p);
    if (k) n += format(line + n, sizeof line - n, " %s/%s", k->port, k->simd_target());
  }
  format(line + n, sizeof line - n, " (default %s)\n", tinyattn::port_name(tinyattn::default_port()));
  out(line);
}

}  // namespace tatest
