// The DSP port's TFLite-mode kernels (KernelsI8Tflite), included by
// dsp_i8.cc: the integers of lib/src/tflite_ops.h in 32-bit words.
//
// gemmlowp's SRDHM(a, b) = floor((a b + 2^30) / 2^31) is one SMLAL onto
// 2^30 and bits 31..62 of the sum (the one saturating product, INT32_MIN^2,
// cannot occur: every multiplier here is positive). RoundingDivideByPOT(x, e)
// = floor((x + 2^(e-1) - [x < 0]) / 2^e), so RDBPOT(SRDHM(a, m), e) is
// floor((a m + 2^30 + (2^(e-1) - [x < 0]) 2^31) / 2^(31+e)) (floor of a floor
// quotient): one SMLAL onto a constant 64-bit start and the high word shifted
// by e - 1. For m > 0, x < 0 is a < 0 except for a = -1, m = 2^30, where x
// is 0 and the -1 moves no tie (2^(e-1) - 1 < 2^e).
namespace tinyattn {
namespace dsp {
namespace {

// SRDHM for a b != INT32_MIN^2.
inline int32_t srdhm_word(int32_t a, int32_t b) {
  uint32_t lo = 1u << 30;
  int32_t hi = 0;
  __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(b));
  return static_cast<int32_t>((u32(hi) << 1) | (lo >> 31));
}

// ---------------------------------------------------------------- requantize

// clamp(MBQM(x, m) + zero, -128, 127) for any shift in [-31, 30], in 64 bits.
inline int32_t tflite_requantize_word(int32_t x, TfliteMultiplier m, int32_t zero) {
  const int left = m.shift > 0 ? m.shift : 0;
  const int right = m.shift > 0 ? 0 : -m.shift;
  int64_t v = srdhm_word(static_cast<int32_t>(u32(x) << left), m.multiplier);
  // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
  if (right) v = (v + (int64_t{1} << (right - 1)) - (v < 0 ? 1 : 0)) >> right;
  v += zero;
  return static_cast<int32_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
}

template <class Out>
void tflite_requantize_words(const int32_t* in, size_t n, TfliteMultiplier m, int32_t zero, Out* out) {
  const int e = -m.shift;
  if (e < 2 || e > 23) {  // not the ordinary scale ratios
    for (size_t j = 0; j < n; ++j) out[j] = static_cast<Out>(tflite_requantize_word(in[j], m, zero));
    return;
  }
  // e in [2, 23]: the start (2^(e-2) + zero 2^(e-1) - [a < 0]) : (2^30 +
  // [a < 0] 2^31) (the zero point enters as a multiple of 2^(31+e), at most
  // 2^29 in the high word, so the 64-bit sum stays below 2^63), the high
  // word >> (e - 1), SSAT.
  const int32_t m32 = m.multiplier;
  const int32_t start = (int32_t{1} << (e - 2)) + static_cast<int32_t>(u32(zero) << (e - 1));
  const uint32_t shift = static_cast<uint32_t>(e - 1);
  for (size_t j = 0; j < n; ++j) {
    const int32_t a = in[j];
    // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
    const int32_t neg = a >> 31;
    uint32_t lo = (1u << 30) | (u32(neg) << 31);
    int32_t hi = start + neg;
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(m32));
    int32_t q;
    __asm__("asr %0, %1, %2" : "=r"(q) : "r"(hi), "r"(shift));
    out[j] = static_cast<Out>(__ssat(q, 8));
  }
}

void tflite_requantize(const int32_t* in, size_t n, TfliteMultiplier m, int32_t zero, int32_t* out32, int8_t* out8) {
  if (out32)
    tflite_requantize_words(in, n, m, zero, out32);
  else
    tflite_requantize_words(in, n, m, zero, out8);
}

// ---------------------------------------------------------------- exps

// SRDHM(a, b) = floor((2 a b + 2^31) / 2^32) is SMMULR(2 a, b) where 2 a
// fits: every product of the polynomial and the barrel's below.

// tflite_ops.h's exp_quarter_interval: a in [-2^29, 0), so x = a + 2^28 and
// its powers are below 2^29 in magnitude; RDBPOT(x4, 2) of x4 >= 0 is
// (x4 + 2) >> 2 and RDBPOT(v, 1) is (v + 1 - [v < 0]) >> 1.
inline int32_t exp_quarter_word(int32_t a) {
  constexpr int32_t kExpMinusOneEighth = kTfliteExpMinusOneEighth;
  constexpr int32_t kTwoThirds = 2 * kTfliteOneThird;
  const int32_t x = a + (1 << 28);
  const int32_t x2 = smmulr(2 * x, x);
  const int32_t x3 = smmulr(2 * x, x2);
  const int32_t x4 = smmulr(2 * x2, x2);
  const int32_t v = smmlar(((x4 + 2) >> 2) + x3, kTwoThirds, x2);
  // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
  const int32_t poly = (v + 1 + (v >> 31)) >> 1;
  return smmlar(2 * (x + poly), kExpMinusOneEighth, kExpMinusOneEighth);
}

// tflite_ops.h's softmax_exp of -i (i in [0, 255]): the table's entry i.
// The barrel's constants exp(-2^(k-2)): k = 0, 1 by SMLAL (result is above
// 2^30, the constant too), the others doubled for SMMULR.
// Out of line: called once per head and table entry.
__attribute__((noinline)) int32_t tflite_exp_entry(int32_t i, const TfliteParams& p) {
  const int32_t diff = -i;
  if (diff < p.diff_min) return 0;
  const int32_t a = srdhm_word(static_cast<int32_t>(u32(diff) << p.beta.shift), p.beta.multiplier);  // Q5.26, <= 0
  if (a == 0) return INT32_MAX;
  constexpr int32_t kOneQuarter = int32_t{1} << 24;
  const int32_t low = (a & (kOneQuarter - 1)) - kOneQuarter;
  int32_t r = exp_quarter_word(low * 32);
  const uint32_t quarters = u32(low - a) >> 24;  // whole quarters, bits 0..6
  constexpr const int32_t(&c)[7] = kTfliteExpBarrel;
  if (quarters & 1u) r = srdhm_word(r, c[0]);
  if (quarters & 2u) r = srdhm_word(r, c[1]);
  if (quarters & 4u) r = smmulr(r, 2 * c[2]);
  if (quarters & 8u) r = smmulr(r, 2 * c[3]);
  if (quarters & 16u) r = smmulr(r, 2 * c[4]);
  if (quarters & 32u) r = smmulr(r, 2 * c[5]);
  if (quarters & 64u) r = smmulr(r, 2 * c[6]);
  return r;
}

int32_t tflite_exps(int32_t* s, size_t n, int32_t max, const TfliteParams& p, int32_t* exps) {
  uint32_t sum = 0;  // Q12.19
  for (size_t j = 0; j < n; ++j) {
    const int32_t i = max - s[j];
    int32_t e = exps[i];
    if (e < 0) {
      e = tflite_exp_entry(i, p);
      exps[i] = e;
    }
    s[j] = e;
    sum += (u32(e) + 2048u) >> 12;  // RDBPOT(e, 12), e >= 0
  }
  return static_cast<int32_t>(sum);
}

// ---------------------------------------------------------------- outputs

void tflite_outputs(int32_t* e, size_t n, int32_t scale, int exponent) {
  if (exponent >= 32) {  // SRDHM(scale, e) < 2^31 rounds to 0
    for (size_t j = 0; j < n; ++j) e[j] = 0;
    return;
  }
  // exponent in [23, 31], every term >= 0: the start 2^(exponent-2) : 2^30,
  // the high word >> (exponent - 1) <= 256, USAT to 255.
  const int32_t half = int32_t{1} << (exponent - 2);
  const uint32_t shift = static_cast<uint32_t>(exponent - 1);
  for (size_t j = 0; j < n; ++j) {
    uint32_t lo = 1u << 30;
    int32_t hi = half;
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(e[j]), "r"(scale));
    e[j] = static_cast<int32_t>(__usat(static_cast<int32_t>(u32(hi) >> shift), 8));
  }
}

}  // namespace
}  // namespace dsp
}  // namespace tinyattn
