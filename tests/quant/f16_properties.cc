// The fp16 path: every port, every mask kind, against the reference (the
// spec, double) run on the same fp16 inputs widened to fp32. Bounds, as
// docs/quant.md states them: the fp32 path's tolerances plus the final
// rounding of Y and A to fp16 (half an ulp: 2^-11 relative, 2^-25 absolute
// in the subnormal range). F16Compute::kNativeF16Products, where this build
// and CPU run it, goes through every case too, against its own bound (the
// logit error of fp16 products propagated through the softmax, plus the
// rounding of the weights to fp16 for P V; docs/quant.md derives it).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "format.h"
#include "support.h"
#include "tatest.h"
#include "test_env.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/reference.h"

using namespace tinyattn;
using namespace tatest;

namespace {

constexpr double kHalfRel = 1.0 / 2048;        // half an ulp of a normal half, relative
constexpr double kHalfSub = 1.0 / 33554432.0;  // half the smallest subnormal, 2^-25

struct Worst {
  double y_rel = 0;  // max |y - y_ref| / (max|v|), measured
  double w_abs = 0;
  double y_of_bound = 0;  // the largest |y - y_ref| as a share of its documented bound (docs/quant.md)
  double w_of_bound = 0;  // the same for the weights
  double eps = 0;       // native: the largest logit error bound met
  double y_frac = 0;    // native: the largest (|y - y_ref| - fp16 storage bound) / native bound term
  double lse_frac = 0;  // native: the largest |lse - lse_ref| / logit bound (how tight the bound is)
};
Worst g_worst, g_worst_native;

bool native(F16Compute mode) { return mode == F16Compute::kNativeF16Products; }

// The modes this build and CPU run: widening always, native fp16 products where available.
struct ModeList {
  F16Compute modes[2] = {F16Compute::kWidenToF32, F16Compute::kNativeF16Products};
  size_t n = f16_native_products_available() ? 2 : 1;
};

const char* mode_name(F16Compute mode) { return native(mode) ? f16_native_products_name() : "widen"; }

// gamma_n = n u / (1 - n u) (Higham): the relative error bound of n roundings.
double gamma(double n, double u) { return n * u / (1 - n * u); }

constexpr double kU16 = 1.0 / 2048;        // fp16 unit roundoff, 2^-11
constexpr double kU32 = 1.0 / 16777216.0;  // fp32 unit roundoff, 2^-24

// Absolute error of one fp16 multiply-add near underflow: half the subnormal
// spacing, fp16 subnormals being kept (FPCR.FZ16 / FPSCR.FZ16 = 0, their reset
// state, on aarch64 and on the M55).
constexpr double kEta16 = kHalfSub;

// The native mode's logit error bound, the largest over every visible (row, key):
//   |z^ - z| <= scale * (G * sum_c |q_c k_c| + 1.01 * Dk * kEta16),
//   G = gamma_L(2^-11) + gamma_(Dk+2)(2^-24) * (1 + gamma_L(2^-11)),  L = kF16NativeChunk:
// each fp16 lane rounds L products and partial sums; the widened partial sums,
// the fp32 tail and the scaling round at most Dk + 2 times in fp32.
double logit_bound(const Problem& p, const Mask& mask) {
  const Dims& d = p.d;
  const double scale = effective_scale(d, Options{});
  const double g =
      gamma(kF16NativeChunk, kU16) + gamma(static_cast<double>(d.dk) + 2, kU32) * (1 + gamma(kF16NativeChunk, kU16));
  double eps = 0;
  for (size_t h = 0; h < d.hq; ++h)
    for (size_t i = 0; i < d.n; ++i)
      for (size_t j = 0; j < d.m; ++j) {
        if (!ref::visible(mask, d, h, i, j)) continue;
        const float* q = p.q + (h * d.n + i) * d.dk;
        const float* k = p.k + ((h / d.group()) * d.m + j) * d.dk;
        double abs_dot = 0;
        for (size_t c = 0; c < d.dk; ++c) abs_dot += std::fabs(static_cast<double>(q[c]) * k[c]);
        const double e = scale * (g * abs_dot + 1.01 * static_cast<double>(d.dk) * kEta16);
        eps = e > eps ? e : eps;
      }
  return eps;
}

// What the native mode adds to the stored-fp16 bounds, given the logit bound eps:
//   weights: |a^ - a| <= (e^(2 eps) - 1) * a          (every logit off by at most eps)
//   Y:       + ((e^(2 eps) - 1)(1 + 2^-11) + 2^-11 + M 2^-25) * max|v|
//            (the weights, then their rounding to fp16 for P V: 2^-11 relative,
//            2^-25 absolute each, the products exact and summed in fp32)
//   hull:    + 2^-11 + M 2^-25 (the rounded weights need not sum to exactly 1)
struct NativeBound {
  double eps = 0, w_rel = 0, y_abs_per_v = 0, hull = 0;
};

NativeBound native_bound(const Problem& p, const Mask& mask) {
  NativeBound b;
  b.eps = logit_bound(p, mask);
  b.w_rel = std::expm1(2 * b.eps);
  const double m = static_cast<double>(p.d.m);
  b.y_abs_per_v = b.w_rel * (1 + kU16) + kU16 + m * kHalfSub;
  b.hull = kU16 + m * kHalfSub;
  return b;
}

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

// The largest |got - want| / (atol + rtol |want|) over finite pairs: how much
// of its bound an error uses (close() checks each pair against the bound).
double share_of_bound(const float* got, const double* want, size_t n, double atol, double rtol) {
  double share = 0;
  for (size_t x = 0; x < n; ++x) {
    if (!std::isfinite(got[x]) || !std::isfinite(want[x])) continue;
    const double e = std::fabs(static_cast<double>(got[x]) - want[x]) / (atol + rtol * std::fabs(want[x]));
    share = e > share ? e : share;
  }
  return share;
}

// Runs forward_f16 with exactly forward_f16_workspace_bytes(d, with_weights)
// bytes of workspace, starting one byte past a 64-byte boundary so that the
// alignment slack is all used; the rest of the allocation is a canary.
Status run(F16Problem& f, Port port, const Mask& mask, bool with_weights = true,
           F16Compute mode = F16Compute::kWidenToF32) {
  const Dims& d = f.p.d;
  for (size_t x = 0; x < d.lse_elems(); ++x) f.p.lse[x] = std::numeric_limits<float>::quiet_NaN();
  const size_t full = forward_f16_workspace_bytes(d, true), used = forward_f16_workspace_bytes(d, with_weights);
  unsigned char* ws = f.ws + 1;
  std::memset(ws + used, 0xa5, full - used);
  OptionsF16 opt;
  opt.port = port;
  opt.compute = mode;
  Status s = forward_f16(d, ForwardIoF16{f.q, f.k, f.v, f.y, with_weights ? f.w : nullptr, f.p.lse},
                         Workspace{ws, used}, mask, opt);
  size_t touched = 0;
  for (size_t x = used; x < full; ++x) touched += ws[x] != 0xa5;
  TA_CHECK_MSG(touched == 0, "forward_f16 wrote %zu bytes past its workspace", touched);
  to_float(f.y, f.p.y, d.y_elems());
  if (with_weights) to_float(f.w, f.p.weights, d.weight_elems());
  return s;
}

void check(const Dims& d, const Mask& mask, Port port, F16Compute mode, uint64_t seed, const char* what,
           bool with_weights = true, float sd = 1.0f) {
  Arena::Scope scope;
  F16Problem f = make(d, seed, sd);
  if (!f.ok) {
    TA_IGNORE(::tatest::fmt("%s: the test arena is too small", what).c_str());
  }
  Problem& p = f.p;
  run_reference(p, mask);
  const Status s = run(f, port, mask, with_weights, mode);
  const char* pn = port_name(port);
  const char* mn = mode_name(mode);
  TA_CHECK_MSG(s == Status::kOk, "%s/%s/%s: status %s", pn, mn, what, to_string(s));
  if (s != Status::kOk) return;

  const NativeBound nb = native(mode) ? native_bound(p, mask) : NativeBound{};
  Worst& worst = native(mode) ? g_worst_native : g_worst;
  worst.eps = nb.eps > worst.eps ? nb.eps : worst.eps;
  const double vmax = max_abs(p.v, d.v_elems());
  const double y_atol = kOutAtol * vmax * (1 + kHalfRel) + kHalfSub, y_rtol = kOutRtol + kHalfRel * (1 + kOutRtol);
  const Result y = close(p.y, p.y_ref, d.y_elems(), y_atol + nb.y_abs_per_v * vmax, y_rtol);
  const double y_share = share_of_bound(p.y, p.y_ref, d.y_elems(), y_atol + nb.y_abs_per_v * vmax, y_rtol);
  worst.y_of_bound = y_share > worst.y_of_bound ? y_share : worst.y_of_bound;
  TA_CHECK_MSG(y.ok, "%s/%s/%s N=%zu M=%zu: Y off by %g at %zu (logit bound %g)", pn, mn, what, d.n, d.m, y.worst,
               y.index, nb.eps);
  if (native(mode) && nb.y_abs_per_v > 0)
    for (size_t x = 0; x < d.y_elems(); ++x) {
      const double over = std::fabs(p.y[x] - p.y_ref[x]) - (y_atol + y_rtol * std::fabs(p.y_ref[x]));
      const double frac = over / (nb.y_abs_per_v * vmax);
      worst.y_frac = frac > worst.y_frac ? frac : worst.y_frac;
    }
  // lse = logsumexp(z) moves by at most the largest logit error.
  const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5 + nb.eps, 1e-5);
  if (native(mode) && nb.eps > 0)
    for (size_t x = 0; x < d.lse_elems(); ++x) {
      if (!std::isfinite(p.lse_ref[x])) continue;
      const double frac = std::fabs(p.lse[x] - p.lse_ref[x]) / nb.eps;
      worst.lse_frac = frac > worst.lse_frac ? frac : worst.lse_frac;
    }
  TA_CHECK_MSG(l.ok, "%s/%s: lse off by %g at %zu", pn, what, l.worst, l.index);
  for (size_t x = 0; x < d.y_elems(); ++x) {
    const double e = std::fabs(p.y[x] - p.y_ref[x]) / (vmax > 0 ? vmax : 1);
    worst.y_rel = e > worst.y_rel ? e : worst.y_rel;
  }
  // V's entries are halves, so rounding a Y inside their hull to fp16 keeps it
  // inside. (Rows a NaN logit poisons have no hull; close() above matched their NaNs.)
  bool nan_rows = false;
  for (size_t x = 0; x < d.y_elems(); ++x) nan_rows |= std::isnan(p.y_ref[x]);
  const Result hull = nan_rows ? Result{} : in_value_hull(d, p.y, p.v, mask, 1e-5 + nb.hull);
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

