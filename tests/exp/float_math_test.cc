// The drivers' tanh (softcap) and log (lse), lib/src/float_math.h, against
// double precision: tanh within 3 ULP and log within 1 ULP of the true value,
// on every TINYATTN_EXP_STRIDE-th float of each (all of them, both signs, for
// tanh; every positive float for log), plus the special values. Measured on
// every float (x86-64, no FMA): tanh 2.61 ULP, log 0.835 ULP.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "float_math.h"
#include "tatest.h"
#include "test_env.h"

#ifndef TINYATTN_EXP_STRIDE
#define TINYATTN_EXP_STRIDE 97
#endif

using namespace tatest;
using tinyattn::detail::log_f32;
using tinyattn::detail::tanh_f32;

namespace {

constexpr double kTanhMaxUlp = 3.0, kLogMaxUlp = 1.0;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The float spacing at |y| (subnormal spacing below FLT_MIN).
double ulp_of(double y) {
  y = std::fabs(y);
  if (y < 0x1p-126) return 0x1p-149;
  int ex = 0;
  std::frexp(y, &ex);
  return std::ldexp(1.0, ex - 1 - 23);
}

struct Worst {
  double ulp = 0;
  float x = 0;
  size_t count = 0;
  void add(float x_, float got, double want) {
    double e = std::fabs(static_cast<double>(got) - want) / ulp_of(want);
    if (!(e == e)) e = std::numeric_limits<double>::infinity();
    if (e > ulp) ulp = e, x = x_;
    ++count;
  }
};

// Bit patterns lo, lo + step, ... <= hi, skipping NaNs.
template <class F>
void for_bits(uint32_t lo, uint32_t hi, uint32_t step, F f) {
  for (uint64_t u = lo; u <= hi; u += step) {
    const float x = from_bits(static_cast<uint32_t>(u));
    if (x == x) f(x);
  }
}

// Prints the sweep's worst case and holds it to the bound.
void report(const char* what, const Worst& w, uint32_t step, double bound) {
  out(fmt("%s: worst %.4g ulp at x=%.9g over %zu floats (stride %u, bound %g)\n", what, w.ulp,
          static_cast<double>(w.x), w.count, static_cast<unsigned>(step), bound)
          .c_str());
  TA_CHECK(w.count > 0);
  TA_CHECK_MSG(w.ulp <= bound, "%s: %g ulp at x=%.9g", what, w.ulp, static_cast<double>(w.x));
}

}  // namespace

TA_CASE("float_math: tanh_f32 within 3 ULP of tanh on both signs") {
  Worst w;
  const uint32_t step = TINYATTN_EXP_STRIDE;
  for_bits(0u, 0x7F800000u, step, [&](float x) { w.add(x, tanh_f32(x), std::tanh(static_cast<double>(x))); });
  for_bits(0x80000000u, 0xFF800000u, step, [&](float x) { w.add(x, tanh_f32(x), std::tanh(static_cast<double>(x))); });
  report("tanh_f32", w, step, kTanhMaxUlp);
}

TA_CASE("float_math: log_f32 within 1 ULP of log on every positive float") {
  Worst w;
  const uint32_t step = TINYATTN_EXP_STRIDE;
  for_bits(1u, 0x7F7FFFFFu, step, [&](float x) { w.add(x, log_f32(x), std::log(static_cast<double>(x))); });
  report("log_f32", w, step, kLogMaxUlp);
}

TA_CASE("float_math: special values") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  TA_CHECK(tanh_f32(inf) == 1.0f);
  TA_CHECK(tanh_f32(-inf) == -1.0f);
  TA_CHECK(std::isnan(tanh_f32(nan)));
  TA_CHECK(tanh_f32(0.0f) == 0.0f);
  TA_CHECK(!std::signbit(tanh_f32(0.0f)));
  TA_CHECK(std::signbit(tanh_f32(-0.0f)));
  TA_CHECK(tanh_f32(0x1p-149f) == 0x1p-149f);  // tanh x = x to float precision near 0
  TA_CHECK(log_f32(1.0f) == 0.0f);
  TA_CHECK(log_f32(0.0f) == -inf);
  TA_CHECK(log_f32(-0.0f) == -inf);
  TA_CHECK(log_f32(inf) == inf);
  TA_CHECK(std::isnan(log_f32(-1.0f)));
  TA_CHECK(std::isnan(log_f32(nan)));
}
