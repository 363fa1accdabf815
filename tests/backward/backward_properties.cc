// Properties of the backward pass, for every port, every mask kind and both
// modes, on shapes that are and are not multiples of the vector width (and
// longer than one key tile). Written once; runs on every target.
//
// Tolerances (fp32 against double; measured worst figures in docs/backward.md):
//   against ref::backward and central differences:
//     |g - g_ref| <= kGradTol * max|g_ref| (per tensor) + kGradTol * |g_ref|
//   recompute mode against saved-weights mode: kModeTol, same form.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/backward.h"
#include "tinyattn/reference.h"
#include "tinyattn/softmax.h"

using tinyattn::BackwardIo;
using tinyattn::BackwardMode;
using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Options;
using tinyattn::Port;
using tinyattn::Status;
using namespace tatest;

namespace {

constexpr double kGradTol = 2e-5;         // fp32 gradients vs double (ref or differences)
constexpr double kModeTol = 1e-5;         // recompute vs saved weights
constexpr double kRefFdTol = 1e-6;        // ref::backward (double) vs central differences
constexpr double kDsRowSumTol = 1e-5;       // |sum_j dS_ij| <= kDsRowSumTol * sum_j A_ij (|Abar_ij| + |D_i|)
constexpr double kLinearTol = 1e-5;       // g(a dY1 + b dY2) vs a g(dY1) + b g(dY2)

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr BackwardMode kModes[] = {BackwardMode::kSavedWeights, BackwardMode::kRecompute};

const char* mode_name(BackwardMode m) { return m == BackwardMode::kRecompute ? "recompute" : "saved"; }

struct PortList {
  Port ports[tatest::kMaxPorts];
  size_t n;
  PortList() : n(ports_under_test(ports)) {}
};

// One backward problem in the arena: inputs, forward outputs, gradients and
// their reference.
struct Grad {
  Dims d;
  float *q, *k, *v, *dy;
  float *y, *a, *lse;
  float *dq, *dk, *dv, *ds;
  double *dq_ref, *dk_ref, *dv_ref, *ds_ref;
  unsigned char* ws;
  size_t ws_bytes;
  bool ok;
};

size_t workspace_for(const Dims& d) {
  const size_t f = tinyattn::forward_workspace_bytes(d, true);
  const size_t b = tinyattn::backward_workspace_bytes(d, BackwardMode::kRecompute);
  return f > b ? f : b;
}

Grad make_grad(const Dims& d, uint64_t seed, float sd = 1.0f) {
  Grad g{};
  g.d = d;
  g.q = alloc<float>(d.q_elems());
  g.k = alloc<float>(d.k_elems());
  g.v = alloc<float>(d.v_elems());
  g.dy = alloc<float>(d.y_elems());
  g.y = alloc<float>(d.y_elems());
  g.a = alloc<float>(d.weight_elems());
  g.lse = alloc<float>(d.lse_elems());
  g.dq = alloc<float>(d.q_elems());
  g.dk = alloc<float>(d.k_elems());
  g.dv = alloc<float>(d.v_elems());
  g.ds = alloc<float>(d.weight_elems());
  g.dq_ref = alloc<double>(d.q_elems());
  g.dk_ref = alloc<double>(d.k_elems());
  g.dv_ref = alloc<double>(d.v_elems());
  g.ds_ref = alloc<double>(d.weight_elems());
  g.ws_bytes = workspace_for(d);
  g.ws = alloc<unsigned char>(g.ws_bytes);
  g.ok = g.q && g.k && g.v && g.dy && g.y && g.a && g.lse && g.dq && g.dk && g.dv && g.ds && g.dq_ref &&
         g.dk_ref && g.dv_ref && g.ds_ref && g.ws;
  if (!g.ok) return g;
  Rng rng(seed);
  rng.fill_normal(g.q, d.q_elems(), sd);
  rng.fill_normal(g.k, d.k_elems(), sd);
  rng.fill_normal(g.v, d.v_elems(), 1.0f);
  rng.fill_normal(g.dy, d.y_elems(), 1.0f);
  return g;
}

Options with_port(Options o, Port port) {
  o.port = port;
  return o;
}

// Forward into y, a (unless !with_weights: forward() then takes its online
// softmax path for long rows) and lse.
Status forward_on(Grad& g, Port port, const Mask& mask, const Options& o = {}, bool with_weights = true) {
  tinyattn::ForwardIo io{g.q, g.k, g.v, g.y, with_weights ? g.a : nullptr, g.lse};
  return tinyattn::forward(g.d, io, {g.ws, g.ws_bytes}, mask, with_port(o, port));
}

void nan_fill(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = std::numeric_limits<float>::quiet_NaN();
}

// Backward into dq/dk/dv/ds (NaN-filled first, so anything left unwritten shows).
Status backward_on(Grad& g, Port port, BackwardMode mode, const Mask& mask, const Options& o = {},
                   bool use_y = false) {
  const Dims& d = g.d;
  nan_fill(g.dq, d.q_elems());
  nan_fill(g.dk, d.k_elems());
  nan_fill(g.dv, d.v_elems());
  nan_fill(g.ds, d.weight_elems());
  BackwardIo io;
  io.q = g.q;
  io.k = g.k;
  io.v = g.v;
  io.dy = g.dy;
  io.weights = mode == BackwardMode::kSavedWeights ? g.a : nullptr;
  io.lse = mode == BackwardMode::kRecompute ? g.lse : nullptr;
  io.y = use_y ? g.y : nullptr;
  io.dq = g.dq;
  io.dk = g.dk;
  io.dv = g.dv;
  io.ds = g.ds;
  return tinyattn::backward(d, mode, io, {g.ws, tinyattn::backward_workspace_bytes(d, mode)}, mask,
                            with_port(o, port));
}

void reference(Grad& g, const Mask& mask, const Options& o = {}) {
  tinyattn::ref::backward(g.d, g.q, g.k, g.v, g.dy, mask, tinyattn::effective_scale(g.d, o), g.dq_ref, g.dk_ref,
                          g.dv_ref, g.ds_ref, o.softcap ? *o.softcap : 0.0);
}

template <class T>
double max_abs_of(const T* x, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i)
    if (std::fabs(static_cast<double>(x[i])) > m) m = std::fabs(static_cast<double>(x[i]));
  return m;
}

// |got - want| <= tol * max|want| + tol * |want| elementwise: the scale of a
// gradient tensor, since single entries may cancel to near zero.
template <class W>
Result grad_close(const float* got, const W* want, size_t n, double tol) {
  return close(got, want, n, tol * max_abs_of(want, n), tol);
}

// The gradients of g agree with its reference; reports the first failing tensor.
bool check_against_ref(const Grad& g, double tol, const char* what, const char* pn, BackwardMode mode) {
  const Dims& d = g.d;
  const Result q = grad_close(g.dq, g.dq_ref, d.q_elems(), tol);
  const Result k = grad_close(g.dk, g.dk_ref, d.k_elems(), tol);
  const Result v = grad_close(g.dv, g.dv_ref, d.v_elems(), tol);
  const Result s = grad_close(g.ds, g.ds_ref, d.weight_elems(), tol);
  TA_CHECK_MSG(q.ok, "%s/%s/%s N=%zu M=%zu Dk=%zu Dv=%zu: dQ off by %g at %zu", pn, mode_name(mode), what, d.n, d.m,
               d.dk, d.dv, q.worst, q.index);
  TA_CHECK_MSG(k.ok, "%s/%s/%s N=%zu M=%zu Dk=%zu Dv=%zu: dK off by %g at %zu", pn, mode_name(mode), what, d.n, d.m,
               d.dk, d.dv, k.worst, k.index);
  TA_CHECK_MSG(v.ok, "%s/%s/%s N=%zu M=%zu Dk=%zu Dv=%zu: dV off by %g at %zu", pn, mode_name(mode), what, d.n, d.m,
               d.dk, d.dv, v.worst, v.index);
  TA_CHECK_MSG(s.ok, "%s/%s/%s N=%zu M=%zu Dk=%zu Dv=%zu: dS off by %g at %zu", pn, mode_name(mode), what, d.n, d.m,
               d.dk, d.dv, s.worst, s.index);
  return q.ok && k.ok && v.ok && s.ok;
}

// Every mask kind of the forward, built for one shape (element masks in the arena).
struct MaskSet {
  static constexpr size_t kCount = 16;
  Mask masks[kCount];
  const char* names[kCount];
  size_t n = 0;
  bool ok = false;

