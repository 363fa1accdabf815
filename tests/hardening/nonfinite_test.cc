// Non-finite and extreme inputs: one documented behaviour per case
// (docs/hardening.md, "Non-finite input"), the same on every port, both
// forward algorithms (whole row / key tiles) and the reference.
//
//   NaN logit             its own row: Y, lse NaN; weights NaN except masked keys (0)
//   +inf logits           share all the weight equally (softmax limit)
//   -inf logit            a masked key: weight exactly 0
//   NaN/inf in Q          through the dot product (IEEE): row i only
//   NaN/inf in K          key j's column: every row that sees key j
//   NaN/inf in V[j][c]    column c of the rows that give key j weight > 0;
//                         masked keys never reach Y (0 * inf is not computed)
//   NaN/+inf in bias      at a keep-masked key: ignored (the key stays masked)
//   non-finite scale      kBadScale (status_test.cc)
#include <cfloat>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/reference.h"

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using namespace tatest;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct PortList {
  Port ports[tatest::kMaxPorts];
  size_t n;
  PortList() : n(ports_under_test(ports)) {}
};

// Both algorithms: with weights (whole row) and without (key tiles once M > kKeyTile).
constexpr bool kWithWeights[] = {true, false};

// Runs the reference and one port and requires the same NaN/inf pattern and
// close finite values in Y, lse and (when requested) the weights.
bool agrees(Problem& p, Port port, const Mask& mask, bool with_weights, const char* what,
            const tinyattn::Options& o = {}) {
  run_reference(p, mask, o);
  const Status s = run_port(p, port, mask, o, with_weights);
  const char* pn = tinyattn::port_name(port);
  TA_CHECK_MSG(s == Status::kOk, "%s/%s: status %s", pn, what, tinyattn::to_string(s));
  if (s != Status::kOk) return false;
  const Dims& d = p.d;
  double vmax = 0.0;
  for (size_t x = 0; x < d.v_elems(); ++x)
    if (std::isfinite(p.v[x]) && std::fabs(p.v[x]) > vmax) vmax = std::fabs(p.v[x]);
  const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * (vmax + 1.0), kOutRtol);
  TA_CHECK_MSG(y.ok, "%s/%s (weights %d): Y[%zu] = %g, reference %g", pn, what, with_weights ? 1 : 0, y.index,
               static_cast<double>(p.y[y.index]), p.y_ref[y.index]);
  const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
  TA_CHECK_MSG(l.ok, "%s/%s (weights %d): lse[%zu] = %g, reference %g", pn, what, with_weights ? 1 : 0, l.index,
               static_cast<double>(p.lse[l.index]), p.lse_ref[l.index]);
  bool ok = y.ok && l.ok;
  if (with_weights) {
    const Result w = close(p.weights, p.weights_ref, d.weight_elems(), kWeightAtol, kWeightRtol);
    TA_CHECK_MSG(w.ok, "%s/%s: weight[%zu] = %g, reference %g", pn, what, w.index,
                 static_cast<double>(p.weights[w.index]), p.weights_ref[w.index]);
    ok = ok && w.ok;
  }
  return ok;
}

// Number of non-finite values in row `row` of Y, and whether the other columns are finite.
size_t nonfinite_in_row(const Problem& p, size_t row) {
  size_t n = 0;
  for (size_t c = 0; c < p.d.dv; ++c) n += std::isfinite(p.y[row * p.d.dv + c]) ? 0 : 1;
  return n;
}

