// The fp16 path: every port, every mask kind, against the reference (the
// spec, double) run on the same fp16 inputs widened to fp32. Bounds, as
// docs/quant.md states them: the fp32 path's tolerances plus the final
// rounding of Y and A to fp16 (half an ulp: 2^-11 relative, 2^-25 absolute
// in the subnormal range).
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/reference.h"

using namespace tinyattn;
using namespace tatest;

namespace {

constexpr double kHalfRel = 1.0 / 2048;         // half an ulp of a normal half, relative
constexpr double kHalfSub = 1.0 / 33554432.0;   // half the smallest subnormal, 2^-25

struct Worst {
  double y_rel = 0;  // max |y - y_ref| / (max|v|), measured
  double w_abs = 0;
} g_worst;

struct F16Problem {
  Problem p;  // float copies hold the widened fp16 values; y/weights receive the widened results
  half *q, *k, *v, *y, *w;
  unsigned char* ws;
  bool ok;
};

F16Problem make(const Dims& d, uint64_t seed, float sd = 1.0f) {
  F16Problem f{};
  f.p = make_problem(d, seed, sd);
  f.q = alloc<half>(d.q_elems());
  f.k = alloc<half>(d.k_elems());
  f.v = alloc<half>(d.v_elems());
  f.y = alloc<half>(d.y_elems());
  f.w = alloc<half>(d.weight_elems());
  f.ws = alloc<unsigned char>(forward_f16_workspace_bytes(d) + 1);
  f.ok = f.p.ok && f.q && f.k && f.v && f.y && f.w && f.ws;
  if (!f.ok) return f;
  // The fp16 tensors, and the reference's float inputs = exactly their values.
  to_half(f.p.q, f.q, d.q_elems());
  to_half(f.p.k, f.k, d.k_elems());
  to_half(f.p.v, f.v, d.v_elems());
  to_float(f.q, f.p.q, d.q_elems());
  to_float(f.k, f.p.k, d.k_elems());
  to_float(f.v, f.p.v, d.v_elems());
  return f;
}

// Runs forward_f16 with exactly forward_f16_workspace_bytes(d, with_weights)
// bytes of workspace, starting one byte past a 64-byte boundary so that the
// alignment slack is all used; the rest of the allocation is a canary.
Status run(F16Problem& f, Port port, const Mask& mask, bool with_weights = true) {
  const Dims& d = f.p.d;
  for (size_t x = 0; x < d.lse_elems(); ++x) f.p.lse[x] = std::numeric_limits<float>::quiet_NaN();
  const size_t full = forward_f16_workspace_bytes(d, true), used = forward_f16_workspace_bytes(d, with_weights);
  unsigned char* ws = f.ws + 1;
  std::memset(ws + used, 0xa5, full - used);
  Options opt;
  opt.port = port;
  Status s = forward_f16(d, ForwardIoF16{f.q, f.k, f.v, f.y, with_weights ? f.w : nullptr, f.p.lse},
                         Workspace{ws, used}, mask, opt);
  size_t touched = 0;
  for (size_t x = used; x < full; ++x) touched += ws[x] != 0xa5;
  TA_CHECK_MSG(touched == 0, "forward_f16 wrote %zu bytes past its workspace", touched);
  to_float(f.y, f.p.y, d.y_elems());
  if (with_weights) to_float(f.w, f.p.weights, d.weight_elems());
  return s;
}

void check(const Dims& d, const Mask& mask, Port port, uint64_t seed, const char* what, bool with_weights = true) {
  Arena::Scope scope;
  F16Problem f = make(d, seed);
  if (!f.ok) {
    TA_LOG("skip %s: arena too small", what);
    return;
  }
  Problem& p = f.p;
  run_reference(p, mask);
  const Status s = run(f, port, mask, with_weights);
  const char* pn = port_name(port);
  TA_CHECK_MSG(s == Status::kOk, "%s/%s: status %s", pn, what, to_string(s));
  if (s != Status::kOk) return;

  const double vmax = max_abs(p.v, d.v_elems());
  const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * vmax * (1 + kHalfRel) + kHalfSub,
                         kOutRtol + kHalfRel * (1 + kOutRtol));
  TA_CHECK_MSG(y.ok, "%s/%s N=%zu M=%zu: Y off by %g at %zu", pn, what, d.n, d.m, y.worst, y.index);
  const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
  TA_CHECK_MSG(l.ok, "%s/%s: lse off by %g at %zu", pn, what, l.worst, l.index);
  for (size_t x = 0; x < d.y_elems(); ++x) {
    const double e = std::fabs(p.y[x] - p.y_ref[x]) / (vmax > 0 ? vmax : 1);
    g_worst.y_rel = e > g_worst.y_rel ? e : g_worst.y_rel;
  }
  // V's entries are halves, so rounding a Y inside their hull to fp16 keeps it
  // inside. (Rows a NaN logit poisons have no hull; close() above matched their NaNs.)
  bool nan_rows = false;
  for (size_t x = 0; x < d.y_elems(); ++x) nan_rows |= std::isnan(p.y_ref[x]);
  const Result hull = nan_rows ? Result{} : in_value_hull(d, p.y, p.v, mask, 1e-5);
  TA_CHECK_MSG(hull.ok, "%s/%s: y[%zu] outside the value hull by %g", pn, what, hull.index, hull.worst);
  if (!with_weights) {
    size_t bad = 0;
    for (size_t h = 0; h < d.hq; ++h)
      for (size_t i = 0; i < d.n; ++i) {
        bool any = false;
        for (size_t j = 0; j < d.m; ++j) any |= ref::visible(mask, d, h, i, j);
        if (!any)
          for (size_t c = 0; c < d.dv; ++c) bad += f.y[(h * d.n + i) * d.dv + c].bits != 0;
      }
    TA_CHECK_MSG(bad == 0, "%s/%s (no weights): %zu empty-row outputs are not +0", pn, what, bad);
    return;
  }