  void add(const Mask& m, const char* name) {
    masks[n] = m;
    names[n] = name;
    ++n;
  }

  MaskSet(const Dims& d, uint64_t seed) {
    const size_t row_bytes = tinyattn::keep_bits_row_bytes(d.m);
    uint8_t* keep = alloc<uint8_t>(d.n * d.m);
    uint8_t* bits = alloc<uint8_t>(d.n * row_bytes);
    float* bias = alloc<float>(d.n * d.m);
    float* head_bias = alloc<float>(d.hq * d.n * d.m);
    if (!keep || !bits || !bias || !head_bias) return;
    Rng rng(seed);
    for (size_t x = 0; x < d.n * row_bytes; ++x) bits[x] = 0;
    for (size_t i = 0; i < d.n; ++i)
      for (size_t j = 0; j < d.m; ++j) {
        // Row 1 fully masked (when N > 2); elsewhere ~30% of keys dropped.
        const bool kept = !(d.n > 2 && i == 1) && rng.uniform(0.0f, 1.0f) > 0.3f;
        keep[i * d.m + j] = kept ? 1 : 0;
        if (kept) bits[i * row_bytes + j / 8] |= static_cast<uint8_t>(1u << (j % 8));
        bias[i * d.m + j] = j % 4 == 1 ? -kInf : rng.uniform(-2.0f, 2.0f);
      }
    add(Mask::none(), "none");
    add(Mask::causal_top_left(), "causal-top-left");
    add(Mask::causal_bottom_right(), "causal-bottom-right");
    add(Mask::sliding_window(2, 1, tinyattn::Align::kTopLeft), "window-top-left");
    add(Mask::sliding_window(3, 0, tinyattn::Align::kBottomRight), "window-bottom-right");
    add(Mask::sliding_window(-1, 3, tinyattn::Align::kTopLeft), "window-shifted");
    add(Mask::key_padding(static_cast<uint32_t>(d.m * 2 / 3)), "kv-len");
    add(Mask::key_padding(0), "kv-len-0");
    add(Mask::causal_offset(1), "causal-offset-1");
    add(Mask::causal_cache(static_cast<uint32_t>(d.m - d.m / 3), static_cast<uint32_t>(d.n)), "causal-cache");
    add(Mask::keep_bytes(keep), "keep-bytes");
    add(Mask::keep_bitmask(bits), "keep-bits");
    add(Mask::additive(bias), "bias");
    Mask all = Mask::causal_bottom_right();
    all.window = {3, tinyattn::kUnbounded, tinyattn::Align::kBottomRight};
    all.keep_bits = bits;
    all.bias = bias;
    add(all, "causal+window+bits+bias");
    Mask pad = Mask::causal_top_left();
    pad.kv_len = static_cast<uint32_t>(d.m - d.m / 3);
    pad.keep = keep;
    add(pad, "causal+kv-len+bytes");
    // A different bias per query head (head_stride), -inf on a head-dependent pattern.
    for (size_t x = 0; x < d.hq * d.n * d.m; ++x)
      head_bias[x] = (x / (d.n * d.m) + x) % 3 == 0 ? -kInf : rng.uniform(-1.0f, 1.0f);
    Mask per_head = Mask::additive(head_bias);
    per_head.head_stride = d.n * d.m;
    add(per_head, "per-head-bias");
    ok = true;
  }
};

// L(Q, K, V) = sum dY o Y, with Y from the double reference forward.
double loss(const Grad& g, const Mask& mask, double scale, double* y, double softcap = 0.0) {
  tinyattn::ref::forward(g.d, g.q, g.k, g.v, mask, scale, y, nullptr, nullptr, softcap);
  double l = 0.0;
  for (size_t x = 0; x < g.d.y_elems(); ++x) l += static_cast<double>(g.dy[x]) * y[x];
  return l;
}

// Central differences of loss() with respect to every element of x (in place,
// restored), into fd. The step is a power of two; the denominator is the
// distance between the two float inputs actually used.
void central_differences(const Grad& g, float* x, size_t n, const Mask& mask, double scale, double* y,
                         double* fd, double softcap = 0.0) {
  const float h = 1.0f / 4096.0f;
  for (size_t e = 0; e < n; ++e) {
    const float x0 = x[e];
    const float hi = x0 + h, lo = x0 - h;
    x[e] = hi;
    const double lp = loss(g, mask, scale, y, softcap);
    x[e] = lo;
    const double lm = loss(g, mask, scale, y, softcap);
    x[e] = x0;
    fd[e] = (lp - lm) / (static_cast<double>(hi) - static_cast<double>(lo));
  }
}

// Abar_ij = dY_i . V_j in double.
double abar(const Grad& g, size_t h, size_t i, size_t j) {
  const Dims& d = g.d;
  const float* dy = g.dy + (h * d.n + i) * d.dv;
  const float* v = g.v + ((h / d.group()) * d.m + j) * d.dv;
  double s = 0.0;
  for (size_t c = 0; c < d.dv; ++c) s += static_cast<double>(dy[c]) * v[c];
  return s;
}

// max |got - want| / max |want|: error relative to the tensor's scale.
double relative_error(const double* got, const double* want, size_t n) {
  double worst = 0.0;
  for (size_t x = 0; x < n; ++x) worst = std::fmax(worst, std::fabs(got[x] - want[x]));
  const double scale = max_abs_of(want, n);
  return scale > 0.0 ? worst / scale : worst;
}

}  // namespace

TA_CASE("backward: gradients match central differences of the double reference forward") {
  PortList pl;
  const Dims shapes[] = {{3, 5, 4, 3}, {5, 4, 3, 2, 2, 1}};
  for (const Dims& d : shapes) {
    Arena::Scope scope;
    Grad g = make_grad(d, 1 + d.n);
    MaskSet ms(d, 2);
    double* y = alloc<double>(d.y_elems());
    double* fq = alloc<double>(d.q_elems());
    double* fk = alloc<double>(d.k_elems());
    double* fv = alloc<double>(d.v_elems());
    if (!g.ok || !ms.ok || !y || !fq || !fk || !fv) TA_IGNORE("arena too small");
    const double scale = tinyattn::effective_scale(d, {});
    for (size_t mi = 0; mi < ms.n; ++mi) {
      const Mask& mask = ms.masks[mi];
      central_differences(g, g.q, d.q_elems(), mask, scale, y, fq);
      central_differences(g, g.k, d.k_elems(), mask, scale, y, fk);
      central_differences(g, g.v, d.v_elems(), mask, scale, y, fv);
      // The spec itself: ref::backward is the derivative of ref::forward.
      reference(g, mask);
      const double ref_worst = std::fmax(relative_error(g.dq_ref, fq, d.q_elems()),
                                         std::fmax(relative_error(g.dk_ref, fk, d.k_elems()),
                                                   relative_error(g.dv_ref, fv, d.v_elems())));
      TA_CHECK_MSG(ref_worst <= kRefFdTol, "ref/%s Hq=%zu: ref::backward differs from central differences by %g",
                   ms.names[mi], d.hq, ref_worst);
      for (size_t pi = 0; pi < pl.n; ++pi) {
        TA_CHECK(forward_on(g, pl.ports[pi], mask) == Status::kOk);
        for (BackwardMode mode : kModes) {
          const Status s = backward_on(g, pl.ports[pi], mode, mask);
          TA_CHECK_MSG(s == Status::kOk, "status %s", tinyattn::to_string(s));
          const char* pn = tinyattn::port_name(pl.ports[pi]);
          const Result rq = grad_close(g.dq, fq, d.q_elems(), kGradTol);
          const Result rk = grad_close(g.dk, fk, d.k_elems(), kGradTol);
          const Result rv = grad_close(g.dv, fv, d.v_elems(), kGradTol);
          TA_CHECK_MSG(rq.ok && rk.ok && rv.ok, "%s/%s/%s Hq=%zu: dQ off by %g at %zu, dK %g at %zu, dV %g at %zu",
                       pn, mode_name(mode), ms.names[mi], d.hq, rq.worst, rq.index, rk.worst, rk.index, rv.worst,
                       rv.index);
        }
      }
    }
  }
}

