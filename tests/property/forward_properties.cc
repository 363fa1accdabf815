// Properties of forward attention, for every port, on shapes that are and are
// not multiples of the vector width. Written once; runs on every target.
#include <cmath>
#include <initializer_list>
#include <limits>

#include "float_paths.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/reference.h"

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using namespace tatest;

namespace {

// Odd sizes on purpose: 1, 3, 7, 17, 33, 100 (less than, around and above
// every vector width from 4 to 16 lanes).
const Dims kShapes[] = {
    {1, 1, 1, 1},    {1, 3, 7, 3},      {3, 7, 17, 5},    {7, 17, 33, 7},   {17, 33, 16, 17},
    {33, 17, 8, 33}, {16, 16, 32, 32},  {100, 100, 33, 17}, {3, 100, 64, 9},
};

struct PortList {
  Port ports[tatest::kMaxPorts];
  size_t n;
  PortList() : n(ports_under_test(ports)) {}
};

// Checks one port against the reference and against the seed's properties.
void check_forward(const Dims& d, const Mask& mask, Port port, uint64_t seed, const char* what,
                   const tinyattn::Options& opt = {}, tinyattn::Scratch scratch = tinyattn::Scratch::kMinimal) {
  Arena::Scope scope;
  Problem p = make_problem(d, seed);
  if (!p.ok) {
    TA_IGNORE(::tatest::fmt("%s: the test arena is too small", what).c_str());
  }
  run_reference(p, mask, opt);
  const Status s = run_port(p, port, mask, opt, true, scratch);
  const char* pn = tinyattn::port_name(port);
  TA_CHECK_MSG(s == Status::kOk, "%s/%s: status %s", pn, what, tinyattn::to_string(s));
  if (s != Status::kOk) return;

  const Result w = close(p.weights, p.weights_ref, d.weight_elems(), kWeightAtol, kWeightRtol);
  TA_CHECK_MSG(w.ok, "%s/%s N=%zu M=%zu Dk=%zu: weights off by %g at %zu", pn, what, d.n, d.m, d.dk, w.worst, w.index);
  const double vmax = max_abs(p.v, d.v_elems());
  const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * vmax, kOutRtol);
  TA_CHECK_MSG(y.ok, "%s/%s N=%zu M=%zu Dk=%zu: Y off by %g at %zu", pn, what, d.n, d.m, d.dk, y.worst, y.index);
  const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
  TA_CHECK_MSG(l.ok, "%s/%s: lse off by %g at %zu", pn, what, l.worst, l.index);

  const Result rs = rows_sum_to_one(p.weights, d.hq * d.n, d.m, kRowSumTol, true);
  TA_CHECK_MSG(rs.ok, "%s/%s: row %zu sums to 1 +- %g", pn, what, rs.index, rs.worst);
  const Result nn = nonnegative(p.weights, d.weight_elems());
  TA_CHECK_MSG(nn.ok, "%s/%s: weight %zu = %g", pn, what, nn.index, nn.worst);
  const Result hull = in_value_hull(d, p.y, p.v, mask, 1e-5);
  TA_CHECK_MSG(hull.ok, "%s/%s: y[%zu] outside the value hull by %g", pn, what, hull.index, hull.worst);
  const Result nb = norm_bound(d, p.y, p.v, mask, 1e-5);
  TA_CHECK_MSG(nb.ok, "%s/%s: ||y_%zu|| exceeds max ||v_j|| by %g", pn, what, nb.index, nb.worst);

  // Masked keys get exactly 0, and rows with no visible key are exactly 0.
  size_t bad = 0;
  for (size_t h = 0; h < d.hq; ++h)
    for (size_t i = 0; i < d.n; ++i) {
      bool any = false;
      for (size_t j = 0; j < d.m; ++j) {
        const bool vis = tinyattn::ref::visible(mask, d, h, i, j);
        any |= vis;
        if (!vis && p.weights[(h * d.n + i) * d.m + j] != 0.0f) ++bad;
      }
      if (!any)
        for (size_t c = 0; c < d.dv; ++c)
          if (p.y[(h * d.n + i) * d.dv + c] != 0.0f) ++bad;
    }
  TA_CHECK_MSG(bad == 0, "%s/%s: %zu masked weights or empty-row outputs are not exactly 0", pn, what, bad);
}

}  // namespace

TA_CASE("forward: every port matches the reference and the seed's properties, unmasked") {
  PortList pl;
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : kShapes) check_forward(d, Mask::none(), pl.ports[pi], 1000 + d.n * 7 + d.m, "none");
}

TA_CASE("forward: causal masks, both alignments, N < M, N = M, N > M") {
  PortList pl;
  const Dims shapes[] = {{5, 9, 8, 4}, {9, 9, 16, 8}, {9, 5, 7, 3}, {1, 17, 33, 17}, {17, 1, 3, 5}};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : shapes) {
      check_forward(d, Mask::causal_top_left(), pl.ports[pi], 77, "causal-top-left");
      check_forward(d, Mask::causal_bottom_right(), pl.ports[pi], 78, "causal-bottom-right");
    }
}