  const Result w = close(p.weights, p.weights_ref, d.weight_elems(), kWeightAtol + kHalfSub,
                         kWeightRtol + kHalfRel * (1 + kWeightRtol));
  TA_CHECK_MSG(w.ok, "%s/%s N=%zu M=%zu: weights off by %g at %zu", pn, what, d.n, d.m, w.worst, w.index);
  for (size_t x = 0; x < d.weight_elems(); ++x) {
    const double e = std::fabs(p.weights[x] - p.weights_ref[x]);
    g_worst.w_abs = e > g_worst.w_abs ? e : g_worst.w_abs;
  }

  const Result rs = nan_rows ? Result{} : rows_sum_to_one(p.weights, d.hq * d.n, d.m, kRowSumTol + kHalfRel + d.m * kHalfSub, true);
  TA_CHECK_MSG(rs.ok, "%s/%s: row %zu sums to 1 +- %g", pn, what, rs.index, rs.worst);
  const Result nn = nan_rows ? Result{} : nonnegative(p.weights, d.weight_elems());
  TA_CHECK_MSG(nn.ok, "%s/%s: weight %zu = %g", pn, what, nn.index, nn.worst);

  size_t bad = 0;
  for (size_t h = 0; h < d.hq; ++h)
    for (size_t i = 0; i < d.n; ++i) {
      bool any = false;
      for (size_t j = 0; j < d.m; ++j) {
        const bool vis = ref::visible(mask, d, h, i, j);
        any |= vis;
        if (!vis && f.w[(h * d.n + i) * d.m + j].bits != 0) ++bad;
      }
      if (!any)
        for (size_t c = 0; c < d.dv; ++c)
          if (f.y[(h * d.n + i) * d.dv + c].bits != 0) ++bad;
    }
  TA_CHECK_MSG(bad == 0, "%s/%s: %zu masked weights or empty-row outputs are not +0", pn, what, bad);
}

struct PortList {
  Port ports[4];
  size_t n;
  PortList() : n(ports_under_test(ports, 4)) {}
};

const Dims kShapes[] = {{1, 1, 1, 1},     {1, 3, 7, 3},    {3, 7, 17, 5},       {7, 17, 33, 7},
                        {17, 33, 16, 17}, {33, 17, 8, 33}, {16, 16, 32, 32, 4, 2}, {5, 100, 33, 17, 2, 1}};

}  // namespace

TA_CASE("fp16 forward: every port, unmasked, against the reference on the fp16 inputs") {
  PortList pl;
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (const Dims& d : kShapes) {
      check(d, Mask::none(), pl.ports[pi], 500 + d.n * 3 + d.m, "none");
      check(d, Mask::none(), pl.ports[pi], 500 + d.n * 3 + d.m, "none, no weights (online softmax)", false);
    }
}

