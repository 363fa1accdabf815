// Test hook (linked into the test runners, not the library): forces one xsimd
// architecture so the same suite runs once per architecture. Called by
// tests/framework/test_env.cc for TINYATTN_XSIMD_ARCH=<name>.
#include <cstdio>

#include "backends/xsimd/xsimd_port.h"

extern "C" const char* tinyattn_test_select_xsimd_arch(const char* request) {
  if (!tinyattn::xsimd_port::force_arch(request)) {
    std::printf("tinyattn: xsimd architecture %s is not compiled in or this CPU cannot run it\n", request);
    return nullptr;
  }
  return tinyattn::xsimd_port::kernels_f32()->simd_target();
}
