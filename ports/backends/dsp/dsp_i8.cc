// The Armv7E-M DSP int8 kernels: the integers of the scalar table
// (scalar_i8.cc) with the dual 16-bit multiply-accumulate SMLAD on word loads.
//
//  - scores: q - zq is widened once per row into halfword pairs (q0,q2),
//    (q1,q3) per word, in the order SXTB16 and SXTB16 ROR #8 widen a word
//    of k; four keys per pass share those loads (dot_passes: 23 instructions per
//    4 columns x 4 keys). The zero point of k comes in algebraically:
//    sum (q - zq)(k - zk) = sum (q - zq) k - zk sum (q - zq), added at the
//    end (modular int32; the final value fits).
//  - weighted_sum: pairs of keys, (p_j, p_j+1) against (v_jc, v_j+1,c): the
//    words of two rows are interleaved by PKHBT/PKHTB and widened by SXTB16,
//    four columns per pass in registers (pairs4). The zero point is the
//    initial value -zv sum p. p_j = kProbOne = 2^15 does not fit a signed
//    halfword and enters as -2^15: such a key (one holding the whole row)
//    gets 2^16 v_jc added back.
//  - probabilities: the scalar port's per-row 32-bit reciprocal (int8_fixed.h)
//    with the exact test as the sign of one 64-bit difference per key
//    (q30_softmax-inl.h, with the exp below: the int16 table's too).
//  - exp_row: apply() as one 32x32+64-bit SMLAL per key, then the
//    fixed-point exp in 32-bit words with rounding high multiplies (SMMULR,
//    SMMLAR), as mve_i8.cc does four lanes at a time; two passes, so each
//    keeps its constants in registers.
//  - requantize: one SMLAL per value for the shifts above 32 that plan_int8
//    gives, the rounding and the zero point in its initial value, SSAT to clamp.
//  - i8_tflite-inl.h, the TFLite mode's requantization, exp table and
//    softmax outputs: gemmlowp's two roundings in one SMLAL per value.
// Unaligned word loads go through memcpy (one LDR on Armv7E-M).
#include "backends/int8_fixed.h"
#include "backends/scalar/scalar.h"
#include "port.h"

#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>

#include <climits>
#include <cstring>

#include "q30_softmax-inl.h"