TA_CASE("fp16 forward: structured masks") {
  PortList pl;
  const Dims d{13, 21, 12, 5, 2, 1};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    check(d, Mask::causal_top_left(), pl.ports[pi], 1, "causal-top-left");
    check(d, Mask::causal_bottom_right(), pl.ports[pi], 2, "causal-bottom-right");
    check(d, Mask::sliding_window(3, 2, Align::kTopLeft), pl.ports[pi], 3, "window-tl");
    check(d, Mask::sliding_window(-2, 5, Align::kTopLeft), pl.ports[pi], 4, "window-shifted (empty rows)");
    check(d, Mask::key_padding(9), pl.ports[pi], 5, "kv-len-9");
    check(d, Mask::key_padding(0), pl.ports[pi], 6, "kv-len-0 (all rows empty)");
    check(d, Mask::causal_bottom_right(), pl.ports[pi], 2, "causal-bottom-right, no weights", false);
    check(d, Mask::sliding_window(-2, 5, Align::kTopLeft), pl.ports[pi], 4, "window-shifted, no weights", false);
    check(d, Mask::key_padding(0), pl.ports[pi], 6, "kv-len-0, no weights", false);
  }
}

TA_CASE("fp16 forward: keep bytes, keep bits and additive bias") {
  PortList pl;
  const Dims d{11, 19, 9, 6, 2, 1};
  Arena::Scope scope;
  uint8_t* keep = alloc<uint8_t>(d.n * d.m);
  uint8_t* bits = alloc<uint8_t>(d.n * keep_bits_row_bytes(d.m));
  float* bias = alloc<float>(d.n * d.m);
  Rng rng(42);
  for (size_t x = 0; x < d.n * keep_bits_row_bytes(d.m); ++x) bits[x] = 0;
  for (size_t i = 0; i < d.n; ++i)
    for (size_t j = 0; j < d.m; ++j) {
      const bool k = i != 4 && rng.uniform(0.0f, 1.0f) > 0.3f;  // row 4 fully masked
      keep[i * d.m + j] = k ? 1 : 0;
      if (k) bits[i * keep_bits_row_bytes(d.m) + j / 8] |= static_cast<uint8_t>(1u << (j % 8));
      bias[i * d.m + j] = (j % 5 == 0) ? -std::numeric_limits<float>::infinity() : rng.uniform(-2.0f, 2.0f);
    }
  for (size_t pi = 0; pi < pl.n; ++pi) {
    check(d, Mask::keep_bytes(keep), pl.ports[pi], 7, "keep-bytes");
    check(d, Mask::keep_bitmask(bits), pl.ports[pi], 8, "keep-bits");
    check(d, Mask::additive(bias), pl.ports[pi], 9, "bias");
    Mask all = Mask::causal_bottom_right();
    all.keep_bits = bits;
    all.bias = bias;
    check(d, all, pl.ports[pi], 10, "causal+bits+bias");
    check(d, all, pl.ports[pi], 10, "causal+bits+bias, no weights", false);
    check(d, Mask::additive(bias), pl.ports[pi], 9, "bias, no weights", false);
  }
}

TA_CASE("fp16 forward: large and tiny values (overflowing products stay fp32, subnormal outputs)") {
  PortList pl;
  const Dims d{4, 20, 64, 8};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    for (float sd : {200.0f, 1e-4f}) {
      Arena::Scope scope;
      F16Problem f = make(d, 31, sd);
      if (!f.ok) continue;
      // 200^2 * 64 products overflow fp16 (65504) but not the fp32 sums.
      run_reference(f.p, Mask::none());
      TA_CHECK(run(f, pl.ports[pi], Mask::none(), sd > 1.0f) == Status::kOk);
      const double vmax = max_abs(f.p.v, d.v_elems());
      const Result y = close(f.p.y, f.p.y_ref, d.y_elems(), kOutAtol * vmax * (1 + kHalfRel) + kHalfSub,
                             kOutRtol + kHalfRel * (1 + kOutRtol));
      TA_CHECK_MSG(y.ok, "%s sd=%g: Y off by %g at %zu", port_name(pl.ports[pi]), static_cast<double>(sd), y.worst,
                   y.index);
      size_t finite = 0;
      for (size_t x = 0; x < d.y_elems(); ++x) finite += std::isfinite(f.p.y[x]);
      TA_CHECK_MSG(finite == d.y_elems(), "sd=%g: %zu non-finite outputs", static_cast<double>(sd),
                   d.y_elems() - finite);
    }
  }
}

