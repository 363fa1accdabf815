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

// The per-element steps of Int16Mode::kTflite (lib/src/tflite16_ops.h) a
// port may run in SIMD: each returns exactly tflite16_ops.h's integers.
struct KernelsI16Tflite {
  // The port's products: its KernelsI16::scores and ::weighted_sum, the same
  // functions. With them here, a forward whose heads all run the TFLite mode
  // reaches its port through this table alone (default_tflite_route_i16) and
  // links none of the native softmax's kernels.
  int64_t (*scores)(const int16_t* q, const int16_t* k, size_t ldk, size_t count, size_t dk, int64_t* s);
  void (*weighted_sum)(const int32_t* p, const int16_t* v, size_t ldv, size_t count, size_t dv, int32_t* acc);

  // out[j] = requantize_i16(s[j], m) for j < n (|s[j]| < 2^47, shift in
  // [-31, 7]). Returns max_j out[j] (n >= 1).
  int32_t (*requantize)(const int64_t* s, size_t n, TfliteMultiplier m, int32_t* out);

  // y[c] = requantize_i16(acc[c], m) for c < n.
  void (*requantize_y)(const int32_t* acc, size_t n, TfliteMultiplier m, int16_t* y);

  // The softmax's exp pass: x[j] = softmax16_exp(x[j] - max, beta) for j < n
  // (x[j] in [-32768, 32767], max >= x[j], beta as plan_int16 validates it),
  // exp_lut being TFLite's exp table (kTflite16ExpLut, 513 entries). Returns
  // sum_j x[j] (n <= kMaxMInt16 keeps it in int32).
  int32_t (*exps)(int32_t* x, size_t n, int32_t max, TfliteMultiplier beta, const int16_t* exp_lut);

  // The output pass: x[j] = softmax16_output(x[j], reciprocal, right_shift)
  // for j < n (x[j] and reciprocal in [0, 32767], right_shift in [14, 30]).
  // Returns sum_j x[j].
  int32_t (*outputs)(int32_t* x, size_t n, int32_t reciprocal, int right_shift);
};

// The int16 kernels of a port: its own table where it has one, otherwise the
// scalar table (same integers, less speed). nullptr if the port is not
// compiled in. kDefault resolves to the build's default port.
const KernelsI16* kernels_i16(Port port);

// kernels_i16(Port::kDefault) bound at compile time: an image that reaches
// the int16 tables only through this (AttentionI16) links no other port's.
const KernelsI16* default_kernels_i16();

// The TFLite-16 kernels of a port: nullptr where it has none or is not
// compiled in (forward_i16 then runs tflite16_ops.h's portable code).
const KernelsI16Tflite* tflite_kernels_i16(Port port);
const KernelsI16Tflite* default_tflite_kernels_i16();

// What a TFLite-mode head runs of a port: its products, and its TFLite-16
// steps (steps null: tflite16_ops.h's portable ones).
struct TfliteRouteI16 {
  decltype(KernelsI16::scores) scores = nullptr;
  decltype(KernelsI16::weighted_sum) weighted_sum = nullptr;
  const KernelsI16Tflite* steps = nullptr;
};

// The default port's route, settled at compile time as
// default_tflite_route_i8(): an image whose int16 calls all run the TFLite
// mode (AttentionI16<S, Int16Mode::kTflite>) links no native softmax kernel.
TfliteRouteI16 default_tflite_route_i16();

}  // namespace tinyattn