// Invariants that hold for any input: every weight row is either NaN
// (with Y and lse NaN), all zero (with Y zero, lse -inf), or in [0,1] summing to 1.
bool weights_well_formed(const Problem& p, const char* pn, const char* what) {
  const Dims& d = p.d;
  size_t bad_rows = 0, first_bad = 0;
  for (size_t row = 0; row < d.hq * d.n; ++row) {
    const float* w = p.weights + row * d.m;
    bool any_nan = false, all_zero = true, in_range = true;
    double sum = 0.0;
    for (size_t j = 0; j < d.m; ++j) {
      any_nan |= std::isnan(w[j]);
      all_zero &= w[j] == 0.0f;
      in_range &= w[j] >= 0.0f && w[j] <= 1.0f;
      sum += w[j];
    }
    bool ok;
    if (any_nan) {
      ok = std::isnan(p.lse[row]) && nonfinite_in_row(p, row) == d.dv;
      for (size_t j = 0; j < d.m; ++j) ok &= std::isnan(w[j]) || w[j] == 0.0f;
    } else if (all_zero) {
      ok = p.lse[row] == -kInf && nonfinite_in_row(p, row) == 0;
      for (size_t c = 0; c < d.dv; ++c) ok &= p.y[row * d.dv + c] == 0.0f;
    } else {
      // Finite values in V (every caller of this check) give a finite Y.
      ok = in_range && std::fabs(sum - 1.0) <= kRowSumTol && !std::isnan(p.lse[row]) && nonfinite_in_row(p, row) == 0;
    }
    if (!ok && bad_rows++ == 0) first_bad = row;
  }
  TA_CHECK_MSG(bad_rows == 0, "%s/%s: %zu malformed weight rows, first %zu", pn, what, bad_rows, first_bad);
  return bad_rows == 0;
}

}  // namespace

TA_CASE("nonfinite: a NaN in Q poisons only its own row; masked rows stay zero") {
  PortList pl;
  const Dims d{5, 7, 4, 3, 2, 1};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (bool ww : kWithWeights) {
      Arena::Scope scope;
      Problem p = make_problem(d, 101);
      p.q[(1 * d.n + 2) * d.dk + 3] = kNaN;  // head 1, row 2
      p.q[(0 * d.n + 0) * d.dk + 0] = kNaN;  // head 0, row 0: fully masked below
      TA_CHECK(agrees(p, pl.ports[pi], Mask::none(), ww, "nan-q"));
      for (size_t row = 0; row < d.hq * d.n; ++row) {
        const bool poisoned = row == 1 * d.n + 2 || row == 0;
        TA_CHECK_MSG(nonfinite_in_row(p, row) == (poisoned ? d.dv : 0), "%s: row %zu has %zu non-finite",
                     tinyattn::port_name(pl.ports[pi]), row, nonfinite_in_row(p, row));
      }
      // The same NaN with row 0 fully masked (causal bottom-right with N > M
      // leaves the first N-M rows without keys): zero row, lse -inf.
      const Dims tall{9, 7, 4, 3, 2, 1};
      Arena::Scope inner;
      Problem t = make_problem(tall, 102);
      t.q[0] = kNaN;
      TA_CHECK(agrees(t, pl.ports[pi], Mask::causal_bottom_right(), ww, "nan-q-masked-row"));
      TA_CHECK_MSG(t.y[0] == 0.0f && t.lse[0] == -kInf, "%s: fully masked NaN row is not zero",
                   tinyattn::port_name(pl.ports[pi]));
    }
}

TA_CASE("nonfinite: +-inf in Q gives +-inf logits; the +inf keys share the weight") {
  PortList pl;
  const Dims d{3, 9, 4, 2};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (bool ww : kWithWeights) {
      Arena::Scope scope;
      Problem p = make_problem(d, 111);
      p.q[1 * d.dk + 0] = kInf;   // row 1: +inf where k[j][0] > 0, -inf (masked) where < 0
      p.q[2 * d.dk + 0] = -kInf;  // row 2: the opposite keys
      TA_CHECK(agrees(p, pl.ports[pi], Mask::none(), ww, "inf-q"));
      if (!ww) continue;
      size_t positive = 0;
      for (size_t j = 0; j < d.m; ++j) positive += p.k[j * d.dk] > 0.0f ? 1 : 0;
      for (size_t j = 0; j < d.m; ++j) {
        const bool pos = p.k[j * d.dk] > 0.0f;
        const float w1 = p.weights[1 * d.m + j], w2 = p.weights[2 * d.m + j];
        TA_CHECK_MSG(w1 == (pos ? 1.0f / static_cast<float>(positive) : 0.0f), "%s: row 1 key %zu weight %g",
                     tinyattn::port_name(pl.ports[pi]), j, static_cast<double>(w1));
        TA_CHECK_MSG(w2 == (pos ? 0.0f : 1.0f / static_cast<float>(d.m - positive)), "%s: row 2 key %zu weight %g",
                     tinyattn::port_name(pl.ports[pi]), j, static_cast<double>(w2));
      }
      TA_CHECK((p.lse[1] == kInf && p.lse[2] == kInf && std::isfinite(p.lse[0])));
    }
}

