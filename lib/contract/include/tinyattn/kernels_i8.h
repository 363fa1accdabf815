// The int8 half of the port contract (kernels.h has the fp32 half).
//
// forward_i8() is specified down to the bit (quant.h, docs/quant.md), so a
// port's int8 kernels are not "close to" the scalar ones: they return the
// same integers for every input. Exact integer sums do not depend on the
// order of the additions, which is what lets SIMD ports reorder them freely;
// everything else (the fixed-point exp, the rounding shifts, the division)
// must be reproduced operation for operation. tests/kernels/int8_kernels.cc
// compares every port's table with the scalar one on random and extreme
// inputs, and the golden vectors (tests/quant) check whole outputs.
//
// Every primitive handles any length >= 1, does not allocate, and reads and
// writes only the ranges given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/kernels.h"
#include "tinyattn/quant.h"

namespace tinyattn {

struct KernelsI8 {
  const char* port;  // "scalar", "highway", "mve"

  // The SIMD target these kernels execute ("AVX2", "NEON+SDOT", "MVE",
  // "scalar", ...).
  const char* (*simd_target)();

  // s[j] = sum_c (q[c] - q_zero) * (k[j*ldk + c] - k_zero) for j < count,
  // c < dk, exact in int32 (1 <= dk <= kMaxDkInt8, zero points in
  // [-128, 127]). Returns max_j s[j].
  int32_t (*scores)(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero,
                    int32_t k_zero, int32_t* s);

  // e[j] = exp2_q30(apply(logit, s[j]) - max_logit) for j < n, except that
  // s[j] == INT32_MIN (a key the keep mask drops) gives e[j] = 0. Requires
  // max_logit >= apply(logit, s[j]) for every kept j and logit a valid
  // logit multiplier (Int8HeadPlan). e may be s. Returns sum_j e[j].
  int64_t (*exp_row)(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e);

  // p[j] = floor((e[j] * kProbOne + floor(sum / 2)) / sum) for j < n, where
  // 0 <= e[j] <= sum and 0 < sum <= n * 2^30. p may be e.
  void (*probabilities)(const int32_t* e, size_t n, int64_t sum, int32_t* p);

  // acc[c] = sum_j p[j] * (v[j*ldv + c] - v_zero) for c < dv, j < count,
  // with 0 <= p[j] <= kProbOne and sum_j p[j] <= kProbOne + count / 2, so
  // |acc| <= 255 * (kProbOne + count / 2): exact in int32 (count < kMaxMInt8).
  void (*weighted_sum)(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                       int32_t* acc);

  // y[c] = clamp(y_zero + apply(output, acc[c]), -128, 127) for c < n.
  void (*requantize)(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y);
};

// The int8 kernels of a port: its own table where it has one, otherwise the
// scalar table (the int8 path is integer-exact, so a port without int8
// kernels loses speed, never results). nullptr if the port is not compiled
// in. kDefault resolves to the build's default port.
const KernelsI8* kernels_i8(Port port);

// kernels_i8(Port::kDefault) bound at compile time: an image that reaches the
// int8 tables only through this (AttentionI8) links no other port's kernels.
const KernelsI8* default_kernels_i8();

}  // namespace tinyattn
