// The fixed-point building blocks the integer paths share (quant.h):
// rounding shifts, multipliers and the base-2 exp of the int8 and int16
// softmax. In no dtype's file, so that either path links them alone.
#include <cmath>

#include "detail.h"
#include "fixed_point.h"
#include "tinyattn/quant.h"

namespace tinyattn {

namespace detail {
// 2^(i/32) in Q1.30, rounded to nearest (i = 0..31).
const int64_t kExp2Table[32] = {
    1073741824, 1097253708, 1121280436, 1145833280, 1170923762, 1196563654, 1222764986, 1249540052,
    1276901417, 1304861917, 1333434672, 1362633090, 1392470869, 1422962010, 1454120821, 1485961921,
    1518500250, 1551751076, 1585730000, 1620452965, 1655936265, 1692196547, 1729250827, 1767116489,
    1805811301, 1845353420, 1885761398, 1927054196, 1969251188, 2012372174, 2056437387, 2101467502};
}  // namespace detail

namespace {

using detail::kExp2Table;

constexpr int64_t kLn2Q30 = 744261118;    // ln(2) * 2^30
constexpr int64_t kThirdQ30 = 357913941;  // 2^30 / 3
constexpr int64_t kOneQ30 = int64_t{1} << 30;

}  // namespace

int64_t rounding_rshift(int64_t x, int s) { return detail::rounding_rshift_inline(x, s); }

int64_t apply(FixedMultiplier m, int64_t x) { return detail::apply_inline(m, x); }

int32_t exp2_q30(int64_t u) {
  if (u >= 0) return static_cast<int32_t>(kOneQ30);
  // u = -n + f / 2^26 with n >= 1 an integer and 0 <= f < 2^26.
  const uint64_t nu = static_cast<uint64_t>(-(u + 1)) + 1u;
  const uint64_t n = (nu + (uint64_t{1} << kLogitFracBits) - 1) >> kLogitFracBits;
  if (n > 62) return 0;
  const int64_t f = static_cast<int64_t>((n << kLogitFracBits) - nu);
  // 2^f = 2^(i/32) * e^z, z = r * ln 2 in [0, ln2/32): a table and a cubic.
  const int64_t i = f >> 21;
  const int64_t r = f & ((int64_t{1} << 21) - 1);
  const int64_t z = rounding_rshift(r * kLn2Q30, kLogitFracBits);        // Q30
  int64_t t = kOneQ30 + rounding_rshift(z * kThirdQ30, 30);               // 1 + z/3
  t = kOneQ30 + rounding_rshift(z * t, 31);                               // 1 + z/2 (1 + z/3)
  t = kOneQ30 + rounding_rshift(z * t, 30);                               // 1 + z (...)
  const int64_t val = rounding_rshift(kExp2Table[i] * t, 30);              // [2^30, 2^31)
  return static_cast<int32_t>(rounding_rshift(val, static_cast<int>(n)));
}

Status make_multiplier(double real, FixedMultiplier* out) {
  if (!std::isfinite(real) || !(real > 0.0)) return Status::kBadQuantization;
  int e = 0;
  const double f = std::frexp(real, &e);  // real = f * 2^e, f in [0.5, 1)
  int64_t m = static_cast<int64_t>(std::floor(f * 2147483648.0 + 0.5));
  if (m == (int64_t{1} << 31)) {  // f rounded up to 1.0
    m >>= 1;
    ++e;
  }
  const int shift = 31 - e;
  if (shift < 0 || shift > 62) return Status::kBadQuantization;
  out->multiplier = static_cast<int32_t>(m);
  out->shift = shift;
  return Status::kOk;
}

// tflite::QuantizeMultiplier (TfLiteRound is round half away from zero; the
// scaled fraction is positive and exact, so floor(x + 0.5) is the same).
// TFLite flushes exponents below -31 to a zero multiplier; the ranges above
// refuse those.
Status detail::quantize_multiplier(double real, TfliteMultiplier* out) {
  if (!std::isfinite(real) || !(real > 0.0)) return Status::kBadQuantization;
  int e = 0;
  const double f = std::frexp(real, &e);
  int64_t m = static_cast<int64_t>(std::floor(f * 2147483648.0 + 0.5));
  if (m == (int64_t{1} << 31)) {
    m /= 2;
    ++e;
  }
  out->multiplier = static_cast<int32_t>(m);
  out->shift = e;
  return Status::kOk;
}

}  // namespace tinyattn