TA_CASE("forward: causal alignments follow their definitions") {
  // top-left: query i sees j <= i; bottom-right: j <= i + M - N.
  const Dims shapes[] = {{3, 7, 1, 1}, {7, 7, 1, 1}, {7, 3, 1, 1}};
  for (const Dims& d : shapes)
    for (size_t i = 0; i < d.n; ++i) {
      const tinyattn::KeyRange tl = tinyattn::key_range(Mask::causal_top_left(), i, d.n, d.m);
      const tinyattn::KeyRange br = tinyattn::key_range(Mask::causal_bottom_right(), i, d.n, d.m);
      const long long want_tl = static_cast<long long>(i) + 1 < static_cast<long long>(d.m) ? i + 1 : d.m;
      long long want_br = static_cast<long long>(i) + static_cast<long long>(d.m) - static_cast<long long>(d.n) + 1;
      if (want_br < 0) want_br = 0;
      if (want_br > static_cast<long long>(d.m)) want_br = d.m;
      TA_CHECK_MSG(tl.lo == 0 && static_cast<long long>(tl.hi) == want_tl, "top-left N=%zu M=%zu i=%zu: [%zu,%zu)", d.n,
                   d.m, i, tl.lo, tl.hi);
      TA_CHECK_MSG(br.lo == 0 && static_cast<long long>(br.hi) == want_br, "bottom-right N=%zu M=%zu i=%zu: [%zu,%zu)",
                   d.n, d.m, i, br.lo, br.hi);
      // offset: j <= i + offset, whatever N and M.
      for (int32_t off : {-9, -2, 0, 1, 4, 20}) {
        const tinyattn::KeyRange r = tinyattn::key_range(Mask::causal_offset(off), i, d.n, d.m);
        long long want = static_cast<long long>(i) + off + 1;
        want = want < 0 ? 0 : want > static_cast<long long>(d.m) ? static_cast<long long>(d.m) : want;
        TA_CHECK_MSG(r.lo == 0 && static_cast<long long>(r.hi) == want, "offset %d N=%zu M=%zu i=%zu: [%zu,%zu)", static_cast<int>(off),
                     d.n, d.m, i, r.lo, r.hi);
      }
    }
}

TA_CASE("forward: sliding window, key padding and their combinations") {
  PortList pl;
  const Dims d{13, 21, 12, 5};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    check_forward(d, Mask::sliding_window(3, 2, tinyattn::Align::kTopLeft), pl.ports[pi], 5, "window-tl");
    check_forward(d, Mask::sliding_window(4, 0, tinyattn::Align::kBottomRight), pl.ports[pi], 6, "window-br");
    check_forward(d, Mask::sliding_window(-2, 5, tinyattn::Align::kTopLeft), pl.ports[pi], 7, "window-shifted");
    check_forward(d, Mask::key_padding(9), pl.ports[pi], 8, "kv-len-9");
    check_forward(d, Mask::key_padding(0), pl.ports[pi], 9, "kv-len-0");
    Mask m = Mask::causal_bottom_right();
    m.window = {2, tinyattn::kUnbounded, tinyattn::Align::kBottomRight};
    m.kv_len = 17;
    check_forward(d, m, pl.ports[pi], 10, "causal+window+padding");
  }
}

TA_CASE("forward: boolean keep-masks as bytes and bits, and additive bias") {
  PortList pl;
  const Dims d{11, 19, 9, 6, 2, 1};
  Arena::Scope scope;
  uint8_t* keep = alloc<uint8_t>(d.n * d.m);
  uint8_t* bits = alloc<uint8_t>(d.n * tinyattn::keep_bits_row_bytes(d.m));
  float* bias = alloc<float>(d.n * d.m);
  Rng rng(99);
  for (size_t x = 0; x < d.n * tinyattn::keep_bits_row_bytes(d.m); ++x) bits[x] = 0;
  for (size_t i = 0; i < d.n; ++i)
    for (size_t j = 0; j < d.m; ++j) {
      // row 4 is fully masked; elsewhere ~30% of keys dropped
      const bool k = i != 4 && rng.uniform(0.0f, 1.0f) > 0.3f;
      keep[i * d.m + j] = k ? 1 : 0;
      if (k) bits[i * tinyattn::keep_bits_row_bytes(d.m) + j / 8] |= static_cast<uint8_t>(1u << (j % 8));
      bias[i * d.m + j] = (j % 5 == 0) ? -std::numeric_limits<float>::infinity() : rng.uniform(-2.0f, 2.0f);
    }
  for (size_t pi = 0; pi < pl.n; ++pi) {
    check_forward(d, Mask::keep_bytes(keep), pl.ports[pi], 21, "keep-bytes");
    check_forward(d, Mask::keep_bitmask(bits), pl.ports[pi], 21, "keep-bits");
    check_forward(d, Mask::additive(bias), pl.ports[pi], 22, "bias");
    Mask all = Mask::causal_top_left();
    all.keep_bits = bits;
    all.bias = bias;
    check_forward(d, all, pl.ports[pi], 23, "causal+bits+bias");
  }
}

TA_CASE("forward: fully masked rows give zeros, never NaN or uniform weights") {
  PortList pl;
  const Dims d{4, 6, 8, 3};
  Arena::Scope scope;
  float* bias = alloc<float>(d.n * d.m);
  for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = -std::numeric_limits<float>::infinity();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope inner;
    Problem p = make_problem(d, 3);
    TA_CHECK(run_port(p, pl.ports[pi], Mask::additive(bias)) == Status::kOk);
    bool zeros = true;
    for (size_t x = 0; x < d.y_elems(); ++x) zeros &= p.y[x] == 0.0f;
    for (size_t x = 0; x < d.weight_elems(); ++x) zeros &= p.weights[x] == 0.0f;
    for (size_t x = 0; x < d.lse_elems(); ++x) zeros &= std::isinf(p.lse[x]) && p.lse[x] < 0;
    TA_CHECK_MSG(zeros, "%s: fully masked rows must be exactly zero with lse -inf", tinyattn::port_name(pl.ports[pi]));
  }
}