  const double w_atol = kWeightAtol + kHalfSub, w_rtol = kWeightRtol + kHalfRel * (1 + kWeightRtol);
  const Result w =
      close(p.weights, p.weights_ref, d.weight_elems(), w_atol * (1 + nb.w_rel), w_rtol + nb.w_rel * (1 + w_rtol));
  const double w_share = share_of_bound(p.weights, p.weights_ref, d.weight_elems(), w_atol * (1 + nb.w_rel),
                                        w_rtol + nb.w_rel * (1 + w_rtol));
  worst.w_of_bound = w_share > worst.w_of_bound ? w_share : worst.w_of_bound;
  TA_CHECK_MSG(w.ok, "%s/%s N=%zu M=%zu: weights off by %g at %zu", pn, what, d.n, d.m, w.worst, w.index);
  for (size_t x = 0; x < d.weight_elems(); ++x) {
    const double e = std::fabs(p.weights[x] - p.weights_ref[x]);
    worst.w_abs = e > worst.w_abs ? e : worst.w_abs;
  }

  const Result rs =
      nan_rows ? Result{} : rows_sum_to_one(p.weights, d.hq * d.n, d.m, kRowSumTol + kHalfRel + d.m * kHalfSub, true);
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
  Port ports[tatest::kMaxPorts];
  size_t n;
  PortList() : n(ports_under_test(ports)) {}
};

