// Differential fuzz target: one valid problem per input, run through every
// compiled port, both forward algorithms (weights requested: whole rows; not:
// key tiles once M exceeds the tile, 256 keys in fp32, 8 in fp16) and, on
// inputs rounded to fp16, fp16 in each compute mode this build runs. Every
// run must meet the non-finite contract (docs/hardening.md) row by row:
//  * which outputs are NaN, +inf, -inf or finite (Y, lse, weights), exactly;
//  * masked keys have weight exactly 0, a row without visible keys is 0 with
//    lse -inf;
//  * finite values within a tolerance derived from the logits' fp32 (and fp16
//    product) error bound: Y within (e^(2 eps) - 1 + 1e-4) max|v|, lse within
//    eps + 1e-4 (1 + |lse|), weights within (e^(2 eps) - 1) a + 1e-4, plus the
//    fp16 rounding of Y and the weights.
// The expectation is computed here in double from the inputs: logits
// scale * <q, k> + bias with exact dot products (the rule for a dot product
// that overflows fp32), the softmax limit for +inf logits, and a key whose
// fp32 weight underflows to 0 contributing nothing. Where fp32 rounding can
// legitimately decide the class (a key's weight near the underflow threshold
// with a non-finite value, finite logits or values near overflow), that
// output is left out; all runs being checked against one expectation is what
// compares ports, algorithms and dtypes with each other.
//
// Decoding is compact so that short inputs reach long rows: tensors start as
// zeros or a small-integer pattern, then up to 24 "pokes" set single elements
// of Q, K, V or the bias to values from a pool (NaN, +-inf, FLT_MAX, the
// largest half, subnormals, biases that push weights below fp32's range).
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
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

