// Regression tests for reproduced breaks of the non-finite contract
// (docs/hardening.md, "Non-finite input"): fp16 against fp32, the key-tile
// path against the whole-row path, and ports against each other when a dot
// product overflows fp32. Each runs on every compiled port and every float
// path (fp32, fp16 in each compute mode this build runs), with the weights
// requested (whole rows) and not (key tiles, where M exceeds the tile).
//
// Expected outputs come from the reference on the same inputs (rounded to
// fp16 first where fp16 runs too), which states the contract, except where
// the contract departs from double precision: a key whose fp32 weight
// underflows to exactly 0 contributes nothing, so its value row cannot reach
// Y even when it is infinite; there the reference runs with that key masked.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "float_paths.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/reference.h"

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Status;
using namespace tatest;

namespace {

constexpr float kHalfMax = 65504.0f;  // the largest finite half

enum class Paths { kAll, kF32, kF16 };

// Runs p on every port and path `which` selects, with and without weights,
// and requires p.y_ref / p.lse_ref / p.weights_ref (set by the caller).
void check_all(Problem& p, const Mask& mask, const char* what, Paths which = Paths::kAll,
               const tinyattn::Options& o = {}) {
  PathRun runs[kMaxPathRuns];
  const size_t nr = path_runs_under_test(runs, kMaxPathRuns);
  for (size_t r = 0; r < nr; ++r) {
    const FloatPath path = runs[r].path;
    if ((which == Paths::kF32 && is_f16(path)) || (which == Paths::kF16 && !is_f16(path))) continue;
    for (bool ww : {true, false}) {
      Arena::Scope scope;
      const Status s = run_path(path, p, runs[r].port, mask, o, ww);
      const char* pn = tinyattn::port_name(runs[r].port);
      const char* alg = path_uses_tiles(path, p.d, ww) ? "tiled" : "plain";
      TA_CHECK_MSG(s == Status::kOk, "%s/%s/%s %s: status %s", what, pn, path_name(path), alg, tinyattn::to_string(s));
      if (s != Status::kOk) continue;
      const Agreement a = against_reference(p, path, ww);
      TA_CHECK_MSG(a.y.ok, "%s/%s/%s %s: y[%zu] = %g, want %g", what, pn, path_name(path), alg, a.y.index,
                   static_cast<double>(p.y[a.y.index]), p.y_ref[a.y.index]);
      TA_CHECK_MSG(a.lse.ok, "%s/%s/%s %s: lse[%zu] = %g, want %g", what, pn, path_name(path), alg, a.lse.index,
                   static_cast<double>(p.lse[a.lse.index]), p.lse_ref[a.lse.index]);
      TA_CHECK_MSG(a.weights.ok, "%s/%s/%s %s: weight[%zu] = %g, want %g", what, pn, path_name(path), alg,
                   a.weights.index, static_cast<double>(p.weights[a.weights.index]), p.weights_ref[a.weights.index]);
    }
  }
}

// A problem with ordinary values, already rounded to fp16 so every path reads the same numbers.
Problem make_f16_exact(const Dims& d, uint64_t seed) {
  Problem p = make_problem(d, seed);
  if (p.ok) round_inputs_to_half(p);
  return p;
}

float* zeros(size_t n) {
  float* x = alloc<float>(n);
  if (x) std::memset(x, 0, n * sizeof(float));
  return x;
}

// Q = K = 0 (every logit is its bias), Dk = Dv = 1, V = 0 except the given
// entries; bias 0 except the given entries. Keys `dead` have a logit so far
// below the maximum that their fp32 weight is exactly 0: the expectation is
// the reference with them masked out.
struct Entry {
  size_t key;
  float value;
};
void underflowed_values(size_t m, std::initializer_list<Entry> values, std::initializer_list<Entry> biases,
                        std::initializer_list<size_t> dead, const char* what) {
  Arena::Scope scope;
  const Dims d{1, m, 1, 1};
  Problem p = make_problem(d, 1);
  float* bias = zeros(m);
  uint8_t* keep = alloc<uint8_t>(m);
  TA_CHECK((p.ok && bias && keep));
  if (!p.ok || !bias || !keep) return;
  std::memset(p.q, 0, d.q_elems() * sizeof(float));
  std::memset(p.k, 0, d.k_elems() * sizeof(float));
  std::memset(p.v, 0, d.v_elems() * sizeof(float));
  for (const Entry& e : values) p.v[e.key] = e.value;
  for (const Entry& e : biases) bias[e.key] = e.value;
  float top = -kInf;
  for (size_t j = 0; j < m; ++j) top = bias[j] > top ? bias[j] : top;
  for (size_t j = 0; j < m; ++j) keep[j] = 1;
  for (size_t j : dead) {
    // The premise: exp(s_j - max) is below half the smallest fp32 subnormal.
    TA_CHECK_MSG(static_cast<float>(std::exp(static_cast<double>(bias[j]) - top)) == 0.0f,
                 "%s: key %zu's weight does not underflow", what, j);
    keep[j] = 0;
  }
  Mask expect = Mask::keep_bytes(keep);
  expect.bias = bias;
  run_reference(p, expect);
  check_all(p, Mask::additive(bias), what);
}

}  // namespace

