#include "support.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "tinyattn/reference.h"

#ifndef TATEST_ARENA_BYTES
#define TATEST_ARENA_BYTES (4u << 20)
#endif

namespace tatest {

uint64_t Rng::next_u64() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float Rng::uniform(float lo, float hi) {
  const double u = static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(lo + (hi - lo) * u);
}

float Rng::normal() {
  double u1 = static_cast<double>((next_u64() >> 11) + 1) * (1.0 / 9007199254740993.0);
  double u2 = static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

void Rng::fill_uniform(float* x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; ++i) x[i] = uniform(lo, hi);
}

void Rng::fill_normal(float* x, size_t n, float sd) {
  for (size_t i = 0; i < n; ++i) x[i] = sd * normal();
}

namespace {
alignas(64) unsigned char g_arena[TATEST_ARENA_BYTES];
size_t g_used = 0;
}  // namespace

void* Arena::allocate(size_t bytes) {
  const size_t start = (g_used + 63) & ~size_t{63};
  if (start > sizeof g_arena || bytes > sizeof g_arena - start) return nullptr;
  g_used = start + bytes;
  // Poison: what an earlier test left here must never pass for an output the
  // code under test forgot to write (0xA5A5A5A5 is a finite float no result
  // takes by chance, and not 0, inf or NaN).
  std::memset(g_arena + start, 0xA5, bytes);
  return g_arena + start;
}
size_t Arena::capacity() { return sizeof g_arena; }
size_t Arena::used() { return g_used; }
Arena::Scope::Scope() : mark(g_used) {}
Arena::Scope::~Scope() { g_used = mark; }

size_t ports_under_test(tinyattn::Port (&out)[kMaxPorts]) {
  size_t n = 0;
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (tinyattn::kernels_f32(p)) out[n++] = p;
  return n;
}

Result rows_sum_to_one(const float* a, size_t rows, size_t cols, double tol, bool zero_rows_allowed) {
  Result r;
  r.bound = tol;
  for (size_t i = 0; i < rows; ++i) {
    double sum = 0.0;
    bool all_zero = true;
    for (size_t j = 0; j < cols; ++j) {
      sum += a[i * cols + j];
      if (a[i * cols + j] != 0.0f) all_zero = false;
    }
    if (zero_rows_allowed && all_zero) continue;
    const double dev = std::fabs(sum - 1.0);
    if (!(dev <= r.worst)) {
      r.worst = std::isnan(dev) ? std::numeric_limits<double>::infinity() : dev;
      r.index = i;
    }
  }
  r.ok = r.worst <= tol;
  return r;
}

Result nonnegative(const float* a, size_t n) {
  Result r;
  for (size_t x = 0; x < n; ++x) {
    if (!(a[x] >= 0.0f) || !std::isfinite(a[x])) {
      r.ok = false;
      r.worst = a[x];
      r.index = x;
      return r;
    }
  }
  return r;
}

Result in_value_hull(const tinyattn::Dims& d, const float* y, const float* v, const tinyattn::Mask& mask,
                     double tol) {
  Result r;
  const double scale = max_abs(v, d.v_elems()) + 1.0;
  r.bound = tol * scale;
  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kvh = h / d.group();
    for (size_t i = 0; i < d.n; ++i) {
      const float* yi = y + (h * d.n + i) * d.dv;
      for (size_t c = 0; c < d.dv; ++c) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (size_t j = 0; j < d.m; ++j) {
          if (!tinyattn::ref::visible(mask, d, h, i, j)) continue;
          const double vc = v[(kvh * d.m + j) * d.dv + c];
          if (vc < lo) lo = vc;
          if (vc > hi) hi = vc;
        }
        if (lo > hi) lo = hi = 0.0;  // no visible key: the output must be 0
        const double out = yi[c] < lo ? lo - yi[c] : yi[c] > hi ? yi[c] - hi : 0.0;
        const double dev = std::isnan(yi[c]) ? std::numeric_limits<double>::infinity() : out;
        if (dev > r.worst) {
          r.worst = dev;
          r.index = (h * d.n + i) * d.dv + c;
        }
      }
    }
  }
  r.ok = r.worst <= r.bound;
  return r;
}

Result norm_bound(const tinyattn::Dims& d, const float* y, const float* v, const tinyattn::Mask& mask,
                  double tol) {
  Result r;
  r.bound = tol;
  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kvh = h / d.group();
    for (size_t i = 0; i < d.n; ++i) {
      double vmax = 0.0;
      for (size_t j = 0; j < d.m; ++j) {
        if (!tinyattn::ref::visible(mask, d, h, i, j)) continue;
        double s = 0.0;
        for (size_t c = 0; c < d.dv; ++c) s += double(v[(kvh * d.m + j) * d.dv + c]) * v[(kvh * d.m + j) * d.dv + c];
        if (s > vmax) vmax = s;
      }
      double ys = 0.0;
      for (size_t c = 0; c < d.dv; ++c) ys += double(y[(h * d.n + i) * d.dv + c]) * y[(h * d.n + i) * d.dv + c];
      const double excess = std::sqrt(ys) - std::sqrt(vmax) * (1.0 + tol);
      const double dev = std::isnan(excess) ? std::numeric_limits<double>::infinity() : excess;
      if (dev > r.worst) {
        r.worst = dev;
        r.index = h * d.n + i;
      }
    }
  }
  r.ok = r.worst <= 0.0;
  return r;
}