namespace tinyattn {
namespace dsp {
namespace {

const char* simd_target() { return "DSP"; }

inline uint32_t u32(int32_t x) { return static_cast<uint32_t>(x); }

inline uint32_t load4(const int8_t* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// Bytes 1 and 3 sign-extended to halfwords. GCC 12 has no __ror and does not
// fold a rotation into SXTB16, so the rotated form is written out.
inline uint32_t sxtb16_ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
inline uint32_t sxtb16(uint32_t x) { return static_cast<uint32_t>(__sxtb16(static_cast<int32_t>(x))); }

// Low halfword of a, low halfword of b above it (PKHBT a, b, LSL #16).
inline uint32_t pack_low(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// High halfword of a below the high halfword of b (PKHTB b, a, ASR #16).
inline uint32_t pack_high(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
  return r;
}

inline int32_t smlad(uint32_t a, uint32_t b, int32_t acc) {
  return __smlad(static_cast<int32_t>(a), static_cast<int32_t>(b), acc);
}

// ---------------------------------------------------------------- scores

// Columns of q widened per pass (the stack buffer holds kQChunk / 2 words).
constexpr size_t kQChunk = 64;

// Passes of four keys, s advancing by four per pass until end: s[0..3] =
// (acc ? s[0..3] : 0) + the dot products of the `words` widened words of q
// (pairs (q0,q2), (q1,q3) at qw) with keys k0, k0 + l, k0 + k2off,
// k0 + k2off + l; the next pass's k0 is this one's plus 4 l. Per
// word of four columns and four keys one LDRD of q, four LDR and 16 DSP
// instructions. One asm block for all passes: GCC spills around a loop of
// them (out of line: the last partial pass calls it too).
__attribute__((noinline)) void dot_passes(const uint32_t* qw, size_t words, const int8_t* k0, size_t l, size_t k2off,
                                          int32_t* s, const int32_t* end, uint32_t acc) {
  int32_t d0, d1, d2, d3;
  uint32_t a, b, t, u, n;
  const uint32_t* qp;
  const int8_t* k2;
  __asm__ volatile(
      "2:\n\t"
      "ldr %[n], %[words]\n\t"
      "ldr %[qp], %[qw]\n\t"
      "ldr %[k2], %[k2off]\n\t"
      "add %[k2], %[k2], %[k0]\n\t"
      "ldr %[t], %[acc]\n\t"
      "cbz %[t], 5f\n\t"
      "ldrd %[d0], %[d1], [%[s]]\n\t"
      "ldrd %[d2], %[d3], [%[s], #8]\n\t"
      "b 6f\n"
      "5:\n\t"
      "movs %[d0], #0\n\t"
      "movs %[d1], #0\n\t"
      "movs %[d2], #0\n\t"
      "movs %[d3], #0\n"
      "6:\n\t"
      "cbz %[n], 3f\n"
      "1:\n\t"
      "ldrd %[a], %[b], [%[qp]], #8\n\t"
      "ldr %[t], [%[k0], %[l]]\n\t"
      "sxtb16 %[u], %[t]\n\t"
      "smlad %[d1], %[u], %[a], %[d1]\n\t"
      "sxtb16 %[t], %[t], ror #8\n\t"
      "smlad %[d1], %[t], %[b], %[d1]\n\t"
      "ldr %[t], [%[k0]], #4\n\t"
      "sxtb16 %[u], %[t]\n\t"
      "smlad %[d0], %[u], %[a], %[d0]\n\t"
      "sxtb16 %[t], %[t], ror #8\n\t"
      "smlad %[d0], %[t], %[b], %[d0]\n\t"
      "ldr %[t], [%[k2], %[l]]\n\t"
      "sxtb16 %[u], %[t]\n\t"
      "smlad %[d3], %[u], %[a], %[d3]\n\t"
      "sxtb16 %[t], %[t], ror #8\n\t"
      "smlad %[d3], %[t], %[b], %[d3]\n\t"
      "ldr %[t], [%[k2]], #4\n\t"
      "sxtb16 %[u], %[t]\n\t"
      "smlad %[d2], %[u], %[a], %[d2]\n\t"
      "sxtb16 %[t], %[t], ror #8\n\t"
      "smlad %[d2], %[t], %[b], %[d2]\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n"
      "3:\n\t"
      "strd %[d0], %[d1], [%[s]], #8\n\t"
      "strd %[d2], %[d3], [%[s]], #8\n\t"
      "ldr %[t], %[words]\n\t"
      "sub %[k0], %[k0], %[t], lsl #2\n\t"
      "add %[k0], %[k0], %[l], lsl #2\n\t"
      "ldr %[t], %[end]\n\t"
      "cmp %[s], %[t]\n\t"
      "bne 2b"
      : [d0] "=&l"(d0), [d1] "=&l"(d1), [d2] "=&l"(d2), [d3] "=&l"(d3), [qp] "=&r"(qp), [k0] "+r"(k0), [k2] "=&r"(k2),
        [n] "=&l"(n), [a] "=&r"(a), [b] "=&r"(b), [t] "=&l"(t), [u] "=&r"(u), [s] "+r"(s)
      : [l] "r"(l), [words] "m"(words), [qw] "m"(qw), [k2off] "m"(k2off), [end] "m"(end), [acc] "m"(acc)
      : "cc", "memory");
}

int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  const size_t whole = dk & ~size_t{3};
  const size_t keys4 = count & ~size_t{3};  // keys in passes of four; the other 0..3 in one last pass
  const size_t left = count - keys4;
  const uint32_t zz = (u32(q_zero) & 0xFFFFu) * 0x10001u;
  int32_t sum_q = 0;         // sum (q - zq), |.| < 2^23: SMLAD of the pairs against (1, 1)
  uint32_t qw[kQChunk / 2];  // (q0,q2), (q1,q3) per word of q, minus zq: in [-255, 255]
  // Whole words, kQChunk columns per pass, the first pass from 0; the zero
  // point of k enters at the end.
  for (size_t c0 = 0; c0 == 0 || c0 < whole; c0 += kQChunk) {
    const size_t words = (whole - c0 < kQChunk ? whole - c0 : kQChunk) / 4;
    for (size_t w = 0; w < words; ++w) {
      const uint32_t x = load4(q + c0 + 4 * w);
      const uint32_t lo = u32(__ssub16(static_cast<int32_t>(sxtb16(x)), static_cast<int32_t>(zz)));
      const uint32_t hi = u32(__ssub16(static_cast<int32_t>(sxtb16_ror8(x)), static_cast<int32_t>(zz)));
      qw[2 * w] = lo;
      qw[2 * w + 1] = hi;
      sum_q = smlad(hi, 0x10001u, smlad(lo, 0x10001u, sum_q));
    }
    if (keys4) dot_passes(qw, words, k + c0, ldk, 2 * ldk, s, s + keys4, c0);
    if (left) {
      // The last 1..3 keys repeat some of them (keys 0,0,0,0 / 0,1,0,1 /
      // 0,1,1,2) and take the first `left` (key 2 from d3).
      int32_t d[4];
      dot_passes(qw, words, k + keys4 * ldk + c0, left == 1 ? 0 : ldk, left == 3 ? ldk : 0, d, d + 4, 0);
      d[2] = d[3];
      for (size_t i = 0; i < left; ++i) s[keys4 + i] = (c0 ? s[keys4 + i] : 0) + d[i];
    }
  }
  // The last 0..3 columns, the zero point of k, the largest score.
  for (size_t c = whole; c < dk; ++c) {
    const int32_t qc = q[c] - q_zero;
    sum_q += qc;
    for (size_t j = 0; j < count; ++j) s[j] += qc * k[j * ldk + c];
  }
  const int32_t start = static_cast<int32_t>(0u - u32(k_zero) * u32(sum_q));
  int32_t max = INT32_MIN;
  for (size_t j = 0; j < count; ++j) {
    const int32_t d = static_cast<int32_t>(u32(s[j]) + u32(start));
    s[j] = d;
    max = d > max ? d : max;
  }
  return max;
}

// ---------------------------------------------------------------- exp_row

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  // u = apply(logit, s) - max_logit = (x + h - max_logit 2^shift - [s < 0]) >> shift
  // with x = s m and h = 2^(shift-1) (mve_i8.cc's pass 1), all of it in one
  // SMLAL when shift < 32 and |max_logit| <= 2^(61 - shift). Otherwise the
  // scalar port's (not from plan_int8 at ordinary scales).
  const int32_t m = logit.multiplier, shift = logit.shift;
  const int64_t limit = int64_t{1} << (61 - (shift < 32 ? shift : 31));
  if (shift >= 32 || max_logit > limit || max_logit < -limit) return scalar::i8::exp_row(s, n, logit, max_logit, e);
  const int64_t start = (int64_t{1} << (shift - 1)) - static_cast<int64_t>(static_cast<uint64_t>(max_logit) << shift);
  // Two passes, each with its constants in registers. First u, saturated to
  // INT32_MIN (2^u rounds to 0) exactly when the high word of the sum is
  // below -2^(shift-1), and for a dropped key.
  const int32_t floor_hi = -(int32_t{1} << (shift - 1));
  const uint32_t csh = 32 - static_cast<uint32_t>(shift);
  for (size_t j = 0; j < n; ++j) {
    const int32_t sj = s[j];
    // cppcheck-suppress shiftTooManyBitsSigned ; GCC and clang define >> of a negative int as arithmetic (ASR)
    const uint64_t x = static_cast<uint64_t>(start + int64_t{sj} * m + (sj >> 31));
    const int32_t hi = static_cast<int32_t>(x >> 32);
    const uint32_t lo = static_cast<uint32_t>(x);
    e[j] = hi < floor_hi || sj == INT32_MIN ? INT32_MIN : static_cast<int32_t>((lo >> shift) | (u32(hi) << csh));
  }
  int32_t one = kOneQ30;
  __asm__("" : "+r"(one));  // kept in a register across the loop
  uint32_t sum_lo = 0, sum_hi = 0;
  for (size_t j = 0; j < n; ++j) {
    const int32_t ej = exp2_q30_word(e[j], one);
    e[j] = ej;
    __asm__("adds %0, %0, %2\n\tadc %1, %1, #0" : "+r"(sum_lo), "+r"(sum_hi) : "r"(ej) : "cc");
  }
  return static_cast<int64_t>((uint64_t{sum_hi} << 32) | sum_lo);
}

// ---------------------------------------------------------------- weighted_sum

// Keys per pass: the stack buffer holds kPChunk / 2 pairs of weights.
constexpr size_t kPChunk = 64;

// acc[c..c+3] += four columns c of `pairs` (>= 1) pairs of rows from row
// (rows ldv apart) against the packed weights at pw, for c = 0, 4, ... up to
// end: per pair one weight word, two LDR, PKHBT/PKHTB, four SXTB16 and four
// SMLAD. Out of line: weighted_sum calls it twice.
__attribute__((noinline)) void pairs4(const uint32_t* pw, const int8_t* row, size_t ldv, size_t pairs, int32_t* acc,
                                      const int32_t* end) {
  int32_t a0, a1, a2, a3;
  uint32_t w, x, y, l, n;
  const uint32_t* pp;
  const int8_t* r;
  __asm__ volatile(
      "2:\n\t"
      "ldrd %[a0], %[a1], [%[acc]]\n\t"
      "ldrd %[a2], %[a3], [%[acc], #8]\n\t"
      "ldr %[n], %[pairs]\n\t"
      "ldr %[pp], %[pw]\n\t"
      "mov %[r], %[row]\n"
      "1:\n\t"
      "ldr %[w], [%[pp]], #4\n\t"
      "ldr %[x], [%[r]]\n\t"
      "ldr %[y], [%[r], %[ldv]]\n\t"
      "add %[r], %[r], %[ldv], lsl #1\n\t"
      "pkhbt %[l], %[x], %[y], lsl #16\n\t"
      "pkhtb %[y], %[y], %[x], asr #16\n\t"
      "sxtb16 %[x], %[l]\n\t"
      "smlad %[a0], %[x], %[w], %[a0]\n\t"
      "sxtb16 %[x], %[l], ror #8\n\t"
      "smlad %[a1], %[x], %[w], %[a1]\n\t"
      "sxtb16 %[x], %[y]\n\t"
      "smlad %[a2], %[x], %[w], %[a2]\n\t"
      "sxtb16 %[x], %[y], ror #8\n\t"
      "smlad %[a3], %[x], %[w], %[a3]\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      "strd %[a0], %[a1], [%[acc]], #8\n\t"
      "strd %[a2], %[a3], [%[acc]], #8\n\t"
      "adds %[row], %[row], #4\n\t"
      "ldr %[w], %[end]\n\t"
      "cmp %[acc], %[w]\n\t"
      "bne 2b"
      : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [pp] "=&r"(pp), [r] "=&r"(r), [n] "=&r"(n),
        [w] "=&r"(w), [x] "=&r"(x), [y] "=&r"(y), [l] "=&r"(l), [row] "+r"(row), [acc] "+r"(acc)
      : [ldv] "r"(ldv), [pairs] "m"(pairs), [pw] "m"(pw), [end] "m"(end)
      : "cc", "memory");
}

void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  // sum_j p_j (v_jc - zv) = sum_j p_j v_jc - zv sum_j p_j (modular; the final sums fit int32).
  const size_t blocked = dv & ~size_t{3};  // columns done four at a time
  uint32_t pw[kPChunk / 2 + 1];  // + the odd last key's pair (written for a full chunk too)
  for (size_t j0 = 0; j0 < count; j0 += kPChunk) {
    const size_t len = count - j0 < kPChunk ? count - j0 : kPChunk;
    const size_t pairs = len / 2;
    const int32_t* pj = p + j0;
    uint32_t sum_p = 0, bits = 0;  // bit 15 of bits: some p_j == kProbOne (the others are below)
    for (size_t i = 0; i < len; ++i) {
      const uint32_t a = u32(pj[i]);
      sum_p += a;
      bits |= a;
    }
    for (size_t i = 0; i < pairs; ++i) pw[i] = pack_low(u32(pj[2 * i]), u32(pj[2 * i + 1]));
    // An odd last key pairs with the key before it (or itself, alone) at weight 0.
    pw[pairs] = u32(pj[len - 1]) << 16;
    const size_t back = len > 1 ? ldv : 0;
    const int32_t corr = static_cast<int32_t>(0u - u32(v_zero) * sum_p);
    const int8_t* vj = v + j0 * ldv;
    for (size_t c = 0; c < dv; ++c) acc[c] = static_cast<int32_t>(u32(corr) + (j0 ? u32(acc[c]) : 0u));
    if (blocked) {
      if (pairs) pairs4(pw, vj, ldv, pairs, acc, acc + blocked);
      if (len % 2) pairs4(pw + pairs, vj + (len - 1) * ldv - back, back, 1, acc, acc + blocked);
    }
    // The last 0..3 columns, one at a time; and if some p_j == kProbOne, which
    // entered the columns before as -2^15, 2^16 v_jc added back to those
    // (modular).
    for (size_t c = (bits & kProbOne) ? 0 : blocked; c < dv; ++c) {
      uint32_t a = u32(acc[c]);
      for (size_t i = 0; i < len; ++i) {
        uint32_t w = u32(pj[i]);
        if (c < blocked) w = w == kProbOne ? 0x10000u : 0u;
        a += w * u32(vj[i * ldv + c]);
      }
      acc[c] = static_cast<int32_t>(a);
    }
  }
}

// ---------------------------------------------------------------- requantize

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  const int32_t m = output.multiplier;
  if (output.shift <= 32 || output.shift > 54 || m <= 0) {  // not from plan_int8 at ordinary scale ratios
    scalar::i8::requantize(acc, n, output, y_zero, y);
    return;
  }
  // x = acc m, shift = 32 + k, 1 <= k <= 22: rounding_rshift(x, shift) + zy
  // = (x + (2^(k-1) + zy 2^k) 2^32 - [x < 0]) >> shift, the sum formed by one
  // SMLAL on the high word 2^(k-1) + zy 2^k - [a < 0] (|.| < 2^30) and the
  // low word -[a < 0]; SSAT clamps to int8.
  const int k = output.shift - 32;
  const int32_t base = (int32_t{1} << (k - 1)) + static_cast<int32_t>(u32(y_zero) << k);
  for (size_t c = 0; c < n; ++c) {
    const int32_t a = acc[c];
    // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
    int32_t lo = a >> 31, hi = base + lo;
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(m));
    y[c] = static_cast<int8_t>(__ssat(hi >> k, 8));
  }
}

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

#include "i8_tflite-inl.h"

namespace tinyattn {
namespace dsp {
namespace {

// The scalar table with the kernels above.
constexpr KernelsI8 make_table() {
  KernelsI8 t = scalar::table_i8("dsp");
  t.simd_target = simd_target;
  t.scores = scores;
  t.exp_row = exp_row;
  t.probabilities = probabilities;
  t.weighted_sum = weighted_sum;
  t.requantize = requantize;
  return t;
}
constexpr KernelsI8 kKernelsI8 = make_table();

// The TFLite mode's kernels (i8_tflite-inl.h), for tflite_kernels_i8.
constexpr KernelsI8Tflite kKernelsI8Tflite{scores, weighted_sum, tflite_requantize, tflite_exps, tflite_outputs};

}  // namespace
}  // namespace dsp

template <>
const KernelsI8* port_kernels_i8<Port::kDsp>() {
  return &dsp::kKernelsI8;
}

template <>
const KernelsI8Tflite* port_tflite_kernels_i8<Port::kDsp>() {
  return &dsp::kKernelsI8Tflite;
}

}  // namespace tinyattn

#endif  // __ARM_FEATURE_DSP