TA_CASE("fp16 forward: +inf and NaN logits, with and without weights") {
  // +inf logits share the weight (the limit of softmax); a NaN logit makes its row NaN.
  PortList pl;
  const Dims d{6, 29, 8, 5};
  Arena::Scope scope;
  float* bias = alloc<float>(d.n * d.m);
  for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
  bias[0 * d.m + 20] = std::numeric_limits<float>::infinity();  // a late tile raises the max to +inf
  bias[1 * d.m + 3] = std::numeric_limits<float>::infinity();
  bias[1 * d.m + 27] = std::numeric_limits<float>::infinity();
  bias[2 * d.m + 17] = std::numeric_limits<float>::quiet_NaN();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    check(d, Mask::additive(bias), pl.ports[pi], 12, "inf/nan bias");
    check(d, Mask::additive(bias), pl.ports[pi], 12, "inf/nan bias, no weights", false);
  }
}

TA_CASE("fp16 forward: rejected requests write nothing; compile-time API matches") {
  const Dims d{4, 6, 8, 5};
  Arena::Scope scope;
  F16Problem f = make(d, 5);
  TA_CHECK(f.ok);
  if (!f.ok) return;
  const Workspace ws{f.ws, forward_f16_workspace_bytes(d)};
  auto expect = [&](Status want, const ForwardIoF16& io, Workspace w, const Mask& m, const Options& o, const char* what) {
    for (size_t x = 0; x < d.y_elems(); ++x) f.y[x] = half::from_bits(0x1234);
    const Status got = forward_f16(d, io, w, m, o);
    size_t written = 0;
    for (size_t x = 0; x < d.y_elems(); ++x) written += f.y[x].bits != 0x1234;
    TA_CHECK_MSG(got == want && written == 0, "%s: status %s (want %s), %zu written", what, to_string(got),
                 to_string(want), written);
  };
  const ForwardIoF16 io{f.q, f.k, f.v, f.y, nullptr, nullptr};
  expect(Status::kNullPointer, ForwardIoF16{f.q, nullptr, f.v, f.y, nullptr, nullptr}, ws, Mask{}, Options{}, "null K");
  expect(Status::kWorkspaceTooSmall, io, Workspace{f.ws, ws.bytes - 1}, Mask{}, Options{}, "small workspace");
  const half* odd = reinterpret_cast<const half*>(reinterpret_cast<const unsigned char*>(f.q) + 1);
  expect(Status::kMisaligned, ForwardIoF16{odd, f.k, f.v, f.y, nullptr, nullptr}, ws, Mask{}, Options{}, "odd Q");
  expect(Status::kAliasing, ForwardIoF16{f.q, f.k, f.v, f.y, nullptr, reinterpret_cast<float*>(f.ws)}, ws, Mask{},
         Options{}, "lse in the workspace");
  expect(Status::kAliasing, ForwardIoF16{f.y, f.k, f.v, f.y, nullptr, nullptr}, ws, Mask{}, Options{}, "Y over Q");
  Options bad;
  bad.scale = std::numeric_limits<float>::infinity();
  expect(Status::kBadScale, io, ws, Mask{}, bad, "inf scale");
  expect(Status::kBadMask, io, ws, Mask::key_padding(7), Options{}, "kv_len > M");

  using S = Shape<4, 6, 8, 5>;
  static AttentionF16<S> attn;
  static AttentionF16<S>::Q q;
  static AttentionF16<S>::K k;
  static AttentionF16<S>::V v;
  static AttentionF16<S>::Y y;
  std::memcpy(q.data(), f.q, sizeof q);
  std::memcpy(k.data(), f.k, sizeof k);
  std::memcpy(v.data(), f.v, sizeof v);
  TA_CHECK(attn(q, k, v, y, Mask::causal_top_left()) == Status::kOk);
  TA_CHECK(forward_f16(d, io, ws, Mask::causal_top_left()) == Status::kOk);
  TA_CHECK(std::memcmp(y.data(), f.y, sizeof y) == 0);
  TA_LOG("AttentionF16<4,6,8,5>: sizeof %zu bytes; workspace formula %zu", sizeof attn, forward_f16_workspace_bytes(d));
}

TA_CASE("fp16 forward: measured maxima") {
  TA_LOG("worst |y - y_ref| / max|v| = %.3g, worst |a - a_ref| = %.3g", g_worst.y_rel, g_worst.w_abs);
}