namespace {
template <class W>
Result close_impl(const float* got, const W* want, size_t n, double atol, double rtol) {
  Result r;
  r.bound = atol;
  for (size_t x = 0; x < n; ++x) {
    const double g = got[x], w = static_cast<double>(want[x]);
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) != std::isnan(g)) {
        r.ok = false;
        r.worst = std::numeric_limits<double>::infinity();
        r.index = x;
        return r;
      }
      continue;
    }
    if (std::isinf(w) || std::isinf(g)) {
      if (g != w) {
        r.ok = false;
        r.worst = std::numeric_limits<double>::infinity();
        r.index = x;
        return r;
      }
      continue;
    }
    const double excess = std::fabs(g - w) - (atol + rtol * std::fabs(w));
    if (excess > 0.0 && std::fabs(g - w) > r.worst) {
      r.ok = false;
      r.worst = std::fabs(g - w);
      r.index = x;
    } else if (r.ok && std::fabs(g - w) > r.worst) {
      r.worst = std::fabs(g - w);
      r.index = x;
    }
  }
  return r;
}
}  // namespace

Result close(const float* got, const double* want, size_t n, double atol, double rtol) {
  return close_impl(got, want, n, atol, rtol);
}
Result close(const float* got, const float* want, size_t n, double atol, double rtol) {
  return close_impl(got, want, n, atol, rtol);
}

double max_abs(const float* x, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i)
    if (std::fabs(x[i]) > m) m = std::fabs(x[i]);
  return m;
}

Problem make_problem(const tinyattn::Dims& d, uint64_t seed, float sd) {
  Problem p{};
  p.d = d;
  p.q = alloc<float>(d.q_elems());
  p.k = alloc<float>(d.k_elems());
  p.v = alloc<float>(d.v_elems());
  p.y = alloc<float>(d.y_elems());
  p.weights = alloc<float>(d.weight_elems());
  p.lse = alloc<float>(d.lse_elems());
  p.y_ref = alloc<double>(d.y_elems());
  p.weights_ref = alloc<double>(d.weight_elems());
  p.lse_ref = alloc<double>(d.lse_elems());
  // Either algorithm's: the key tiles can need more than whole rows (M just
  // above kKeyTile with a small Dv).
  const size_t plain = tinyattn::forward_workspace_bytes(d, true), tiled = tinyattn::forward_workspace_bytes(d, false);
  p.workspace = alloc<unsigned char>(plain > tiled ? plain : tiled);
  p.ok = p.q && p.k && p.v && p.y && p.weights && p.lse && p.y_ref && p.weights_ref && p.lse_ref && p.workspace;
  if (!p.ok) return p;
  Rng rng(seed);
  rng.fill_normal(p.q, d.q_elems(), sd);
  rng.fill_normal(p.k, d.k_elems(), sd);
  rng.fill_normal(p.v, d.v_elems(), 1.0f);
  return p;
}

void run_reference(Problem& p, const tinyattn::Mask& mask, const tinyattn::Options& o) {
  tinyattn::ref::forward(p.d, p.q, p.k, p.v, mask, tinyattn::effective_scale(p.d, o), p.y_ref, p.weights_ref,
                         p.lse_ref, o.softcap ? *o.softcap : 0.0);
}

tinyattn::Status run_port(Problem& p, tinyattn::Port port, const tinyattn::Mask& mask, const tinyattn::Options& o,
                          bool with_weights, tinyattn::Scratch scratch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t x = 0; x < p.d.y_elems(); ++x) p.y[x] = nan;
  for (size_t x = 0; x < p.d.weight_elems(); ++x) p.weights[x] = nan;
  for (size_t x = 0; x < p.d.lse_elems(); ++x) p.lse[x] = nan;
  tinyattn::Options opt = o;
  opt.port = port;
  tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, with_weights ? p.weights : nullptr, p.lse};
  const size_t ws_bytes = tinyattn::forward_workspace_bytes(p.d, with_weights, scratch);
  void* ws = scratch == tinyattn::Scratch::kMinimal ? p.workspace : Arena::allocate(ws_bytes);
  if (!ws) return tinyattn::Status::kNullPointer;  // the arena is full: the caller's check fails
  return tinyattn::forward(p.d, io, {ws, ws_bytes}, mask, opt);
}

}  // namespace tatest
