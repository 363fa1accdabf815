// The integer operations of TFLite's int8 reference kernels that
// Int8Mode::kTflite composes (docs/quant.md, "TFLite mode"): gemmlowp's
// fixed-point primitives, TFLite's requantization and its softmax row.
// Written from their definitions and mirrored independently in
// tests/quant/gen_tflite_vectors.py; every result is defined for every input
// these functions are given (no signed overflow, no shift of 32 or more, no
// 64-bit division), so all targets compute the same integers.
//
// Fixed point in gemmlowp's terms: Qm.n is an int32 with m integer bits and
// n = 31 - m fraction bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/kernels_i8.h"
#include "tinyattn/quant.h"

namespace tinyattn::tflite_ops {

// a * b * 2^-31 rounded to nearest, ties toward +infinity (gemmlowp's nudge
// then truncating division, i.e. ARM's VQRDMULH); INT32_MIN * INT32_MIN, the
// one product that does not fit, saturates to INT32_MAX.
inline int32_t srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  const int64_t v = static_cast<int64_t>(a) * b + (int64_t{1} << 30);  // in (-2^62, 2^62]
  // floor(v / 2^31) without shifting a negative value: it fits int32, so it
  // is bits 31..62 of v, which a logical shift of v's two's complement gives.
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 31));
}

// gemmlowp's RoundingDivideByPOT: x * 2^-e to nearest, ties away from zero
// (the same rounding as tinyattn::rounding_rshift). e >= 32, beyond
// gemmlowp's range, gives the exact rounding too.
inline int32_t rounding_divide_by_pot(int32_t x, int e) {
  if (e <= 0) return x;
  if (e >= 32) {
    const int64_t half = int64_t{1} << (e - 1);
    if (x >= 0) return static_cast<int32_t>((x + half) >> e);
    return -static_cast<int32_t>((-static_cast<int64_t>(x) + half) >> e);
  }
  // In 32 bits: |x| / 2^e plus the bit below, on the magnitude (|INT32_MIN| fits uint32).
  const uint32_t mag = x >= 0 ? static_cast<uint32_t>(x) : 0u - static_cast<uint32_t>(x);
  const int32_t q = static_cast<int32_t>((mag >> e) + ((mag >> (e - 1)) & 1u));  // <= 2^30 + 1
  return x >= 0 ? q : -q;
}

// gemmlowp's SaturatingRoundingMultiplyByPOT<k> for k > 0: x * 2^k, saturated.
inline int32_t saturating_shl(int32_t x, int k) {
  const int32_t threshold = static_cast<int32_t>((uint32_t{1} << (31 - k)) - 1u);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << k);
}

// tflite::MultiplyByQuantizedMultiplier (the default, double-rounding form):
// round(round(x * 2^left * m * 2^-31) * 2^-right), shift = left - right.
// TFLite forms x * 2^left in int32; where that overflows (a multiplier >= 1
// on a large accumulator) it wraps here, as two's complement hardware does.
inline int32_t multiply_by_quantized_multiplier(int32_t x, TfliteMultiplier m) {
  const int left = m.shift > 0 ? m.shift : 0;
  const int right = m.shift > 0 ? 0 : -m.shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  return rounding_divide_by_pot(srdhm(shifted, m.multiplier), right);
}

// gemmlowp's exp_on_interval_between_negative_one_quarter_and_0_excl:
// exp(a) for a in [-1/4, 0), Q0.31 in and out; a Taylor polynomial around -1/8.
inline int32_t exp_quarter_interval(int32_t a) {
  constexpr int32_t kExpMinusOneEighth = kTfliteExpMinusOneEighth;
  constexpr int32_t kOneThird = kTfliteOneThird;
  const int32_t x = a + (1 << 28);  // a + 1/8
  const int32_t x2 = srdhm(x, x);
  const int32_t x3 = srdhm(x2, x);
  const int32_t x4 = srdhm(x2, x2);
  const int32_t x4_over_4 = rounding_divide_by_pot(x4, 2);
  const int32_t poly = rounding_divide_by_pot(srdhm(x4_over_4 + x3, kOneThird) + x2, 1);
  return kExpMinusOneEighth + srdhm(kExpMinusOneEighth, x + poly);
}