TA_CASE("backward: every port, both modes, every mask kind match ref::backward") {
  PortList pl;
  // Odd sizes around every vector width; the last two span several key tiles.
  const Dims shapes[] = {{1, 1, 1, 1},   {3, 7, 17, 5},  {7, 17, 33, 7}, {17, 9, 16, 17, 2, 2},
                         {9, 13, 8, 6, 4, 2}, {4, 300, 12, 5}, {3, 600, 5, 9, 2, 1}};
  for (const Dims& d : shapes) {
    Arena::Scope scope;
    Grad g = make_grad(d, 100 + d.m);
    MaskSet ms(d, d.n);
    if (!g.ok || !ms.ok) TA_IGNORE("arena too small");
    for (size_t mi = 0; mi < ms.n; ++mi) {
      reference(g, ms.masks[mi]);
      for (size_t pi = 0; pi < pl.n; ++pi) {
        TA_CHECK(forward_on(g, pl.ports[pi], ms.masks[mi]) == Status::kOk);
        for (BackwardMode mode : kModes)
          for (int use_y = 0; use_y < 2; ++use_y) {
            const Status s = backward_on(g, pl.ports[pi], mode, ms.masks[mi], {}, use_y != 0);
            TA_CHECK_MSG(s == Status::kOk, "status %s", tinyattn::to_string(s));
            check_against_ref(g, kGradTol, ms.names[mi], tinyattn::port_name(pl.ports[pi]), mode);
          }
      }
    }
  }
}

TA_CASE("backward: softcap gradients match central differences and ref::backward, every port, both modes") {
  PortList pl;
  const Dims shapes[] = {{3, 5, 4, 3}, {5, 4, 3, 2, 2, 1}, {7, 17, 9, 5}, {3, 300, 6, 4, 2, 1}};
  Options o;
  o.softcap = 1.25f;  // logits of a few units (sd 2): the cap bends them
  for (const Dims& d : shapes) {
    Arena::Scope scope;
    Grad g = make_grad(d, 7 + d.m, 2.0f);
    MaskSet ms(d, 3);
    if (!g.ok || !ms.ok) TA_IGNORE("arena too small");
    const bool small = d.q_elems() + d.k_elems() + d.v_elems() < 200;  // central differences are O(size^2)
    double* y = alloc<double>(d.y_elems());
    double* fq = alloc<double>(d.q_elems());
    double* fk = alloc<double>(d.k_elems());
    if (!y || !fq || !fk) TA_IGNORE("arena too small");
    const double scale = tinyattn::effective_scale(d, o);
    for (size_t mi = 0; mi < ms.n; ++mi) {
      const Mask& mask = ms.masks[mi];
      reference(g, mask, o);
      if (small) {  // the spec: ref::backward is the derivative of the capped ref::forward
        central_differences(g, g.q, d.q_elems(), mask, scale, y, fq, *o.softcap);
        central_differences(g, g.k, d.k_elems(), mask, scale, y, fk, *o.softcap);
        const double worst =
            std::fmax(relative_error(g.dq_ref, fq, d.q_elems()), relative_error(g.dk_ref, fk, d.k_elems()));
        TA_CHECK_MSG(worst <= kRefFdTol, "ref/%s: capped ref::backward differs from central differences by %g",
                     ms.names[mi], worst);
      }
      for (size_t pi = 0; pi < pl.n; ++pi) {
        TA_CHECK(forward_on(g, pl.ports[pi], mask, o) == Status::kOk);
        for (BackwardMode mode : kModes) {
          const Status s = backward_on(g, pl.ports[pi], mode, mask, o);
          TA_CHECK_MSG(s == Status::kOk, "status %s", tinyattn::to_string(s));
          check_against_ref(g, kGradTol, ms.names[mi], tinyattn::port_name(pl.ports[pi]), mode);
        }
      }
    }
  }
}

TA_CASE("backward: rows of dS sum to 0; masked positions get exactly 0") {
  PortList pl;
  const Dims d{9, 21, 8, 5, 2, 1};
  Arena::Scope scope;
  Grad g = make_grad(d, 7);
  MaskSet ms(d, 8);
  if (!g.ok || !ms.ok) TA_IGNORE("arena too small");
  for (size_t mi = 0; mi < ms.n; ++mi)
    for (size_t pi = 0; pi < pl.n; ++pi) {
      TA_CHECK(forward_on(g, pl.ports[pi], ms.masks[mi]) == Status::kOk);
      for (BackwardMode mode : kModes)
        for (int use_y = 0; use_y < 2; ++use_y) {
          TA_CHECK(backward_on(g, pl.ports[pi], mode, ms.masks[mi], {}, use_y != 0) == Status::kOk);
          // Each dS_ij = A_ij (Abar_ij - D_i) carries a rounding error of order
          // eps * A_ij (|Abar_ij| + |D_i|): the row sum is measured against that
          // (a row with one visible key has dS = 0 up to rounding alone).
          double worst = 0.0;
          size_t nonzero_masked = 0;
          for (size_t h = 0; h < d.hq; ++h)
            for (size_t i = 0; i < d.n; ++i) {
              const size_t idx = h * d.n + i;
              const float* row = g.ds + idx * d.m;
              const float* a = g.a + idx * d.m;
              double sum = 0.0, dsum = 0.0, scale = 0.0;
              for (size_t j = 0; j < d.m; ++j) {
                sum += row[j];
                if (!tinyattn::ref::visible(ms.masks[mi], d, h, i, j) && row[j] != 0.0f) ++nonzero_masked;
                dsum += a[j] * abar(g, h, i, j);
              }
              for (size_t j = 0; j < d.m; ++j) scale += a[j] * (std::fabs(abar(g, h, i, j)) + std::fabs(dsum));
              if (scale > 0.0) worst = std::fmax(worst, std::fabs(sum) / scale);
              else if (sum != 0.0) worst = kInf;
            }
          const char* pn = tinyattn::port_name(pl.ports[pi]);
          TA_CHECK_MSG(worst <= kDsRowSumTol, "%s/%s/%s y=%d: |rowsum dS| relative to its terms = %g", pn, mode_name(mode),
                       ms.names[mi], use_y, worst);
          TA_CHECK_MSG(nonzero_masked == 0, "%s/%s/%s: %zu masked dS entries are not exactly 0", pn, mode_name(mode),
                       ms.names[mi], nonzero_masked);
        }
    }
}

TA_CASE("backward: keys masked for every query contribute nothing and get zero dK, dV") {
  PortList pl;
  const Dims d{6, 15, 7, 4, 2, 2};
  Arena::Scope scope;
  Grad g = make_grad(d, 17);
  MaskSet ms(d, 18);
  float* dq0 = alloc<float>(d.q_elems());
  float* dk0 = alloc<float>(d.k_elems());
  float* dv0 = alloc<float>(d.v_elems());
  bool* hidden = alloc<bool>(d.hkv * d.m);
  if (!g.ok || !ms.ok || !dq0 || !dk0 || !dv0 || !hidden) TA_IGNORE("arena too small");
  Rng rng(19);
  for (size_t mi = 0; mi < ms.n; ++mi) {
    // Keys no query row of any head sharing them can see.
    size_t n_hidden = 0;
    for (size_t kvh = 0; kvh < d.hkv; ++kvh)
      for (size_t j = 0; j < d.m; ++j) {
        bool seen = false;
        for (size_t h = kvh * d.group(); h < (kvh + 1) * d.group(); ++h)
          for (size_t i = 0; i < d.n; ++i) seen |= tinyattn::ref::visible(ms.masks[mi], d, h, i, j);
        hidden[kvh * d.m + j] = !seen;
        n_hidden += seen ? 0 : 1;
      }
    if (n_hidden == 0) continue;
    for (size_t pi = 0; pi < pl.n; ++pi)
      for (BackwardMode mode : kModes) {
        Arena::Scope inner;
        Grad h = make_grad(d, 17);  // the same data, then new values for the hidden keys
        if (!h.ok) TA_IGNORE("arena too small");
        for (size_t x = 0; x < d.hkv * d.m; ++x) {
          if (!hidden[x]) continue;
          for (size_t c = 0; c < d.dk; ++c) h.k[x * d.dk + c] = rng.uniform(-3.0f, 3.0f);
          for (size_t c = 0; c < d.dv; ++c) h.v[x * d.dv + c] = rng.uniform(-3.0f, 3.0f);
        }
        TA_CHECK(forward_on(g, pl.ports[pi], ms.masks[mi]) == Status::kOk);
        TA_CHECK(backward_on(g, pl.ports[pi], mode, ms.masks[mi]) == Status::kOk);
        TA_CHECK(forward_on(h, pl.ports[pi], ms.masks[mi]) == Status::kOk);
        TA_CHECK(backward_on(h, pl.ports[pi], mode, ms.masks[mi]) == Status::kOk);
        size_t bad = 0;
        for (size_t x = 0; x < d.q_elems(); ++x) bad += h.dq[x] != g.dq[x];
        for (size_t x = 0; x < d.hkv * d.m; ++x) {
          for (size_t c = 0; c < d.dk; ++c)
            bad += hidden[x] ? h.dk[x * d.dk + c] != 0.0f : h.dk[x * d.dk + c] != g.dk[x * d.dk + c];
          for (size_t c = 0; c < d.dv; ++c)
            bad += hidden[x] ? h.dv[x * d.dv + c] != 0.0f : h.dv[x * d.dv + c] != g.dv[x * d.dv + c];
        }
        TA_CHECK_MSG(bad == 0, "%s/%s/%s: %zu gradient entries depend on, or belong to, %zu hidden keys",
                     tinyattn::port_name(pl.ports[pi]), mode_name(mode), ms.names[mi], bad, n_hidden);
      }
  }
}

