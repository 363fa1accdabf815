// Known-answer vectors (tests/vectors/gen_vectors.py, NumPy from the
// definitions): every compiled port and lib/ref reproduce the committed
// float64 outputs. Runs on every target; the worst errors are printed so the
// tolerances in docs/core.md stay measured, not guessed.
#include <cmath>
#include <limits>

#include "forward_vectors.h"
#include "support.h"
#include "tatest.h"
#include "test_env.h"
#include "tinyattn/reference.h"

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using tinyattn_vectors::ForwardVector;
using tinyattn_vectors::kForwardVectorCount;
using tinyattn_vectors::kForwardVectors;
using namespace tatest;

namespace {

Dims dims_of(const ForwardVector& v) { return Dims{v.n, v.m, v.dk, v.dv, v.hq, v.hkv}; }

Mask mask_of(const ForwardVector& v) {
  Mask m;
  m.causal = static_cast<tinyattn::Causal>(v.causal);
  m.window = tinyattn::Window{v.window_left, v.window_right, static_cast<tinyattn::Align>(v.window_align)};
  m.kv_len = v.kv_len;
  m.keep = v.keep;
  m.keep_bits = v.keep_bits;
  m.bias = v.bias;
  m.head_stride = v.head_stride;
  return m;
}

tinyattn::Options options_of(const ForwardVector& v) {
  tinyattn::Options o;
  if (v.has_scale) o.scale = v.scale;
  return o;
}

// Elementwise |got - want| <= atol + rtol*|want|; NaN must meet NaN and an
// infinity the same infinity. `ratio` is the worst error as a fraction of its
// bound (> 1 fails), the figure docs/core.md quotes.
struct Err {
  bool ok = true;
  double worst = 0.0;
  double ratio = 0.0;
  size_t index = 0;
};

template <class T>
Err compare(const T* got, const double* want, size_t n, double atol, double rtol) {
  Err e;
  for (size_t x = 0; x < n; ++x) {
    const double g = static_cast<double>(got[x]), w = want[x];
    if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
      const bool same = (std::isnan(w) && std::isnan(g)) || g == w;
      if (!same && e.ok) {
        e.ok = false;
        e.worst = e.ratio = std::numeric_limits<double>::infinity();
        e.index = x;
      }
      continue;
    }
    const double err = std::fabs(g - w);
    const double ratio = err / (atol + rtol * std::fabs(w));
    if (ratio > e.ratio) {
      e.ratio = ratio;
      e.index = x;
    }
    if (err > e.worst) e.worst = err;
    if (ratio > 1.0) e.ok = false;
  }
  return e;
}

double max_abs_v(const ForwardVector& v) { return max_abs(v.v, v.hkv * v.m * v.dv); }

struct Worst {
  double y = 0, a = 0, lse = 0;        // absolute
  double y_r = 0, a_r = 0, lse_r = 0;  // as a fraction of the bound
  static void grow(double& w, double x) {
    if (x > w) w = x;
  }
  void add(const Err& ey, const Err& ea, const Err& el) {  // failures are reported, not folded in
    if (ey.ok) grow(y, ey.worst), grow(y_r, ey.ratio);
    if (ea.ok) grow(a, ea.worst), grow(a_r, ea.ratio);
    if (el.ok) grow(lse, el.worst), grow(lse_r, el.ratio);
  }
};

// Tolerances of lib/ref against NumPy: both compute in float64, only the
// summation order differs.
constexpr double kRefTol = 1e-12;
// lse of a port: |lse - lse_ref| <= kLseTol + kLseTol*|lse_ref| (fp32 logits).
constexpr double kLseTol = 1e-5;

}  // namespace

TA_CASE("vectors: the generated cases cover every mask kind and head layout") {
  // A guard against a generator edit silently dropping a category.
  bool causal_tl = false, causal_br = false, window = false, pad0 = false, padm = false, keep = false, bits = false,
       bias = false, gqa = false, mqa = false, scale = false, per_head = false;
  for (size_t c = 0; c < kForwardVectorCount; ++c) {
    const ForwardVector& v = kForwardVectors[c];
    causal_tl |= v.causal == 1;
    causal_br |= v.causal == 2;
    window |= v.window_left != tinyattn::kUnbounded || v.window_right != tinyattn::kUnbounded;
    pad0 |= v.kv_len == 0;
    padm |= v.kv_len == v.m;
    keep |= v.keep != nullptr;
    bits |= v.keep_bits != nullptr;
    bias |= v.bias != nullptr;
    gqa |= v.hkv > 1 && v.hq > v.hkv;
    mqa |= v.hkv == 1 && v.hq > 1;
    scale |= v.has_scale;
    per_head |= v.head_stride != 0;
  }
  TA_CHECK((causal_tl && causal_br && window && pad0 && padm && keep && bits && bias && gqa && mqa && scale &&
           per_head));
}