TA_CASE("nonfinite: NaN or inf in K reaches exactly the rows that see that key") {
  PortList pl;
  const Dims d{8, 8, 5, 3};
  const float bad[] = {kNaN, kInf, -kInf};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (float b : bad)
      for (bool ww : kWithWeights) {
        Arena::Scope scope;
        Problem p = make_problem(d, 121);
        const size_t j = 3;
        p.k[j * d.dk + 2] = b;
        // Causal top-left: rows i < 3 never see key 3.
        TA_CHECK(agrees(p, pl.ports[pi], Mask::causal_top_left(), ww, "bad-k"));
        for (size_t i = 0; i < j; ++i)
          TA_CHECK_MSG(nonfinite_in_row(p, i) == 0, "%s: row %zu cannot see key %zu but is not finite",
                       tinyattn::port_name(pl.ports[pi]), i, j);
        if (std::isnan(b))
          for (size_t i = j; i < d.n; ++i)
            TA_CHECK_MSG(nonfinite_in_row(p, i) == d.dv, "%s: row %zu sees the NaN key but is finite",
                         tinyattn::port_name(pl.ports[pi]), i);
      }
}

TA_CASE("nonfinite: NaN/inf in V poisons one column of the rows that weight that key") {
  PortList pl;
  // M = 300 > kKeyTile: without weights this takes the tiled path.
  const Dims shapes[] = {{6, 9, 4, 3}, {4, 300, 4, 3}};
  const float bad[] = {kNaN, kInf, -kInf};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : shapes)
      for (float b : bad)
        for (bool ww : kWithWeights) {
          Arena::Scope scope;
          Problem p = make_problem(d, 131);
          const size_t j = 2, c = 1;
          p.v[j * d.dv + c] = b;
          TA_CHECK(agrees(p, pl.ports[pi], Mask::causal_top_left(), ww, "bad-v"));
          for (size_t i = 0; i < d.n; ++i) {
            const size_t want = i >= j ? 1 : 0;  // only column c, only rows that see key 2
            TA_CHECK_MSG(nonfinite_in_row(p, i) == want && (want == 0 || !std::isfinite(p.y[i * d.dv + c])),
                         "%s M=%zu: row %zu has %zu non-finite outputs, want %zu", tinyattn::port_name(pl.ports[pi]),
                         d.m, i, nonfinite_in_row(p, i), want);
          }
        }
}