TA_CASE("backward: fully masked rows give zero gradients") {
  PortList pl;
  const Dims d{5, 7, 6, 3};
  Arena::Scope scope;
  Grad g = make_grad(d, 29);
  float* bias = alloc<float>(d.n * d.m);
  if (!g.ok || !bias) TA_IGNORE("arena too small");
  for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = x / d.m == 1 || x / d.m == 3 ? -kInf : 0.5f;
  float* all = alloc<float>(d.n * d.m);
  if (!all) TA_IGNORE("arena too small");
  for (size_t x = 0; x < d.n * d.m; ++x) all[x] = -kInf;
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (BackwardMode mode : kModes)
      for (int use_y = 0; use_y < 2; ++use_y) {
        const char* pn = tinyattn::port_name(pl.ports[pi]);
        // Rows 1 and 3 masked: their dQ and dS rows are exactly 0.
        TA_CHECK(forward_on(g, pl.ports[pi], Mask::additive(bias)) == Status::kOk);
        TA_CHECK(backward_on(g, pl.ports[pi], mode, Mask::additive(bias), {}, use_y != 0) == Status::kOk);
        size_t bad = 0;
        for (size_t i : {size_t{1}, size_t{3}}) {
          for (size_t c = 0; c < d.dk; ++c) bad += g.dq[i * d.dk + c] != 0.0f;
          for (size_t j = 0; j < d.m; ++j) bad += g.ds[i * d.m + j] != 0.0f;
        }
        TA_CHECK_MSG(bad == 0, "%s/%s: %zu entries of masked rows are not exactly 0", pn, mode_name(mode), bad);
        // Every row masked: every gradient is exactly 0 (never NaN).
        TA_CHECK(forward_on(g, pl.ports[pi], Mask::additive(all)) == Status::kOk);
        TA_CHECK(backward_on(g, pl.ports[pi], mode, Mask::additive(all), {}, use_y != 0) == Status::kOk);
        bad = 0;
        for (size_t x = 0; x < d.q_elems(); ++x) bad += g.dq[x] != 0.0f;
        for (size_t x = 0; x < d.k_elems(); ++x) bad += g.dk[x] != 0.0f;
        for (size_t x = 0; x < d.v_elems(); ++x) bad += g.dv[x] != 0.0f;
        for (size_t x = 0; x < d.weight_elems(); ++x) bad += g.ds[x] != 0.0f;
        TA_CHECK_MSG(bad == 0, "%s/%s: %zu gradients of an all-masked problem are not exactly 0", pn,
                     mode_name(mode), bad);
      }
}

TA_CASE("backward: dV equals A^T dY") {
  PortList pl;
  const Dims d{11, 19, 9, 6, 3, 1};
  Arena::Scope scope;
  Grad g = make_grad(d, 37);
  double* want = alloc<double>(d.v_elems());
  if (!g.ok || !want) TA_IGNORE("arena too small");
  const Mask mask = Mask::causal_bottom_right();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    TA_CHECK(forward_on(g, pl.ports[pi], mask) == Status::kOk);
    // A^T dY from the forward's own weights, in double; heads sharing a KV head add up.
    for (size_t x = 0; x < d.v_elems(); ++x) want[x] = 0.0;
    for (size_t h = 0; h < d.hq; ++h)
      for (size_t i = 0; i < d.n; ++i)
        for (size_t j = 0; j < d.m; ++j)
          for (size_t c = 0; c < d.dv; ++c)
            want[((h / d.group()) * d.m + j) * d.dv + c] +=
                static_cast<double>(g.a[(h * d.n + i) * d.m + j]) * g.dy[(h * d.n + i) * d.dv + c];
    for (BackwardMode mode : kModes) {
      TA_CHECK(backward_on(g, pl.ports[pi], mode, mask) == Status::kOk);
      const Result r = grad_close(g.dv, want, d.v_elems(), kModeTol);
      TA_CHECK_MSG(r.ok, "%s/%s: dV differs from A^T dY by %g at %zu", tinyattn::port_name(pl.ports[pi]),
                   mode_name(mode), r.worst, r.index);
    }
  }
}

TA_CASE("backward: gradients are linear in dY") {
  PortList pl;
  const Dims d{7, 12, 10, 5, 2, 1};
  const float alpha = 0.75f, beta = -2.5f;
  Arena::Scope scope;
  Grad g = make_grad(d, 41);
  float* dy1 = alloc<float>(d.y_elems());
  float* dy2 = alloc<float>(d.y_elems());
  float* out[3][3];  // [dY1, dY2, combined][dq, dk, dv]
  const size_t sizes[3] = {d.q_elems(), d.k_elems(), d.v_elems()};
  for (auto& o : out)
    for (size_t t = 0; t < 3; ++t) o[t] = alloc<float>(sizes[t]);
  double* want = alloc<double>(d.q_elems() + d.k_elems() + d.v_elems());
  if (!g.ok || !dy1 || !dy2 || !out[2][2] || !want) TA_IGNORE("arena too small");
  Rng rng(43);
  rng.fill_normal(dy1, d.y_elems());
  rng.fill_normal(dy2, d.y_elems());
  const Mask mask = Mask::sliding_window(3, 3, tinyattn::Align::kTopLeft);
  for (size_t pi = 0; pi < pl.n; ++pi) {
    TA_CHECK(forward_on(g, pl.ports[pi], mask) == Status::kOk);
    for (BackwardMode mode : kModes) {
      for (int which = 0; which < 3; ++which) {
        for (size_t x = 0; x < d.y_elems(); ++x)
          g.dy[x] = which == 0 ? dy1[x] : which == 1 ? dy2[x] : alpha * dy1[x] + beta * dy2[x];
        TA_CHECK(backward_on(g, pl.ports[pi], mode, mask) == Status::kOk);
        std::memcpy(out[which][0], g.dq, sizes[0] * sizeof(float));
        std::memcpy(out[which][1], g.dk, sizes[1] * sizeof(float));
        std::memcpy(out[which][2], g.dv, sizes[2] * sizeof(float));
      }
      for (size_t t = 0; t < 3; ++t) {
        for (size_t x = 0; x < sizes[t]; ++x)
          want[x] = static_cast<double>(alpha) * out[0][t][x] + static_cast<double>(beta) * out[1][t][x];
        const Result r = grad_close(out[2][t], want, sizes[t], kLinearTol);
        TA_CHECK_MSG(r.ok, "%s/%s: gradient %zu (0=dQ 1=dK 2=dV) not linear in dY: off by %g at %zu",
                     tinyattn::port_name(pl.ports[pi]), mode_name(mode), t, r.worst, r.index);
      }
    }
  }
}

