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

// Int8Mode::kTflite's per-element steps (docs/quant.md, "TFLite mode";
// lib/src/tflite_ops.h computes the same integers), for the ports that have
// them (tflite_kernels_i8; without, the portable code runs). A table of its
// own, reached only by the paths that run the TFLite mode, so that
// native-only images link none of it. MBQM is TFLite's
// MultiplyByQuantizedMultiplier; m.multiplier >= 2^30 and m.shift in
// [-31, 30] (what validate() accepts). Every entry is non-null.
struct KernelsI8Tflite {
  // The port's products: its KernelsI8::scores and ::weighted_sum, the same
  // functions. With them here, a forward whose heads all run the TFLite mode
  // reaches its port through this table alone (default_tflite_route_i8) and
  // links none of the native softmax's kernels.
  int32_t (*scores)(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero,
                    int32_t k_zero, int32_t* s);
  void (*weighted_sum)(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                       int32_t* acc);

  // out[j] = clamp(MBQM(in[j], m) + zero, -128, 127) for j < n (the sum
  // exact, zero in [-128, 127]), written to out32 (which may be in) or, if
  // out32 is null, to out8.
  void (*requantize)(const int32_t* in, size_t n, TfliteMultiplier m, int32_t zero, int32_t* out32, int8_t* out8);

  // The exp pass of TFLite's softmax row: s[j] (int8 scores, max >= s[j],
  // max - s[j] <= 255) becomes e_j = exps[max - s[j]], where exps is the
  // head's table of kTfliteExpTableSize entries of the exp of -i (softmax_exp
  // in tflite_ops.h), either all -1 (not computed yet) or as this kernel
  // left it on the head's earlier rows: the kernel computes and stores the
  // entries it needs (it may store others too). Returns
  // sum_j RDBPOT(e_j, 12) (1 <= n <= kMaxMTflite keeps it in int32).
  int32_t (*exps)(int32_t* s, size_t n, int32_t max, const TfliteParams& p, int32_t* exps);

  // The output pass: e[j] = min(255, RDBPOT(SRDHM(scale, e[j]), exponent))
  // for j < n, with 0 <= e[j] <= 2^31 - 1, 0 < scale and exponent in [23, 34].
  void (*outputs)(int32_t* e, size_t n, int32_t scale, int exponent);
};

// Entries in the TFLite-mode exp table (an int8 score difference is 0..255).
inline constexpr size_t kTfliteExpTableSize = 256;

// gemmlowp's fixed-point exp constants, Q0.31, as TFLite's int8 softmax uses
// them: one definition for lib/src/tflite_ops.h and the ports' kernels.
inline constexpr int32_t kTfliteExpMinusOneEighth = 1895147668;  // exp(-1/8)
inline constexpr int32_t kTfliteOneThird = 715827883;             // 1/3
// exp(-2^(k-2)) for k = 0..6: the factors of the whole quarters of -a.
inline constexpr int32_t kTfliteExpBarrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};

// The int8 kernels of a port: its own table where it has one, otherwise the
// scalar table (the int8 path is integer-exact, so a port without int8
// kernels loses speed, never results). nullptr if the port is not compiled
// in. kDefault resolves to the build's default port.
const KernelsI8* kernels_i8(Port port);

// kernels_i8(Port::kDefault) bound at compile time: an image that reaches the
// int8 tables only through this (AttentionI8) links no other port's kernels.
const KernelsI8* default_kernels_i8();

// The TFLite-mode kernels of a port: nullptr where it has none or is not
// compiled in. kDefault resolves to the build's default port; the default
// port's bound at compile time as default_kernels_i8().
const KernelsI8Tflite* tflite_kernels_i8(Port port);
const KernelsI8Tflite* default_tflite_kernels_i8();

// What a TFLite-mode head runs of a port: its products, and its TFLite-mode
// steps (steps null: lib/src/tflite_ops.h's portable ones).
struct TfliteRouteI8 {
  decltype(KernelsI8::scores) scores = nullptr;
  decltype(KernelsI8::weighted_sum) weighted_sum = nullptr;
  const KernelsI8Tflite* steps = nullptr;
};

// The default port's route, settled at compile time: through its TFLite table
// where it has one, otherwise its KernelsI8's products with the portable
// steps. An image whose int8 calls all run the TFLite mode
// (AttentionI8<S, Int8Mode::kTflite>) then links no native softmax kernel.
TfliteRouteI8 default_tflite_route_i8();

}  // namespace tinyattn
