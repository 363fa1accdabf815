// Maps Port values to the kernel tables compiled into this build, from the
// port list (tinyattn/port_list.h) and what CMake built (registry.h).
#include "registry.h"

namespace tinyattn {
namespace {

// A port's table if it is compiled in; otherwise its specialization is never
// referenced (a discarded statement), so nothing needs to define it.
template <Port P>
const KernelsF32* table_f32() {
  if constexpr (registry::built(P)) {
    return port_kernels_f32<P>();
  } else {
    return nullptr;
  }
}

}  // namespace

Port default_port() { return Port::TINYATTN_DEFAULT_PORT; }

bool port_compiled(Port port) { return port == Port::kDefault || registry::built(port); }

const KernelsF32* kernels_f32(Port port) {
  if (port == Port::kDefault) port = default_port();
  switch (port) {
#define TINYATTN_PORT_CASE(e, name, fused, int8) \
  case Port::e:                                  \
    return table_f32<Port::e>();
    TINYATTN_PORT_LIST(TINYATTN_PORT_CASE)
#undef TINYATTN_PORT_CASE
    default: return nullptr;  // not a Port value
  }
}

const char* port_simd_target(Port port) {
  const KernelsF32* kernels = kernels_f32(port);
  return kernels && kernels->simd_target ? kernels->simd_target() : "none";
}

const KernelsF32* default_kernels_f32() { return table_f32<Port::TINYATTN_DEFAULT_PORT>(); }

template <int kExtent>
const KernelsF32* default_kernels_f32_extent() {
  constexpr Port kPort = Port::TINYATTN_DEFAULT_PORT;
  if constexpr (registry::built(kPort)) {
    return port_kernels_f32_extent<kPort, kExtent>();
  } else {
    return nullptr;
  }
}
#define TINYATTN_DEFAULT_EXTENT_TABLE(unused, extent) template const KernelsF32* default_kernels_f32_extent<extent>();
TINYATTN_SQUARE_EXTENTS(TINYATTN_DEFAULT_EXTENT_TABLE, _)
#undef TINYATTN_DEFAULT_EXTENT_TABLE

const char* port_name(Port port) {
  switch (port) {
    case Port::kDefault: return "default";
#define TINYATTN_PORT_CASE(e, name, fused, int8) \
  case Port::e:                                  \
    return name;
    TINYATTN_PORT_LIST(TINYATTN_PORT_CASE)
#undef TINYATTN_PORT_CASE
  }
  return "unknown";
}

}  // namespace tinyattn