TA_CASE("backward: the softmax Jacobian is diag(p) - p p^T") {
  PortList pl;
  constexpr size_t kM = 9;
  Arena::Scope scope;
  float* x = alloc<float>(kM);
  float* p = alloc<float>(kM);
  float* e = alloc<float>(kM);
  float* col = alloc<float>(kM);
  if (!x || !p || !e || !col) TA_IGNORE("arena too small");
  Rng rng(47);
  rng.fill_normal(x, kM, 1.5f);
  // The analytic form is the derivative: central differences of a double
  // softmax at x, column by column.
  double jac_fd[kM][kM];
  {
    double xd[kM], sp[kM], sm[kM];
    for (size_t j = 0; j < kM; ++j) xd[j] = x[j];
    auto softmax_d = [&](double* out) {
      double mx = xd[0], sum = 0.0;
      for (size_t j = 1; j < kM; ++j) mx = std::fmax(mx, xd[j]);
      for (size_t j = 0; j < kM; ++j) sum += out[j] = std::exp(xd[j] - mx);
      for (size_t j = 0; j < kM; ++j) out[j] /= sum;
    };
    const double h = 1e-5;
    for (size_t k = 0; k < kM; ++k) {
      xd[k] += h;
      softmax_d(sp);
      xd[k] -= 2 * h;
      softmax_d(sm);
      xd[k] += h;
      for (size_t j = 0; j < kM; ++j) jac_fd[j][k] = (sp[j] - sm[j]) / (2 * h);
    }
  }
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const Port port = pl.ports[pi];
    const char* pn = tinyattn::port_name(port);
    TA_CHECK(tinyattn::softmax(x, p, kM, port) == Status::kOk);
    double worst_analytic = 0.0, worst_fd = 0.0;
    for (size_t k = 0; k < kM; ++k) {
      for (size_t j = 0; j < kM; ++j) e[j] = j == k ? 1.0f : 0.0f;
      TA_CHECK(tinyattn::softmax_vjp(p, e, col, kM, port) == Status::kOk);  // column k of J
      for (size_t j = 0; j < kM; ++j) {
        const double analytic = (j == k ? static_cast<double>(p[j]) : 0.0) - static_cast<double>(p[j]) * p[k];
        worst_analytic = std::fmax(worst_analytic, std::fabs(col[j] - analytic));
        worst_fd = std::fmax(worst_fd, std::fabs(col[j] - jac_fd[j][k]));
      }
    }
    TA_CHECK_MSG(worst_analytic <= 1e-7, "%s: softmax_vjp differs from diag(p) - p p^T by %g", pn, worst_analytic);
    TA_CHECK_MSG(worst_fd <= 1e-6, "%s: softmax_vjp differs from differences of softmax by %g", pn, worst_fd);
  }
  // The attention backward forms the same Jacobian: one query, V = I and
  // dY = e_k give dS = row k of diag(A) - A A^T.
  const Dims d{1, kM, 4, kM};
  Grad g = make_grad(d, 53);
  if (!g.ok) TA_IGNORE("arena too small");
  for (size_t j = 0; j < kM; ++j)
    for (size_t c = 0; c < kM; ++c) g.v[j * kM + c] = j == c ? 1.0f : 0.0f;
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (BackwardMode mode : kModes) {
      TA_CHECK(forward_on(g, pl.ports[pi], Mask::none()) == Status::kOk);
      double worst = 0.0;
      for (size_t k = 0; k < kM; ++k) {
        for (size_t c = 0; c < kM; ++c) g.dy[c] = c == k ? 1.0f : 0.0f;
        TA_CHECK(backward_on(g, pl.ports[pi], mode, Mask::none()) == Status::kOk);
        for (size_t j = 0; j < kM; ++j) {
          const double analytic = (j == k ? static_cast<double>(g.a[j]) : 0.0) - static_cast<double>(g.a[j]) * g.a[k];
          worst = std::fmax(worst, std::fabs(g.ds[j] - analytic));
        }
      }
      TA_CHECK_MSG(worst <= 1e-6, "%s/%s: dS differs from the softmax Jacobian by %g",
                   tinyattn::port_name(pl.ports[pi]), mode_name(mode), worst);
    }
}

TA_CASE("backward: recompute mode equals saved-weights mode") {
  PortList pl;
  const Dims shapes[] = {{13, 21, 12, 5, 2, 1}, {5, 520, 8, 4}};
  for (const Dims& d : shapes) {
    Arena::Scope scope;
    Grad g = make_grad(d, 59);
    MaskSet ms(d, 60);
    float* saved[4];
    const size_t sizes[4] = {d.q_elems(), d.k_elems(), d.v_elems(), d.weight_elems()};
    for (size_t t = 0; t < 4; ++t) saved[t] = alloc<float>(sizes[t]);
    if (!g.ok || !ms.ok || !saved[3]) TA_IGNORE("arena too small");
    for (size_t mi = 0; mi < ms.n; ++mi)
      for (size_t pi = 0; pi < pl.n; ++pi) {
        TA_CHECK(forward_on(g, pl.ports[pi], ms.masks[mi]) == Status::kOk);
        TA_CHECK(backward_on(g, pl.ports[pi], BackwardMode::kSavedWeights, ms.masks[mi]) == Status::kOk);
        float* got[4] = {g.dq, g.dk, g.dv, g.ds};
        for (size_t t = 0; t < 4; ++t) std::memcpy(saved[t], got[t], sizes[t] * sizeof(float));
        // lse from a forward without weights: its online-softmax path when M > kKeyTile.
        TA_CHECK(forward_on(g, pl.ports[pi], ms.masks[mi], {}, false) == Status::kOk);
        TA_CHECK(backward_on(g, pl.ports[pi], BackwardMode::kRecompute, ms.masks[mi]) == Status::kOk);
        for (size_t t = 0; t < 4; ++t) {
          const Result r = grad_close(got[t], saved[t], sizes[t], kModeTol);
          TA_CHECK_MSG(r.ok, "%s/%s M=%zu: tensor %zu (dQ dK dV dS) differs between modes by %g at %zu",
                       tinyattn::port_name(pl.ports[pi]), ms.names[mi], d.m, t, r.worst, r.index);
        }
      }
  }
}

TA_CASE("backward: grouped-query gradients of a KV head sum over its query heads") {
  PortList pl;
  const Dims d{5, 9, 8, 6, 6, 2};  // 3 query heads per KV head
  const Dims one{5, 9, 8, 6, 1, 1};
  const Mask mask = Mask::causal_top_left();
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (BackwardMode mode : kModes) {
      Arena::Scope scope;
      Grad g = make_grad(d, 61);
      double* sum_dk = alloc<double>(d.k_elems());
      double* sum_dv = alloc<double>(d.v_elems());
      if (!g.ok || !sum_dk || !sum_dv) TA_IGNORE("arena too small");
      TA_CHECK(forward_on(g, pl.ports[pi], mask) == Status::kOk);
      TA_CHECK(backward_on(g, pl.ports[pi], mode, mask) == Status::kOk);
      for (size_t x = 0; x < d.k_elems(); ++x) sum_dk[x] = 0.0;
      for (size_t x = 0; x < d.v_elems(); ++x) sum_dv[x] = 0.0;
      bool dq_same = true;
      for (size_t h = 0; h < d.hq; ++h) {
        Arena::Scope inner;
        Grad s = make_grad(one, 1);
        if (!s.ok) TA_IGNORE("arena too small");
        const size_t kvh = h / d.group();
        std::memcpy(s.q, g.q + h * one.q_elems(), one.q_elems() * sizeof(float));
        std::memcpy(s.k, g.k + kvh * one.k_elems(), one.k_elems() * sizeof(float));
        std::memcpy(s.v, g.v + kvh * one.v_elems(), one.v_elems() * sizeof(float));
        std::memcpy(s.dy, g.dy + h * one.y_elems(), one.y_elems() * sizeof(float));
        TA_CHECK(forward_on(s, pl.ports[pi], mask) == Status::kOk);
        TA_CHECK(backward_on(s, pl.ports[pi], mode, mask) == Status::kOk);
        for (size_t x = 0; x < one.q_elems(); ++x) dq_same &= s.dq[x] == g.dq[h * one.q_elems() + x];
        for (size_t x = 0; x < one.k_elems(); ++x) sum_dk[kvh * one.k_elems() + x] += s.dk[x];
        for (size_t x = 0; x < one.v_elems(); ++x) sum_dv[kvh * one.v_elems() + x] += s.dv[x];
      }
      const char* pn = tinyattn::port_name(pl.ports[pi]);
      TA_CHECK_MSG(dq_same, "%s/%s: dQ of a head differs from its single-head run", pn, mode_name(mode));
      const Result rk = grad_close(g.dk, sum_dk, d.k_elems(), 1e-6);
      const Result rv = grad_close(g.dv, sum_dv, d.v_elems(), 1e-6);
      TA_CHECK_MSG(rk.ok && rv.ok, "%s/%s: dK off the per-head sum by %g, dV by %g", pn, mode_name(mode), rk.worst,
                   rv.worst);
    }
}

