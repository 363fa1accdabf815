// Power-on self-test: checks the kernels on the silicon they run on.
//
// Runs known-answer vectors (generated offline by tools/gen/selftest_vectors.py,
// stored as constants) for each compiled dtype and mask kind, the seed
// notebook's properties (rows of A sum to 1, weights >= 0, outputs in the
// convex hull of V), a fully-masked-row check, an exp accuracy spot check
// against kExpMaxUlp, unit checks of every kernel primitive, and integrity
// checks of the exp coefficient table and of the stored vectors (CRC-32), so a
// flipped bit in flash is reported. No heap, no libc I/O, bounded stack; prints
// only through `write`. Costs are in docs/selftest.md.
//
// Not re-entrant: the scratch tensors are static (sized at compile time), so
// run one self-test at a time (at boot, before other threads start).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/exp.h"
#include "tinyattn/kernels.h"
#include "tinyattn/status.h"

namespace tinyattn {

inline constexpr size_t kSelftestMaxChecks = 48;

struct SelftestCheck {
  const char* name;      // short id, e.g. "row_sum", "kat_causal_bottom_right", "exp_ulp"
  const char* property;  // what is checked, in words (the table's first column)
  const char* theory;    // the theoretical value or bound, as text ("1.000000", "<= 2.5 ULP")
  float lo;              // empirical minimum of the checked quantity
  float hi;              // empirical maximum of the checked quantity
  float measured;        // the worst deviation the check measured (error, ULP, mismatches, ...)
  float bound;           // the bound `measured` was held to
  bool passed;
};

struct SelftestReport {
  uint32_t count = 0;
  uint32_t failures = 0;
  SelftestCheck checks[kSelftestMaxChecks] = {};
  bool passed() const { return count > 0 && failures == 0; }
  // The check with this name, or nullptr.
  const SelftestCheck* find(const char* name) const;
};

// Text sink for the report, e.g. a UART or semihosting write; may be null.
using WriteFn = void (*)(const char* text);

enum class SelftestFormat : uint8_t {
  kNone,   // report only, print nothing
  kUnity,  // selftest:<n>:<name>:PASS|FAIL lines + "N Tests M Failures K Ignored" + OK|FAIL
  kTable,  // the notebook's properties table: property, theoretical, min, max, status
  kBoth,
};

// Self-test of one port (kDefault: the build's default) through the public
// forward() entry point. Returns kOk when it ran (inspect report->passed()),
// kPortUnavailable / kNullPointer otherwise.
Status selftest(SelftestReport* report, Port port = Port::kDefault, WriteFn write = nullptr,
                SelftestFormat format = SelftestFormat::kUnity);

// The same checks against an explicit kernel table: how tests prove that a
// corrupted kernel (wrong exp coefficient, dropped scale, ...) is caught.
Status selftest_kernels(const KernelsF32& kernels, SelftestReport* report, WriteFn write = nullptr,
                        SelftestFormat format = SelftestFormat::kUnity);

// The constant data the checks compare against. Inputs are int8 multiples of
// `input_scale` (exact in fp32, a quarter of the flash of floats); a bias of
// -128 stands for -inf. Exposed so a test can hand the self-test a modified
// copy and see the corruption reported.
struct SelftestVectors {
  const int8_t* q;                // [hq][n][dk]
  const int8_t* k;                // [hkv][m][dk]
  const int8_t* v;                // [hkv][m][dv]
  const uint8_t* keep_bits;       // [n][ceil(m/8)]
  const int8_t* bias;             // [n][m]
  const float* expected_y;        // every case's Y, concatenated
  const float* expected_lse;      // every case's log-sum-exp, concatenated
  size_t expected_y_count;
  size_t expected_lse_count;
  const float* exp_x;             // exp spot-check inputs
  const double* exp_y;            // exp(x) in double
  size_t exp_count;
  const uint32_t* exp_coefficient_bits;  // kExpCoefficients as IEEE bit patterns
  uint32_t crc32;                 // CRC-32 of everything above, in this order
};

// The vectors compiled into the library.
const SelftestVectors& selftest_vectors();

// Runs every check with explicit data: selftest_kernels() is
// selftest_with(kernels, selftest_vectors(), kExpCoefficients, ...).
Status selftest_with(const KernelsF32& kernels, const SelftestVectors& vectors,
                     const ExpCoefficients& coefficients, SelftestReport* report, WriteFn write = nullptr,
                     SelftestFormat format = SelftestFormat::kUnity);

}  // namespace tinyattn