// gemmlowp's exp_on_negative_values for a Q5.26 input a <= 0: exp(a) in Q0.31.
// a = -(multiple of 1/4) + (a mod 1/4): the remainder by the polynomial, the
// quarters by multiplying with exp(-2^k) for each set bit.
inline int32_t exp_on_negative_values_q5(int32_t a) {
  constexpr int kFractionBits = 26;
  constexpr int32_t kOneQuarter = int32_t{1} << (kFractionBits - 2);
  const int32_t a_mod_quarter_minus_quarter = (a & (kOneQuarter - 1)) - kOneQuarter;  // [-1/4, 0)
  // Q5.26 -> Q0.31: in [-2^29, 0), so the saturating shift by 5 never saturates
  int32_t result = exp_quarter_interval(a_mod_quarter_minus_quarter * 32);
  const int32_t remainder = a_mod_quarter_minus_quarter - a;  // a whole number of quarters, >= 0
  for (int k = 0; k < 7; ++k)  // exp(-2^(k-2)), k - 2 = -2 .. 4
    if (remainder & (int32_t{1} << (kFractionBits - 2 + k))) result = srdhm(result, kTfliteExpBarrel[k]);
  return a == 0 ? INT32_MAX : result;
}

// gemmlowp's one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a in [0, 1),
// Q0.31 in and out; Newton-Raphson from 48/17 - 32/17 d, three steps, in Q2.29.
inline int32_t one_over_one_plus_x(int32_t a) {
  constexpr int32_t k48Over17 = 1515870810;      // Q2.29
  constexpr int32_t kMinus32Over17 = -1010580540;  // Q2.29
  constexpr int32_t kOneQ2 = int32_t{1} << 29;
  // RoundingHalfSum(a, One()), One() of Q0.31 being INT32_MAX: floor((a + 2^31) / 2), a >= 0
  const int32_t half_denominator = (int32_t{1} << 30) + (a >> 1);
  int32_t x = k48Over17 + srdhm(half_denominator, kMinus32Over17);
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus_dx = kOneQ2 - srdhm(half_denominator, x);
    x = x + saturating_shl(srdhm(x, one_minus_dx), 2);  // Q4.27 -> Q2.29
  }
  return saturating_shl(x, 1);  // x / 2 in Q1.30, read as Q0.31
}

// The int8 requantization of a BatchMatMul's int32 sum:
// clamp(MBQM(x, m) + zero, -128, 127), the sum exact (no int32 overflow
// where MBQM is near its ends).
inline int32_t requantize(int32_t x, TfliteMultiplier m, int32_t zero) {
  int32_t y = multiply_by_quantized_multiplier(x, m);
  y = y < -256 ? -256 : (y > 255 ? 255 : y);  // the same clamp after adding |zero| <= 128
  y += zero;
  return y < -128 ? -128 : (y > 127 ? 127 : y);
}

// Leading zero bits of a nonzero 32-bit value.
inline int count_leading_zeros(uint32_t x) {
#if defined(__GNUC__)
  static_assert(sizeof(unsigned) == sizeof(uint32_t), "__builtin_clz counts in a 32-bit unsigned");
  return __builtin_clz(x);  // x != 0
#else
  int n = 0;
  while (!(x & 0x80000000u)) {
    x <<= 1;
    ++n;
  }
  return n;
#endif
}

