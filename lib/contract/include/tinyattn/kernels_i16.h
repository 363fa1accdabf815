// The int16 part of the port contract (kernels_i8.h has the int8 part).
//
// forward_i16() is specified down to the bit (quant_i16.h, docs/quant.md),
// so a port's int16 kernels return the same integers as the scalar ones for
// every input. Exact integer sums do not depend on the order of the
// additions, so SIMD ports reorder them freely; the rounding steps are
// reproduced operation for operation. tests/kernels/int16_kernels.cc
// compares every port's table with the scalar one.
//
// Every primitive handles any length >= 1, does not allocate, and reads and
// writes only the ranges given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/kernels.h"
#include "tinyattn/quant_i16.h"

namespace tinyattn {

struct KernelsI16 {
  const char* port;  // "scalar", "dsp", "mve"

  // The SIMD target these kernels execute.
  const char* (*simd_target)();

  // s[j] = sum_c q[c] * k[j*ldk + c] for j < count, c < dk, exact in int64
  // (1 <= dk <= kMaxDkInt16). Returns max_j s[j].
  int64_t (*scores)(const int16_t* q, const int16_t* k, size_t ldk, size_t count, size_t dk, int64_t* s);

  // e[j] = exp2_q30(-apply_wide(logit, max_score - s[j])) for j < n, except
  // that s[j] == INT64_MIN (a key the keep mask drops) gives e[j] = 0.
  // Requires max_score >= s[j] for every kept j and max_score - s[j] <= 2^47.
  // Returns sum_j e[j].
  int64_t (*exp_row)(const int64_t* s, size_t n, FixedMultiplier logit, int64_t max_score, int32_t* e);

  // KernelsI8::probabilities: p[j] = floor((e[j] * kProbOne + floor(sum / 2)) / sum).
  void (*probabilities)(const int32_t* e, size_t n, int64_t sum, int32_t* p);

  // acc[c] = sum_j p[j] * v[j*ldv + c] for c < dv, j < count, with
  // 0 <= p[j] <= kProbOne and sum_j p[j] <= kProbOne + count / 2: exact in
  // int32 for count <= kMaxMInt16.
  void (*weighted_sum)(const int32_t* p, const int16_t* v, size_t ldv, size_t count, size_t dv, int32_t* acc);

  // y[c] = clamp(apply(output, acc[c]), -32768, 32767) for c < n.
  void (*requantize)(const int32_t* acc, size_t n, FixedMultiplier output, int16_t* y);
};

// The int16 kernels of a port: its own table where it has one, otherwise the
// scalar table (same integers, less speed). nullptr if the port is not
// compiled in. kDefault resolves to the build's default port.
const KernelsI16* kernels_i16(Port port);

// kernels_i16(Port::kDefault) bound at compile time: an image that reaches
// the int16 tables only through this (AttentionI16) links no other port's.
const KernelsI16* default_kernels_i16();

}  // namespace tinyattn
