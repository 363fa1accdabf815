// binary16 conversions: the software path against an exact double-based
// reference and against the build's converter (hardware where present), on
// every half and on a dense sweep of floats around every half.
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/half.h"

using tinyattn::half;

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The value of a half from its definition, in double (exact).
double half_value(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0x1f) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  return sign * std::ldexp(static_cast<double>(mant + 1024), exp - 25);
}

// float -> half value from the definition of round-to-nearest-even, in double:
// scale by the half ulp of the binade, round the (exact) quotient to even.
double rne_half_value(float f) {
  const double x = f;
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  if (ax == 0.0) return x;
  int e;
  std::frexp(ax, &e);  // ax in [2^(e-1), 2^e)
  const int ulp_exp = e - 1 < -14 ? -24 : e - 1 - 10;
  const double q = std::ldexp(ax, -ulp_exp);  // exact: a power-of-two scale
  double r = std::floor(q);
  const double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  double v = std::ldexp(r, ulp_exp);
  if (v > 65504.0) v = std::numeric_limits<double>::infinity();
  return x < 0 ? -v : v;
}

// Same value, with the sign of zero and NaN-ness compared too.
bool same_value(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

}  // namespace

TA_CASE("half: every half widens exactly (software and build converter)") {
  TA_LOG("converter in this build: %s", tinyattn::half_conversion_name());
  size_t bad_soft = 0, bad_build = 0;
  for (uint32_t u = 0; u < 65536; ++u) {
    const half h = half::from_bits(static_cast<uint16_t>(u));
    const double want = half_value(static_cast<uint16_t>(u));
    const float soft = tinyattn::half_to_float_soft(h);
    const float build = tinyattn::to_float(h);
    if (!same_value(soft, want)) ++bad_soft;
    if (!same_value(build, want)) ++bad_build;
    // Bit identity with the build's converter where it is not a NaN.
    if (!std::isnan(want) && bits_of(soft) != bits_of(build)) ++bad_build;
  }
  TA_CHECK_MSG(bad_soft == 0, "software half->float wrong for %zu halves", bad_soft);
  TA_CHECK_MSG(bad_build == 0, "%s half->float wrong for %zu halves", tinyattn::half_conversion_name(), bad_build);
}

TA_CASE("half: every half round-trips through float") {
  size_t bad = 0;
  for (uint32_t u = 0; u < 65536; ++u) {
    const half h = half::from_bits(static_cast<uint16_t>(u));
    const bool nan = ((u >> 10) & 0x1f) == 0x1f && (u & 0x3ff);
    const half s = tinyattn::float_to_half_soft(tinyattn::half_to_float_soft(h));
    const half b = tinyattn::to_half(tinyattn::to_float(h));
    if (nan) {
      // NaN stays NaN with its sign; quiet NaNs keep their payload.
      const bool s_nan = ((s.bits >> 10) & 0x1f) == 0x1f && (s.bits & 0x3ff);
      const bool b_nan = ((b.bits >> 10) & 0x1f) == 0x1f && (b.bits & 0x3ff);
      if (!s_nan || !b_nan || (s.bits & 0x8000) != (u & 0x8000)) ++bad;
      if ((u & 0x200) && s.bits != u) ++bad;
    } else if (s.bits != u || b.bits != u) {
      ++bad;
    }
  }
  TA_CHECK_MSG(bad == 0, "%zu halves do not round-trip", bad);
}

TA_CASE("half: dense float sweep rounds to nearest even (software and build converter)") {
  // Every float whose top 19 bits select a value between 2^-27 and 2^17 (both
  // signs), with low bits chosen to hit: exact halves, one float either side
  // of the tie, the tie itself, and points in between. That covers every
  // half's rounding interval, subnormals, the overflow edge and zero.
  static const uint32_t kLow[] = {0x0000, 0x0001, 0x07ff, 0x0800, 0x0fff, 0x1000, 0x1001,
                                  0x17ff, 0x1800, 0x1ffe, 0x1fff, 0x0123, 0x1abc};
  size_t checked = 0, bad_soft = 0, bad_build = 0;
  uint32_t first_bad = 0;
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t top = (100u << 10); top < (145u << 10); ++top)  // exponent 100..144, 10 mantissa bits
      for (uint32_t low : kLow) {
        const uint32_t x = (sign << 31) | (top << 13) | low;
        const float f = float_of(x);
        const double want = rne_half_value(f);
        const half s = tinyattn::float_to_half_soft(f);
        const half b = tinyattn::to_half(f);
        if (!same_value(half_value(s.bits), want)) {
          if (!bad_soft) first_bad = x;
          ++bad_soft;
        }
        if (s.bits != b.bits) ++bad_build;
        ++checked;
      }
  TA_CHECK_MSG(bad_soft == 0, "software float->half: %zu of %zu wrong (first 0x%08x)", bad_soft, checked,
               static_cast<unsigned>(first_bad));
  TA_CHECK_MSG(bad_build == 0, "%s float->half differs from software on %zu of %zu", tinyattn::half_conversion_name(),
               bad_build, checked);

  // A coarse sweep over all floats (every 4099th bit pattern) reaches the
  // huge, tiny, infinite and NaN ones too.
  size_t coarse_bad = 0;
  for (uint64_t x = 0; x <= 0xffffffffull; x += 4099) {
    const float f = float_of(static_cast<uint32_t>(x));
    const double want = rne_half_value(f);
    const half s = tinyattn::float_to_half_soft(f);
    const half b = tinyattn::to_half(f);
    if (!same_value(half_value(s.bits), want)) ++coarse_bad;
    if (!std::isnan(want) && s.bits != b.bits) ++coarse_bad;
    if (std::isnan(want) && !std::isnan(half_value(b.bits))) ++coarse_bad;
  }
  TA_CHECK_MSG(coarse_bad == 0, "coarse sweep: %zu floats convert wrongly", coarse_bad);
}