TA_CASE("nonfinite: masked keys never reach Y, even when their value row is NaN or inf") {
  PortList pl;
  const Dims shapes[] = {{5, 11, 4, 3}, {3, 300, 4, 3}};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : shapes)
      for (bool ww : kWithWeights) {
        Arena::Scope scope;
        Problem p = make_problem(d, 141);
        uint8_t* keep = alloc<uint8_t>(d.n * d.m);
        float* bias = alloc<float>(d.n * d.m);
        for (size_t x = 0; x < d.n * d.m; ++x) {
          keep[x] = 1;
          bias[x] = 0.25f;
        }
        // Key 1: dropped by the keep mask (its bias NaN: must not matter);
        // key 4: -inf bias; key 7: +inf bias on one row (the others drop to 0).
        for (size_t i = 0; i < d.n; ++i) {
          keep[i * d.m + 1] = 0;
          bias[i * d.m + 1] = kNaN;
          bias[i * d.m + 4] = -kInf;
        }
        bias[0 * d.m + 7] = kInf;
        for (size_t c = 0; c < d.dv; ++c) {
          p.v[1 * d.dv + c] = kNaN;
          p.v[4 * d.dv + c] = c % 2 ? kInf : -kInf;
          p.v[9 * d.dv + c] = kInf;  // row 0 gives key 9 weight 0 (key 7 is +inf there)
        }
        Mask m = Mask::keep_bytes(keep);
        m.bias = bias;
        TA_CHECK(agrees(p, pl.ports[pi], m, ww, "masked-nonfinite-v"));
        TA_CHECK_MSG(nonfinite_in_row(p, 0) == 0, "%s M=%zu: row 0 is not finite", tinyattn::port_name(pl.ports[pi]),
                     d.m);
        for (size_t i = 1; i < d.n; ++i)  // rows 1.. weight key 9 (+inf value): every column +inf
          TA_CHECK_MSG(nonfinite_in_row(p, i) == d.dv, "%s M=%zu: row %zu", tinyattn::port_name(pl.ports[pi]), d.m,
                       i);
        if (ww) {
          for (size_t i = 0; i < d.n; ++i)
            TA_CHECK((p.weights[i * d.m + 1] == 0.0f && p.weights[i * d.m + 4] == 0.0f));
          TA_CHECK(p.weights[7] == 1.0f);
        }
      }
}

TA_CASE("nonfinite: NaN in bias poisons its row unless the key is masked") {
  PortList pl;
  const Dims d{4, 6, 3, 2};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem p = make_problem(d, 151);
    float* bias = alloc<float>(d.n * d.m);
    uint8_t* bits = alloc<uint8_t>(d.n * tinyattn::keep_bits_row_bytes(d.m));
    for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
    for (size_t x = 0; x < d.n * tinyattn::keep_bits_row_bytes(d.m); ++x) bits[x] = 0xFF;
    bias[1 * d.m + 2] = kNaN;                         // row 1: visible NaN
    bias[2 * d.m + 3] = kNaN;                         // row 2: NaN at a dropped key
    bits[2 * tinyattn::keep_bits_row_bytes(d.m)] &= static_cast<uint8_t>(~(1u << 3));
    bias[3 * d.m + 5] = kInf;                         // row 3: +inf at a dropped key
    bits[3 * tinyattn::keep_bits_row_bytes(d.m)] &= static_cast<uint8_t>(~(1u << 5));
    Mask m = Mask::keep_bitmask(bits);
    m.bias = bias;
    TA_CHECK(agrees(p, pl.ports[pi], m, true, "nan-bias"));
    TA_CHECK_MSG(nonfinite_in_row(p, 0) == 0 && nonfinite_in_row(p, 1) == d.dv && nonfinite_in_row(p, 2) == 0 &&
                     nonfinite_in_row(p, 3) == 0,
                 "%s: NaN bias rows", tinyattn::port_name(pl.ports[pi]));
    // Row 1 is NaN, but its keys outside the NaN keep their own meaning: none masked here.
    TA_CHECK((std::isnan(p.weights[1 * d.m + 0]) && p.weights[2 * d.m + 3] == 0.0f && p.weights[3 * d.m + 5] == 0.0f));
  }
}

TA_CASE("nonfinite: in a NaN row, masked keys keep weight exactly 0") {
  PortList pl;
  const Dims d{3, 8, 4, 2};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem p = make_problem(d, 161);
    uint8_t* keep = alloc<uint8_t>(d.n * d.m);
    for (size_t x = 0; x < d.n * d.m; ++x) keep[x] = (x % 3) != 0;
    p.q[1 * d.dk] = kNaN;
    TA_CHECK(agrees(p, pl.ports[pi], Mask::keep_bytes(keep), true, "nan-row-masked-keys"));
    for (size_t j = 0; j < d.m; ++j) {
      const float w = p.weights[1 * d.m + j];
      TA_CHECK_MSG(keep[1 * d.m + j] ? std::isnan(w) : w == 0.0f, "%s: key %zu weight %g",
                   tinyattn::port_name(pl.ports[pi]), j, static_cast<double>(w));
    }
  }
}

