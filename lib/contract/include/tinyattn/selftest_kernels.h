// The self-test against an explicit kernel table, vectors and exp
// coefficients: how tests prove that a corrupted kernel (wrong exp coefficient,
// dropped scale, ...) or a flipped bit in the stored vectors is reported.
// Part of the port contract (lib/contract/include), not of the public API:
// firmware calls selftest() (tinyattn/selftest.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/exp.h"
#include "tinyattn/kernels.h"
#include "tinyattn/kernels_i16.h"
#include "tinyattn/kernels_i8.h"
#include "tinyattn/selftest.h"
#include "tinyattn/status.h"

namespace tinyattn {

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

// ---- int8 (selftest_int8) ----------------------------------------------------

// The int8 self-test's constant data (lib/src/selftest_i8_vectors.h, from
// tools/gen/selftest_i8_vectors.py). Exposed so a test can hand the self-test
// a modified copy and see the corruption reported.
struct SelftestI8Vectors {
  const int8_t* q;                  // [hq][n][dk]
  const int8_t* k;                  // [hkv][m][dk]
  const int8_t* v;                  // [hkv][m][dv]
  const uint8_t* keep_bits;         // [n][ceil(m/8)], one row fully masked
  const int8_t* bias;               // [n][m], int8 additive bias
  const int32_t* plan;              // [hq][11]: Int8HeadPlan's fields in order
  const int8_t* expected_y;         // every case's Y, concatenated
  const uint16_t* expected_weights; // every case's Q0.15 weights, concatenated
  size_t expected_y_count;
  size_t expected_weights_count;
  const int64_t* exp2_u;            // exp2_q30 known-answer inputs
  const int32_t* exp2_expected;     // and outputs
  size_t exp2_count;
  uint32_t crc32;                   // CRC-32 of every array above, in this order
  const int64_t* exp2_table;        // exp2_q30's table (32 entries)
  uint32_t exp2_table_crc32;        // its CRC-32 at generation time
};

// The int8 vectors compiled into the library (exp2_table: the table exp2_q30 reads).
const SelftestI8Vectors& selftest_i8_vectors();

// Every int8 check on an explicit kernel table and data; the known answers
// run forward_i8's driver on `kernels` (selftest_int8() goes through the
// public forward_i8() with the port's table).
Status selftest_i8_with(const KernelsI8& kernels, const SelftestI8Vectors& vectors, SelftestI8Report* report,
                        WriteFn write = nullptr, SelftestFormat format = SelftestFormat::kUnity);

// ---- int16 (selftest_int16) --------------------------------------------------

// The int16 self-test's constant data (lib/src/selftest_i16_vectors.h, from
// tools/gen/selftest_i16_vectors.py), exposed as the int8 one's.
struct SelftestI16Vectors {
  const int16_t* q;                 // [hq][n][dk]
  const int16_t* k;                 // [hkv][m][dk]
  const int16_t* v;                 // [hkv][m][dv]
  const uint8_t* keep_bits;         // [n][ceil(m/8)], one row fully masked
  const int32_t* plan;              // [hq][5]: Int16HeadPlan's fields in order
  const int16_t* expected_y;        // every case's Y, concatenated
  const uint16_t* expected_weights; // every case's Q0.15 weights, concatenated
  size_t expected_y_count;
  size_t expected_weights_count;
  const int32_t* wide_multiplier;   // apply_wide known answers: [wide_count][2] multiplier, shift
  const int64_t* wide_x;            // their inputs
  const int64_t* wide_expected;     // and outputs
  size_t wide_count;
  const int64_t* exp2_u;            // exp2_q30 known-answer inputs
  const int32_t* exp2_expected;     // and outputs
  size_t exp2_count;
  uint32_t crc32;                   // CRC-32 of every array above, little-endian, in this order
  const int64_t* exp2_table;        // exp2_q30's table (32 entries)
  uint32_t exp2_table_crc32;        // its CRC-32 at generation time
};

// The int16 vectors compiled into the library (exp2_table: the table exp2_q30 reads).
const SelftestI16Vectors& selftest_i16_vectors();

// Every int16 check on an explicit kernel table and data; the known answers
// run forward_i16's driver on `kernels` (selftest_int16() goes through the
// public forward_i16() with the port's table).
Status selftest_i16_with(const KernelsI16& kernels, const SelftestI16Vectors& vectors, SelftestI16Report* report,
                         WriteFn write = nullptr, SelftestFormat format = SelftestFormat::kUnity);

}  // namespace tinyattn
