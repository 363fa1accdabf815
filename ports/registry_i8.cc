// Maps Port values to int8 kernel tables. A compiled port without int8
// kernels of its own runs the scalar ones (same integers, less speed).
// TINYATTN_HAVE_<PORT>_I8 come from the ports' CMake files.
#include "tinyattn/kernels_i8.h"
#include "backends/scalar/scalar.h"

#if TINYATTN_HAVE_HIGHWAY_I8
#include "backends/highway/highway.h"
#endif
#if TINYATTN_HAVE_MVE_I8
#include "backends/mve/mve.h"
#endif

namespace tinyattn {

const KernelsI8* kernels_i8(Port port) {
  if (port == Port::kDefault) port = default_port();
  if (kernels_f32(port) == nullptr) return nullptr;  // the port is not compiled in
  switch (port) {
#if TINYATTN_HAVE_HIGHWAY_I8
    case Port::kHighway: return &highway::kernels_i8();
#endif
#if TINYATTN_HAVE_MVE_I8
    case Port::kMve: return &mve::kernels_i8();
#endif
    default: return &scalar::kernels_i8();
  }
}

}  // namespace tinyattn