TA_CASE("forward: softmax is invariant to adding a constant to a row") {
  PortList pl;
  const Dims d{7, 17, 5, 4};
  Arena::Scope scope;
  float* bias = alloc<float>(d.n * d.m);
  for (size_t i = 0; i < d.n; ++i)
    for (size_t j = 0; j < d.m; ++j) bias[i * d.m + j] = 37.5f * static_cast<float>(i + 1);
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope inner;
    Problem a = make_problem(d, 11);
    Problem b = make_problem(d, 11);
    TA_CHECK(run_port(a, pl.ports[pi], Mask::none()) == Status::kOk);
    TA_CHECK(run_port(b, pl.ports[pi], Mask::additive(bias)) == Status::kOk);
    const Result r = close(b.weights, a.weights, d.weight_elems(), 2e-6, 2e-5);
    TA_CHECK_MSG(r.ok, "%s: shifted rows differ by %g", tinyattn::port_name(pl.ports[pi]), r.worst);
    const Result y = close(b.y, a.y, d.y_elems(), 1e-5, 1e-5);
    TA_CHECK_MSG(y.ok, "%s: shifted outputs differ by %g", tinyattn::port_name(pl.ports[pi]), y.worst);
  }
}

TA_CASE("forward: permuting keys and values together leaves Y unchanged") {
  PortList pl;
  const Dims d{9, 23, 16, 7};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem a = make_problem(d, 31);
    Problem b = make_problem(d, 31);
    // b's keys/values: a's, reversed and rotated.
    for (size_t j = 0; j < d.m; ++j) {
      const size_t src = (d.m - 1 - j + 5) % d.m;
      for (size_t c = 0; c < d.dk; ++c) b.k[j * d.dk + c] = a.k[src * d.dk + c];
      for (size_t c = 0; c < d.dv; ++c) b.v[j * d.dv + c] = a.v[src * d.dv + c];
    }
    TA_CHECK(run_port(a, pl.ports[pi], Mask::none()) == Status::kOk);
    TA_CHECK(run_port(b, pl.ports[pi], Mask::none()) == Status::kOk);
    const Result y = close(b.y, a.y, d.y_elems(), 1e-5, 1e-5);
    TA_CHECK_MSG(y.ok, "%s: permuted keys change Y by %g", tinyattn::port_name(pl.ports[pi]), y.worst);
  }
}

TA_CASE("forward: identical keys give uniform weights") {
  PortList pl;
  const Dims d{5, 13, 8, 4};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem p = make_problem(d, 41);
    for (size_t j = 1; j < d.m; ++j)
      for (size_t c = 0; c < d.dk; ++c) p.k[j * d.dk + c] = p.k[c];
    TA_CHECK(run_port(p, pl.ports[pi], Mask::none()) == Status::kOk);
    double worst = 0.0;
    for (size_t x = 0; x < d.weight_elems(); ++x) worst = std::fmax(worst, std::fabs(p.weights[x] - 1.0 / d.m));
    TA_CHECK_MSG(worst <= 1e-6, "%s: weights deviate from 1/M by %g", tinyattn::port_name(pl.ports[pi]), worst);
  }
}

TA_CASE("forward: extreme logits stay finite and normalized") {
  PortList pl;
  const Dims d{6, 10, 4, 3};
  Arena::Scope scope;
  float* bias = alloc<float>(d.n * d.m);
  Rng rng(5);
  for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = rng.uniform(0.0f, 1.0f) < 0.5f ? 1e30f : -1e30f;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const Port port = pl.ports[pi];
    check_forward(d, Mask::additive(bias), port, 51, "bias+-1e30");
    tinyattn::Options huge;
    huge.scale = 1e30f;
    check_forward(d, Mask::none(), port, 52, "scale 1e30", huge);
    tinyattn::Options tiny;
    tiny.scale = 1e-30f;
    check_forward(d, Mask::none(), port, 53, "scale 1e-30", tiny);
  }
}

TA_CASE("forward: grouped-query attention equals running each head on its KV head") {
  PortList pl;
  const Dims d{5, 9, 8, 6, 6, 2};  // 3 query heads per KV head
  const Dims one{5, 9, 8, 6, 1, 1};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem p = make_problem(d, 61);
    TA_CHECK(run_port(p, pl.ports[pi], Mask::causal_bottom_right()) == Status::kOk);
    for (size_t h = 0; h < d.hq; ++h) {
      Arena::Scope inner;
      Problem s = make_problem(one, 1);
      const size_t kvh = h / d.group();
      for (size_t x = 0; x < one.q_elems(); ++x) s.q[x] = p.q[h * one.q_elems() + x];
      for (size_t x = 0; x < one.k_elems(); ++x) s.k[x] = p.k[kvh * one.k_elems() + x];
      for (size_t x = 0; x < one.v_elems(); ++x) s.v[x] = p.v[kvh * one.v_elems() + x];
      TA_CHECK(run_port(s, pl.ports[pi], Mask::causal_bottom_right()) == Status::kOk);
      const Result r = close(s.y, p.y + h * one.y_elems(), one.y_elems(), 0.0, 0.0);
      TA_CHECK_MSG(r.ok, "%s: head %zu differs from its single-head run by %g", tinyattn::port_name(pl.ports[pi]), h,
                   r.worst);
    }
  }
}

