// Differential fuzz target: one valid problem per input, run through every
// compiled port in every call form, each run held to one expectation:
//  * forward() through tatest::run_path: both algorithms (weights requested:
//    whole rows; not: key tiles once M exceeds the tile, 256 keys in fp32, 8
//    in fp16) and, on inputs rounded to fp16, fp16 in each compute mode this
//    build runs; on fixed extents (Dk, Dv each 8, 16, 32 or 64) the call
//    without weights reaches the ports' fused fixed-extent kernels
//    (KernelsF32::attend_fixed);
//  * Attention<S> for a few instantiated shapes (GQA among them, one past
//    the key tile): with Options{scale, port}, with and without weights and
//    lse, and the plain attn(q, k, v, y) on the default port;
//  * KvCache<float, ...> decodes (linear, chunked prefill, a sliding-window
//    ring): the problem's Q, K and V are a token sequence, appended and
//    attended step by step; each step's rows must be the rows of one causal
//    (and windowed) forward over the whole sequence.
// Highway runs one of the targets this CPU supports and xsimd one of its
// architectures, both picked from a hash of the input (the test hooks), so
// the corpus reaches every SIMD target. Every run must meet the non-finite
// contract (docs/hardening.md) row by row:
//  * which outputs are NaN, +inf, -inf or finite (Y, lse, weights), exactly;
//  * masked keys have weight exactly 0, a row without visible keys is 0 with
//    lse -inf;
//  * finite values within a tolerance derived from the logits' fp32 (and fp16
//    product) error bound: Y within (e^(2 eps) - 1 + 1e-4) max|v|, lse within
//    eps + 1e-4 (1 + |lse|), weights within (e^(2 eps) - 1) a + 1e-4, plus the
//    fp16 rounding of Y and the weights and the rounding of Y's fp32
//    subnormals.
// The expectation is computed here in double from the inputs: logits
// scale * <q, k> + bias with exact dot products (the overflow rule: a logit
// is the fp32 value of the exact scale * <q, k>, so a dot product far past
// FLT_MAX times a tiny scale is a moderate logit, and a logit past fp32's
// range is +-inf), the softmax limit for +inf logits, and a key whose fp32
// weight underflows to 0 contributing nothing. Where fp32 rounding can
// legitimately decide the class (a logit between 1e37 and 2 FLT_MAX in
// magnitude, a key's weight near the underflow threshold with a non-finite
// value, values near overflow), that output is left out; all runs being
// checked against one expectation is what compares ports, algorithms, call
// forms and dtypes with each other.
//
// Decoding is compact so that short inputs reach long rows: tensors start as
// zeros or a small-integer pattern, then up to 24 "pokes" set single elements
// (or whole rows) of Q, K, V or the bias to small halves, to values from a
// pool (NaN, +-inf, FLT_MAX, the largest half, subnormals, biases that push
// weights below fp32's range) or from the overflow zone (+-FLT_MAX down to
// the smallest subnormal, so one product passes FLT_MAX in either sign, and
// a row of them at any Dk). Scales include tiny (subnormal, FLT_MIN), huge
// (1e30, FLT_MAX) and negative ones. Byte values no earlier input used select
// the newer parts (dk byte 0xE0..0xEF: an Attention<S> or KvCache shape; dv
// byte 0xE0..0xEF: fixed extents; poke kind 0xE0..0xEF: a row; value and
// scale bytes 0x40..0xBF: the overflow zone and the wider scales), so every
// committed regression decodes as it did when it was found.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "float_paths.h"
#include "fuzz_input.h"
#include "support.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

// The Highway targets and xsimd architectures this build compiled, as
// ','-separated names (suite.cmake), and the hooks that force one of them.
#ifndef TATEST_HWY_TARGETS
#define TATEST_HWY_TARGETS ""
#endif
#ifndef TATEST_XSIMD_ARCHS
#define TATEST_XSIMD_ARCHS ""
#endif
extern "C" __attribute__((weak)) const char* tinyattn_test_select_target(const char* request);
extern "C" __attribute__((weak)) const char* tinyattn_test_select_xsimd_arch(const char* request);