const Dims kShapes[] = {{1, 1, 1, 1},     {1, 3, 7, 3},    {3, 7, 17, 5},          {7, 17, 33, 7},
                        {17, 33, 16, 17}, {33, 17, 8, 33}, {16, 16, 32, 32, 4, 2}, {5, 100, 33, 17, 2, 1}};

}  // namespace

namespace {

void unmasked_sweep() {
  PortList pl;
  ModeList ml;
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (size_t mi = 0; mi < ml.n; ++mi)
      for (const Dims& d : kShapes) {
        check(d, Mask::none(), pl.ports[pi], ml.modes[mi], 500 + d.n * 3 + d.m, "none");
        check(d, Mask::none(), pl.ports[pi], ml.modes[mi], 500 + d.n * 3 + d.m, "none, no weights (online softmax)",
              false);
      }
}

}  // namespace

TA_CASE("fp16 forward: every port, unmasked, against the reference on the fp16 inputs") { unmasked_sweep(); }

TA_CASE("fp16 forward: structured masks") {
  PortList pl;
  ModeList ml;
  const Dims d{13, 21, 12, 5, 2, 1};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (size_t mi = 0; mi < ml.n; ++mi) {
      check(d, Mask::causal_top_left(), pl.ports[pi], ml.modes[mi], 1, "causal-top-left");
      check(d, Mask::causal_bottom_right(), pl.ports[pi], ml.modes[mi], 2, "causal-bottom-right");
      check(d, Mask::sliding_window(3, 2, Align::kTopLeft), pl.ports[pi], ml.modes[mi], 3, "window-tl");
      check(d, Mask::sliding_window(-2, 5, Align::kTopLeft), pl.ports[pi], ml.modes[mi], 4,
            "window-shifted (empty rows)");
      check(d, Mask::key_padding(9), pl.ports[pi], ml.modes[mi], 5, "kv-len-9");
      check(d, Mask::key_padding(0), pl.ports[pi], ml.modes[mi], 6, "kv-len-0 (all rows empty)");
      check(d, Mask::causal_bottom_right(), pl.ports[pi], ml.modes[mi], 2, "causal-bottom-right, no weights", false);
      check(d, Mask::sliding_window(-2, 5, Align::kTopLeft), pl.ports[pi], ml.modes[mi], 4,
            "window-shifted, no weights", false);
      check(d, Mask::key_padding(0), pl.ports[pi], ml.modes[mi], 6, "kv-len-0, no weights", false);
    }
}