TA_CASE("backward: +inf logits, scale and a NaN input") {
  PortList pl;
  const Dims d{4, 6, 5, 3};
  Arena::Scope scope;
  Grad g = make_grad(d, 67);
  float* bias = alloc<float>(d.n * d.m);
  if (!g.ok || !bias) TA_IGNORE("arena too small");
  // Row 0: two +inf logits; row 2: one; others finite.
  for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = x == 1 || x == 4 || x == 2 * d.m + 3 ? kInf : 0.25f;
  Options big;
  big.scale = 3.0f;
  for (size_t pi = 0; pi < pl.n; ++pi)
    for (BackwardMode mode : kModes) {
      const char* pn = tinyattn::port_name(pl.ports[pi]);
      reference(g, Mask::additive(bias));
      TA_CHECK(forward_on(g, pl.ports[pi], Mask::additive(bias)) == Status::kOk);
      TA_CHECK(backward_on(g, pl.ports[pi], mode, Mask::additive(bias)) == Status::kOk);
      check_against_ref(g, kGradTol, "+inf bias", pn, mode);
      reference(g, Mask::none(), big);
      TA_CHECK(forward_on(g, pl.ports[pi], Mask::none(), big) == Status::kOk);
      TA_CHECK(backward_on(g, pl.ports[pi], mode, Mask::none(), big) == Status::kOk);
      check_against_ref(g, kGradTol, "scale 3", pn, mode);
      // A NaN in query row 2 makes its dQ row NaN and leaves the other rows finite.
      Arena::Scope inner;
      Grad n = make_grad(d, 71);
      if (!n.ok) TA_IGNORE("arena too small");
      n.q[2 * d.dk + 1] = std::numeric_limits<float>::quiet_NaN();
      TA_CHECK(forward_on(n, pl.ports[pi], Mask::none()) == Status::kOk);
      TA_CHECK(backward_on(n, pl.ports[pi], mode, Mask::none()) == Status::kOk);
      for (size_t i = 0; i < d.n; ++i) {
        bool all_nan = true, all_finite = true;
        for (size_t c = 0; c < d.dk; ++c) {
          all_nan &= std::isnan(n.dq[i * d.dk + c]);
          all_finite &= std::isfinite(n.dq[i * d.dk + c]);
        }
        TA_CHECK_MSG(i == 2 ? all_nan : all_finite, "%s/%s: dQ row %zu", pn, mode_name(mode), i);
      }
    }
}

TA_CASE("backward: validation before any write") {
  const Dims d{4, 5, 3, 2, 2, 1};
  Arena::Scope scope;
  Grad g = make_grad(d, 73);
  if (!g.ok) TA_IGNORE("arena too small");
  TA_CHECK(forward_on(g, Port::kScalar, Mask::none()) == Status::kOk);
  const size_t ws = tinyattn::backward_workspace_bytes(d, BackwardMode::kRecompute);
  BackwardIo base;
  base.q = g.q;
  base.k = g.k;
  base.v = g.v;
  base.dy = g.dy;
  base.lse = g.lse;
  base.weights = g.a;
  base.dq = g.dq;
  base.dk = g.dk;
  base.dv = g.dv;
  base.ds = g.ds;
  struct Case {
    const char* what;
    BackwardIo io;
    BackwardMode mode;
    size_t ws_bytes;
    Mask mask;
    Status want;
  };
  auto with = [&](auto edit) {
    BackwardIo io = base;
    edit(io);
    return io;
  };
  Options bad_scale;
  bad_scale.scale = std::numeric_limits<float>::quiet_NaN();
  const Case cases[] = {
      {"null dq", with([](BackwardIo& io) { io.dq = nullptr; }), BackwardMode::kRecompute, ws, {},
       Status::kNullPointer},
      {"null dy", with([](BackwardIo& io) { io.dy = nullptr; }), BackwardMode::kRecompute, ws, {},
       Status::kNullPointer},
      {"recompute without lse", with([](BackwardIo& io) { io.lse = nullptr; }), BackwardMode::kRecompute, ws, {},
       Status::kNullPointer},
      {"saved without weights", with([](BackwardIo& io) { io.weights = nullptr; }), BackwardMode::kSavedWeights, ws,
       {}, Status::kNullPointer},
      {"workspace too small", base, BackwardMode::kRecompute, ws - 1, {}, Status::kWorkspaceTooSmall},
      {"dq overlaps q", with([&](BackwardIo& io) { io.dq = g.q + 1; }), BackwardMode::kRecompute,
       ws, {}, Status::kAliasing},
      {"dk overlaps dv", with([&](BackwardIo& io) { io.dk = g.dv; }), BackwardMode::kRecompute, ws, {},
       Status::kAliasing},
      {"ds overlaps the saved weights", with([&](BackwardIo& io) { io.ds = g.a; }), BackwardMode::kSavedWeights, ws,
       {}, Status::kAliasing},
      {"dv overlaps dy", with([&](BackwardIo& io) { io.dv = g.dy; }), BackwardMode::kRecompute, ws, {},
       Status::kAliasing},
      {"misaligned dk", with([&](BackwardIo& io) {
         io.dk = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(g.dk) + 1);
       }),
       BackwardMode::kRecompute, ws, {}, Status::kMisaligned},
      {"kv_len > M", base, BackwardMode::kRecompute, ws, Mask::key_padding(6), Status::kBadMask},
      {"bad mode", base, static_cast<BackwardMode>(7), ws, {}, Status::kUnsupported},
  };
  const float sentinel = 12345.0f;
  for (const Case& c : cases) {
    for (size_t x = 0; x < d.q_elems(); ++x) g.dq[x] = sentinel;
    for (size_t x = 0; x < d.k_elems(); ++x) g.dk[x] = sentinel;
    for (size_t x = 0; x < d.v_elems(); ++x) g.dv[x] = sentinel;
    for (size_t x = 0; x < d.weight_elems(); ++x) g.ds[x] = sentinel;
    const Status s = tinyattn::backward(d, c.mode, c.io, {g.ws, c.ws_bytes}, c.mask);
    TA_CHECK_MSG(s == c.want, "%s: got %s, want %s", c.what, tinyattn::to_string(s), tinyattn::to_string(c.want));
    size_t written = 0;
    for (size_t x = 0; x < d.q_elems(); ++x) written += g.dq[x] != sentinel;
    for (size_t x = 0; x < d.k_elems(); ++x) written += g.dk[x] != sentinel;
    for (size_t x = 0; x < d.v_elems(); ++x) written += g.dv[x] != sentinel;
    for (size_t x = 0; x < d.weight_elems(); ++x) written += g.ds[x] != sentinel;
    TA_CHECK_MSG(written == 0, "%s: %zu output entries written on error", c.what, written);
  }
  const Status s = tinyattn::backward(d, BackwardMode::kRecompute, base, {g.ws, ws}, {}, bad_scale);
  TA_CHECK_MSG(s == Status::kBadScale, "NaN scale: got %s", tinyattn::to_string(s));
}

TA_CASE("backward: the stated workspace is enough and is not overrun, from any start address") {
  PortList pl;
  // One row within a tile, and rows over several tiles (with the partial-dQ buffer).
  const Dims shapes[] = {{4, 5, 3, 2, 2, 1}, {3, 300, 7, 5}};
  constexpr size_t kGuard = 256;
  for (const Dims& d : shapes) {
    Arena::Scope scope;
    Grad g = make_grad(d, 75);
    if (!g.ok) TA_IGNORE("arena too small");
    for (size_t pi = 0; pi < pl.n; ++pi) {
      TA_CHECK(forward_on(g, pl.ports[pi], Mask::none()) == Status::kOk);
      for (BackwardMode mode : kModes)
        for (size_t offset : {size_t{0}, size_t{3}, size_t{60}}) {
          Arena::Scope inner;
          const size_t bytes = tinyattn::backward_workspace_bytes(d, mode);
          unsigned char* raw = alloc<unsigned char>(kGuard + offset + bytes + kGuard);
          if (!raw) TA_IGNORE("arena too small");
          for (size_t x = 0; x < kGuard + offset + bytes + kGuard; ++x) raw[x] = 0xA5;
          BackwardIo io;
          io.q = g.q;
          io.k = g.k;
          io.v = g.v;
          io.dy = g.dy;
          io.weights = g.a;
          io.lse = g.lse;
          io.dq = g.dq;
          io.dk = g.dk;
          io.dv = g.dv;
          Options o;
          o.port = pl.ports[pi];
          const Status r = tinyattn::backward(d, mode, io, {raw + kGuard + offset, bytes}, {}, o);
          TA_CHECK_MSG(r == Status::kOk, "%s/%s M=%zu offset %zu: %s", tinyattn::port_name(pl.ports[pi]),
                       mode_name(mode), d.m, offset, tinyattn::to_string(r));
          size_t touched = 0;
          for (size_t x = 0; x < kGuard + offset; ++x) touched += raw[x] != 0xA5;
          for (size_t x = kGuard + offset + bytes; x < kGuard + offset + bytes + kGuard; ++x) touched += raw[x] != 0xA5;
          TA_CHECK_MSG(touched == 0, "%s/%s M=%zu offset %zu: %zu bytes outside the workspace written",
                       tinyattn::port_name(pl.ports[pi]), mode_name(mode), d.m, offset, touched);
        }
    }
  }
}

