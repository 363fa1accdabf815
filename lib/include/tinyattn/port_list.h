// The ports tinyattn knows, one line each. Everything that names ports is
// derived from this list: the Port enum (kernels.h), the registries
// (ports/registry*.cc), the build (ports/CMakeLists.txt reads these lines),
// the tests' port loops, the tool's --port and the bench. Adding a port is
// its folder ports/backends/<name>/ plus one line here (docs/ports.md).
//
//   X(enumerator, "name", fused, int8)
//   enumerator  its Port value; append new ports (the values are ABI)
//   name        port_name(), the tool's --port and the folder ports/backends/<name>
//   fused       1: its table may set the optional attend_block,
//               attend_fixed and scores_block_transposed (the driver
//               compiles their paths only when a compiled port says 1)
//   int8        1: it has a KernelsI8 of its own (0: kernels_i8() gives it the
//               scalar table)
//
// CMake parses this list (ports/CMakeLists.txt): keep each X(...) on one
// line, each line ending in a backslash.
#pragma once

#define TINYATTN_PORT_LIST(X)     \
  X(kScalar, "scalar", 0, 1)      \
  X(kHighway, "highway", 1, 1)    \
  X(kXsimd, "xsimd", 1, 0)        \
  X(kMve, "mve", 1, 1)            \
  X(kTemplate, "template", 0, 1)  \
  X(kDsp, "dsp", 0, 1)            \
  X(kRvv, "rvv", 0, 1)            \
  /* one line per port, appended above */