TA_CASE("extreme: large finite Q/K and +-FLT_MAX bias keep weights in [0,1], rows normalized") {
  PortList pl;
  const Dims d{6, 10, 8, 3};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const char* pn = tinyattn::port_name(pl.ports[pi]);
    Arena::Scope scope;
    // |q| * |k| * Dk stays below FLT_MAX (the documented no-overflow bound), logits ~1e35.
    Problem p = make_problem(d, 171, 5e17f);
    TA_CHECK(run_port(p, pl.ports[pi], Mask::none()) == Status::kOk);
    TA_CHECK(weights_well_formed(p, pn, "q,k ~ 1e18"));
    for (size_t x = 0; x < d.weight_elems(); ++x) TA_CHECK(!std::isnan(p.weights[x]));
    TA_CHECK(in_value_hull(d, p.y, p.v, Mask::none(), 1e-5).ok);

    Arena::Scope inner;
    Problem b = make_problem(d, 172);
    float* bias = alloc<float>(d.n * d.m);
    Rng rng(7);
    for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = rng.uniform(0.0f, 1.0f) < 0.5f ? FLT_MAX : -FLT_MAX;
    TA_CHECK(agrees(b, pl.ports[pi], Mask::additive(bias), true, "bias+-FLT_MAX"));
    TA_CHECK(weights_well_formed(b, pn, "bias+-FLT_MAX"));

    // scale = FLT_MAX: logits overflow to +-inf (never NaN), the +inf ones share the weight.
    tinyattn::Options huge;
    huge.scale = FLT_MAX;
    TA_CHECK(run_port(b, pl.ports[pi], Mask::none(), huge) == Status::kOk);
    TA_CHECK(weights_well_formed(b, pn, "scale FLT_MAX"));
    for (size_t x = 0; x < d.weight_elems(); ++x) TA_CHECK(!std::isnan(b.weights[x]));
  }
}

TA_CASE("extreme: subnormal inputs and scale give uniform weights and bounded outputs") {
  PortList pl;
  const Dims d{4, 12, 6, 5};
  const float sub = 1e-40f;  // subnormal in fp32
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const char* pn = tinyattn::port_name(pl.ports[pi]);
    Arena::Scope scope;
    Problem p = make_problem(d, 181);
    for (size_t x = 0; x < d.q_elems(); ++x) p.q[x] *= sub;
    for (size_t x = 0; x < d.v_elems(); ++x) p.v[x] *= sub;
    tinyattn::Options tiny;
    tiny.scale = sub;
    for (const tinyattn::Options& o : {tinyattn::Options{}, tiny}) {
      TA_CHECK(run_port(p, pl.ports[pi], Mask::none(), o) == Status::kOk);
      TA_CHECK(weights_well_formed(p, pn, "subnormal"));
      double worst = 0.0;
      for (size_t x = 0; x < d.weight_elems(); ++x)
        worst = std::fmax(worst, std::fabs(p.weights[x] - 1.0 / static_cast<double>(d.m)));
      TA_CHECK_MSG(worst <= 1e-6, "%s: subnormal logits: weights deviate from 1/M by %g", pn, worst);
      const double vmax = max_abs(p.v, d.v_elems());
      for (size_t x = 0; x < d.y_elems(); ++x)
        TA_CHECK_MSG(std::isfinite(p.y[x]) && std::fabs(p.y[x]) <= vmax, "%s: y[%zu] = %g beyond max|v| %g", pn, x,
                     static_cast<double>(p.y[x]), vmax);
    }
  }
}