namespace {

using tatest::FloatPath;
using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using tinyattn_fuzz::Bytes;

using tatest::kInf;
using tatest::kNaN;

constexpr float kPool[] = {0.0f,     -0.0f,    1.0f,      -1.0f,  2.0f,    -3.0f, 0.5f,  60.0f,
                           -50.0f,   200.0f,   -200.0f,   100.0f, kInf,    -kInf, kNaN,  FLT_MAX,
                           -FLT_MAX, 65504.0f, -65504.0f, 1e-40f, -1e-40f, 1e4f,  -1e4f, 1e-6f};
constexpr size_t kPoolSize = sizeof kPool / sizeof kPool[0];

// Magnitudes of the overflow zone (zone() takes the sign from the byte): pairs
// of them multiply past FLT_MAX, or to a moderate logit under a tiny or huge scale.
constexpr float kZone[] = {FLT_MAX, 2.5e38f, 1e38f,  1.7e38f, 1e37f,  1e36f,    1e30f, 1e20f, 1.8e19f, 1e10f,  65504.0f,
                           1000.0f, 25.0f,   7.0f,   3.0f,    1.5f,   1.0f,     0.5f,  0.1f,  1e-5f,   1e-10f, 1e-20f,
                           1e-30f,  FLT_MIN, 1e-39f, 1e-40f,  1e-44f, 1.4e-45f, 0.0f,  4.0f,  1e19f,   2e-38f};
constexpr size_t kZoneSize = sizeof kZone / sizeof kZone[0];

// Options::scale for scale bytes 0x40..0xBF (the others: the default 1/sqrt(Dk), 1, 1/16, 0).
constexpr float kScales[] = {1e-40f,   -1e-40f, 1.4e-45f, FLT_MIN,  -FLT_MIN, 1e-38f, 1e-30f, -1e-30f,
                             1e-20f,   1e-10f,  1e10f,    1e20f,    1e30f,    -1e30f, 1e38f,  FLT_MAX,
                             -FLT_MAX, -1.0f,   -0.5f,    -0.0625f, 3e-39f,   1e-44f, 4.0f,   1e-36f};
constexpr size_t kScalesSize = sizeof kScales / sizeof kScales[0];

// The class each output must have, or kAny where rounding may decide it.
enum Class : uint8_t { kFinite, kPosInf, kNegInf, kIsNaN, kAny };

Class class_of(double x) {
  if (std::isnan(x)) return kIsNaN;
  if (std::isinf(x)) return x > 0 ? kPosInf : kNegInf;
  return kFinite;
}

// What ran: port, call form, dtype path, weights requested (fail() adds the
// SIMD target the port executed).
struct Run {
  Port port;
  const char* form;
  const char* path;
  bool ww;
};

[[noreturn]] void fail(const char* what, const Run& run, size_t row, size_t col, double got, double want) {
  const tinyattn::KernelsF32* k = tinyattn::kernels_f32(run.port);
  std::fprintf(stderr, "differential: %s on %s/%s %s/%s (weights %d), row %zu col %zu: got %g, want %g\n", what,
               tinyattn::port_name(run.port), k ? k->simd_target() : "?", run.form, run.path, run.ww ? 1 : 0, row, col,
               got, want);
  __builtin_trap();
}

// What the contract says about one row.
struct RowExpect {
  bool empty = false, nan = false, any = false;  // any: the row's classes are left open
  double lse = 0, eps = 0;                       // eps: logit error bound of the run kind
  std::vector<double> w;                         // per key (masked: 0)
  std::vector<double> y;                         // per column
  std::vector<Class> y_class;
  std::vector<double> y_slack;  // per column: what keys of fp32 weight 0 may add
  double vmax = 0;              // max |v| over the keys that carry weight
};

// Logit error bound: fp32 dot product and scaling (gamma_(Dk+2) of the sum of
// |products|), products and the scaled logit that fall below FLT_MIN (half
// the smallest subnormal each), the bias addition, and for the native fp16
// products the fp16 rounding of each chunk's products and partial sums
// (forward_f16.h).
double logit_error(double abs_dot, double s, double scale, size_t dk, bool native) {
  const double u32 = 1.0 / 16777216.0, u16 = 1.0 / 2048.0, sub32 = std::ldexp(1.0, -150);
  const double n = static_cast<double>(dk) + 2;
  double e = std::fabs(scale) * abs_dot * n * u32 / (1 - n * u32) + std::fabs(s) * u32;
  e += (std::fabs(scale) * static_cast<double>(dk) + 1) * sub32;
  if (native) {
    const double l = static_cast<double>(tinyattn::kF16NativeChunk);
    e += std::fabs(scale) * (abs_dot * l * u16 / (1 - l * u16) + 1.01 * static_cast<double>(dk) / 33554432.0);
  }
  return e * 1.01;
}

RowExpect expect_row(const Dims& d, const float* q, const float* k, const float* v, const Mask& mask, double scale,
                     size_t h, size_t i, bool native) {
  RowExpect r;
  r.w.assign(d.m, 0.0);
  r.y.assign(d.dv, 0.0);
  r.y_class.assign(d.dv, kFinite);
  r.y_slack.assign(d.dv, 0.0);
  const size_t kvh = h / d.group();
  const float* qi = q + (h * d.n + i) * d.dk;
  std::vector<double> s(d.m, -INFINITY);
  std::vector<char> vis(d.m, 0);
  double mx = -INFINITY;
  for (size_t j = 0; j < d.m; ++j) {
    if (!tinyattn::ref::visible(mask, d, h, i, j)) continue;
    vis[j] = 1;
    const float* kj = k + (kvh * d.m + j) * d.dk;
    double dot = 0, abs_dot = 0;
    for (size_t c = 0; c < d.dk; ++c) {
      const double p = static_cast<double>(qi[c]) * kj[c];
      dot += p;
      abs_dot += std::fabs(p);
    }
    // The fp32 value of the exact scaled dot product: +-inf past fp32's
    // range (2 FLT_MAX: beyond any rounding); from 1e37 on, rounding decides.
    double logit = scale * dot;
    if (std::isfinite(logit) && std::fabs(logit) > 2.0 * FLT_MAX) {
      logit = logit > 0 ? INFINITY : -INFINITY;
      // A finite fp32 dot product is not recomputed (only an overflowing
      // one is), and it carries fp32's error: where huge products cancel,
      // that error may leave it finite and the logit in range.
      if (std::isfinite(abs_dot) &&
          std::fabs(scale * dot) - logit_error(abs_dot, 0, scale, d.dk, native) < 2.0 * FLT_MAX)
        r.any = true;
    }
    if (std::isfinite(logit) && std::fabs(logit) > 1e37) r.any = true;
    const double bias = mask.bias ? mask.bias[h * mask.head_stride + i * d.m + j] : 0.0;
    s[j] = logit + bias;
    if (std::isfinite(s[j]) && std::fabs(s[j]) > 1e37) r.any = true;  // the bias addition may overflow
    if (std::isnan(s[j])) r.nan = true;
    if (std::isfinite(s[j])) r.eps = std::fmax(r.eps, logit_error(abs_dot, s[j], scale, d.dk, native));
    if (s[j] > mx) mx = s[j];
  }
  if (!r.nan && mx == -INFINITY) {  // no visible key, or only -inf logits (masked keys)
    r.empty = true;
    r.lse = -INFINITY;
    return r;
  }
  if (r.nan) {
    for (size_t j = 0; j < d.m; ++j) r.w[j] = s[j] == -INFINITY ? 0.0 : NAN;  // a -inf logit is a masked key
    r.lse = NAN;
    for (size_t c = 0; c < d.dv; ++c) r.y_class[c] = kIsNaN, r.y[c] = NAN;
    return r;
  }
  if (r.eps > 20) r.any = true;  // fp32 rounding decides which keys carry weight
  // e_j relative to the maximum (the softmax limit when the maximum is +inf).
  double sum = 0;
  std::vector<double> e(d.m, 0.0);
  for (size_t j = 0; j < d.m; ++j) {
    if (!vis[j]) continue;
    e[j] = std::isinf(mx) && mx > 0 ? (s[j] == mx ? 1.0 : 0.0) : std::exp(s[j] - mx);
    sum += e[j];
  }
  r.lse = std::isinf(mx) ? mx : mx + std::log(sum);
  for (size_t j = 0; j < d.m; ++j) r.w[j] = e[j] / sum;
  // fp32 weights: surely nonzero above e^-82 (FLT_MIN is e^-87.3), surely 0
  // below e^-106 (half the smallest subnormal is e^-104), each side widened
  // by the logits' error. The native fp16 products multiply V by the
  // numerators rounded to fp16 (f16_native.h): nonzero from 2^-24 (e^-16.6),
  // 0 below 2^-25 (e^-17.3).
  const double t_hi = (native ? -16.6 : -82.0) + 2 * r.eps, t_lo = (native ? -17.4 : -106.0) - 2 * r.eps;
  const double v_big = FLT_MAX / (2.0 * static_cast<double>(d.m));
  for (size_t c = 0; c < d.dv; ++c) {
    bool pos = false, neg = false, nan = false, open = false;
    double acc = 0;
    for (size_t j = 0; j < d.m; ++j) {
      if (!vis[j] || e[j] == 0.0) continue;
      const double t = std::isinf(mx) ? 0.0 : s[j] - mx;
      const double vc = v[(kvh * d.m + j) * d.dv + c];
      if (t < t_lo) {
        // Its weight is 0 in fp32's one pass; the online pass may carry it
        // as its (tiny) true weight, e^t times an earlier tile's factor.
        if (std::isfinite(vc)) r.y_slack[c] += e[j] * std::fabs(vc) / sum;
        continue;  // an inf or NaN value never reaches Y
      }
      if (std::isfinite(vc)) {
        if (std::fabs(vc) > v_big) open = true;  // the accumulation may overflow
        acc += e[j] * vc;
        r.vmax = std::fmax(r.vmax, std::fabs(vc));
        continue;
      }
      if (t <= t_hi) open = true;
      nan |= std::isnan(vc);
      pos |= vc > 0;
      neg |= vc < 0;
    }
    if (open || r.any)
      r.y_class[c] = kAny;
    else if (nan || (pos && neg))
      r.y_class[c] = kIsNaN, r.y[c] = NAN;
    else if (pos)
      r.y_class[c] = kPosInf, r.y[c] = INFINITY;
    else if (neg)
      r.y_class[c] = kNegInf, r.y[c] = -INFINITY;
    else
      r.y[c] = acc / sum;
  }
  return r;
}

// One element against its expectation: the class exactly; a finite value within atol + rtol |want|.
bool agrees(double got, double want, Class cls, double atol, double rtol) {
  if (cls == kAny) return true;
  if (class_of(got) != cls) return false;
  if (cls != kFinite) return true;
  return !(atol >= 0) || std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// The outputs of query row (h, i) of one run against e. w (M weights) and
// lse (one value) may be null when the form does not write them; h_rel and
// h_abs are the fp16 storage rounding of Y and the weights (0 in fp32).
void check_row(const RowExpect& e, const Dims& d, const Mask& mask, size_t h, size_t i, const float* y, const float* w,
               const float* lse, double h_rel, double h_abs, const Run& run, size_t row) {
  if (e.empty) {
    for (size_t c = 0; c < d.dv; ++c)
      if (y[c] != 0.0f) fail("empty row: y not 0", run, row, c, y[c], 0);
    if (lse && *lse != -kInf) fail("empty row: lse not -inf", run, row, 0, *lse, -INFINITY);
    for (size_t j = 0; w && j < d.m; ++j)
      if (w[j] != 0.0f) fail("empty row: weight not 0", run, row, j, w[j], 0);
    return;
  }
  // Masked keys: exactly 0 in every row, NaN rows included.
  for (size_t j = 0; w && j < d.m; ++j)
    if (!tinyattn::ref::visible(mask, d, h, i, j) && w[j] != 0.0f)
      fail("masked key: weight not 0", run, row, j, w[j], 0);
  if (e.any) return;
  // Values only where the logit error leaves the comparison meaningful.
  const bool values = e.eps <= 0.5;
  const double g = std::expm1(2 * e.eps);
  // Y's fp32 subnormals: each product and partial sum may round by half the
  // smallest one, or on 32-bit Arm, whose NEON flushes subnormals to 0, lose
  // up to FLT_MIN.
#if defined(__arm__) && !defined(__aarch64__)
  constexpr int kSubnormalLoss = -126;
#else
  constexpr int kSubnormalLoss = -150;
#endif
  const double y_sub = static_cast<double>(2 * d.m + 2) * std::ldexp(1.0, kSubnormalLoss);
  const double y_atol = values ? (g + 1e-4) * e.vmax + h_abs + y_sub : -1, y_rtol = 1e-4 + h_rel;
  for (size_t c = 0; c < d.dv; ++c)
    if (!agrees(y[c], e.y[c], e.y_class[c], y_atol < 0 ? y_atol : y_atol + e.y_slack[c], y_rtol))
      fail("y", run, row, c, y[c], e.y[c]);
  if (lse && !agrees(*lse, e.lse, class_of(e.lse), values ? e.eps + 1e-4 : -1, 1e-4))
    fail("lse", run, row, 0, *lse, e.lse);
  for (size_t j = 0; w && j < d.m; ++j)
    if (!agrees(w[j], e.w[j], class_of(e.w[j]), values ? 1e-4 + h_abs : -1, g + 1e-4 + h_rel))
      fail("weight", run, row, j, w[j], e.w[j]);
}

// One decoded problem with its fp32 expectation, what each call form reads.
struct Case {
  Dims d;
  Mask mask;
  tinyattn::Options opt;
  const tatest::Problem* p = nullptr;
  const std::vector<RowExpect>* expect = nullptr;  // fp32, row h * N + i
  const Port* ports = nullptr;
  size_t port_count = 0;
};

void fill_nan(float* x, size_t n) {
  for (size_t e = 0; e < n; ++e) x[e] = kNaN;
}

// Attention<S>: Options{scale, port} with weights and lse, with lse only,
// with neither; the plain attn(q, k, v, y) where the problem is its call.
template <class S>
void attention_form(const Case& c) {
  using A = tinyattn::Attention<S>;
  static A attn;
  static typename A::Q q;
  static typename A::K k;
  static typename A::V v;
  static typename A::Y y;
  static typename A::Weights w;
  static typename A::Lse lse;
  const Dims& d = c.d;
  std::memcpy(q.data(), c.p->q, sizeof q);
  std::memcpy(k.data(), c.p->k, sizeof k);
  std::memcpy(v.data(), c.p->v, sizeof v);
  auto check = [&](Port port, const char* form, bool with_w, bool with_lse) {
    const Run run{port, form, "fp32", with_w};
    for (size_t row = 0; row < d.hq * d.n; ++row)
      check_row((*c.expect)[row], d, c.mask, row / d.n, row % d.n, y.data() + row * d.dv,
                with_w ? w.data() + row * d.m : nullptr, with_lse ? lse.data() + row : nullptr, 0, 0, run, row);
  };
  for (size_t pi = 0; pi < c.port_count; ++pi) {
    tinyattn::Options o = c.opt;
    o.port = c.ports[pi];
    for (int call = 0; call < 3; ++call) {
      fill_nan(y.data(), y.size());
      fill_nan(w.data(), w.size());
      fill_nan(lse.data(), lse.size());
      const Status s = call == 0   ? attn(q, k, v, y, lse, c.mask, &w, o)
                       : call == 1 ? attn(q, k, v, y, lse, c.mask, nullptr, o)
                                   : attn(q, k, v, y, c.mask, nullptr, o);
      const char* form = call == 0 ? "Attention<S>+w+lse" : call == 1 ? "Attention<S>+lse" : "Attention<S>";
      if (s != Status::kOk)
        fail("status not kOk", Run{o.port, form, "fp32", call == 0}, 0, 0, static_cast<double>(s), 0);
      check(o.port, form, call == 0, call < 2);
    }
  }
  const Mask& m = c.mask;
  const bool plain = m.causal == tinyattn::Causal::kNone && m.kv_len == tinyattn::kAllKeys && !m.window.active() &&
                     !m.keep && !m.keep_bits && !m.bias;
  if (plain && !c.opt.scale) {
    fill_nan(y.data(), y.size());
    const Status s = attn(q, k, v, y);
    const Port port = tinyattn::default_port();
    if (s != Status::kOk)
      fail("status not kOk", Run{port, "Attention<S> plain", "fp32", false}, 0, 0, static_cast<double>(s), 0);
    check(port, "Attention<S> plain", false, false);
  }
}

// KvCache decode of the problem's N = M tokens: steps of 1, 2, .. MaxNew
// tokens in turn, each appended then attended; the step's rows against the
// rows of the causal (windowed) forward over all tokens.
template <size_t Hq, size_t Hkv, size_t Dk, size_t Dv, size_t Capacity, size_t MaxNew, size_t Window>
void cache_form(const Case& c) {
  using C = tinyattn::KvCache<float, Hq, Hkv, Dk, Dv, Capacity, MaxNew, Window>;
  static C cache;
  static float q[Hq * MaxNew * Dk], k[Hkv * MaxNew * Dk], v[Hkv * MaxNew * Dv], y[Hq * MaxNew * Dv];
  const Dims& d = c.d;
  const size_t tokens = d.m;
  for (size_t pi = 0; pi < c.port_count; ++pi) {
    tinyattn::Options o = c.opt;
    o.port = c.ports[pi];
    const Run run{o.port, Window ? "KvCache ring" : "KvCache", "fp32", false};
    cache.clear();
    size_t n = 0;
    for (size_t p0 = 0, step = 0; p0 < tokens; p0 += n, ++step) {
      n = 1 + step % MaxNew;
      if (n > tokens - p0) n = tokens - p0;
      for (size_t h = 0; h < Hkv; ++h)
        for (size_t t = 0; t < n; ++t) {
          std::memcpy(k + (h * n + t) * Dk, c.p->k + (h * tokens + p0 + t) * Dk, Dk * sizeof(float));
          std::memcpy(v + (h * n + t) * Dv, c.p->v + (h * tokens + p0 + t) * Dv, Dv * sizeof(float));
        }
      for (size_t h = 0; h < Hq; ++h)
        for (size_t t = 0; t < n; ++t)
          std::memcpy(q + (h * n + t) * Dk, c.p->q + (h * tokens + p0 + t) * Dk, Dk * sizeof(float));
      fill_nan(y, Hq * n * Dv);
      Status s = cache.append(k, v, n);
      if (s == Status::kOk) s = cache.attend(q, y, n, o);
      if (s != Status::kOk) fail("status not kOk", run, p0, 0, static_cast<double>(s), 0);
      for (size_t h = 0; h < Hq; ++h)
        for (size_t t = 0; t < n; ++t) {
          const size_t row = h * tokens + p0 + t;
          check_row((*c.expect)[row], d, c.mask, h, p0 + t, y + (h * n + t) * Dv, nullptr, nullptr, 0, 0, run, row);
        }
    }
  }
}

// Compile-time shapes the decoder can select (dk byte 0xE0..0xEF): the
// problem takes the form's dims (a KvCache's N = M is its token count).
struct Form {
  Dims d;
  size_t window;  // KvCache ring: the sliding window (the mask gets causal + window)
  bool cache;
  void (*run)(const Case&);
};
using tinyattn::Shape;
const Form kForms[] = {
    {{1, 2, 1, 1, 1, 1}, 0, false, attention_form<Shape<1, 2, 1, 1>>},
    {{4, 8, 8, 8, 1, 1}, 0, false, attention_form<Shape<4, 8, 8, 8>>},
    {{4, 8, 8, 8, 2, 1}, 0, false, attention_form<Shape<4, 8, 8, 8, 2, 1>>},
    {{8, 8, 16, 16, 1, 1}, 0, false, attention_form<Shape<8, 8, 16, 16>>},
    {{8, 8, 16, 16, 4, 2}, 0, false, attention_form<Shape<8, 8, 16, 16, 4, 2>>},
    {{2, 16, 32, 32, 1, 1}, 0, false, attention_form<Shape<2, 16, 32, 32>>},
    {{3, 12, 64, 64, 2, 1}, 0, false, attention_form<Shape<3, 12, 64, 64, 2, 1>>},
    {{2, 260, 8, 8, 1, 1}, 0, false, attention_form<Shape<2, 260, 8, 8>>},  // key tiles without weights
    {{3, 3, 1, 1, 1, 1}, 0, true, cache_form<1, 1, 1, 1, 4, 1, 0>},
    {{12, 12, 8, 8, 2, 1}, 0, true, cache_form<2, 1, 8, 8, 16, 1, 0>},
    {{22, 22, 16, 16, 4, 2}, 0, true, cache_form<4, 2, 16, 16, 24, 4, 0>},
    {{20, 20, 32, 32, 2, 2}, 8, true, cache_form<2, 2, 32, 32, 10, 2, 8>},
};
constexpr size_t kFormCount = sizeof kForms / sizeof kForms[0];

// Names in a ','-separated list that the hook accepts (compiled, runnable here).
std::vector<const char*> runnable(const char* list, const char* (*hook)(const char*)) {
  std::vector<const char*> out;
  if (!hook) return out;
  static std::vector<std::vector<char>> storage;
  for (const char* at = list; *at;) {
    const char* end = std::strchr(at, ',');
    if (!end) end = at + std::strlen(at);
    storage.emplace_back(at, end);
    storage.back().push_back('\0');
    if (hook(storage.back().data())) out.push_back(storage.back().data());
    at = *end ? end + 1 : end;
  }
  return out;
}

// Forces the Highway target and the xsimd architecture this input runs.
void select_simd_targets(const uint8_t* data, size_t size) {
  static const std::vector<const char*> hwy = runnable(TATEST_HWY_TARGETS, tinyattn_test_select_target);
  static const std::vector<const char*> xs = runnable(TATEST_XSIMD_ARCHS, tinyattn_test_select_xsimd_arch);
  uint32_t hash = 2166136261u;  // FNV-1a
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 16777619u;
  if (!hwy.empty()) tinyattn_test_select_target(hwy[hash % hwy.size()]);
  if (!xs.empty()) tinyattn_test_select_xsimd_arch(xs[(hash / 7) % xs.size()]);
}

// A zone value: bit 6 the sign, the low bits the magnitude.
float zone(uint8_t b) {
  const float x = kZone[(b & 0x3F) % kZoneSize];
  return b & 0x40 ? -x : x;
}

// Value bytes: small halves (-4 .. 4), the overflow zone, the pool.
float pool_or_small(uint8_t b) {
  if (b < 0x40) return static_cast<float>(static_cast<int>(b % 17) - 8) * 0.5f;
  return b < 0xC0 ? zone(static_cast<uint8_t>(b - 0x40)) : kPool[(b - 0xC0) % kPoolSize];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  select_simd_targets(data, size);
  Bytes in(data, size);
  Dims d;
  d.n = 1 + in.u8() % 4;
  const uint8_t mk = in.u8();
  // Short rows, rows around the fp16 key tile (8), and rows past the fp32 one (256).
  d.m = mk < 96 ? 1 + mk % 12 : mk < 176 ? 7 + mk % 18 : 255 + mk % 24;
  const uint8_t dk_byte = in.u8(), dv_byte = in.u8();
  d.dk = 1 + dk_byte % 17;
  d.dv = 1 + dv_byte % 4;
  if (dv_byte >= 0xE0 && dv_byte < 0xF0) {  // the fixed extents (attend_fixed)
    d.dk = size_t{8} << (dv_byte & 3);
    d.dv = size_t{8} << ((dv_byte >> 2) & 3);
  }
  d.hkv = 1 + in.u8() % 2;
  d.hq = d.hkv * (1 + in.u8() % 2);
  const Form* form = dk_byte >= 0xE0 && dk_byte < 0xF0 ? &kForms[(dk_byte & 15) % kFormCount] : nullptr;
  if (form) d = form->d;
  const uint8_t flags = in.u8();
  const bool half_inputs = flags & 1;
  const bool pattern = flags & 2;  // else zeros
  Mask mask;
  mask.causal = static_cast<tinyattn::Causal>((flags >> 2) % 3);
  if (flags & 0x10) mask.kv_len = in.u8() % (d.m + 1);
  if (flags & 0x20) {
    mask.window.left = static_cast<int32_t>(in.u8() % (d.m + 2));
    mask.window.right = static_cast<int32_t>(in.u8() % (d.m + 2));
    mask.window.align = static_cast<tinyattn::Align>(in.u8() % 2);
  }
  const bool with_keep = flags & 0x40, with_bias = flags & 0x80;
  tinyattn::Options opt;
  const uint8_t scale_byte = in.u8();
  const uint8_t scale_kind = scale_byte % 8;
  if (scale_byte >= 0x40 && scale_byte < 0xC0)
    opt.scale = kScales[(scale_byte - 0x40) % kScalesSize];
  else if (scale_kind == 1)
    opt.scale = 1.0f;
  else if (scale_kind == 2)
    opt.scale = 0.0625f;
  else if (scale_kind == 3)
    opt.scale = 0.0f;

  tatest::Arena::Scope scope;
  tatest::Problem p = tatest::make_problem(d, 0);
  const size_t mask_elems = d.n * d.m;
  float* bias = tatest::alloc<float>(mask_elems);
  uint8_t* keep = tatest::alloc<uint8_t>(mask_elems);
  FUZZ_REQUIRE(p.ok && bias && keep);
  float* tensors[] = {p.q, p.k, p.v, bias};
  const size_t sizes[] = {d.q_elems(), d.k_elems(), d.v_elems(), mask_elems};
  const size_t row_lengths[] = {d.dk, d.dk, d.dv, d.m};
  const uint32_t seed = in.u8();
  for (int t = 0; t < 4; ++t)
    for (size_t e = 0; e < sizes[t]; ++e)
      tensors[t][e] =
          pattern && t < 3 ? static_cast<float>(static_cast<int>((e * 7 + seed * 13 + t) % 9) - 4) * 0.5f : 0.0f;
  for (size_t e = 0; e < mask_elems; ++e) keep[e] = 1;
  const size_t pokes = in.u8() % 25;
  for (size_t n = 0; n < pokes; ++n) {
    const uint8_t what = in.u8();
    const size_t index = (static_cast<size_t>(in.u8()) << 8 | in.u8());
    const uint8_t value = in.u8();
    if (what >= 0xF0) {  // a keep-mask hole
      keep[index % mask_elems] = 0;
    } else if (what >= 0xE0) {  // the whole row (Dk of Q or K, Dv of V, M of the bias) holding the element
      const int t = what % 4;
      const size_t len = row_lengths[t], at = index % sizes[t] / len * len;
      for (size_t e = at; e < at + len; ++e) tensors[t][e] = pool_or_small(value);
    } else {
      const int t = what % 4;
      tensors[t][index % sizes[t]] = pool_or_small(value);
    }
  }
  if (half_inputs) tatest::round_inputs_to_half(p);
  if (with_keep) mask.keep = keep;
  if (with_bias) mask.bias = bias;
  if (form && form->cache) {  // a decode: causal over the token sequence, windowed in a ring
    mask = Mask::causal_top_left();
    if (form->window) mask.window = {static_cast<int32_t>(form->window) - 1, 0, tinyattn::Align::kTopLeft};
  }
  FUZZ_REQUIRE(tinyattn::validate(d) == Status::kOk && tinyattn::validate(mask, d) == Status::kOk);

  const double scale = tinyattn::effective_scale(d, opt);
  const size_t rows = d.hq * d.n;
  std::vector<RowExpect> expect32(rows), expect16(rows);
  for (size_t row = 0; row < rows; ++row) {
    expect32[row] = expect_row(d, p.q, p.k, p.v, mask, scale, row / d.n, row % d.n, false);
    if (half_inputs && tinyattn::f16_native_products_available())
      expect16[row] = expect_row(d, p.q, p.k, p.v, mask, scale, row / d.n, row % d.n, true);
  }

  tatest::PathRun runs[tatest::kMaxPathRuns];
  const size_t nr = tatest::path_runs_under_test(runs, tatest::kMaxPathRuns);
  for (size_t r = 0; r < nr; ++r) {
    const FloatPath path = runs[r].path;
    if (tatest::is_f16(path) && !half_inputs) continue;
    const bool native = path == FloatPath::kF16Native;
    // fp16 storage of Y and the weights: half an ulp, and half the smallest subnormal.
    const double h_rel = tatest::is_f16(path) ? 1.0 / 2048 : 0.0, h_abs = tatest::is_f16(path) ? 1.0 / 33554432.0 : 0.0;
    for (bool ww : {true, false}) {
      tatest::Arena::Scope run_scope;
      const Run run{runs[r].port, "forward", tatest::path_name(path), ww};
      const Status s = tatest::run_path(path, p, runs[r].port, mask, opt, ww);
      if (s != Status::kOk) fail("status not kOk", run, 0, 0, static_cast<double>(s), 0);
      for (size_t row = 0; row < rows; ++row)
        check_row(native ? expect16[row] : expect32[row], d, mask, row / d.n, row % d.n, p.y + row * d.dv,
                  ww ? p.weights + row * d.m : nullptr, p.lse + row, h_rel, h_abs, run, row);
    }
  }

  if (form) {
    Port ports[tatest::kMaxPorts];
    const size_t np = tatest::ports_under_test(ports);
    Case c;
    c.d = d;
    c.mask = mask;
    c.opt = opt;
    c.p = &p;
    c.expect = &expect32;
    c.ports = ports;
    c.port_count = np;
    form->run(c);
  }
  return 0;
}
