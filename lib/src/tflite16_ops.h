// The integer operations of TFLite's int16 ("16x8") reference kernels that
// Int16Mode::kTflite composes (docs/quant.md, "TFLite 16x8 mode"): the
// requantization of an int64 BatchMatMul sum and the int16 Softmax with its
// two lookup tables (tflite_i16_luts.h). Written from their definitions and
// mirrored independently in tests/quant/gen_tflite16_vectors.py; every result
// is defined for every input these functions are given (no signed overflow,
// no negative value shifted, no 64-bit division), so all targets compute the
// same integers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tflite_i16_luts.h"
#include "tflite_ops.h"
#include "tinyattn/quant.h"

namespace tinyattn::tflite_ops {

// tflite::MultiplyByQuantizedMultiplier(int64_t x, ...), the int16 ops'
// requantization: the multiplier rounded to 16 bits (0x7FFF at the top),
// then floor((x * m16 + 2^(14 - shift)) / 2^(15 - shift)), the int64 result
// converted to int32 as TFLite's assignment does (wrapping modulo 2^32).
// |x| < 2^47 and shift in [-31, 7] (TFLite's asserted domain) keep every
// step in int64.
inline int32_t multiply_by_quantized_multiplier_64(int64_t x, TfliteMultiplier m) {
  const int64_t reduced = m.multiplier < 0x7FFF0000 ? (static_cast<int64_t>(m.multiplier) + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - m.shift;  // [8, 46]
  const int64_t v = x * reduced + (int64_t{1} << (total_shift - 1));  // |v| < 2^62 + 2^45
  // floor(v / 2^total_shift), the arithmetic shift, on the magnitude
  const uint64_t uv = static_cast<uint64_t>(v);
  const uint64_t q = v >= 0 ? uv >> total_shift : 0u - (((0u - uv) + (uint64_t{1} << total_shift) - 1u) >> total_shift);
  return static_cast<int32_t>(static_cast<uint32_t>(q));
}

// The requantized value clamped to int16 (zero point 0, no activation).
inline int32_t requantize_i16(int64_t x, TfliteMultiplier m) {
  const int32_t y = multiply_by_quantized_multiplier_64(x, m);
  return y < -32768 ? -32768 : (y > 32767 ? 32767 : y);
}

// LUTLookup(int16_t, const int16_t*): the top 9 bits of value + 32768 pick
// an entry, the low 7 interpolate towards the next, rounded down after
// adding 64. Both tables are monotonic, so the result lies between two
// entries (no int16 wrap-around).
inline int32_t lut_lookup(int32_t value, const int16_t* lut) {
  const uint32_t u = static_cast<uint32_t>(value + 32768);  // value in [-32768, 32767]
  const int32_t base = lut[u >> 7];
  const int32_t slope = lut[(u >> 7) + 1] - base;
  const int32_t offset = static_cast<int32_t>(u & 0x7fu);
  // floor((slope * offset + 64) / 128) with |slope * offset| < 2^22: shifted as a non-negative value
  const int32_t delta = ((slope * offset + 64 + (1 << 22)) >> 7) - (1 << 15);
  return base + delta;
}

// The softmax's exp of diff = score - row maximum (in [-65535, 0]): the
// difference scaled by the softmax's multiplier (MBQM, int32: double
// rounding, x * 2^shift wrapping as in tflite_ops.h) to steps of 10/65535,
// moved to [-32768, 32767] and looked up in exp's table. Q0.15, in [2, 32767].
inline int32_t softmax16_exp(int32_t diff, TfliteMultiplier beta) {
  const int32_t scaled = multiply_by_quantized_multiplier(diff, beta);
  // clamp(scaled + 32767, -32768, 32767), the sum in int32: above
  // INT32_MAX - 32767 (a wrapped left shift) it wraps to below -32768.
  const int32_t sym = scaled < -65535 || scaled > INT32_MAX - 32767 ? -32768 : (scaled > 0 ? 32767 : scaled + 32767);
  return lut_lookup(sym, kTflite16ExpLut);
}

// 1 / sum of a row's exps (sum >= 1, the row maximum's exp alone is 32762):
// sum = 2^(31 - h) (1 + x), x from 1 / (1 + x)'s table (Q0.15) at
// round(sum * 2^(h - 15)) - 3 * 2^15 (clamped to int16), h = clz(sum);
// *right_shift = 31 - h, in [14, 30].
inline int32_t softmax16_reciprocal(int32_t sum, int* right_shift) {
  const int headroom_plus_one = count_leading_zeros(static_cast<uint32_t>(sum));  // [1, 17]
  const int64_t shifted_sum = ((static_cast<int64_t>(sum) << (headroom_plus_one - 1)) + (1 << 13)) >> 14;
  const int64_t sym = shifted_sum - ((1 << 15) + (1 << 16));
  *right_shift = 31 - headroom_plus_one;
  return lut_lookup(static_cast<int32_t>(sym < -32768 ? -32768 : (sym > 32767 ? 32767 : sym)),
                    kTflite16OneOverOnePlusXLut);
}

// A key's output: round(e * reciprocal / 2^right_shift), ties up, clamped
// to [0, 32767]. Both factors are in [0, 32767], so the sum fits int32.
inline int32_t softmax16_output(int32_t e, int32_t reciprocal, int right_shift) {
  const int32_t out = (e * reciprocal + (1 << (right_shift - 1))) >> right_shift;
  return out > 32767 ? 32767 : out;
}

}  // namespace tinyattn::tflite_ops
