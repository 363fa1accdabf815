// Which compiled-in port runs the kernels (Options::port), and what a build
// has. The ports' kernel tables themselves are not public API: they are the
// contract between the driver and the ports (tinyattn/kernels.h, a separate
// include directory: lib/contract/include).
#pragma once

#include "tinyattn/port_list.h"

namespace tinyattn {

// kDefault, then the ports of tinyattn/port_list.h in its order (kScalar,
// kHighway, kXsimd, kMve = Arm Helium, kTemplate = the example of
// docs/ports.md, ...).
enum class Port : unsigned char {
  kDefault = 0,  // the port chosen at build time (CMake TINYATTN_DEFAULT_PORT)
#define TINYATTN_PORT_ENUMERATOR(e, name, fused, int8) e,
  TINYATTN_PORT_LIST(TINYATTN_PORT_ENUMERATOR)
#undef TINYATTN_PORT_ENUMERATOR
};

// Every port but kDefault, compiled into this build or not.
inline constexpr Port kAllPorts[] = {
#define TINYATTN_PORT_VALUE(e, name, fused, int8) Port::e,
    TINYATTN_PORT_LIST(TINYATTN_PORT_VALUE)
#undef TINYATTN_PORT_VALUE
};

// The number of Port values, kDefault included.
inline constexpr int kPortCount = 1 + static_cast<int>(sizeof kAllPorts / sizeof kAllPorts[0]);

// Whether the port is compiled into this build (kDefault: always).
bool port_compiled(Port port);

// "scalar", "highway", ... ("default" for kDefault). Never null.
const char* port_name(Port port);

// The port that kDefault resolves to in this build.
Port default_port();

// The SIMD target the port's kernels run on this CPU ("AVX2", "mve",
// "scalar", ...; kDefault: the default port's), or "none" when the port is
// not compiled in or this CPU can run none of its targets. Never null.
const char* port_simd_target(Port port);

}  // namespace tinyattn