namespace {

using tatest::FloatPath;
using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Status;
using tinyattn_fuzz::Bytes;

using tatest::kInf;
using tatest::kNaN;

constexpr float kPool[] = {0.0f,   -0.0f,   1.0f,     -1.0f,    2.0f,      -3.0f,    0.5f,  60.0f,
                           -50.0f, 200.0f,  -200.0f,  100.0f,   kInf,      -kInf,    kNaN,  FLT_MAX,
                           -FLT_MAX, 65504.0f, -65504.0f, 1e-40f, -1e-40f, 1e4f,    -1e4f, 1e-6f};
constexpr size_t kPoolSize = sizeof kPool / sizeof kPool[0];

// The class each output must have, or kAny where rounding may decide it.
enum Class : uint8_t { kFinite, kPosInf, kNegInf, kIsNaN, kAny };

Class class_of(double x) {
  if (std::isnan(x)) return kIsNaN;
  if (std::isinf(x)) return x > 0 ? kPosInf : kNegInf;
  return kFinite;
}

[[noreturn]] void fail(const char* what, const char* port, const char* path, bool ww, size_t row, size_t col,
                       double got, double want) {
  std::fprintf(stderr, "differential: %s on %s/%s (weights %d), row %zu col %zu: got %g, want %g\n", what, port, path,
               ww ? 1 : 0, row, col, got, want);
  __builtin_trap();
}

// What the contract says about one row.
struct RowExpect {
  bool empty = false, nan = false, any = false;  // any: the row's classes are left open
  double lse = 0, eps = 0;                         // eps: logit error bound of the run kind
  std::vector<double> w;                           // per key (masked: 0)
  std::vector<double> y;                           // per column
  std::vector<Class> y_class;
  std::vector<double> y_slack;  // per column: what keys of fp32 weight 0 may add
  double vmax = 0;  // max |v| over the keys that carry weight
};

// Logit error bound: fp32 dot product and scaling (gamma_(Dk+2) of the sum of
// |products|), the bias addition, and for the native fp16 products the fp16
// rounding of each chunk's products and partial sums (forward_f16.h).
double logit_error(double abs_dot, double s, double scale, size_t dk, bool native) {
  const double u32 = 1.0 / 16777216.0, u16 = 1.0 / 2048.0;
  const double n = static_cast<double>(dk) + 2;
  double e = std::fabs(scale) * abs_dot * n * u32 / (1 - n * u32) + std::fabs(s) * u32;
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
  std::vector<bool> vis(d.m, false);
  double mx = -INFINITY;
  for (size_t j = 0; j < d.m; ++j) {
    if (!tinyattn::ref::visible(mask, d, h, i, j)) continue;
    vis[j] = true;
    const float* kj = k + (kvh * d.m + j) * d.dk;
    double dot = 0, abs_dot = 0;
    for (size_t c = 0; c < d.dk; ++c) {
      const double p = static_cast<double>(qi[c]) * kj[c];
      dot += p;
      abs_dot += std::fabs(p);
    }
    const double bias = mask.bias ? mask.bias[h * mask.head_stride + i * d.m + j] : 0.0;
    s[j] = scale * dot + bias;
    // Near fp32's overflow, rounding decides whether a logit is finite.
    if ((std::isfinite(dot) && std::fabs(dot) > 1e37) || (std::isfinite(s[j]) && std::fabs(s[j]) > 1e37)) r.any = true;
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
  // by the logits' error.
  const double t_hi = -82.0 + 2 * r.eps, t_lo = -106.0 - 2 * r.eps;
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
    if (open || r.any) r.y_class[c] = kAny;
    else if (nan || (pos && neg)) r.y_class[c] = kIsNaN, r.y[c] = NAN;
    else if (pos) r.y_class[c] = kPosInf, r.y[c] = INFINITY;
    else if (neg) r.y_class[c] = kNegInf, r.y[c] = -INFINITY;
    else r.y[c] = acc / sum;
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

struct Decoded {
  Dims d;
  Mask mask;
  tinyattn::Options opt;
  bool half_inputs = false;
};

float pool_or_small(uint8_t b) {
  return b < 0xC0 ? static_cast<float>(static_cast<int>(b % 17) - 8) * 0.5f : kPool[(b - 0xC0) % kPoolSize];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  Decoded x;
  Dims& d = x.d;
  d.n = 1 + in.u8() % 4;
  const uint8_t mk = in.u8();
  // Short rows, rows around the fp16 key tile (8), and rows past the fp32 one (256).
  d.m = mk < 96 ? 1 + mk % 12 : mk < 176 ? 7 + mk % 18 : 255 + mk % 24;
  d.dk = 1 + in.u8() % 17;
  d.dv = 1 + in.u8() % 4;
  d.hkv = 1 + in.u8() % 2;
  d.hq = d.hkv * (1 + in.u8() % 2);
  const uint8_t flags = in.u8();
  x.half_inputs = flags & 1;
  const bool pattern = flags & 2;  // else zeros
  Mask& mask = x.mask;
  mask.causal = static_cast<tinyattn::Causal>((flags >> 2) % 3);
  if (flags & 0x10) mask.kv_len = in.u8() % (d.m + 1);
  if (flags & 0x20) {
    mask.window.left = static_cast<int32_t>(in.u8() % (d.m + 2));
    mask.window.right = static_cast<int32_t>(in.u8() % (d.m + 2));
    mask.window.align = static_cast<tinyattn::Align>(in.u8() % 2);
  }
  const bool with_keep = flags & 0x40, with_bias = flags & 0x80;
  const uint8_t scale_kind = in.u8() % 8;
  if (scale_kind == 1) x.opt.scale = 1.0f;
  if (scale_kind == 2) x.opt.scale = 0.0625f;
  if (scale_kind == 3) x.opt.scale = 0.0f;

  tatest::Arena::Scope scope;
  tatest::Problem p = tatest::make_problem(d, 0);
  const size_t mask_elems = d.n * d.m;
  float* bias = tatest::alloc<float>(mask_elems);
  uint8_t* keep = tatest::alloc<uint8_t>(mask_elems);
  FUZZ_REQUIRE(p.ok && bias && keep);
  float* tensors[] = {p.q, p.k, p.v, bias};
  const size_t sizes[] = {d.q_elems(), d.k_elems(), d.v_elems(), mask_elems};
  const uint32_t seed = in.u8();
  for (int t = 0; t < 4; ++t)
    for (size_t e = 0; e < sizes[t]; ++e)
      tensors[t][e] = pattern && t < 3 ? static_cast<float>(static_cast<int>((e * 7 + seed * 13 + t) % 9) - 4) * 0.5f
                                       : 0.0f;
  for (size_t e = 0; e < mask_elems; ++e) keep[e] = 1;
  const size_t pokes = in.u8() % 25;
  for (size_t n = 0; n < pokes; ++n) {
    const uint8_t what = in.u8();
    const size_t index = (static_cast<size_t>(in.u8()) << 8 | in.u8());
    const uint8_t value = in.u8();
    if (what >= 0xF0) {  // a keep-mask hole
      keep[index % mask_elems] = 0;
    } else {
      const int t = what % 4;
      tensors[t][index % sizes[t]] = pool_or_small(value);
    }
  }
  if (x.half_inputs) tatest::round_inputs_to_half(p);
  if (with_keep) mask.keep = keep;
  if (with_bias) mask.bias = bias;
  FUZZ_REQUIRE(tinyattn::validate(d) == Status::kOk && tinyattn::validate(mask, d) == Status::kOk);

  const double scale = tinyattn::effective_scale(d, x.opt);
  const size_t rows = d.hq * d.n;
  std::vector<RowExpect> expect32(rows), expect16(rows);
  for (size_t row = 0; row < rows; ++row) {
    expect32[row] = expect_row(d, p.q, p.k, p.v, mask, scale, row / d.n, row % d.n, false);
    if (x.half_inputs && tinyattn::f16_native_products_available())
      expect16[row] = expect_row(d, p.q, p.k, p.v, mask, scale, row / d.n, row % d.n, true);
  }

  tatest::PathRun runs[tatest::kMaxPathRuns];
  const size_t nr = tatest::path_runs_under_test(runs, tatest::kMaxPathRuns);
  for (size_t r = 0; r < nr; ++r) {
    const FloatPath path = runs[r].path;
    if (tatest::is_f16(path) && !x.half_inputs) continue;
    const bool native = path == FloatPath::kF16Native;
    // fp16 storage of Y and the weights: half an ulp, and half the smallest subnormal.
    const double h_rel = tatest::is_f16(path) ? 1.0 / 2048 : 0.0, h_abs = tatest::is_f16(path) ? 1.0 / 33554432.0 : 0.0;
    for (bool ww : {true, false}) {
      tatest::Arena::Scope run_scope;
      const Status s = tatest::run_path(path, p, runs[r].port, mask, x.opt, ww);
      const char* pn = tinyattn::port_name(runs[r].port);
      const char* an = tatest::path_name(path);
      if (s != Status::kOk) fail("status not kOk", pn, an, ww, 0, 0, static_cast<double>(s), 0);
      for (size_t row = 0; row < rows; ++row) {
        const RowExpect& e = native ? expect16[row] : expect32[row];
        const float* y = p.y + row * d.dv;
        const float* w = p.weights + row * d.m;
        if (e.empty) {
          for (size_t c = 0; c < d.dv; ++c)
            if (y[c] != 0.0f) fail("empty row: y not 0", pn, an, ww, row, c, y[c], 0);
          if (p.lse[row] != -kInf) fail("empty row: lse not -inf", pn, an, ww, row, 0, p.lse[row], -INFINITY);
          for (size_t j = 0; ww && j < d.m; ++j)
            if (w[j] != 0.0f) fail("empty row: weight not 0", pn, an, ww, row, j, w[j], 0);
          continue;
        }
        // Masked keys: exactly 0 in every row, NaN rows included.
        for (size_t j = 0; ww && j < d.m; ++j)
          if (!tinyattn::ref::visible(mask, d, row / d.n, row % d.n, j) && w[j] != 0.0f)
            fail("masked key: weight not 0", pn, an, ww, row, j, w[j], 0);
        if (e.any) continue;
        // Values only where the logit error leaves the comparison meaningful.
        const bool values = e.eps <= 0.5;
        const double g = std::expm1(2 * e.eps);
        const double y_atol = values ? (g + 1e-4) * e.vmax + h_abs : -1, y_rtol = 1e-4 + h_rel;
        for (size_t c = 0; c < d.dv; ++c)
          if (!agrees(y[c], e.y[c], e.y_class[c], y_atol < 0 ? y_atol : y_atol + e.y_slack[c], y_rtol))
            fail("y", pn, an, ww, row, c, y[c], e.y[c]);
        if (!agrees(p.lse[row], e.lse, class_of(e.lse), values ? e.eps + 1e-4 : -1, 1e-4))
          fail("lse", pn, an, ww, row, 0, p.lse[row], e.lse);
        for (size_t j = 0; ww && j < d.m; ++j)
          if (!agrees(w[j], e.w[j], class_of(e.w[j]), values ? 1e-4 + h_abs : -1, g + 1e-4 + h_rel))
            fail("weight", pn, an, ww, row, j, w[j], e.w[j]);
      }
    }
  }
  return 0;
}
