// binary16 conversions: the portable bit-level version, plus the hardware one
// where the build has it (chosen once, at compile time or on first use).
#include "tinyattn/half.h"

#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#define TINYATTN_HALF_F16C_STATIC 1
#elif (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define TINYATTN_HALF_F16C_DYNAMIC 1
#elif defined(__ARM_FP16_FORMAT_IEEE)
#define TINYATTN_HALF_ARM 1
#endif

namespace tinyattn {

namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

float half_to_float_soft(half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0x1f) {  // inf, or NaN made quiet (as F16C and Arm do)
    return bits_float(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));
  }
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);
  // Subnormal half mant * 2^-24: normalise so the leading 1 reaches bit 10.
  uint32_t e = 113;  // biased float exponent of 2^-14
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return bits_float(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

half float_to_half_soft(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf, or NaN: keep the payload's top bits, set the quiet bit
    if (ax == 0x7f800000u) return half::from_bits(sign | 0x7c00u);
    return half::from_bits(static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)));
  }
  if (ax >= 0x477ff000u) return half::from_bits(sign | 0x7c00u);  // >= 65520: rounds to inf
  if (ax >= 0x38800000u) {  // >= 2^-14: a normal half
    // Round to nearest even on the 13 dropped bits; a carry moves into the
    // exponent, which is what rounding up to the next binade needs.
    const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
    return half::from_bits(static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13)));
  }
  // Subnormal half (or zero): count units of 2^-24.
  const uint32_t e = ax >> 23;
  if (e < 101) return half::from_bits(sign);  // < 2^-26: far below half of 2^-24
  const uint32_t m = (ax & 0x7fffffu) | 0x800000u;  // value = m * 2^(e - 150)
  const uint32_t shift = 126 - e;                   // m >> shift units of 2^-24; 14..25
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
  return half::from_bits(static_cast<uint16_t>(sign | q));
}

#if defined(TINYATTN_HALF_F16C_STATIC) || defined(TINYATTN_HALF_F16C_DYNAMIC)

namespace {
// F16C: VCVTPH2PS / VCVTPS2PH, eight at a time for arrays (every F16C CPU has AVX).
__attribute__((target("f16c"))) float f16c_to_float(half h) { return _cvtsh_ss(h.bits); }
__attribute__((target("f16c"))) half f16c_to_half(float f) {
  return half::from_bits(static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)));
}
__attribute__((target("f16c,avx"))) void f16c_to_float_n(const half* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = f16c_to_float(in[i]);
}
__attribute__((target("f16c,avx"))) void f16c_to_half_n(const float* in, half* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = f16c_to_half(in[i]);
}
#if defined(TINYATTN_HALF_F16C_STATIC)
constexpr bool has_f16c() { return true; }
#else
// CPUID.1:ECX F16C (29), AVX (28), OSXSAVE (27), and the OS saving YMM state
// (XCR0 bits 1-2). (__builtin_cpu_supports("f16c") is GCC-only.)
bool detect_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const unsigned need = (1u << 27) | (1u << 28) | (1u << 29);
  if ((c & need) != need) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 6u) == 6u;
}
bool has_f16c() {
  static const bool yes = detect_f16c();
  return yes;
}
#endif
}  // namespace

float to_float(half h) { return has_f16c() ? f16c_to_float(h) : half_to_float_soft(h); }
half to_half(float f) { return has_f16c() ? f16c_to_half(f) : float_to_half_soft(f); }
const char* half_conversion_name() { return has_f16c() ? "f16c" : "software"; }

void to_float(const half* in, float* out, size_t n) {
  if (has_f16c()) return f16c_to_float_n(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = half_to_float_soft(in[i]);
}
void to_half(const float* in, half* out, size_t n) {
  if (has_f16c()) return f16c_to_half_n(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = float_to_half_soft(in[i]);
}

#else

#if defined(TINYATTN_HALF_ARM)
float to_float(half h) {
  __fp16 x;
  std::memcpy(&x, &h.bits, sizeof x);
  return static_cast<float>(x);
}
half to_half(float f) {
  const __fp16 x = static_cast<__fp16>(f);
  half h;
  std::memcpy(&h.bits, &x, sizeof x);
  return h;
}
const char* half_conversion_name() { return "arm-fp16"; }
#else
float to_float(half h) { return half_to_float_soft(h); }
half to_half(float f) { return float_to_half_soft(f); }
const char* half_conversion_name() { return "software"; }
#endif

// Plain loops: with __fp16 the compiler vectorises them (NEON VCVT) where it can.
void to_float(const half* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
}
void to_half(const float* in, half* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = to_half(in[i]);
}

#endif

}  // namespace tinyattn