TA_CASE("half: named edge cases") {
  struct Case {
    float in;
    uint16_t out;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const Case cases[] = {
      {0.0f, 0x0000},       {-0.0f, 0x8000},
      {1.0f, 0x3c00},       {1.0f + 1.0f / 2048, 0x3c00},       // tie -> even (down)
      {1.0f + 3.0f / 2048, 0x3c02},                              // tie -> even (up)
      {65504.0f, 0x7bff},   {65519.996f, 0x7bff},  {65520.0f, 0x7c00},  // overflow edge
      {inf, 0x7c00},        {-inf, 0xfc00},
      {std::ldexp(1.0f, -14), 0x0400},                           // smallest normal
      {std::ldexp(1.0f, -24), 0x0001},                           // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},                           // tie -> even (0)
      {std::ldexp(1.5f, -25), 0x0001},  {std::ldexp(3.0f, -25), 0x0002},  // 1.5 units: tie -> 2
      {std::ldexp(1023.5f, -24), 0x0400},                        // rounds up into the normals
  };
  for (const Case& c : cases) {
    const uint16_t s = tinyattn::float_to_half_soft(c.in).bits;
    const uint16_t b = tinyattn::to_half(c.in).bits;
    TA_CHECK_MSG(s == c.out && b == c.out, "%g -> soft 0x%04x, %s 0x%04x, want 0x%04x", static_cast<double>(c.in),
                 static_cast<unsigned>(s), tinyattn::half_conversion_name(), static_cast<unsigned>(b),
                 static_cast<unsigned>(c.out));
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const uint16_t hn = tinyattn::float_to_half_soft(nan).bits;
  TA_CHECK_MSG(((hn >> 10) & 0x1f) == 0x1f && (hn & 0x3ff), "NaN -> 0x%04x is not a NaN", static_cast<unsigned>(hn));
  const uint16_t hb = tinyattn::to_half(-nan).bits;
  TA_CHECK_MSG(((hb >> 10) & 0x1f) == 0x1f && (hb & 0x3ff), "-NaN -> 0x%04x is not a NaN", static_cast<unsigned>(hb));
  // A signalling float NaN whose payload lives only in the low bits must not become inf.
  const uint16_t hs = tinyattn::float_to_half_soft(float_of(0x7f800001u)).bits;
  TA_CHECK_MSG(hs != 0x7c00 && (hs & 0x3ff), "sNaN -> 0x%04x", static_cast<unsigned>(hs));
}

TA_CASE("half: array conversions match the scalar ones on every half and a float sweep") {
  // The array forms take vector paths (e.g. 8-wide F16C); every element must
  // equal the scalar conversion, at every offset of the vector tails.
  tatest::Arena::Scope scope;
  const size_t kChunk = 1000;  // not a multiple of any vector width
  half* h = tatest::alloc<half>(kChunk);
  float* f = tatest::alloc<float>(kChunk);
  half* back = tatest::alloc<half>(kChunk);
  TA_CHECK((h != nullptr && f != nullptr && back != nullptr));
  if (!h || !f || !back) return;
  size_t bad = 0;
  for (uint32_t base = 0; base < 65536; base += kChunk) {
    const size_t n = 65536 - base < kChunk ? 65536 - base : kChunk;
    for (size_t i = 0; i < n; ++i) h[i] = half::from_bits(static_cast<uint16_t>(base + i));
    tinyattn::to_float(h, f, n);
    tinyattn::to_half(f, back, n);
    for (size_t i = 0; i < n; ++i) {
      const float one = tinyattn::to_float(h[i]);
      const bool nan = std::isnan(one);
      if (nan ? !std::isnan(f[i]) : bits_of(f[i]) != bits_of(one)) ++bad;
      if (!nan && back[i] != h[i]) ++bad;
    }
  }
  uint32_t x = 0x12345678u;
  for (int round = 0; round < 64; ++round) {
    for (size_t i = 0; i < kChunk; ++i) {
      x = x * 1664525u + 1013904223u;  // any float bit pattern
      f[i] = float_of(x);
    }
    tinyattn::to_half(f, back, kChunk);
    for (size_t i = 0; i < kChunk; ++i) {
      const half one = tinyattn::to_half(f[i]);
      if (std::isnan(f[i]) ? !std::isnan(half_value(back[i].bits)) : back[i] != one) ++bad;
    }
  }
  TA_CHECK_MSG(bad == 0, "%zu array conversions differ from the scalar ones", bad);
}

TA_CASE("half: array conversions match the scalar ones") {
  half h[37];
  float f[37], back[37];
  for (int i = 0; i < 37; ++i) f[i] = static_cast<float>(i - 18) * 0.37f;
  tinyattn::to_half(f, h, 37);
  tinyattn::to_float(h, back, 37);
  size_t bad = 0;
  for (int i = 0; i < 37; ++i)
    if (h[i] != tinyattn::to_half(f[i]) || bits_of(back[i]) != bits_of(tinyattn::to_float(h[i]))) ++bad;
  TA_CHECK_MSG(bad == 0, "%zu array elements differ", bad);
}