TA_CASE("extreme: values up to FLT_MAX/(2M) give finite outputs on both algorithms") {
  PortList pl;
  const Dims shapes[] = {{3, 17, 4, 4}, {2, 300, 4, 4}};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : shapes)
      for (bool ww : kWithWeights) {
        Arena::Scope scope;
        Problem p = make_problem(d, 191);
        const float big = FLT_MAX / (2.0f * static_cast<float>(d.m));
        for (size_t x = 0; x < d.v_elems(); ++x) p.v[x] = x % 3 == 0 ? -big : big;
        TA_CHECK(run_port(p, pl.ports[pi], Mask::none(), {}, ww) == Status::kOk);
        size_t bad = 0;
        // A convex combination, up to rounding (relative 1e-5).
        const float bound = big * (1.0f + 1e-5f);
        for (size_t x = 0; x < d.y_elems(); ++x) bad += std::isfinite(p.y[x]) && std::fabs(p.y[x]) <= bound ? 0 : 1;
        TA_CHECK_MSG(bad == 0, "%s M=%zu weights %d: %zu outputs not finite or beyond max|v|",
                     tinyattn::port_name(pl.ports[pi]), d.m, ww ? 1 : 0, bad);
      }
}

TA_CASE("extreme: any mix of NaN, inf, FLT_MAX, subnormal and 0 keeps weight rows well formed") {
  PortList pl;
  const float pool[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f, -1.0f, 3.5f, 1e18f, -1e18f, FLT_MAX, -FLT_MAX,
                        kInf, -kInf, kNaN};
  const size_t kPool = sizeof pool / sizeof pool[0];
  const Dims d{5, 9, 3, 2, 2, 1};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (uint64_t seed = 0; seed < 40; ++seed) {
      Arena::Scope scope;
      Problem p = make_problem(d, 200 + seed);
      float* bias = alloc<float>(d.n * d.m);
      Rng rng(seed);
      // Mostly ordinary values, a few extreme ones, so rows of every kind occur.
      auto pick = [&](float ordinary) {
        return rng.uniform(0.0f, 1.0f) < 0.15f ? pool[rng.next_u64() % kPool] : ordinary;
      };
      for (size_t x = 0; x < d.q_elems(); ++x) p.q[x] = pick(p.q[x]);
      for (size_t x = 0; x < d.k_elems(); ++x) p.k[x] = pick(p.k[x]);
      for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = pick(0.0f);
      TA_CHECK(run_port(p, pl.ports[pi], Mask::additive(bias)) == Status::kOk);
      TA_CHECK(weights_well_formed(p, tinyattn::port_name(pl.ports[pi]), "mixed"));
    }
}

TA_CASE("nonfinite: a later +inf logit drops the earlier keys, infinite values included") {
  // With key tiles, the +inf logit arrives after a tile whose values were
  // already accumulated; those keys end with weight 0 and must leave no NaN.
  PortList pl;
  const Dims shapes[] = {{2, 9, 4, 3}, {2, 300, 4, 3}};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : shapes)
      for (bool ww : kWithWeights) {
        Arena::Scope scope;
        Problem p = make_problem(d, 211);
        float* bias = alloc<float>(d.n * d.m);
        for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
        const size_t hot = d.m - 1;
        bias[0 * d.m + hot] = kInf;
        for (size_t c = 0; c < d.dv; ++c) p.v[1 * d.dv + c] = kInf;  // key 1, before the +inf key
        TA_CHECK(agrees(p, pl.ports[pi], Mask::additive(bias), ww, "late-inf"));
        bool exact = true;
        for (size_t c = 0; c < d.dv; ++c) exact &= p.y[c] == p.v[hot * d.dv + c];
        TA_CHECK_MSG(exact, "%s M=%zu weights %d: row 0 is not V[%zu]", tinyattn::port_name(pl.ports[pi]), d.m,
                     ww ? 1 : 0, hot);
        TA_CHECK_MSG(nonfinite_in_row(p, 1) == d.dv, "%s M=%zu: row 1 weights the +inf value",
                     tinyattn::port_name(pl.ports[pi]), d.m);
      }
}