TA_CASE("fp16 forward: keep bytes, keep bits and additive bias") {
  PortList pl;
  ModeList ml;
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
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (size_t mi = 0; mi < ml.n; ++mi) {
      check(d, Mask::keep_bytes(keep), pl.ports[pi], ml.modes[mi], 7, "keep-bytes");
      check(d, Mask::keep_bitmask(bits), pl.ports[pi], ml.modes[mi], 8, "keep-bits");
      check(d, Mask::additive(bias), pl.ports[pi], ml.modes[mi], 9, "bias");
      Mask all = Mask::causal_bottom_right();
      all.keep_bits = bits;
      all.bias = bias;
      check(d, all, pl.ports[pi], ml.modes[mi], 10, "causal+bits+bias");
      check(d, all, pl.ports[pi], ml.modes[mi], 10, "causal+bits+bias, no weights", false);
      check(d, Mask::additive(bias), pl.ports[pi], ml.modes[mi], 9, "bias, no weights", false);
    }
}

TA_CASE("fp16 forward: large and tiny values (overflowing products stay fp32, subnormal outputs)") {
  PortList pl;
  ModeList ml;
  const Dims d{4, 20, 64, 8};
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (size_t mi = 0; mi < ml.n; ++mi) {
      for (float sd : {200.0f, 1e-4f}) {
        Arena::Scope scope;
        F16Problem f = make(d, 31, sd);
        if (!f.ok) continue;
        // 200^2 * 64 products overflow fp16 (65504) but not the fp32 sums.
        run_reference(f.p, Mask::none());
        // Native fp16 products: a dot product that overflows fp16 is recomputed in fp32.
        TA_CHECK(run(f, pl.ports[pi], Mask::none(), sd > 1.0f, ml.modes[mi]) == Status::kOk);
        const double vmax = max_abs(f.p.v, d.v_elems());
        const NativeBound nb = native(ml.modes[mi]) ? native_bound(f.p, Mask::none()) : NativeBound{};
        const Result y =
            close(f.p.y, f.p.y_ref, d.y_elems(), kOutAtol * vmax * (1 + kHalfRel) + kHalfSub + nb.y_abs_per_v * vmax,
                  kOutRtol + kHalfRel * (1 + kOutRtol));
        TA_CHECK_MSG(y.ok, "%s/%s sd=%g: Y off by %g at %zu", port_name(pl.ports[pi]), mode_name(ml.modes[mi]),
                     static_cast<double>(sd), y.worst, y.index);
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
  ModeList ml;
  const Dims d{6, 29, 8, 5};
  Arena::Scope scope;
  float* bias = alloc<float>(d.n * d.m);
  for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
  bias[0 * d.m + 20] = std::numeric_limits<float>::infinity();  // a late tile raises the max to +inf
  bias[1 * d.m + 3] = std::numeric_limits<float>::infinity();
  bias[1 * d.m + 27] = std::numeric_limits<float>::infinity();
  bias[2 * d.m + 17] = std::numeric_limits<float>::quiet_NaN();
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (size_t mi = 0; mi < ml.n; ++mi) {
      check(d, Mask::additive(bias), pl.ports[pi], ml.modes[mi], 12, "inf/nan bias");
      check(d, Mask::additive(bias), pl.ports[pi], ml.modes[mi], 12, "inf/nan bias, no weights", false);
    }
}

TA_CASE("fp16 native products: large Dk, GQA with masks, values near the fp16 range") {
  // Only where the mode runs; elsewhere the next case checks kUnsupported.
  char line[96];
  format(line, sizeof line, "fp16 native products: %s\n", f16_native_products_name());
  out(line);  // always printed: the aarch64 CPU-variant runs match it (tests/quant/suite.cmake)
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
  TA_CHECK_MSG(f16_native_products_available(), "an MVE-float build must run the native fp16 mode");
#endif
  if (!f16_native_products_available()) return;
  PortList pl;
  const F16Compute nat = F16Compute::kNativeF16Products;
  const Dims big{3, 24, 512, 16};       // 16 chunks of 32 per score
  const Dims odd{2, 9, 1001, 8};        // a tail of 1 after 125 vectors
  const Dims gqa{8, 40, 96, 24, 4, 2};  // grouped-query, 3 chunks
  for (size_t pi = 0; pi < pl.n; ++pi) {
    check(big, Mask::none(), pl.ports[pi], nat, 61, "Dk=512");
    check(big, Mask::none(), pl.ports[pi], nat, 62, "Dk=512, sd 8", true, 8.0f);
    check(odd, Mask::causal_bottom_right(), pl.ports[pi], nat, 63, "Dk=1001 causal");
    check(gqa, Mask::causal_top_left(), pl.ports[pi], nat, 64, "GQA causal");
    check(gqa, Mask::sliding_window(5, 0, Align::kBottomRight), pl.ports[pi], nat, 65, "GQA window, no weights", false);
    check(gqa, Mask::key_padding(17), pl.ports[pi], nat, 66, "GQA kv-len-17", true, 30.0f);
    // Magnitudes near the top of fp16: products and partial sums overflow,
    // those scores are recomputed in fp32 (the bound is then loose, the
    // masks, row sums and hull still hold).
    check(gqa, Mask::causal_bottom_right(), pl.ports[pi], nat, 67, "GQA sd 4000", true, 4000.0f);
    check(Dims{4, 20, 64, 8}, Mask::none(), pl.ports[pi], nat, 68, "sd 1e-3 (subnormal products)", true, 1e-3f);
  }
}

TA_CASE("fp16 native products: a score whose fp16 sum overflows is the fp32 score") {
  if (!f16_native_products_available()) return;
  // Every product 300 * 300 = 90000 overflows fp16 (65504): without the fp32
  // recomputation every logit would be +inf and the lse +inf.
  const Dims d{2, 5, 40, 4};
  Arena::Scope scope;
  F16Problem f = make(d, 71);
  TA_CHECK(f.ok);
  if (!f.ok) return;
  const half big = to_half(300.0f);
  for (size_t x = 0; x < d.q_elems(); ++x) f.q[x] = big;
  for (size_t x = 0; x < d.k_elems(); ++x) f.k[x] = big;
  to_float(f.q, f.p.q, d.q_elems());
  to_float(f.k, f.p.k, d.k_elems());
  run_reference(f.p, Mask::none());
  TA_CHECK(run(f, Port::kDefault, Mask::none(), true, F16Compute::kNativeF16Products) == Status::kOk);
  const Result l = close(f.p.lse, f.p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
  TA_CHECK_MSG(l.ok, "lse off by %g at %zu (%g, want %g)", l.worst, l.index, static_cast<double>(f.p.lse[l.index]),
               f.p.lse_ref[l.index]);
}

TA_CASE("fp16 compute mode: unsupported where there is no fp16 arithmetic, and invalid values") {
  const Dims d{4, 6, 8, 5};
  Arena::Scope scope;
  F16Problem f = make(d, 5);
  TA_CHECK(f.ok);
  if (!f.ok) return;
  const Workspace ws{f.ws, forward_f16_workspace_bytes(d)};
  half* w = f.w;
  float* lse = f.p.lse;
  auto attempt = [&](F16Compute mode, const char* what) {
    for (size_t x = 0; x < d.y_elems(); ++x) f.y[x] = half::from_bits(0x1234);
    for (size_t x = 0; x < d.weight_elems(); ++x) w[x] = half::from_bits(0x1234);
    for (size_t x = 0; x < d.lse_elems(); ++x) lse[x] = 7.0f;
    OptionsF16 o;
    o.compute = mode;
    const Status got = forward_f16(d, ForwardIoF16{f.q, f.k, f.v, f.y, w, lse}, ws, Mask::causal_top_left(), o);
    size_t written = 0;
    for (size_t x = 0; x < d.y_elems(); ++x) written += f.y[x].bits != 0x1234;
    for (size_t x = 0; x < d.weight_elems(); ++x) written += w[x].bits != 0x1234;
    for (size_t x = 0; x < d.lse_elems(); ++x) written += lse[x] != 7.0f;
    TA_LOG("%s: %s, %zu written", what, to_string(got), written);
    return got == Status::kOk || written == 0 ? got : Status::kOk;
  };
  const bool avail = f16_native_products_available();
  const Status nat = attempt(F16Compute::kNativeF16Products, "native fp16 products");
  TA_CHECK_MSG(nat == (avail ? Status::kOk : Status::kUnsupported), "native mode: %s with available = %d",
               to_string(nat), avail ? 1 : 0);
  TA_CHECK(attempt(static_cast<F16Compute>(9), "compute mode 9") == Status::kUnsupported);
  TA_CHECK(attempt(F16Compute::kWidenToF32, "widen") == Status::kOk);

  // The compile-time API takes the same options.
  using S = Shape<4, 6, 8, 5>;
  static AttentionF16<S> attn;
  static AttentionF16<S>::Q q;
  static AttentionF16<S>::K k;
  static AttentionF16<S>::V v;
  static AttentionF16<S>::Y y;
  std::memcpy(q.data(), f.q, sizeof q);
  std::memcpy(k.data(), f.k, sizeof k);
  std::memcpy(v.data(), f.v, sizeof v);
  for (half& x : y) x = half::from_bits(0x1234);
  OptionsF16 o;
  o.compute = F16Compute::kNativeF16Products;
  const Status s = attn(q, k, v, y, Mask::causal_top_left(), nullptr, o);
  size_t written = 0;
  for (const half& x : y) written += x.bits != 0x1234;
  TA_CHECK_MSG(avail ? s == Status::kOk : (s == Status::kUnsupported && written == 0),
               "AttentionF16 native: %s, %zu written", to_string(s), written);
  if (avail) {  // the same arithmetic as the run-time API
    TA_CHECK(forward_f16(d, ForwardIoF16{f.q, f.k, f.v, f.y, nullptr, nullptr}, ws, Mask::causal_top_left(), o) ==
             Status::kOk);
    TA_CHECK(std::memcmp(y.data(), f.y, sizeof y) == 0);
  }
}

TA_CASE("fp16 forward: rejected requests write nothing; compile-time API matches") {
  const Dims d{4, 6, 8, 5};
  Arena::Scope scope;
  F16Problem f = make(d, 5);
  TA_CHECK(f.ok);
  if (!f.ok) return;
  const Workspace ws{f.ws, forward_f16_workspace_bytes(d)};
  auto expect = [&](Status want, const ForwardIoF16& io, Workspace w, const Mask& m, const Options& o,
                    const char* what) {
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
  Options bad_cap;
  bad_cap.softcap = -2.0f;
  expect(Status::kBadScale, io, ws, Mask{}, bad_cap, "negative softcap");
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

// The largest errors the cases above measured, held to docs/quant.md's
// bounds. Run alone or before them (a filter, another order), it measures the
// unmasked sweep itself first.
TA_CASE("fp16 forward: measured maxima") {
  if (!(g_worst.y_rel > 0 && g_worst.w_abs > 0)) unmasked_sweep();
  TA_CHECK_MSG(g_worst.y_rel > 0 && g_worst.w_abs > 0, "nothing measured");
  TA_LOG("widen: worst |y - y_ref| / max|v| = %.3g, worst |a - a_ref| = %.3g (%.3g and %.3g of their bounds)",
         g_worst.y_rel, g_worst.w_abs, g_worst.y_of_bound, g_worst.w_of_bound);
  // |a - a_ref| <= 2e-6 + 2^-25 + (2e-5 + 2^-11) a_ref, with a_ref <= 1.
  TA_CHECK(g_worst.w_abs <= kWeightAtol + kHalfSub + kWeightRtol + kHalfRel * (1 + kWeightRtol));
  TA_CHECK(g_worst.y_of_bound <= 1.0);
  TA_CHECK(g_worst.w_of_bound <= 1.0);
  if (f16_native_products_available()) {
    TA_LOG(
        "native (%s): worst |y - y_ref| / max|v| = %.3g, worst |a - a_ref| = %.3g, largest logit bound %.3g, "
        "largest share of its Y term used %.3g, of the logit bound (lse) %.3g",
        f16_native_products_name(), g_worst_native.y_rel, g_worst_native.w_abs, g_worst_native.eps,
        g_worst_native.y_frac, g_worst_native.lse_frac);
    // Y within the default bound plus the native term, lse within the logit bound eps.
    TA_CHECK(g_worst_native.y_of_bound <= 1.0);
    TA_CHECK(g_worst_native.w_of_bound <= 1.0);
    TA_CHECK(g_worst_native.y_frac <= 1.0);
    TA_CHECK(g_worst_native.lse_frac <= 1.0);
  }
}