TA_CASE("forward: a NaN logit poisons only its own row") {
  PortList pl;
  const Dims d{4, 5, 3, 2};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem p = make_problem(d, 71);
    p.q[2 * d.dk + 1] = std::numeric_limits<float>::quiet_NaN();  // row 2
    TA_CHECK(run_port(p, pl.ports[pi], Mask::none()) == Status::kOk);
    for (size_t i = 0; i < d.n; ++i) {
      bool nan_row = true, finite_row = true;
      for (size_t c = 0; c < d.dv; ++c) {
        nan_row &= std::isnan(p.y[i * d.dv + c]);
        finite_row &= std::isfinite(p.y[i * d.dv + c]);
      }
      TA_CHECK_MSG(i == 2 ? nan_row : finite_row, "%s: row %zu", tinyattn::port_name(pl.ports[pi]), i);
    }
  }
}

// Scratch::kTransposedKeys: the ports with scores_block_transposed compute
// full blocks' scores from K^T (tests/kernels/fused_dispatch.cc checks that
// they do); the same reference, tolerances and properties hold. Every port
// runs it: the others ignore the extra room.
TA_CASE("forward: with the transposed-keys workspace, every port matches the reference and the properties") {
  PortList pl;
  constexpr size_t kRows = tinyattn::kTransposedKeysMinRows;
  // Full and partial blocks, Dk and M around the vector widths, GQA.
  const Dims shapes[] = {{kRows, 33, 16, 17}, {kRows + 3, 17, 8, 33}, {kRows + 1, 100, 33, 17, 2, 1},
                         {kRows, 7, 3, 5, 3, 3}};
  uint8_t* keep = nullptr;
  float* bias = nullptr;
  Arena::Scope scope;
  keep = alloc<uint8_t>((kRows + 3) * 100);
  bias = alloc<float>((kRows + 3) * 100);
  if (!keep || !bias) TA_IGNORE("arena too small");
  for (size_t x = 0; x < (kRows + 3) * 100; ++x) {
    keep[x] = static_cast<uint8_t>((x * 7) % 5 != 0);
    bias[x] = 0.25f * static_cast<float>(static_cast<int>(x % 9) - 4);
  }
  Mask padded = Mask::causal_top_left();
  padded.kv_len = 5;
  const Mask masks[] = {Mask::none(), Mask::causal_bottom_right(), Mask::sliding_window(3, 2, tinyattn::Align::kTopLeft),
                        padded, Mask::keep_bytes(keep), Mask::additive(bias)};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : shapes) {
      TA_CHECK(tinyattn::forward_transposes_keys(d, true) == tinyattn::kTransposedKeysBuilt);
      for (const Mask& mask : masks)
        check_forward(d, mask, pl.ports[pi], 31 + d.n + d.m, "transposed-keys", {}, tinyattn::Scratch::kTransposedKeys);
    }
}

TA_CASE("forward: long rows without weights take the tiled online softmax and match the reference") {
  PortList pl;
  // M > kKeyTile, not a multiple of it; masks that leave tiles empty or partial.
  // 37 rows: more than one group of rows walks the key tiles together (32
  // rows at Dv = 9), the last one with a partial block.
  const Dims dims[] = {{5, 2 * tinyattn::kKeyTile + 37, 16, 9, 2, 1}, {37, 2 * tinyattn::kKeyTile + 37, 16, 9, 2, 1}};
  Mask window = Mask::sliding_window(300, 0, tinyattn::Align::kBottomRight);
  Mask padded = Mask::causal_bottom_right();
  padded.kv_len = static_cast<uint32_t>(tinyattn::kKeyTile + 3);
  const Mask masks[] = {Mask::none(), Mask::causal_top_left(), window, padded};
  for (const Dims& d : dims) {
    for (size_t pi = 0; pi < pl.n; ++pi)
      for (const Mask& mask : masks) {
        TA_CHECK(tinyattn::forward_uses_tiles(d, false));
        TA_CHECK(!tinyattn::forward_uses_tiles(d, true));
        Arena::Scope scope;
        Problem p = make_problem(d, 404, 2.0f);
        if (!p.ok) TA_IGNORE("arena too small for M = 549");
        run_reference(p, mask);
        // Both workspaces: with 37 rows the transposed keys apply (a tile at a time).
        for (tinyattn::Scratch scratch : {tinyattn::Scratch::kMinimal, tinyattn::Scratch::kTransposedKeys}) {
          const char* ws = scratch == tinyattn::Scratch::kMinimal ? "minimal" : "transposed-keys";
          TA_CHECK(run_port(p, pl.ports[pi], mask, {}, false, scratch) == Status::kOk);
          const double vmax = max_abs(p.v, d.v_elems());
          const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * vmax, kOutRtol);
          TA_CHECK_MSG(y.ok, "%s tiled (%s): Y off by %g at %zu", tinyattn::port_name(pl.ports[pi]), ws, y.worst,
                       y.index);
          const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
          TA_CHECK_MSG(l.ok, "%s tiled (%s): lse off by %g at %zu", tinyattn::port_name(pl.ports[pi]), ws, l.worst,
                       l.index);
          const Result hull = in_value_hull(d, p.y, p.v, mask, 1e-5);
          TA_CHECK_MSG(hull.ok, "%s tiled (%s): outside the value hull by %g", tinyattn::port_name(pl.ports[pi]), ws,
                       hull.worst);
        }
      }
  }
}