TA_CASE("backward: AttentionBackward<Shape> equals the run-time API") {
  using S = tinyattn::Shape<6, 10, 8, 4, 2, 1>;
  static_assert(tinyattn::AttentionBackward<S>::workspace_bytes ==
                    tinyattn::backward_workspace_bytes(S::dims, BackwardMode::kRecompute),
                "the object's workspace is the run-time size");
  static_assert(tinyattn::backward_workspace_bytes(tinyattn::Dims{1, 4096, 64, 64}, BackwardMode::kRecompute) ==
                    tinyattn::backward_workspace_bytes(tinyattn::Dims{1, 65536, 64, 64}, BackwardMode::kRecompute),
                "the workspace does not grow with M beyond one tile");
  PortList pl;
  const Dims d = S::dims;
  const Mask mask = Mask::causal_bottom_right();
  Arena::Scope scope;
  Grad g = make_grad(d, 79);
  if (!g.ok) TA_IGNORE("arena too small");
  using Rec = tinyattn::AttentionBackward<S>;
  using Sav = tinyattn::AttentionBackward<S, BackwardMode::kSavedWeights>;
  // Static storage: the objects hold their workspace (and boards have small stacks).
  static Rec rec;
  static Sav sav;
  static Rec::Q q, dq;
  static Rec::K k, dk;
  static Rec::V v, dv;
  static Rec::Y dy;
  static Rec::Lse lse;
  static Sav::Weights a;
  std::memcpy(q.data(), g.q, sizeof q);
  std::memcpy(k.data(), g.k, sizeof k);
  std::memcpy(v.data(), g.v, sizeof v);
  std::memcpy(dy.data(), g.dy, sizeof dy);
  for (size_t pi = 0; pi < pl.n; ++pi) {
    Options o;
    o.port = pl.ports[pi];
    TA_CHECK(forward_on(g, pl.ports[pi], mask) == Status::kOk);
    std::memcpy(lse.data(), g.lse, sizeof lse);
    std::memcpy(a.data(), g.a, sizeof a);
    for (BackwardMode mode : kModes) {
      const Status s = mode == BackwardMode::kRecompute ? rec(q, k, v, dy, lse, dq, dk, dv, mask, o)
                                                        : sav(q, k, v, dy, a, dq, dk, dv, mask, o);
      TA_CHECK(s == Status::kOk);
      TA_CHECK(backward_on(g, pl.ports[pi], mode, mask) == Status::kOk);
      const bool same = std::memcmp(dq.data(), g.dq, sizeof dq) == 0 &&
                        std::memcmp(dk.data(), g.dk, sizeof dk) == 0 && std::memcmp(dv.data(), g.dv, sizeof dv) == 0;
      TA_CHECK_MSG(same, "%s/%s: the compile-time object differs from backward()", tinyattn::port_name(pl.ports[pi]),
                   mode_name(mode));
    }
  }
}

TA_CASE("softmax: matches the forward's weights and validates its arguments") {
  PortList pl;
  constexpr size_t kM = 23;
  Arena::Scope scope;
  float* x = alloc<float>(kM + 1);
  float* p = alloc<float>(kM + 1);
  if (!x || !p) TA_IGNORE("arena too small");
  Rng rng(83);
  rng.fill_normal(x, kM, 3.0f);
  double want[kM];
  {
    double mx = x[0], sum = 0.0;
    for (size_t j = 1; j < kM; ++j) mx = std::fmax(mx, x[j]);
    for (size_t j = 0; j < kM; ++j) sum += want[j] = std::exp(static_cast<double>(x[j]) - mx);
    for (size_t j = 0; j < kM; ++j) want[j] /= sum;
  }
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const Port port = pl.ports[pi];
    const char* pn = tinyattn::port_name(port);
    TA_CHECK(tinyattn::softmax(x, p, kM, port) == Status::kOk);
    const Result r = close(p, want, kM, kWeightAtol, kWeightRtol);
    TA_CHECK_MSG(r.ok, "%s: softmax off by %g at %zu", pn, r.worst, r.index);
    // In place gives the same bits.
    float* inplace = alloc<float>(kM);
    if (!inplace) TA_IGNORE("arena too small");
    std::memcpy(inplace, x, kM * sizeof(float));
    TA_CHECK(tinyattn::softmax(inplace, inplace, kM, port) == Status::kOk);
    TA_CHECK_MSG(std::memcmp(inplace, p, kM * sizeof(float)) == 0, "%s: in-place softmax differs", pn);
    // All -inf: zeros.
    for (size_t j = 0; j < kM; ++j) inplace[j] = -kInf;
    TA_CHECK(tinyattn::softmax(inplace, inplace, kM, port) == Status::kOk);
    bool zeros = true;
    for (size_t j = 0; j < kM; ++j) zeros &= inplace[j] == 0.0f;
    TA_CHECK_MSG(zeros, "%s: softmax of all -inf is not all 0", pn);
    TA_CHECK(tinyattn::softmax(x, x + 1, kM, port) == Status::kAliasing);
    TA_CHECK(tinyattn::softmax(x, nullptr, kM, port) == Status::kNullPointer);
    TA_CHECK(tinyattn::softmax(x, p, 0, port) == Status::kBadDimension);
    TA_CHECK(tinyattn::softmax_vjp(p, x, x + 1, kM, port) == Status::kAliasing);
    TA_CHECK(tinyattn::softmax_vjp(p, nullptr, x, kM, port) == Status::kNullPointer);
  }
}

