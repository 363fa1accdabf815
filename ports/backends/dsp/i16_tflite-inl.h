// The DSP port's kernels of Int16Mode::kTflite (KernelsI16Tflite), included
// by dsp_i16.cc: the integers of lib/src/tflite16_ops.h in 32-bit words.
//
// requantize_i16 keeps only the low word of floor((x m16 + 2^(t-1)) / 2^t)
// (TFLite's int64 -> int32 conversion), so the 64-bit sum (one UMLAL and
// one MLA onto the rounding constant; |x m16| < 2^62, exact) needs no full
// 64-bit shift: bits t..t+31 of it. The softmax's int32 MBQM is
// i8_tflite-inl.h's one SMLAL onto a constant start, then TFLite's LUTLookup.
namespace tinyattn {
namespace dsp {
namespace {

// ---------------------------------------------------------------- requantize

// The rounding constant 2^(t-1) and the shift t = 15 - shift in [8, 46].
struct Requant16 {
  uint32_t m16;
  uint32_t round_lo;
  int32_t round_hi;
  uint32_t t;
};

inline Requant16 requant16(TfliteMultiplier m) {
  const uint32_t m16 = m.multiplier < 0x7FFF0000 ? (u32(m.multiplier) + (1u << 15)) >> 16 : 0x7FFFu;
  const uint32_t t = static_cast<uint32_t>(15 - m.shift);
  const uint64_t round = uint64_t{1} << (t - 1);
  return {m16, static_cast<uint32_t>(round), static_cast<int32_t>(round >> 32), t};
}

// The low word of (hi:lo) >> t, arithmetic, saturated to int16.
template <bool kHigh>
inline int32_t requant16_low(uint32_t lo, int32_t hi, uint32_t t) {
  // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
  if constexpr (kHigh) return __ssat(hi >> (t - 32), 16);
  return __ssat(static_cast<int32_t>((lo >> t) | (u32(hi) << (32 - t))), 16);
}

template <bool kHigh>
int32_t requant16_scores(const int64_t* s, size_t n, const Requant16& r, int32_t* out) {
  int32_t max = -32768;
  for (size_t j = 0; j < n; ++j) {
    const uint64_t x = static_cast<uint64_t>(s[j]);
    uint32_t lo = r.round_lo;
    int32_t hi = r.round_hi + static_cast<int32_t>(static_cast<uint32_t>(x >> 32) * r.m16);
    __asm__("umlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(static_cast<uint32_t>(x)), "r"(r.m16));
    const int32_t y = requant16_low<kHigh>(lo, hi, r.t);
    out[j] = y;
    max = y > max ? y : max;
  }
  return max;
}

int32_t tflite16_requantize(const int64_t* s, size_t n, TfliteMultiplier m, int32_t* out) {
  const Requant16 r = requant16(m);
  return r.t >= 32 ? requant16_scores<true>(s, n, r, out) : requant16_scores<false>(s, n, r, out);
}

template <bool kHigh>
void requant16_y(const int32_t* acc, size_t n, const Requant16& r, int16_t* y) {
  const int32_t m16 = static_cast<int32_t>(r.m16);
  for (size_t c = 0; c < n; ++c) {
    uint32_t lo = r.round_lo;
    int32_t hi = r.round_hi;
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(acc[c]), "r"(m16));
    y[c] = static_cast<int16_t>(requant16_low<kHigh>(lo, hi, r.t));
  }
}

void tflite16_requantize_y(const int32_t* acc, size_t n, TfliteMultiplier m, int16_t* y) {
  const Requant16 r = requant16(m);
  if (r.t >= 32)
    requant16_y<true>(acc, n, r, y);
  else
    requant16_y<false>(acc, n, r, y);
}

// ---------------------------------------------------------------- exps

// LUTLookup of a value in [-32768, 32767].
inline int32_t lut16_word(int32_t value, const int16_t* lut) {
  const uint32_t u = u32(value + 32768);
  const int16_t* p = lut + (u >> 7);
  const int32_t base = p[0];
  // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
  return base + (((p[1] - base) * static_cast<int32_t>(u & 0x7Fu) + 64) >> 7);
}

// softmax16_exp's clamp of the scaled difference and the lookup.
inline int32_t exp16_word(int32_t scaled, const int16_t* lut) {
  const int32_t sym = scaled < -65535 || scaled > INT32_MAX - 32767 ? -32768 : (scaled > 0 ? 32767 : scaled + 32767);
  return lut16_word(sym, lut);
}

int32_t tflite16_exps(int32_t* x, size_t n, int32_t max, TfliteMultiplier beta, const int16_t* lut) {
  const int32_t m = beta.multiplier;
  int32_t sum = 0;
  if (beta.shift >= 0) {  // SRDHM(diff 2^shift, m), the left shift wrapping as TFLite's
    const uint32_t left = static_cast<uint32_t>(beta.shift);
    for (size_t j = 0; j < n; ++j) {
      uint32_t lo = 1u << 30;
      int32_t hi = 0;
      __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(static_cast<int32_t>(u32(x[j] - max) << left)), "r"(m));
      x[j] = exp16_word(static_cast<int32_t>((u32(hi) << 1) | (lo >> 31)), lut);
      sum += x[j];
    }
    return sum;
  }
  // RDBPOT(SRDHM(a, m), e), e = -shift in [1, 31]: floor((a m + start) /
  // 2^(31 + e)), start = 2^30 + (2^(e-1) - [a < 0]) 2^31 (i8_tflite-inl.h),
  // the high word >> (e - 1).
  const uint32_t e = static_cast<uint32_t>(-beta.shift);
  const uint64_t start_pos = (uint64_t{1} << 30) + (uint64_t{1} << (e + 30));
  const uint64_t start_neg = start_pos - (uint64_t{1} << 31);
  const uint32_t lo_pos = static_cast<uint32_t>(start_pos), lo_neg = static_cast<uint32_t>(start_neg);
  const int32_t hi_pos = static_cast<int32_t>(start_pos >> 32), hi_neg = static_cast<int32_t>(start_neg >> 32);
  for (size_t j = 0; j < n; ++j) {
    const int32_t a = x[j] - max;  // in [-65535, 0]
    uint32_t lo = a < 0 ? lo_neg : lo_pos;
    int32_t hi = a < 0 ? hi_neg : hi_pos;
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(m));
    // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
    x[j] = exp16_word(hi >> (e - 1), lut);
    sum += x[j];
  }
  return sum;
}

// ---------------------------------------------------------------- outputs

// softmax16_output: e r + 2^(rs-1) < 2^31, >> rs, USAT to [0, 32767].
int32_t tflite16_outputs(int32_t* x, size_t n, int32_t reciprocal, int right_shift) {
  const int32_t round = int32_t{1} << (right_shift - 1);
  int32_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    x[j] = static_cast<int32_t>(__usat((x[j] * reciprocal + round) >> right_shift, 15));
    sum += x[j];
  }
  return sum;
}

}  // namespace
}  // namespace dsp
}  // namespace tinyattn