TA_CASE("forward: the tiled path handles +inf, NaN and fully masked tiles like the plain path") {
  PortList pl;
  // Three rows, and 37 with the special rows in the second group of rows
  // that walks the key tiles together (rows 32-36 at Dv = 3).
  const Dims dims[] = {{3, tinyattn::kKeyTile + 10, 4, 3}, {37, tinyattn::kKeyTile + 10, 4, 3}};
  for (const Dims& d : dims) {
    Arena::Scope scope;
    float* bias = alloc<float>(d.n * d.m);
    if (!bias) TA_IGNORE("arena too small");
    const float inf = std::numeric_limits<float>::infinity();
    for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
    // row a: +inf on two keys in different tiles; row a+1: NaN in the second
    // tile; row a+2: everything masked by -inf.
    const size_t a = d.n - 3;
    bias[a * d.m + 3] = inf;
    bias[a * d.m + tinyattn::kKeyTile + 2] = inf;
    bias[(a + 1) * d.m + tinyattn::kKeyTile + 5] = std::numeric_limits<float>::quiet_NaN();
    for (size_t j = 0; j < d.m; ++j) bias[(a + 2) * d.m + j] = -inf;
    // With 37 rows, row a-1: NaN in the first tile, finite keys after it.
    if (a > 0) bias[(a - 1) * d.m + 5] = std::numeric_limits<float>::quiet_NaN();
    for (size_t pi = 0; pi < pl.n; ++pi) {
      Arena::Scope inner;
      Problem p = make_problem(d, 9);
      if (!p.ok) TA_IGNORE("arena too small");
      run_reference(p, Mask::additive(bias));
      TA_CHECK(run_port(p, pl.ports[pi], Mask::additive(bias), {}, false) == Status::kOk);
      const Result y = close(p.y, p.y_ref, d.y_elems(), 1e-6, 1e-6);
      TA_CHECK_MSG(y.ok, "%s: tiled special rows differ from the reference by %g at %zu",
                   tinyattn::port_name(pl.ports[pi]), y.worst, y.index);
      const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
      TA_CHECK_MSG(l.ok, "%s: tiled special rows' lse differ from the reference by %g at %zu",
                   tinyattn::port_name(pl.ports[pi]), l.worst, l.index);
    }
  }
}

TA_CASE("forward: the workspace without weights does not grow with M") {
  const Dims small{1, 300, 64, 4}, large{1, 8192, 64, 4};
  TA_CHECK(tinyattn::forward_workspace_bytes(small, false) == tinyattn::forward_workspace_bytes(large, false));
  TA_CHECK(tinyattn::forward_workspace_bytes(large, true) >= large.m * sizeof(float));
  // Too small a workspace is refused before anything is written.
  Arena::Scope scope;
  Problem p = make_problem(small, 1);
  p.y[0] = 123.0f;
  tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, p.weights, nullptr};
  const Status s = tinyattn::forward(small, io, {p.workspace, tinyattn::forward_workspace_bytes(small, false)});
  TA_CHECK(s == Status::kWorkspaceTooSmall);
  TA_CHECK(p.y[0] == 123.0f);
}

namespace {

// An additive bias with -inf on every fourth key and a keep-mask dropping
// about a third, for the softcap cases (arena memory).
struct CapMasks {
  float* bias = nullptr;
  uint8_t* keep = nullptr;
  CapMasks(const Dims& d, uint64_t seed) {
    bias = alloc<float>(d.n * d.m);
    keep = alloc<uint8_t>(d.n * d.m);
    if (!bias || !keep) return;
    Rng rng(seed);
    for (size_t x = 0; x < d.n * d.m; ++x) {
      bias[x] = x % 4 == 3 ? -std::numeric_limits<float>::infinity() : rng.uniform(-3.0f, 3.0f);
      keep[x] = rng.uniform(0.0f, 1.0f) > 0.3f ? 1 : 0;
    }
  }
  bool ok() const { return bias && keep; }
};

tinyattn::Options capped(float c) {
  tinyattn::Options o;
  o.softcap = c;
  return o;
}

}  // namespace

TA_CASE("forward: softcap matches the reference on every port, with every mask kind") {
  PortList pl;
  // Rows through the kernels one, and four, at a time; GQA; 32 rows and more
  // take the transposed keys.
  const Dims shapes[] = {{1, 7, 5, 3}, {3, 7, 17, 5}, {17, 33, 16, 17, 2, 1}, {33, 40, 8, 6}};
  for (const Dims& d : shapes) {
    Arena::Scope scope;
    CapMasks cm(d, 3);
    if (!cm.ok()) TA_IGNORE("arena too small");
    Mask bias_causal = Mask::additive(cm.bias);
    bias_causal.causal = tinyattn::Causal::kBottomRight;
    Mask keep_window = Mask::keep_bytes(cm.keep);
    keep_window.window = {4, 1, tinyattn::Align::kTopLeft};
    const Mask masks[] = {Mask::none(), Mask::causal_top_left(), bias_causal, keep_window};
    const char* names[] = {"softcap", "softcap+causal", "softcap+bias+causal", "softcap+keep+window"};
    for (size_t pi = 0; pi < pl.n; ++pi)
      for (size_t mi = 0; mi < 4; ++mi) {
        check_forward(d, masks[mi], pl.ports[pi], 60 + d.n, names[mi], capped(1.5f));
        check_forward(d, masks[mi], pl.ports[pi], 61 + d.n, names[mi], capped(1.5f),
                      tinyattn::Scratch::kTransposedKeys);
      }
  }
}

