// tinyattn's exp, for every port (and, through tests/simd, every SIMD target):
// ULP error against double-precision exp over the softmax range [-87.3, 0],
// exact +0 below kExpFlushBelow, +inf above kExpOverflowAbove, NaN in -> NaN
// out, and exp_shift_sum agreeing with exp. The sample takes every
// TINYATTN_EXP_STRIDE-th float (a build option: 97 on hosts, larger under slow
// emulation); TINYATTN_EXP_FULL_SWEEP=1 checks every float (hosted only).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "test_env.h"
#include "tinyattn/exp.h"

#if TATEST_DOCTEST
#include <cstdlib>
#endif

#ifndef TINYATTN_EXP_STRIDE
#define TINYATTN_EXP_STRIDE 97
#endif

using tinyattn::KernelsF32;
using namespace tatest;

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Spacing of floats at y > 0 (exp.h's ulp(exp(x))): 2^(floor(log2 y) - 23),
// and the subnormal spacing 2^-149 below FLT_MIN.
double ulp_of(double y) {
  if (y < 0x1p-126) return 0x1p-149;
  int ex = 0;
  std::frexp(y, &ex);  // y = m * 2^ex, m in [0.5, 1)
  return std::ldexp(1.0, ex - 1 - 23);
}

uint32_t stride() {
#if TATEST_DOCTEST
  const char* full = std::getenv("TINYATTN_EXP_FULL_SWEEP");
  if (full && full[0] == '1') return 1;
#endif
  return TINYATTN_EXP_STRIDE;
}

struct Ports {
  tinyattn::Port ports[tatest::kMaxPorts];
  size_t n;
  Ports() : n(ports_under_test(ports)) {}
};

constexpr size_t kChunk = 1024;

// Evaluates k.exp on the floats with bit patterns lo, lo+step, ... <= hi (and
// on hi itself), calling check(x, e) for each.
template <class Check>
void for_floats(const KernelsF32& k, uint32_t lo, uint32_t hi, uint32_t step, Check check) {
  float* x = alloc<float>(kChunk);
  float* e = alloc<float>(kChunk);
  if (!x || !e) return;
  uint64_t u = lo;
  bool hi_done = false;
  while (!hi_done) {
    size_t n = 0;
    for (; n < kChunk && u <= hi; ++n, u += step) x[n] = from_bits(static_cast<uint32_t>(u));
    if (u > hi && n < kChunk) {  // the end point, whatever the stride
      x[n++] = from_bits(hi);
      hi_done = true;
    }
    k.exp(x, e, n);
    for (size_t i = 0; i < n; ++i) check(x[i], e[i]);
  }
}

struct UlpStats {
  double worst = 0.0;
  float worst_x = 0.0f;
  size_t count = 0;
};

UlpStats ulp_sweep(const KernelsF32& k, uint32_t step) {
  UlpStats st;
  // Negative floats: bits grow with magnitude, from -0 to -87.3.
  for_floats(k, to_bits(-0.0f), to_bits(-87.3f), step, [&](float x, float e) {
    const double y = std::exp(static_cast<double>(x));
    double err = std::fabs(static_cast<double>(e) - y) / ulp_of(y);
    if (!(err == err)) err = std::numeric_limits<double>::infinity();  // NaN result
    if (err > st.worst) {
      st.worst = err;
      st.worst_x = x;
    }
    ++st.count;
  });
  return st;
}

}  // namespace

TA_CASE("exp: every port within kExpMaxUlp of exp over [-87.3, 0]") {
  Ports pl;
  const uint32_t step = stride();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    const UlpStats st = ulp_sweep(k, step);
    out(fmt("exp ulp: %s/%s worst %.4g ulp at x=%.9g over %zu floats of [-87.3, 0] (stride %u, bound %g)\n", k.port,
            k.simd_target(), st.worst, static_cast<double>(st.worst_x), st.count, static_cast<unsigned>(step),
            static_cast<double>(tinyattn::kExpMaxUlp))
            .c_str());
    TA_CHECK_MSG(st.count > 0, "%s: no floats swept (arena too small?)", k.port);
    TA_CHECK_MSG(st.worst <= tinyattn::kExpMaxUlp, "%s/%s: %g ulp at x=%.9g exceeds %g", k.port, k.simd_target(),
                 st.worst, static_cast<double>(st.worst_x), static_cast<double>(tinyattn::kExpMaxUlp));
  }
}

TA_CASE("exp: exactly +0 below kExpFlushBelow, tiny and finite between it and -87.3") {
  Ports pl;
  const uint32_t step = stride();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    size_t not_zero = 0, bad_edge = 0;
    float first_bad = 0.0f;
    // Below the flush point down to -inf: the result must be +0, bit for bit.
    for_floats(k, to_bits(tinyattn::kExpFlushBelow) + 1, to_bits(-std::numeric_limits<float>::infinity()), step,
               [&](float x, float e) {
                 if (to_bits(e) != 0u) {
                   if (not_zero++ == 0) first_bad = x;
                 }
               });
    // [kExpFlushBelow, -87.3]: every float, results in [0, 2^-125].
    for_floats(k, to_bits(-87.3f), to_bits(tinyattn::kExpFlushBelow), 1, [&](float, float e) {
      if (!(e >= 0.0f && e <= 0x1p-125f)) ++bad_edge;
    });
    TA_CHECK_MSG(not_zero == 0, "%s/%s: %zu inputs below kExpFlushBelow give nonzero, first x=%.9g", k.port,
                 k.simd_target(), not_zero, static_cast<double>(first_bad));
    TA_CHECK_MSG(bad_edge == 0, "%s/%s: %zu results near the flush point out of [0, 2^-125]", k.port, k.simd_target(),
                 bad_edge);
  }
}

