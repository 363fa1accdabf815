// Maps Port values to the kernel tables compiled into this build.
// TINYATTN_HAVE_<PORT> and TINYATTN_DEFAULT_PORT come from CMake.
#include "tinyattn/kernels.h"
#include "backends/scalar/scalar.h"

#if TINYATTN_HAVE_HIGHWAY
#include "backends/highway/highway.h"
#endif
#if TINYATTN_HAVE_XSIMD
#include "backends/xsimd/xsimd_port.h"
#endif
#if TINYATTN_HAVE_MVE
#include "backends/mve/mve.h"
#endif

#ifndef TINYATTN_DEFAULT_PORT
#define TINYATTN_DEFAULT_PORT kScalar
#endif

namespace tinyattn {

Port default_port() { return Port::TINYATTN_DEFAULT_PORT; }

const KernelsF32* kernels_f32(Port port) {
  if (port == Port::kDefault) port = default_port();
  switch (port) {
    case Port::kScalar: return &scalar::kernels_f32();
#if TINYATTN_HAVE_HIGHWAY
    case Port::kHighway: return &highway::kernels_f32();
#endif
#if TINYATTN_HAVE_XSIMD
    case Port::kXsimd: return xsimd_port::kernels_f32();
#endif
#if TINYATTN_HAVE_MVE
    case Port::kMve: return &mve::kernels_f32();
#endif
    default: return nullptr;
  }
}

const char* port_name(Port port) {
  switch (port) {
    case Port::kDefault: return "default";
    case Port::kScalar: return "scalar";
    case Port::kHighway: return "highway";
    case Port::kXsimd: return "xsimd";
    case Port::kMve: return "mve";
  }
  return "unknown";
}

}  // namespace tinyattn