TA_CASE("forward: softcap without weights (fused, block and tiled paths) matches the reference") {
  PortList pl;
  // M <= kKeyTile: the plain blocks, where a port's fused block must not
  // run uncapped; M > kKeyTile: the online softmax in groups of rows.
  const Dims shapes[] = {{8, 24, 16, 8}, {37, tinyattn::kKeyTile + 37, 16, 9, 2, 1}};
  for (const Dims& d : shapes)
    for (size_t pi = 0; pi < pl.n; ++pi)
      for (const Mask& mask : {Mask::none(), Mask::causal_bottom_right()}) {
        Arena::Scope scope;
        Problem p = make_problem(d, 71, 3.0f);  // logits of several units: the cap matters
        if (!p.ok) TA_IGNORE("arena too small");
        run_reference(p, mask, capped(2.0f));
        for (tinyattn::Scratch scratch : {tinyattn::Scratch::kMinimal, tinyattn::Scratch::kTransposedKeys}) {
          TA_CHECK(run_port(p, pl.ports[pi], mask, capped(2.0f), false, scratch) == Status::kOk);
          const double vmax = max_abs(p.v, d.v_elems());
          const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * vmax, kOutRtol);
          TA_CHECK_MSG(y.ok, "%s M=%zu: capped Y off by %g at %zu", tinyattn::port_name(pl.ports[pi]), d.m, y.worst,
                       y.index);
          const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
          TA_CHECK_MSG(l.ok, "%s M=%zu: capped lse off by %g at %zu", tinyattn::port_name(pl.ports[pi]), d.m, l.worst,
                       l.index);
        }
      }
}

TA_CASE("forward: softcap on the fp16 paths matches the reference") {
  const Dims d{9, 21, 16, 7, 2, 1};
  Arena::Scope scope;
  CapMasks cm(d, 4);
  Problem p = make_problem(d, 72, 2.0f);
  if (!p.ok || !cm.ok()) TA_IGNORE("arena too small");
  round_inputs_to_half(p);
  Mask bias = Mask::additive(cm.bias);
  bias.causal = tinyattn::Causal::kTopLeft;
  PathRun runs[kMaxPathRuns];
  const size_t nr = path_runs_under_test(runs, kMaxPathRuns);
  for (const Mask& mask : {Mask::none(), bias}) {
    run_reference(p, mask, capped(1.0f));
    for (size_t r = 0; r < nr; ++r)
      for (bool ww : {true, false}) {
        Arena::Scope inner;
        const Status s = run_path(runs[r].path, p, runs[r].port, mask, capped(1.0f), ww);
        const char* pn = tinyattn::port_name(runs[r].port);
        TA_CHECK_MSG(s == Status::kOk, "%s/%s: status %s", pn, path_name(runs[r].path), tinyattn::to_string(s));
        if (s != Status::kOk) continue;
        const Agreement a = against_reference(p, runs[r].path, ww);
        TA_CHECK_MSG(a.ok(), "%s/%s weights=%d: capped output differs from the reference (y %g, lse %g, A %g)", pn,
                     path_name(runs[r].path), ww ? 1 : 0, a.y.worst, a.lse.worst, a.weights.worst);
      }
  }
}

TA_CASE("forward: softcap bounds every logit by c") {
  // Large inputs, no mask: uncapped logits reach tens of units. Capped, any
  // two weights of a row differ by at most exp(2c), and the row's lse lies
  // within log(M) +- c.
  PortList pl;
  const Dims d{6, 19, 8, 4};
  const float c = 1.25f;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem p = make_problem(d, 73, 6.0f);
    if (!p.ok) TA_IGNORE("arena too small");
    TA_CHECK(run_port(p, pl.ports[pi], Mask::none(), capped(c)) == Status::kOk);
    double worst_ratio = 0.0, worst_lse = 0.0;
    for (size_t row = 0; row < d.hq * d.n; ++row) {
      const float* w = p.weights + row * d.m;
      float lo = w[0], hi = w[0];
      for (size_t j = 1; j < d.m; ++j) lo = std::fmin(lo, w[j]), hi = std::fmax(hi, w[j]);
      worst_ratio = std::fmax(worst_ratio, std::log(static_cast<double>(hi) / lo));
      worst_lse = std::fmax(worst_lse, std::fabs(p.lse[row] - std::log(static_cast<double>(d.m))));
    }
    const char* pn = tinyattn::port_name(pl.ports[pi]);
    TA_CHECK_MSG(worst_ratio <= 2.0 * c + 1e-5, "%s: log(max/min weight) = %g > 2c", pn, worst_ratio);
    TA_CHECK_MSG(worst_lse <= c + 1e-5, "%s: |lse - log M| = %g > c", pn, worst_lse);
    // Uncapped, the same inputs break both bounds (the test can fail).
    TA_CHECK(run_port(p, pl.ports[pi], Mask::none()) == Status::kOk);
    double uncapped = 0.0;
    for (size_t row = 0; row < d.hq * d.n; ++row)
      uncapped = std::fmax(uncapped, std::fabs(p.lse[row] - std::log(static_cast<double>(d.m))));
    TA_CHECK_MSG(uncapped > c, "%s: the uncapped logits are too small to test the bound (%g)", pn, uncapped);
  }
}

