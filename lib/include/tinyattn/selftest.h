// Power-on self-test: checks the kernels on the silicon they run on.
//
// Runs known-answer vectors (generated offline, stored as constants) for each
// compiled dtype and mask kind, the seed notebook's properties (rows of A sum
// to 1, weights >= 0, outputs in the convex hull of V), a fully-masked-row
// check and an exp accuracy spot check against kExpMaxUlp. No heap, no libc
// I/O, bounded stack (stated in the README); prints only through `write`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/kernels.h"
#include "tinyattn/status.h"

namespace tinyattn {

inline constexpr size_t kSelftestMaxChecks = 48;

struct SelftestCheck {
  const char* name;    // e.g. "row_sum", "kat_causal_bottom_right", "exp_ulp"
  bool passed;
  float measured;      // the figure the check measured (worst deviation, max ULP, ...)
  float bound;         // the bound it was held to
};

struct SelftestReport {
  uint32_t count = 0;
  uint32_t failures = 0;
  SelftestCheck checks[kSelftestMaxChecks];
  bool passed() const { return count > 0 && failures == 0; }
};

// Text sink for the report, e.g. a UART or semihosting write; may be null.
using WriteFn = void (*)(const char* text);

enum class SelftestFormat : uint8_t {
  kNone,   // report only, print nothing
  kUnity,  // file:line:name:PASS|FAIL lines + "N Tests M Failures K Ignored"
  kTable,  // the notebook's properties table: property, theoretical, min, max, status
  kBoth,
};

// Self-test of one port (kDefault: the build's default). Returns kOk when it
// ran (inspect report->passed()), kPortUnavailable / kNullPointer otherwise.
Status selftest(SelftestReport* report, Port port = Port::kDefault, WriteFn write = nullptr,
                SelftestFormat format = SelftestFormat::kUnity);

// The same checks against an explicit kernel table: how tests prove that a
// corrupted kernel (wrong exp coefficient, dropped scale, ...) is caught.
Status selftest_kernels(const KernelsF32& kernels, SelftestReport* report, WriteFn write = nullptr,
                        SelftestFormat format = SelftestFormat::kUnity);

}  // namespace tinyattn
