// Which compiled-in port runs the kernels (Options::port), and what a build
// has. The ports' kernel tables themselves are not public API: they are the
// contract between the driver and the ports (tinyattn/kernels.h, a separate
// include directory: lib/contract/include).
#pragma once

namespace tinyattn {

enum class Port : unsigned char {
  kDefault = 0,  // the port chosen at build time (CMake TINYATTN_DEFAULT_PORT)
  kScalar,
  kHighway,
  kXsimd,
  kMve,          // Arm Helium (Cortex-M55)
};

inline constexpr int kPortCount = 5;

// "scalar", "highway", ... ("default" for kDefault). Never null.
const char* port_name(Port port);

// The port that kDefault resolves to in this build.
Port default_port();

}  // namespace tinyattn