TA_CASE("forward: as c grows, the capped result tends to the plain one") {
  PortList pl;
  const Dims d{5, 13, 8, 6};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Arena::Scope scope;
    Problem p = make_problem(d, 74, 2.0f);
    float* y_plain = alloc<float>(d.y_elems());
    float* w_plain = alloc<float>(d.weight_elems());
    if (!p.ok || !y_plain || !w_plain) TA_IGNORE("arena too small");
    TA_CHECK(run_port(p, pl.ports[pi], Mask::causal_top_left()) == Status::kOk);
    for (size_t x = 0; x < d.y_elems(); ++x) y_plain[x] = p.y[x];
    for (size_t x = 0; x < d.weight_elems(); ++x) w_plain[x] = p.weights[x];
    double prev = 1e300;
    for (float c : {3.0f, 30.0f, 300.0f, 1e20f}) {
      TA_CHECK(run_port(p, pl.ports[pi], Mask::causal_top_left(), capped(c)) == Status::kOk);
      const Result w = close(p.weights, w_plain, d.weight_elems(), 0.0, 0.0);
      // Each tenfold c shrinks the change (about 1/c^2), and at 1e20 the
      // plain path's weights come back to rounding.
      TA_CHECK_MSG(w.worst < prev, "%s: c = %g moves the weights by %g, not less than %g", tinyattn::port_name(pl.ports[pi]),
                   static_cast<double>(c), w.worst, prev);
      prev = w.worst;
    }
    const Result y = close(p.y, y_plain, d.y_elems(), 1e-6, 1e-6);
    TA_CHECK_MSG(y.ok, "%s: c = 1e20 gives Y off the plain path's by %g", tinyattn::port_name(pl.ports[pi]), y.worst);
    TA_CHECK_MSG(prev <= 1e-6, "%s: c = 1e20 moves the weights by %g", tinyattn::port_name(pl.ports[pi]), prev);
  }
}

namespace {

// Every float path of every port on p (its inputs already fp16-exact)
// against the reference for this mask and options, with and without weights.
void check_float_paths(Problem& p, const Mask& mask, const tinyattn::Options& o, const char* what) {
  run_reference(p, mask, o);
  PathRun runs[kMaxPathRuns];
  const size_t nr = path_runs_under_test(runs, kMaxPathRuns);
  for (size_t r = 0; r < nr; ++r)
    for (bool ww : {true, false}) {
      Arena::Scope inner;
      const Status s = run_path(runs[r].path, p, runs[r].port, mask, o, ww);
      const char* pn = tinyattn::port_name(runs[r].port);
      TA_CHECK_MSG(s == Status::kOk, "%s %s/%s: status %s", what, pn, path_name(runs[r].path), tinyattn::to_string(s));
      if (s != Status::kOk) continue;
      const Agreement a = against_reference(p, runs[r].path, ww);
      TA_CHECK_MSG(a.ok(), "%s %s/%s weights=%d: differs from the reference (y %g, lse %g, A %g)", what, pn,
                   path_name(runs[r].path), ww ? 1 : 0, a.y.worst, a.lse.worst, a.weights.worst);
    }
}

}  // namespace

TA_CASE("forward: causal by offset and over a partly filled cache match the reference on every port") {
  PortList pl;
  const Dims shapes[] = {{5, 9, 8, 4}, {9, 9, 16, 8}, {9, 5, 7, 3}, {1, 17, 33, 17}, {17, 40, 16, 17, 2, 1}};
  for (const Dims& d : shapes) {
    const uint32_t n = static_cast<uint32_t>(d.n), m = static_cast<uint32_t>(d.m);
    // Chunked prefill: N new queries after some cached keys, the buffer not full.
    const uint32_t valid = n <= m ? n + (m - n) / 2 : m;
    Mask window = Mask::sliding_window(3, 0, tinyattn::Align::kOffset);
    window.offset = 2;
    Mask cache_window = Mask::causal_cache(valid, n);
    cache_window.window = {2, tinyattn::kUnbounded, tinyattn::Align::kOffset};
    const Mask masks[] = {Mask::causal_offset(-2), Mask::causal_offset(0), Mask::causal_offset(3),
                          Mask::causal_cache(valid, n), Mask::causal_cache(m, n), window, cache_window};
    const char* names[] = {"offset -2", "offset 0", "offset 3", "cache", "full cache", "window@offset",
                           "cache+window"};
    for (size_t pi = 0; pi < pl.n; ++pi)
      for (size_t mi = 0; mi < 7; ++mi) {
        check_forward(d, masks[mi], pl.ports[pi], 90 + mi, names[mi]);
        check_forward(d, masks[mi], pl.ports[pi], 90 + mi, names[mi], {}, tinyattn::Scratch::kTransposedKeys);
      }
  }
  // fp16 paths, and the online softmax (M > kKeyTile, no weights).
  const Dims dims[] = {{6, 14, 8, 5, 2, 1}, {37, tinyattn::kKeyTile + 37, 16, 9, 2, 1}};
  for (const Dims& d : dims) {
    Arena::Scope scope;
    Problem p = make_problem(d, 93);
    if (!p.ok) TA_IGNORE("arena too small");
    round_inputs_to_half(p);
    const uint32_t valid = static_cast<uint32_t>(d.m - 5);
    check_float_paths(p, Mask::causal_cache(valid, static_cast<uint32_t>(d.n)), {}, "cache");
    check_float_paths(p, Mask::causal_offset(-3), {}, "offset -3");
  }
}