// The exp the softmax takes for diff = score - row maximum (<= 0): 0 below
// diff_min (the key counts as exp = 0 and its output is 0 too).
inline int32_t softmax_exp(int32_t diff, const TfliteParams& p) {
  if (diff < p.diff_min) return 0;
  // MultiplyByQuantizedMultiplierGreaterThanOne; diff_min keeps diff * 2^shift in int32
  const int32_t scaled = srdhm(static_cast<int32_t>(static_cast<uint32_t>(diff) << p.beta.shift), p.beta.multiplier);
  return exp_on_negative_values_q5(scaled);
}

// Scores are int8, so a row's diff is one of 256 values and a head's exps
// can be remembered: kExpTableSize entries, -1 where not computed yet.
inline constexpr size_t kExpTableSize = kTfliteExpTableSize;

constexpr int kAccumulationIntegerBits = 12;

// The exp pass of softmax_row (KernelsI8Tflite::exps): s[j] -> e_j for the
// row maximum max, returning the Q12.19 sum. exps as softmax_row's.
inline int32_t softmax_exps(int32_t* s, size_t n, int32_t max, const TfliteParams& p, int32_t* exps) {
  int32_t sum = 0;  // Q12.19
  for (size_t j = 0; j < n; ++j) {
    const int32_t diff = s[j] - max;  // in [-255, 0]
    int32_t e;
    if (exps) {
      int32_t& slot = exps[-diff];
      if (slot < 0) slot = softmax_exp(diff, p);
      e = slot;
    } else {
      e = softmax_exp(diff, p);
    }
    sum += rounding_divide_by_pot(e, kAccumulationIntegerBits);
    s[j] = e;
  }
  return sum;
}

// GetReciprocal of the sum (>= 1): sum = 2^num_bits_over_unit * (1 + x),
// x in [0, 1); the scale 1 / (1 + x) and the output pass's exponent, 23..34.
// TFLite's reference checks the exponent is at most 31 (a sum of exps of 512
// or more stops it); beyond, the exact rounding is 0.
inline int32_t softmax_reciprocal(int32_t sum, int* exponent) {
  const int headroom_plus_one = count_leading_zeros(static_cast<uint32_t>(sum));
  const int num_bits_over_unit = kAccumulationIntegerBits - headroom_plus_one;
  const int32_t shifted_sum_minus_one =
      static_cast<int32_t>((static_cast<uint32_t>(sum) << headroom_plus_one) - (uint32_t{1} << 31));
  *exponent = num_bits_over_unit + 31 - 8;
  return one_over_one_plus_x(shifted_sum_minus_one);
}

// The output pass (KernelsI8Tflite::outputs): each output plus 128.
inline void softmax_outputs(int32_t* e, size_t n, int32_t scale, int exponent) {
  for (size_t j = 0; j < n; ++j) {
    const int32_t out = rounding_divide_by_pot(srdhm(scale, e[j]), exponent);  // >= 0
    e[j] = out > 255 ? 255 : out;  // clamp(out - 128, -128, 127) + 128
  }
}

// The row maximum, at least -128 (an int8 score).
inline int32_t softmax_max(const int32_t* s, size_t n) {
  int32_t max = -128;
  for (size_t j = 0; j < n; ++j) max = s[j] > max ? s[j] : max;
  return max;
}

// TFLite's reference int8 softmax of one row (reference/softmax.h, int8 in
// and out, output scale 1/256, zero point -128), returning each output plus
// 128 (the weight of P.V, in [0, 255]). s[j] holds the int8 scores on input
// and the weights on output. 1 <= n <= kMaxMTflite keeps the Q12.19 sum in
// int32. exps: null, or the head's table of softmax_exp(-i) at i (-1: not
// computed yet), filled as diffs come.
inline void softmax_row(int32_t* s, size_t n, const TfliteParams& p, int32_t* exps) {
  const int32_t sum = softmax_exps(s, n, softmax_max(s, n), p, exps);
  int exponent = 0;
  const int32_t scale = softmax_reciprocal(sum, &exponent);
  softmax_outputs(s, n, scale, exponent);
}

}  // namespace tinyattn::tflite_ops