TA_CASE("vectors: lib/ref reproduces the generator's float64 outputs") {
  Worst worst;
  for (size_t c = 0; c < kForwardVectorCount; ++c) {
    const ForwardVector& v = kForwardVectors[c];
    const Dims d = dims_of(v);
    Arena::Scope scope;
    double* y = alloc<double>(d.y_elems());
    double* a = alloc<double>(d.weight_elems());
    double* lse = alloc<double>(d.lse_elems());
    TA_CHECK((y && a && lse));
    if (!(y && a && lse)) return;
    TA_CHECK_MSG(v.effective_scale == tinyattn::effective_scale(d, options_of(v)),
                 "%s: the generator's scale %g differs from the library's", v.name, double(v.effective_scale));
    tinyattn::ref::forward(d, v.q, v.k, v.v, mask_of(v), v.effective_scale, y, a, lse);
    const Err ey = compare(y, v.y, d.y_elems(), kRefTol, kRefTol);
    const Err ea = compare(a, v.a, d.weight_elems(), kRefTol, kRefTol);
    const Err el = compare(lse, v.lse, d.lse_elems(), kRefTol, kRefTol);
    TA_CHECK_MSG(ey.ok, "ref/%s: Y[%zu] off by %g", v.name, ey.index, ey.worst);
    TA_CHECK_MSG(ea.ok, "ref/%s: A[%zu] off by %g", v.name, ea.index, ea.worst);
    TA_CHECK_MSG(el.ok, "ref/%s: lse[%zu] off by %g", v.name, el.index, el.worst);
    worst.add(ey, ea, el);
  }
  out(fmt("vectors/ref: worst |dY| %g |dA| %g |dlse| %g over %zu cases\n", worst.y, worst.a, worst.lse,
           kForwardVectorCount).c_str());
}

namespace {

// One port on one vector: with the weights requested (one pass over each row)
// and without (Y and lse only, the smaller workspace: the online-softmax tiles
// when M > kKeyTile). Returns false when the arena is too small.
bool check_port(const ForwardVector& v, Port port, bool with_weights, Worst& worst) {
  const char* pn = tinyattn::port_name(port);
  const Dims d = dims_of(v);
  const size_t ws_bytes = tinyattn::forward_workspace_bytes(d, with_weights);
  Arena::Scope scope;
  float* y = alloc<float>(d.y_elems());
  float* a = alloc<float>(d.weight_elems());
  float* lse = alloc<float>(d.lse_elems());
  unsigned char* ws = alloc<unsigned char>(ws_bytes);
  if (!(y && a && lse && ws)) return false;
  tinyattn::Options o = options_of(v);
  o.port = port;
  const tinyattn::ForwardIo io{v.q, v.k, v.v, y, with_weights ? a : nullptr, lse};
  const Status s = tinyattn::forward(d, io, {ws, ws_bytes}, mask_of(v), o);
  TA_CHECK_MSG(s == Status::kOk, "%s/%s: status %s", pn, v.name, tinyattn::to_string(s));
  if (s != Status::kOk) return true;
  const char* path = with_weights ? "with A" : "without A";
  const Err ey = compare(y, v.y, d.y_elems(), kOutAtol * max_abs_v(v), kOutRtol);
  const Err el = compare(lse, v.lse, d.lse_elems(), kLseTol, kLseTol);
  Err ea;
  if (with_weights) ea = compare(a, v.a, d.weight_elems(), kWeightAtol, kWeightRtol);
  TA_CHECK_MSG(ey.ok, "%s/%s %s: Y[%zu] off by %g (%g x bound)", pn, v.name, path, ey.index, ey.worst, ey.ratio);
  TA_CHECK_MSG(ea.ok, "%s/%s: A[%zu] off by %g (%g x bound)", pn, v.name, ea.index, ea.worst, ea.ratio);
  TA_CHECK_MSG(el.ok, "%s/%s %s: lse[%zu] off by %g (%g x bound)", pn, v.name, path, el.index, el.worst, el.ratio);
  worst.add(ey, ea, el);
  return true;
}

}  // namespace

TA_CASE("vectors: every port matches the generator's outputs within the stated tolerances") {
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  TA_CHECK(np >= 1);
  for (size_t pi = 0; pi < np; ++pi) {
    Worst worst;
    bool tiled = false;
    for (size_t c = 0; c < kForwardVectorCount; ++c) {
      const ForwardVector& v = kForwardVectors[c];
      for (int with_weights = 1; with_weights >= 0; --with_weights) {
        const bool fits = check_port(v, ports[pi], with_weights != 0, worst);
        TA_CHECK_MSG(fits, "%s: the test arena cannot hold it", v.name);
        tiled |= tinyattn::forward_uses_tiles(dims_of(v), with_weights != 0);
      }
    }
    TA_CHECK_MSG(tiled, "no vector exercises the tiled path (M > kKeyTile)");
    out(fmt("vectors/%s: worst |dY| %g (%.3f of bound), |dA| %g (%.3f), |dlse| %g (%.3f)\n",
            tinyattn::port_name(ports[pi]), worst.y, worst.y_r, worst.a, worst.a_r, worst.lse, worst.lse_r)
            .c_str());
  }
}