TA_CASE("forward: causal_cache(valid, N) over M keys equals bottom-right causal over the valid keys alone") {
  // What ONNX Attention means by is_causal over a partly filled cache, and
  // why kBottomRight with kv_len is not it when N > 1 and valid < M.
  PortList pl;
  const Dims full{4, 16, 8, 5, 2, 1};
  for (uint32_t valid : {4u, 9u, 15u})
    for (size_t pi = 0; pi < pl.n; ++pi) {
      Arena::Scope scope;
      Problem p = make_problem(full, 95 + valid);
      Dims part = full;
      part.m = valid;
      Problem q = make_problem(part, 1);
      if (!p.ok || !q.ok) TA_IGNORE("arena too small");
      // q holds p's first `valid` keys and values of each KV head.
      for (size_t x = 0; x < full.q_elems(); ++x) q.q[x] = p.q[x];
      for (size_t h = 0; h < full.hkv; ++h) {
        for (size_t x = 0; x < valid * full.dk; ++x) q.k[h * valid * full.dk + x] = p.k[h * full.m * full.dk + x];
        for (size_t x = 0; x < valid * full.dv; ++x) q.v[h * valid * full.dv + x] = p.v[h * full.m * full.dv + x];
      }
      const Port port = pl.ports[pi];
      TA_CHECK(run_port(q, port, Mask::causal_bottom_right()) == Status::kOk);
      TA_CHECK(run_port(p, port, Mask::causal_cache(valid, static_cast<uint32_t>(full.n))) == Status::kOk);
      const Result y = close(p.y, q.y, full.y_elems(), 1e-6, 1e-6);
      TA_CHECK_MSG(y.ok, "%s valid=%u: Y differs from the pass over the valid keys by %g at %zu", tinyattn::port_name(port),
                   static_cast<unsigned>(valid), y.worst, y.index);
      size_t bad = 0;
      for (size_t row = 0; row < full.hq * full.n; ++row)
        for (size_t j = 0; j < full.m; ++j) {
          const float want = j < valid ? q.weights[row * valid + j] : 0.0f;
          bad += std::fabs(p.weights[row * full.m + j] - want) > 1e-6f;
        }
      TA_CHECK_MSG(bad == 0, "%s valid=%u: %zu weights differ", tinyattn::port_name(port), static_cast<unsigned>(valid),
                   bad);
      // kBottomRight aligns to M, not to the valid keys: the first queries
      // then see keys that are not yet theirs (all of them once valid < M).
      Mask trap = Mask::causal_bottom_right();
      trap.kv_len = valid;
      TA_CHECK(run_port(p, port, trap) == Status::kOk);
      const Result t = close(p.y, q.y, full.y_elems(), 1e-6, 1e-6);
      TA_CHECK_MSG(!t.ok, "%s valid=%u: bottom-right with kv_len agreed, the test shows nothing", tinyattn::port_name(port),
                   static_cast<unsigned>(valid));
    }
}

TA_CASE("forward: score outputs at each stage match the reference's logits and change nothing else") {
  PortList pl;
  const Dims d{6, 11, 9, 4, 2, 1};
  Arena::Scope scope;
  CapMasks cm(d, 5);
  float* scores = alloc<float>(d.weight_elems());
  float* y0 = alloc<float>(d.y_elems());
  float* w0 = alloc<float>(d.weight_elems());
  Problem p = make_problem(d, 96, 2.0f);
  if (!cm.ok() || !scores || !y0 || !w0 || !p.ok) TA_IGNORE("arena too small");
  Mask all = Mask::causal_cache(9, static_cast<uint32_t>(d.n));
  all.bias = cm.bias;
  all.keep = cm.keep;
  const Mask masks[] = {Mask::none(), all};
  const tinyattn::ScoreStage stages[] = {tinyattn::ScoreStage::kScaled, tinyattn::ScoreStage::kSoftcapped,
                                         tinyattn::ScoreStage::kMasked};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Mask& mask : masks)
      for (bool cap : {false, true}) {
        tinyattn::Options o = cap ? capped(1.5f) : tinyattn::Options{};
        o.port = pl.ports[pi];
        const double c = cap ? 1.5 : 0.0;
        const float scale = tinyattn::effective_scale(d, o);
        // Without scores first: what requesting them must not change.
        tinyattn::ForwardIo io{p.q, p.k, p.v, y0, w0, nullptr};
        TA_CHECK(tinyattn::forward(d, io, {p.workspace, tinyattn::forward_workspace_bytes(d)}, mask, o) == Status::kOk);
        for (tinyattn::ScoreStage stage : stages) {
          for (size_t x = 0; x < d.weight_elems(); ++x) scores[x] = kNaN;
          io.y = p.y;
          io.weights = p.weights;
          io.scores = scores;
          io.score_stage = stage;
          const Status s = tinyattn::forward(d, io, {p.workspace, tinyattn::forward_workspace_bytes(d)}, mask, o);
          TA_CHECK(s == Status::kOk);
          size_t bad = 0, changed = 0;
          double worst = 0.0;
          for (size_t h = 0; h < d.hq; ++h)
            for (size_t i = 0; i < d.n; ++i)
              for (size_t j = 0; j < d.m; ++j) {
                double want = tinyattn::ref::score(d, p.q, p.k, scale, h, i, j);
                if (stage != tinyattn::ScoreStage::kScaled && cap) want = c * std::tanh(want / c);
                if (stage == tinyattn::ScoreStage::kMasked) want = tinyattn::ref::logit(d, p.q, p.k, mask, scale, h, i, j, c);
                const double got = scores[(h * d.n + i) * d.m + j];
                if (std::isinf(want) || std::isinf(got)) {
                  bad += got != want;
                  continue;
                }
                const double err = std::fabs(got - want);
                worst = std::fmax(worst, err);
                bad += !(err <= 1e-5 + 1e-5 * std::fabs(want));
              }
          for (size_t x = 0; x < d.y_elems(); ++x) changed += p.y[x] != y0[x];
          for (size_t x = 0; x < d.weight_elems(); ++x) changed += p.weights[x] != w0[x];
          TA_CHECK_MSG(bad == 0, "%s stage %d cap %d: %zu scores off (worst %g)", tinyattn::port_name(pl.ports[pi]),
                       static_cast<int>(stage), cap ? 1 : 0, bad, worst);
          TA_CHECK_MSG(changed == 0, "%s stage %d: requesting scores changed %zu outputs",
                       tinyattn::port_name(pl.ports[pi]), static_cast<int>(stage), changed);
        }
      }
}