TA_CASE("nonfinite regression: fp16 key tiles drop an infinite value when a later key's logit is +inf") {
  // Dims (1, 12, 2, 2): fp16 without weights walks two key tiles of 8; the
  // +inf bias on key 10 (second tile) leaves key 0 (V[0][0] = +inf, first
  // tile) with weight exactly 0, so Y is V[10].
  Arena::Scope scope;
  const Dims d{1, 12, 2, 2};
  Problem p = make_f16_exact(d, 1601);
  float* bias = zeros(d.m);
  TA_CHECK((p.ok && bias));
  if (!p.ok || !bias) return;
  bias[10] = kInf;
  p.v[0] = kInf;
  run_reference(p, Mask::additive(bias));
  TA_CHECK((p.y_ref[0] == p.v[10 * d.dv] && p.y_ref[1] == p.v[10 * d.dv + 1]));
  check_all(p, Mask::additive(bias), "late +inf logit");
}

TA_CASE("nonfinite regression: in a NaN row a keep-masked key keeps weight 0 in fp16") {
  // Dims (1, 4, 2, 2), keep {1, 0, 1, 1}, bias {0, 0, NaN, 0}: weights NaN 0 NaN NaN.
  Arena::Scope scope;
  const Dims d{1, 4, 2, 2};
  Problem p = make_f16_exact(d, 1602);
  float* bias = zeros(d.m);
  uint8_t* keep = alloc<uint8_t>(d.m);
  TA_CHECK((p.ok && bias && keep));
  if (!p.ok || !bias || !keep) return;
  const uint8_t keep_row[] = {1, 0, 1, 1};
  std::memcpy(keep, keep_row, sizeof keep_row);
  bias[2] = kNaN;
  Mask m = Mask::keep_bytes(keep);
  m.bias = bias;
  run_reference(p, m);
  TA_CHECK((std::isnan(p.weights_ref[0]) && p.weights_ref[1] == 0.0 && std::isnan(p.weights_ref[2])));
  check_all(p, m, "NaN row, masked key");
}

TA_CASE("nonfinite regression: M = 9, fp16 key tiles, an infinite value at a key whose weight underflows") {
  // V[0] = +inf, V[8] = 1; key 0's logit is 200 (or 110) below key 8's.
  underflowed_values(9, {{0, kInf}, {8, 1.0f}}, {{8, 200.0f}}, {0}, "M=9 bias 200");
  underflowed_values(9, {{0, kInf}, {8, 1.0f}}, {{0, -50.0f}, {8, 60.0f}}, {0}, "M=9 bias -50/60");
  // +inf and -inf at zero-weight keys of one tile: NaN if either reached Y.
  underflowed_values(9, {{0, kInf}, {1, -kInf}, {8, 1.0f}}, {{0, -50.0f}, {1, -50.0f}, {8, 60.0f}}, {0, 1},
                     "M=9 +-inf values");
}

TA_CASE("nonfinite regression: M = 257, fp32 key tiles, an infinite value at a key whose weight underflows") {
  // y = 1 and lse = 60 on both algorithms: key 0's weight e^-110 is 0 in fp32.
  underflowed_values(257, {{0, kInf}, {256, 1.0f}}, {{0, -50.0f}, {256, 60.0f}}, {0}, "M=257 bias -50/60");
  underflowed_values(257, {{0, kInf}, {1, -kInf}, {256, 1.0f}}, {{0, -50.0f}, {1, -50.0f}, {256, 60.0f}}, {0, 1},
                     "M=257 +-inf values");
}

namespace {

// N = 1, M = keys, Dk = dk: Q from `q` (then zeros), K rows from `k` (each
// dk long), V ordinary. The reference's dot products are exact in double, the
// rule the ports follow when their fp32 dot product is not finite.
void overflowing_dot(size_t keys, size_t dk, const float* q, size_t nq, const float* k, Paths which,
                     const char* what) {
  Arena::Scope scope;
  const Dims d{1, keys, dk, 2};
  Problem p = make_f16_exact(d, 1603);
  TA_CHECK(p.ok);
  if (!p.ok) return;
  std::memset(p.q, 0, d.q_elems() * sizeof(float));
  std::memcpy(p.q, q, nq * sizeof(float));
  std::memcpy(p.k, k, d.k_elems() * sizeof(float));
  run_reference(p, Mask::none());
  check_all(p, Mask::none(), what, which);
}

}  // namespace

