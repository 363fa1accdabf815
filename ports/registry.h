// What the registries know of the build: which ports of tinyattn/port_list.h
// are compiled in. CMake passes their enumerators, comma-separated, as
// TINYATTN_PORTS_BUILT (e.g. kScalar,kHighway) and the default port as
// TINYATTN_DEFAULT_PORT; a build without CMake gets the scalar port alone.
#pragma once

#include "port.h"

#ifndef TINYATTN_PORTS_BUILT
#define TINYATTN_PORTS_BUILT kScalar
#endif
#ifndef TINYATTN_DEFAULT_PORT
#define TINYATTN_DEFAULT_PORT kScalar
#endif

namespace tinyattn {
namespace registry {

// The enumerators unqualified, so that TINYATTN_PORTS_BUILT names them as the
// list does.
namespace enumerators {
#define TINYATTN_PORT_CONSTANT(e, name, fused, int8) constexpr Port e = Port::e;
TINYATTN_PORT_LIST(TINYATTN_PORT_CONSTANT)
#undef TINYATTN_PORT_CONSTANT
constexpr Port kBuilt[] = {TINYATTN_PORTS_BUILT};
}  // namespace enumerators

constexpr bool built(Port port) {
  for (Port b : enumerators::kBuilt)
    if (b == port) return true;
  return false;
}

// The scalar port is every build's fallback (kernels_i8 of ports without int8
// kernels, the default default).
static_assert(built(Port::kScalar), "TINYATTN_PORTS_BUILT must include kScalar");

}  // namespace registry
}  // namespace tinyattn