// Rows of a matrix with row strides wider than n (the gaps must stay as
// they were), more rows than one exp_rows batch, and the non-finite rows of
// softmax()'s contract: all -inf, one NaN, two +inf, some -inf.
TA_CASE("softmax_rows: each row is softmax() of it, bit for bit, on every port; rows sum to 1") {
  PortList pl;
  constexpr size_t kRows = 19;
  for (const size_t n : {size_t{1}, size_t{16}, size_t{37}}) {
    Arena::Scope scope;
    const size_t ld_x = n + 3, ld_p = n + 8;
    float* x = alloc<float>(kRows * ld_x);
    float* p = alloc<float>(kRows * ld_p);
    float* one = alloc<float>(n);
    float* dp = alloc<float>(kRows * ld_x);
    float* dx = alloc<float>(kRows * ld_p);
    float* inplace = alloc<float>(kRows * ld_x);
    if (!x || !p || !one || !dp || !dx || !inplace) TA_IGNORE("arena too small");
    Rng rng(211 + n);
    rng.fill_normal(x, kRows * ld_x, 6.0f);
    rng.fill_normal(dp, kRows * ld_x, 1.0f);
    for (size_t j = 0; j < n; ++j) {
      x[2 * ld_x + j] = -kInf;
      if (j % 3 == 1) x[5 * ld_x + j] = -kInf;
    }
    x[3 * ld_x + n / 2] = std::numeric_limits<float>::quiet_NaN();
    x[4 * ld_x] = kInf;
    x[4 * ld_x + n - 1] = kInf;  // n == 1: the same entry
    x[6 * ld_x + n / 3] = 80.0f;  // a wide row: most of it underflows
    for (size_t pi = 0; pi < pl.n; ++pi) {
      const Port port = pl.ports[pi];
      const char* pn = tinyattn::port_name(port);
      for (size_t j = 0; j < kRows * ld_p; ++j) p[j] = -3.0f;
      TA_CHECK(tinyattn::softmax_rows(x, p, kRows, n, ld_x, ld_p, port) == Status::kOk);
      std::memcpy(inplace, x, kRows * ld_x * sizeof(float));
      TA_CHECK(tinyattn::softmax_rows(inplace, inplace, kRows, n, ld_x, ld_x, port) == Status::kOk);
      size_t differ = 0, gaps = 0, in_place = 0, bad_sum = 0, negative = 0;
      for (size_t r = 0; r < kRows; ++r) {
        TA_CHECK(tinyattn::softmax(x + r * ld_x, one, n, port) == Status::kOk);
        differ += std::memcmp(one, p + r * ld_p, n * sizeof(float)) != 0;
        in_place += std::memcmp(one, inplace + r * ld_x, n * sizeof(float)) != 0;
        for (size_t j = n; j < ld_p; ++j) gaps += p[r * ld_p + j] != -3.0f;
        if (r == 3) continue;  // the NaN row: all NaN, checked below
        double sum = 0.0;
        for (size_t j = 0; j < n; ++j) {
          sum += p[r * ld_p + j];
          negative += !(p[r * ld_p + j] >= 0.0f);
        }
        bad_sum += r == 2 ? sum != 0.0 : std::fabs(sum - 1.0) > 1e-5;
      }
      bool nan_row = true, inf_row = true;
      for (size_t j = 0; j < n; ++j) {
        nan_row &= p[3 * ld_p + j] != p[3 * ld_p + j];
        const bool at_inf = j == 0 || j == n - 1;
        inf_row &= p[4 * ld_p + j] == (at_inf ? (n == 1 ? 1.0f : 0.5f) : 0.0f);
      }
      TA_CHECK_MSG(differ == 0, "%s n=%zu: %zu rows differ from softmax()", pn, n, differ);
      TA_CHECK_MSG(in_place == 0, "%s n=%zu: %zu rows differ in place", pn, n, in_place);
      TA_CHECK_MSG(gaps == 0, "%s n=%zu: %zu floats between rows written", pn, n, gaps);
      TA_CHECK_MSG(bad_sum == 0 && negative == 0, "%s n=%zu: %zu rows do not sum to 1 (0 when all -inf), %zu negative",
                   pn, n, bad_sum, negative);
      TA_CHECK_MSG(nan_row && inf_row, "%s n=%zu: NaN row all NaN %d, +inf entries share the weight %d", pn, n,
                   nan_row, inf_row);
      // The vector-Jacobian product of the same rows, per row and at once.
      TA_CHECK(tinyattn::softmax_vjp_rows(p, dp, dx, kRows, n, ld_p, ld_x, ld_p, port) == Status::kOk);
      size_t vjp_differ = 0;
      for (size_t r = 0; r < kRows; ++r) {
        TA_CHECK(tinyattn::softmax_vjp(p + r * ld_p, dp + r * ld_x, one, n, port) == Status::kOk);
        vjp_differ += std::memcmp(one, dx + r * ld_p, n * sizeof(float)) != 0;
      }
      TA_CHECK_MSG(vjp_differ == 0, "%s n=%zu: %zu softmax_vjp_rows rows differ from softmax_vjp()", pn, n, vjp_differ);
    }
  }
}

// softmax() has a path of its own for its one row: it must answer as
// softmax_rows(x, p, 1, n, n, n) does, the same status for every argument
// fault (and nothing written then) and the same bits otherwise, from x to p
// and in place, from n = 1 to kMaxDim, finite and non-finite rows.
TA_CASE("softmax(): the statuses and bits of softmax_rows() with one row") {
  PortList pl;
  for (const size_t n : {size_t{1}, size_t{5}, size_t{16}, size_t{33}, tinyattn::kMaxDim}) {
    Arena::Scope scope;
    // x with room for an output right after its row; rows: a copy of x.
    const size_t len = 2 * n + 8;
    float* x = alloc<float>(len);
    float* one = alloc<float>(len);
    float* rows = alloc<float>(len);
    if (!x || !one || !rows) {
      TA_CHECK_MSG(n == tinyattn::kMaxDim, "arena too small for n=%zu", n);
      continue;  // a board's arena: the largest row is the host's
    }
    Rng rng(307 + n);
    for (int row = 0; row < 4; ++row) {
      rng.fill_normal(x, len, 6.0f);
      if (row == 1) x[n / 2] = kInf;                                       // +inf shares the weight
      if (row == 2) x[n - 1] = std::numeric_limits<float>::quiet_NaN();  // all NaN
      if (row == 3)
        for (size_t j = 0; j < n; ++j) x[j] = -kInf;  // all 0
      for (size_t pi = 0; pi < pl.n; ++pi) {
        const Port port = pl.ports[pi];
        const char* pn = tinyattn::port_name(port);
        TA_CHECK(tinyattn::softmax(x, one, n, port) == Status::kOk);
        TA_CHECK(tinyattn::softmax_rows(x, rows, 1, n, n, n, port) == Status::kOk);
        TA_CHECK_MSG(std::memcmp(one, rows, n * sizeof(float)) == 0, "%s n=%zu row %d: x to p differs", pn, n, row);
        std::memcpy(rows, x, n * sizeof(float));
        TA_CHECK(tinyattn::softmax(rows, rows, n, port) == Status::kOk);
        TA_CHECK_MSG(std::memcmp(one, rows, n * sizeof(float)) == 0, "%s n=%zu row %d: in place differs", pn, n, row);
      }
    }
    // The faults, each against softmax_rows' status; neither call writes.
    float* const odd = reinterpret_cast<float*>(reinterpret_cast<uintptr_t>(one) + 2);
    struct Fault {
      const float* in;
      float* out;
      size_t n;
      Port port;
    };
    const Fault faults[] = {
        {nullptr, one, n, Port::kDefault},
        {x, nullptr, n, Port::kDefault},
        {nullptr, nullptr, 0, static_cast<Port>(200)},
        {x, one, 0, Port::kDefault},
        {x, one, tinyattn::kMaxDim + 1, Port::kDefault},
        {x, odd, n, Port::kDefault},
        {odd, x, n, Port::kDefault},
        {odd, odd, 0, Port::kDefault},
        {x, x + 1, n, Port::kDefault},
        {x + 1, x, n, Port::kDefault},
        {x, x + n - 1, n, Port::kDefault},
        {x, x + n, n, Port::kDefault},  // adjacent: no overlap
        {x + n, x, n, Port::kDefault},
        {odd, one, n, static_cast<Port>(200)},
        {x, x + 1, n, static_cast<Port>(200)},
        {x, one, n, static_cast<Port>(200)},
        {x, x, n, static_cast<Port>(200)},
    };
    // FNV-1a over a buffer's bytes: whether a call wrote into it.
    const auto hash = [len](const float* b) {
      uint32_t h = 2166136261u;
      const unsigned char* c = reinterpret_cast<const unsigned char*>(b);
      for (size_t i = 0; i < len * sizeof(float); ++i) h = (h ^ c[i]) * 16777619u;
      return h;
    };
    size_t k = 0;
    for (const Fault& f : faults) {
      rng.fill_normal(x, len, 1.0f);
      rng.fill_normal(one, len, 1.0f);
      std::memcpy(rows, x, len * sizeof(float));
      const uint32_t x_sum = hash(x), one_sum = hash(one);
      const Status want = tinyattn::softmax_rows(f.in, f.out, 1, f.n, f.n, f.n, f.port);
      const bool rows_wrote = hash(x) != x_sum || hash(one) != one_sum;
      std::memcpy(x, rows, len * sizeof(float));  // as before softmax_rows, for softmax()
      const uint32_t one_again = hash(one);
      const Status got = tinyattn::softmax(f.in, f.out, f.n, f.port);
      const bool wrote = hash(x) != x_sum || hash(one) != one_again;
      TA_CHECK_MSG(got == want, "n=%zu fault %zu: softmax() %s, softmax_rows() %s", n, k, tinyattn::to_string(got),
                   tinyattn::to_string(want));
      TA_CHECK_MSG(want == Status::kOk || (!wrote && !rows_wrote), "n=%zu fault %zu: written after %s", n, k,
                   tinyattn::to_string(got));
      ++k;
    }
  }
}

TA_CASE("key_range stays inside [0, M] when a window lies past every key") {
  // N > M with a window that starts right of the diagonal: the last rows see
  // nothing, and their range must not point past the keys (the drivers fill
  // and index rows of M by it).
  const Mask masks[] = {Mask::sliding_window(-1, 3, tinyattn::Align::kTopLeft),
                        Mask::sliding_window(-3, 5, tinyattn::Align::kBottomRight)};
  const Dims d{9, 4, 1, 1};
  size_t bad = 0;
  for (const Mask& mask : masks)
    for (size_t i = 0; i < d.n; ++i) {
      const tinyattn::KeyRange r = tinyattn::key_range(mask, i, d.n, d.m);
      bad += r.lo > d.m || r.hi > d.m || r.lo > r.hi;
    }
  TA_CHECK_MSG(bad == 0, "%zu key ranges reach past M", bad);
}