TA_CASE("overflow regression: a dot product of +inf and an overflowing product is +inf on every port") {
  // Q = [-inf, big], K = [-0.5, -2]: the products are +inf and -2 big, whose
  // exact sum is +inf (weight 1, lse +inf, Y = V's row), at Dk = 2 and,
  // padded with zeros, at Dk = 16. big = FLT_MAX in fp32, the largest half in fp16.
  for (size_t dk : {size_t{2}, size_t{16}}) {
    float k[16] = {-0.5f, -2.0f};
    const float q32[] = {-kInf, FLT_MAX}, q16[] = {-kInf, kHalfMax};
    overflowing_dot(1, dk, q32, 2, k, Paths::kF32, dk == 2 ? "-inf*-0.5 + FLT_MAX*-2, Dk 2" : "... Dk 16");
    overflowing_dot(1, dk, q16, 2, k, Paths::kF16, dk == 2 ? "-inf*-0.5 + 65504*-2, Dk 2" : "... Dk 16");
  }
}

TA_CASE("overflow regression: partial sums that overflow give the exact, finite logit on every port") {
  // Key 0: Q = [big, big, -big, -big] against ones: exact dot 0, while a
  // left-to-right fp32 sum reaches +inf; key 1: K = 0. Both logits 0: weights
  // 1/2 each, lse = log 2. Then key 0 = [1, 1, 1, 0.5]: exact dot big / 2,
  // all the weight on key 0. Also at Dk = 16 (eight big, eight -big), where
  // lanes of every SIMD width group the terms differently.
  struct Case {
    size_t dk;
    float k0_last;  // the last of key 0's ones
    const char* what;
  };
  const Case cases[] = {{4, 1.0f, "exact 0, Dk 4"}, {4, 0.5f, "exact big/2, Dk 4"}, {16, 1.0f, "exact 0, Dk 16"}};
  for (const Case& c : cases)
    for (Paths which : {Paths::kF32, Paths::kF16}) {
      const float big = which == Paths::kF32 ? FLT_MAX : kHalfMax;
      float q[16], k[32] = {};
      for (size_t x = 0; x < c.dk; ++x) {
        q[x] = x < c.dk / 2 ? big : -big;
        k[x] = 1.0f;
      }
      k[c.dk - 1] = c.k0_last;
      overflowing_dot(2, c.dk, q, c.dk, k, which, c.what);
    }
}