TA_CASE("exp: +inf above kExpOverflowAbove, finite and never NaN in (0, kExpOverflowAbove]") {
  Ports pl;
  const uint32_t step = stride();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    size_t not_inf = 0, not_finite = 0;
    float first_bad = 0.0f;
    for_floats(k, to_bits(tinyattn::kExpOverflowAbove) + 1, to_bits(std::numeric_limits<float>::infinity()), step,
               [&](float, float e) { not_inf += !(e == std::numeric_limits<float>::infinity()); });
    for_floats(k, to_bits(0.0f), to_bits(tinyattn::kExpOverflowAbove), step, [&](float x, float e) {
      if (!std::isfinite(e) || e < 1.0f) {
        if (not_finite++ == 0) first_bad = x;
      }
    });
    TA_CHECK_MSG(not_inf == 0, "%s/%s: %zu inputs above kExpOverflowAbove do not give +inf", k.port, k.simd_target(),
                 not_inf);
    TA_CHECK_MSG(not_finite == 0, "%s/%s: %zu inputs in [0, kExpOverflowAbove] give inf/NaN/<1, first x=%.9g", k.port,
                 k.simd_target(), not_finite, static_cast<double>(first_bad));
  }
}

TA_CASE("exp: NaN in, NaN out, in every lane position") {
  Ports pl;
  const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu, 0x7FC12345u};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    constexpr size_t kLen = 37;  // past several vector widths, with a tail
    float* x = alloc<float>(kLen);
    float* e = alloc<float>(kLen);
    size_t wrong = 0;
    for (uint32_t nan_bits : nans)
      for (size_t pos = 0; pos < kLen; ++pos) {
        for (size_t i = 0; i < kLen; ++i) x[i] = -0.25f * static_cast<float>(i);
        x[pos] = from_bits(nan_bits);
        k.exp(x, e, kLen);
        for (size_t i = 0; i < kLen; ++i) {
          const bool is_nan = e[i] != e[i];
          if (is_nan != (i == pos)) ++wrong;
        }
      }
    TA_CHECK_MSG(wrong == 0, "%s/%s: %zu lanes with NaN where not expected or a number where NaN was", k.port,
                 k.simd_target(), wrong);
  }
}

TA_CASE("exp: exp_shift_sum stores exp(x - shift) and returns their sum, touching nothing else") {
  Ports pl;
  const size_t lengths[] = {1, 3, 7, 8, 17, 33, 100, 1000};
  // 75 and -100 move part of each row below kExpFlushBelow / above
  // kExpOverflowAbove, where the kernels leave their in-range fast path.
  const float shifts[] = {0.0f, 2.5f, -3.0f, 40.0f, 75.0f, -100.0f};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    Rng rng(42 + pi);
    size_t value_errors = 0, guard_errors = 0;
    double worst_sum = 0.0;
    for (size_t n : lengths)
      for (float shift : shifts) {
        Arena::Scope scope;
        constexpr size_t kGuard = 16;
        float* buf = alloc<float>(n + 2 * kGuard);
        float* shifted = alloc<float>(n);
        float* want = alloc<float>(n);
        if (!buf || !shifted || !want) continue;
        const float guard = 123.0f;
        for (size_t i = 0; i < n + 2 * kGuard; ++i) buf[i] = guard;
        float* x = buf + kGuard;
        rng.fill_uniform(x, n, -30.0f, 0.0f);
        // A masked logit inside the vector loops, and a NaN where the sum is
        // not checked anyway.
        if (n > 8) {
          x[n / 2] = -std::numeric_limits<float>::infinity();
          if (shift == 75.0f) x[n / 3] = std::numeric_limits<float>::quiet_NaN();
        }
        for (size_t i = 0; i < n; ++i) shifted[i] = x[i] - shift;
        k.exp(shifted, want, n);
        const float sum = k.exp_shift_sum(x, n, shift);
        double sum_ref = 0.0;
        for (size_t i = 0; i < n; ++i) {
          if (to_bits(x[i]) != to_bits(want[i])) ++value_errors;
          sum_ref += static_cast<double>(want[i]);
        }
        for (size_t i = 0; i < kGuard; ++i)
          if (buf[i] != guard || buf[kGuard + n + i] != guard) ++guard_errors;
        // fp32 summation of n nonnegative terms: relative error <= n * 2^-24.
        const double rel = sum_ref > 0 ? std::fabs(static_cast<double>(sum) - sum_ref) / sum_ref : std::fabs(sum);
        const double bound = static_cast<double>(n) * 0x1p-24 + 1e-7;
        if (rel / bound > worst_sum) worst_sum = rel / bound;
      }
    TA_CHECK_MSG(value_errors == 0, "%s/%s: %zu stored values differ from exp(x - shift)", k.port, k.simd_target(),
                 value_errors);
    TA_CHECK_MSG(guard_errors == 0, "%s/%s: %zu floats outside [0, n) were written", k.port, k.simd_target(),
                 guard_errors);
    TA_CHECK_MSG(worst_sum <= 1.0, "%s/%s: the returned sum is off by %g of its fp32 bound", k.port, k.simd_target(),
                 worst_sum);
  }
}
