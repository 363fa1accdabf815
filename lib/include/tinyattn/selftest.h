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
// The same checks against an explicit kernel table or modified vectors (how the
// tests prove that corruption is caught) are in tinyattn/selftest_kernels.h,
// with the port contract.
//
// selftest_int8() is the integer-only self-test of the int8 path (forward_i8,
// the KernelsI8 table, exp2_q30): integer report, integer checks, its own
// translation unit, so an FPU-less int8-only image that calls only it links
// no floating-point code.
// selftest_int16() is the same for the int16 path's native mode
// (forward_i16, the KernelsI16 table, apply_wide, exp2_q30), in a
// translation unit of its own again, so an int8-only image does not link it.
//
// Not re-entrant: the scratch tensors are static (sized at compile time), so
// run one self-test at a time (at boot, before other threads start).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tinyattn/port.h"
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

// What a self-test reports: its checks in order, and how many failed.
template <class Check, size_t kMaxChecks>
struct SelftestChecks {
  uint32_t count = 0;
  uint32_t failures = 0;
  Check checks[kMaxChecks] = {};
  bool passed() const { return count > 0 && failures == 0; }
  // The check with this name, or nullptr.
  const Check* find(const char* name) const {
    for (uint32_t i = 0; i < count && i < kMaxChecks; ++i)
      if (std::strcmp(checks[i].name, name) == 0) return &checks[i];
    return nullptr;
  }
};

struct SelftestReport : SelftestChecks<SelftestCheck, kSelftestMaxChecks> {};

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

// ---- int8, integers only ---------------------------------------------------

inline constexpr size_t kSelftestI8MaxChecks = 24;

struct SelftestI8Check {
  const char* name;      // short id, e.g. "i8_kernel_requantize", "i8_kat_causal"
  const char* property;  // what is checked, in words (the table's first column)
  uint32_t measured;     // wrong integers, mismatching CRCs, or the worst deviation (i8_row_sum)
  uint32_t bound;        // the bound `measured` was held to
  bool passed;
};

struct SelftestI8Report : SelftestChecks<SelftestI8Check, kSelftestI8MaxChecks> {};

// Integer-only self-test of the int8 path of one port (kDefault: the build's
// default): CRC-32 of its vectors and of exp2_q30's table, exp2_q30 known
// answers, each KernelsI8 entry against its definition, forward_i8() known
// answers (output bytes and Q0.15 weights) through the public entry point and
// properties of the weights. kTable prints the integer figures. Returns kOk
// when it ran (inspect report->passed()), kPortUnavailable / kNullPointer
// otherwise. docs/selftest.md lists the checks and bounds.
Status selftest_int8(SelftestI8Report* report, Port port = Port::kDefault, WriteFn write = nullptr,
                     SelftestFormat format = SelftestFormat::kUnity);

// ---- int16, integers only --------------------------------------------------

inline constexpr size_t kSelftestI16MaxChecks = 24;

// The int16 self-test's checks are the int8 one's integer checks ("i16_" names).
struct SelftestI16Report : SelftestChecks<SelftestI8Check, kSelftestI16MaxChecks> {};

// Integer-only self-test of the int16 path of one port (kDefault: the
// build's default), parallel to selftest_int8(): CRC-32 of its vectors and of
// exp2_q30's table, apply_wide and exp2_q30 known answers, each KernelsI16
// entry against its definition, forward_i16() known answers (output values
// and Q0.15 weights) through the public entry point and properties of the
// weights. Returns kOk when it ran (inspect report->passed()),
// kPortUnavailable / kNullPointer otherwise. docs/selftest.md lists the checks.
Status selftest_int16(SelftestI16Report* report, Port port = Port::kDefault, WriteFn write = nullptr,
                      SelftestFormat format = SelftestFormat::kUnity);

}  // namespace tinyattn