namespace {

// The fp32 results of one call form against the reference's (Y, and lse and
// the weights where the form gives them): NaN and +-inf exactly where the
// reference has them, finite values within the fp32 tolerances (support.h).
void check_form(const char* what, tinyattn::Port port, Status s, const Problem& p, const float* y, const float* lse,
                const float* weights) {
  const char* pn = tinyattn::port_name(port);
  TA_CHECK_MSG(s == Status::kOk, "%s/%s: status %s", what, pn, tinyattn::to_string(s));
  if (s != Status::kOk) return;
  const Dims& d = p.d;
  const Result ry = close(y, p.y_ref, d.y_elems(), kOutAtol * (max_abs(p.v, d.v_elems()) + 1.0), kOutRtol);
  TA_CHECK_MSG(ry.ok, "%s/%s: y[%zu] = %g, want %g", what, pn, ry.index, static_cast<double>(y[ry.index]),
               p.y_ref[ry.index]);
  if (lse) {
    const Result rl = close(lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
    TA_CHECK_MSG(rl.ok, "%s/%s: lse[%zu] = %g, want %g", what, pn, rl.index, static_cast<double>(lse[rl.index]),
                 p.lse_ref[rl.index]);
  }
  if (weights) {
    const Result rw = close(weights, p.weights_ref, d.weight_elems(), kWeightAtol, kWeightRtol);
    TA_CHECK_MSG(rw.ok, "%s/%s: weight[%zu] = %g, want %g", what, pn, rw.index, static_cast<double>(weights[rw.index]),
                 p.weights_ref[rw.index]);
  }
}

// A problem holding exactly q, k and v (whole tensors), its reference
// computed at Options::scale = scale (*o gets those options). p.ok is false
// when the arena is full.
Problem given_tensors(const Dims& d, const float* q, const float* k, const float* v, float scale,
                      tinyattn::Options* o) {
  Problem p = make_problem(d, 1604);
  o->scale = scale;
  if (!p.ok) return p;
  std::memcpy(p.q, q, d.q_elems() * sizeof(float));
  std::memcpy(p.k, k, d.k_elems() * sizeof(float));
  std::memcpy(p.v, v, d.v_elems() * sizeof(float));
  run_reference(p, Mask::none(), *o);
  return p;
}

}  // namespace

TA_CASE("overflow regression: a dot product that overflows to -inf is recomputed, not masked, in every call form") {
  // The reproduction of issue 37: N = 1, M = 2, Dk = Dv = 1, q = [-25],
  // K = [0, FLT_MAX], V = [0, 1], scale 1e-40. Key 1's fp32 product
  // -25 * FLT_MAX is -inf, but its logit is -25 * FLT_MAX * 1e-40 = -0.85
  // (the overflow rule), so key 1 keeps a weight near 0.3; a fused block that
  // took the -inf for a masked key gave Y = 0 and lse = 0. Through forward(),
  // Attention<S> and KvCache::attend, on every port, with and without weights.
  Arena::Scope scope;
  const float q = -25.0f, k[2] = {0.0f, FLT_MAX}, v[2] = {0.0f, 1.0f};
  tinyattn::Options o;
  Problem p = given_tensors(Dims{1, 2, 1, 1}, &q, k, v, 1e-40f, &o);  // a subnormal scale: any finite one is accepted
  TA_CHECK(p.ok);
  if (!p.ok) return;
  // The premise: the reference holds the exact logit, so key 1's weight is
  // e^s / (1 + e^s) with s = q * FLT_MAX * scale in double.
  const double logit = static_cast<double>(q) * static_cast<double>(FLT_MAX) * static_cast<double>(*o.scale);
  const double weight = std::exp(logit) / (1.0 + std::exp(logit));
  TA_CHECK_MSG(std::fabs(p.y_ref[0] - weight) < 1e-9 && std::fabs(p.lse_ref[0] - std::log(1.0 + std::exp(logit))) < 1e-9,
               "reference: y %g lse %g, want %g and %g", p.y_ref[0], p.lse_ref[0], weight, std::log(1.0 + std::exp(logit)));

  check_all(p, Mask::none(), "issue 37, forward()", Paths::kF32, o);

  using A = tinyattn::Attention<tinyattn::Shape<1, 2, 1, 1>>;
  static A attn;
  static A::Q aq;
  static A::K ak;
  static A::V av;
  static A::Y ay;
  static A::Lse alse;
  static A::Weights aw;
  aq[0] = q;
  for (size_t j = 0; j < 2; ++j) ak[j] = k[j], av[j] = v[j];
  // A linear cache of two tokens, the second one attending to both.
  static tinyattn::KvCache<float, 1, 1, 1, 1, 2> cache;
  float cy = 0.0f;

  tinyattn::Port ports[kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t i = 0; i < np; ++i) {
    o.port = ports[i];
    for (bool ww : {true, false}) {
      ay[0] = alse[0] = aw[0] = aw[1] = kNaN;
      const Status s = attn(aq, ak, av, ay, alse, Mask{}, ww ? &aw : nullptr, o);
      check_form(ww ? "issue 37, Attention<Shape<1, 2, 1, 1>> with weights" : "issue 37, Attention<Shape<1, 2, 1, 1>>",
                 ports[i], s, p, ay.data(), alse.data(), ww ? aw.data() : nullptr);
    }
    cache.clear();
    Status s = cache.append(&k[0], &v[0], 1);
    if (s == Status::kOk) s = cache.append(&k[1], &v[1], 1);
    cy = kNaN;
    if (s == Status::kOk) s = cache.attend(&q, &cy, 1, o);
    check_form("issue 37, KvCache::attend", ports[i], s, p, &cy, nullptr, nullptr);
  }
}

TA_CASE("overflow regression: a recomputed logit keeps small products beside a huge entry") {
  // N = 1, M = 2, Dk = 3, Dv = 1: q = [2, FLT_MAX, 0], K = [[3, 0, FLT_MAX],
  // [3, 0, 0]], V = [1, 2], scale FLT_MAX. Both exact logits are 6 FLT_MAX,
  // beyond fp32, so both are +inf and share the weight: y = 1.5, lse = +inf.
  // Scaling q and k by their largest entries (FLT_MAX) made 2 * 3 underflow
  // to 0 in key 0's recomputed logit, which then came out finite: weight 0
  // for key 0 and y = 2.
  Arena::Scope scope;
  const float q[3] = {2.0f, FLT_MAX, 0.0f}, k[6] = {3.0f, 0.0f, FLT_MAX, 3.0f, 0.0f, 0.0f}, v[2] = {1.0f, 2.0f};
  tinyattn::Options o;
  Problem p = given_tensors(Dims{1, 2, 3, 1}, q, k, v, FLT_MAX, &o);
  TA_CHECK(p.ok);
  if (!p.ok) return;
  TA_CHECK_MSG(p.y_ref[0] == 1.5 && p.lse_ref[0] == static_cast<double>(kInf), "reference: y %g lse %g, want 1.5, inf",
               p.y_ref[0], p.lse_ref[0]);
  check_all(p, Mask::none(), "small products beside FLT_MAX, scale FLT_MAX", Paths::kF32, o);
}
