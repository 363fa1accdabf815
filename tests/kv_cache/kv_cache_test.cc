// KvCache: a decode, token by token or a chunk at a time, gives every row of
// one causal forward over the whole sequence (the ring: of one causal
// sliding-window forward), on every port, for fp32, fp16 and int8 storage;
// the int8 bytes are identical to that forward's. Rejected calls change
// nothing.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/reference.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;

namespace {

constexpr size_t kHq = 4, kHkv = 2, kDk = 8, kDv = 6;
constexpr size_t kTokens = 21;
// Chunk sizes of the chunked prefills (MaxNew 4), summing to kTokens.
constexpr size_t kChunks[] = {4, 1, 3, 2, 4, 1, 1, 4, 1};
constexpr size_t kWindow = 5;

template <class T>
struct Sequence {
  T* q;  // [Hq][kTokens][Dk]
  T* k;  // [Hkv][kTokens][Dk]
  T* v;  // [Hkv][kTokens][Dv]
};

Dims full_dims() { return Dims{kTokens, kTokens, kDk, kDv, kHq, kHkv}; }

// The mask of one forward over the whole sequence that the cache's steps reproduce.
Mask full_mask(size_t window) {
  if (window == 0) return Mask::causal_top_left();
  return Mask::sliding_window(static_cast<int32_t>(window) - 1, 0, Align::kTopLeft);
}

// Tokens [t0, t0 + n) of x[heads][kTokens][width] as [heads][n][width].
template <class T>
void gather(const T* x, size_t heads, size_t width, size_t t0, size_t n, T* out) {
  for (size_t h = 0; h < heads; ++h)
    for (size_t t = 0; t < n; ++t)
      for (size_t c = 0; c < width; ++c) out[(h * n + t) * width + c] = x[(h * kTokens + t0 + t) * width + c];
}

Sequence<float> float_sequence(uint64_t seed) {
  Sequence<float> s{alloc<float>(kHq * kTokens * kDk), alloc<float>(kHkv * kTokens * kDk),
                    alloc<float>(kHkv * kTokens * kDv)};
  tatest::Rng rng(seed);
  rng.fill_normal(s.q, kHq * kTokens * kDk, 1.5f);
  rng.fill_normal(s.k, kHkv * kTokens * kDk, 1.5f);
  rng.fill_normal(s.v, kHkv * kTokens * kDv);
  return s;
}

// The fp16 decode bound (docs/core.md, "KV cache"): a step's output a and
// the full forward's b each round their own fp32 result to fp16 (half an
// ULP: at most 2^-11 |y| for a normal half, 2^-25 below), and those fp32
// results differ only in the order of two sums over the row's `visible`
// keys, sum_j e_j v_j and sum_j e_j, the logits and their exponentials being
// the same bits wherever a key sits (KernelsF32::scores): within
// (visible - 1) roundings each, plus the reciprocal and the product, of
// sum_j p_j |v_j| <= vmax (the largest |v| of the column over those keys),
// for each of the two: 4 visible 2^-24 vmax in all.
bool within_f16_decode_bound(float a, float b, size_t visible, double vmax) {
  const double fp16_roundings = std::ldexp(std::fabs(a) + std::fabs(b), -11) + std::ldexp(1.0, -24);
  const double fp32_orders = 4.0 * static_cast<double>(visible) * std::ldexp(vmax, -24);
  return std::fabs(static_cast<double>(a) - b) <= fp16_roundings + fp32_orders;
}

// Keys [lo, p] that token p sees: every earlier token, or the window's last.
size_t first_visible(size_t p, size_t window) { return window && p + 1 > window ? p + 1 - window : 0; }

// The largest |v| of column c of KV head kv over tokens [lo, p] of v[heads][tokens][dv].
double column_max(const half* v, size_t tokens, size_t dv, size_t kv, size_t c, size_t lo, size_t p) {
  double m = 0;
  for (size_t t = lo; t <= p; ++t) m = std::fmax(m, std::fabs(to_float(v[(kv * tokens + t) * dv + c])));
  return m;
}

// Runs `cache` over the sequence in steps of `chunks` (all 1 when null) and
// calls check(t0, n, y_step) with each step's output [Hq][n][Dv].
template <class Cache, class T, class Check, class... Extra>
bool decode(Cache& cache, const Sequence<T>& s, const size_t* chunks, size_t chunk_count, Check check,
            const Extra&... extra) {
  T* q = alloc<T>(kHq * Cache::dims.n * kDk);
  T* k = alloc<T>(kHkv * Cache::dims.n * kDk);
  T* v = alloc<T>(kHkv * Cache::dims.n * kDv);
  T* y = alloc<T>(kHq * Cache::dims.n * kDv);
  cache.clear();
  size_t t0 = 0;
  for (size_t step = 0; t0 < kTokens; ++step) {
    const size_t n = chunks ? chunks[step % chunk_count] : 1;
    gather(s.q, kHq, kDk, t0, n, q);
    gather(s.k, kHkv, kDk, t0, n, k);
    gather(s.v, kHkv, kDv, t0, n, v);
    Status st = cache.append(k, v, n);
    if (st == Status::kOk) st = cache.attend(q, y, n, extra...);
    TA_CHECK_MSG(st == Status::kOk, "step at token %zu (n %zu): %s", t0, n, to_string(st));
    if (st != Status::kOk) return false;
    TA_CHECK(cache.position() == t0 + n);
    check(t0, n, y);
    t0 += n;
  }
  return true;
}

// fp32: each step against the reference's row and the library's own full
// forward on the same port, within the fp32 tolerances (docs/core.md).
template <class Cache>
void check_float_decode(Cache& cache, const size_t* chunks, size_t chunk_count, const char* what) {
  Port ports[tatest::kMaxPorts];
  const size_t port_count = tatest::ports_under_test(ports);
  for (size_t pi = 0; pi < port_count; ++pi) {
    Arena::Scope scope;
    const Port port = ports[pi];
    const Sequence<float> s = float_sequence(0x5eed + pi);
    const Dims d = full_dims();
    const Mask mask = full_mask(Cache::kRing ? kWindow : 0);
    double* y_ref = alloc<double>(d.y_elems());
    float* y_full = alloc<float>(d.y_elems());
    void* ws = alloc<unsigned char>(forward_workspace_bytes(d));
    TA_CHECK((y_ref && y_full && ws));
    if (!y_ref || !y_full || !ws) return;
    ref::forward(d, s.q, s.k, s.v, mask, effective_scale(d, {}), y_ref);
    Options options;
    options.port = port;
    TA_CHECK(forward(d, ForwardIo{s.q, s.k, s.v, y_full}, Workspace{ws, forward_workspace_bytes(d)}, mask,
                     options) == Status::kOk);
    const double vmax = tatest::max_abs(s.v, d.v_elems());
    double worst_ref = 0, worst_full = 0;
    size_t bad = 0;
    decode(
        cache, s, chunks, chunk_count,
        [&](size_t t0, size_t n, const float* y) {
          for (size_t h = 0; h < kHq; ++h)
            for (size_t i = 0; i < n; ++i)
              for (size_t c = 0; c < kDv; ++c) {
                const size_t at = (h * kTokens + t0 + i) * kDv + c;
                const double got = y[(h * n + i) * kDv + c];
                const double tol = tatest::kOutAtol * vmax + tatest::kOutRtol * std::fabs(y_ref[at]);
                const double e_ref = std::fabs(got - y_ref[at]), e_full = std::fabs(got - y_full[at]);
                worst_ref = std::fmax(worst_ref, e_ref);
                worst_full = std::fmax(worst_full, e_full);
                bad += !(e_ref <= tol) || !(e_full <= 2 * tol);
              }
        },
        options);
    TA_CHECK_MSG(bad == 0, "%s, port %s: %zu outputs off (worst %.3g against the reference, %.3g against the full pass)",
                 what, port_name(port), bad, worst_ref, worst_full);
  }
}

}  // namespace

TA_CASE("kv_cache: fp32 decode, one token per step, equals one causal forward (GQA, every port)") {
  static KvCache<float, kHq, kHkv, kDk, kDv, 24> cache;
  check_float_decode(cache, nullptr, 0, "decode");
  TA_CHECK(cache.size() == kTokens);
}

TA_CASE("kv_cache: fp32 chunked prefill (1 to 4 tokens per step) equals one causal forward") {
  static KvCache<float, kHq, kHkv, kDk, kDv, kTokens, 4> cache;
  check_float_decode(cache, kChunks, sizeof kChunks / sizeof kChunks[0], "chunked");
  TA_CHECK(cache.size() == kTokens);
}

TA_CASE("kv_cache: fp32 ring keeps the last tokens and equals one sliding-window forward") {
  // Capacity 8 = window 5 + MaxNew 4 - 1: the ring wraps more than twice over 21 tokens.
  static KvCache<float, kHq, kHkv, kDk, kDv, kWindow + 3, 4, kWindow> ring;
  check_float_decode(ring, kChunks, sizeof kChunks / sizeof kChunks[0], "ring, chunked");
  TA_CHECK(ring.size() == kWindow + 3);
  static KvCache<float, kHq, kHkv, kDk, kDv, kWindow, 1, kWindow> ring1;
  check_float_decode(ring1, nullptr, 0, "ring, decode");
}

TA_CASE("kv_cache: fp16 decode equals one fp16 causal forward") {
  Arena::Scope scope;
  const Dims d = full_dims();
  const Sequence<float> f = float_sequence(0xf16);
  Sequence<half> s{alloc<half>(d.q_elems()), alloc<half>(d.k_elems()), alloc<half>(d.v_elems())};
  half* y_full = alloc<half>(d.y_elems());
  const size_t ws_bytes = forward_f16_workspace_bytes(d);
  void* ws = alloc<unsigned char>(ws_bytes);
  TA_CHECK((s.q && s.k && s.v && y_full && ws));
  if (!s.q || !s.k || !s.v || !y_full || !ws) return;
  for (size_t x = 0; x < d.q_elems(); ++x) s.q[x] = to_half(f.q[x]);
  for (size_t x = 0; x < d.k_elems(); ++x) s.k[x] = to_half(f.k[x]);
  for (size_t x = 0; x < d.v_elems(); ++x) s.v[x] = to_half(f.v[x]);
  for (size_t window : {size_t{0}, kWindow}) {
    const Status full = forward_f16(d, ForwardIoF16{s.q, s.k, s.v, y_full}, Workspace{ws, ws_bytes}, full_mask(window));
    TA_CHECK(full == Status::kOk);
    size_t off = 0;
    auto check = [&](size_t t0, size_t n, const half* y) {
      for (size_t h = 0; h < kHq; ++h)
        for (size_t i = 0; i < n; ++i)
          for (size_t c = 0; c < kDv; ++c) {
            const float a = to_float(y[(h * n + i) * kDv + c]);
            const float b = to_float(y_full[(h * kTokens + t0 + i) * kDv + c]);
            const size_t p = t0 + i, lo = first_visible(p, window);
            const double vmax = column_max(s.v, kTokens, kDv, h / (kHq / kHkv), c, lo, p);
            off += !within_f16_decode_bound(a, b, p + 1 - lo, vmax);
          }
    };
    if (window == 0) {
      static KvCache<half, kHq, kHkv, kDk, kDv, kTokens, 4> cache;
      decode(cache, s, kChunks, sizeof kChunks / sizeof kChunks[0], check);
    } else {
      static KvCache<half, kHq, kHkv, kDk, kDv, kWindow + 3, 4, kWindow> ring;
      decode(ring, s, kChunks, sizeof kChunks / sizeof kChunks[0], check);
    }
    TA_CHECK_MSG(off == 0, "window %zu: %zu fp16 outputs past the decode bound from the full forward's", window, off);
  }
}

// Inputs of +-3e4 with a scale that leaves logits of hundreds, some within a
// few units of their row's maximum: there a logit's last bits move its
// weight, and the column's cancelling +-3e4 values show it in Y. Dk 32 gives
// the dot products rounding to spare; the ring's keys sit in other slots, so
// other positions within a scores call, than in the full forward's rows.
TA_CASE("kv_cache: fp16 ring decode at inputs of +-3e4 stays within the decode bound, every port") {
  constexpr size_t hq = 4, hkv = 2, dk = 32, dv = 6, window = kWindow, sequences = 200;
  constexpr float kAmplitude = 3e4f, kScale = 3e-7f;
  Arena::Scope scope;
  const Dims d{kTokens, kTokens, dk, dv, hq, hkv};
  half* q = alloc<half>(d.q_elems());
  half* k = alloc<half>(d.k_elems());
  half* v = alloc<half>(d.v_elems());
  half* y_full = alloc<half>(d.y_elems());
  half *qs = alloc<half>(hq * 4 * dk), *ks = alloc<half>(hkv * 4 * dk), *vs = alloc<half>(hkv * 4 * dv);
  half* ys = alloc<half>(hq * 4 * dv);
  const size_t ws_bytes = forward_f16_workspace_bytes(d);
  void* ws = alloc<unsigned char>(ws_bytes);
  TA_CHECK((q && k && v && y_full && qs && ks && vs && ys && ws));
  if (!q || !k || !v || !y_full || !qs || !ks || !vs || !ys || !ws) return;
  static KvCache<half, hq, hkv, dk, dv, window + 3, 4, window> ring;
  const Mask mask = full_mask(window);
  Port ports[tatest::kMaxPorts];
  const size_t port_count = tatest::ports_under_test(ports);
  for (size_t pi = 0; pi < port_count; ++pi) {
    OptionsF16 options;
    options.port = ports[pi];
    options.scale = kScale;
    tatest::Rng rng(0x3e4);
    size_t off = 0, checked = 0;
    for (size_t seq = 0; seq < sequences; ++seq) {
      for (half* x : {q, k, v}) {
        const size_t count = x == q ? d.q_elems() : x == k ? d.k_elems() : d.v_elems();
        for (size_t e = 0; e < count; ++e) x[e] = to_half(rng.uniform(-kAmplitude, kAmplitude));
      }
      TA_CHECK(forward_f16(d, ForwardIoF16{q, k, v, y_full}, Workspace{ws, ws_bytes}, mask, options) == Status::kOk);
      ring.clear();
      for (size_t t0 = 0, step = 0; t0 < kTokens; t0 += kChunks[step % (sizeof kChunks / sizeof kChunks[0])], ++step) {
        const size_t n = kChunks[step % (sizeof kChunks / sizeof kChunks[0])];
        for (size_t h = 0; h < hq; ++h)
          for (size_t t = 0; t < n; ++t)
            for (size_t c = 0; c < dk; ++c) qs[(h * n + t) * dk + c] = q[(h * kTokens + t0 + t) * dk + c];
        for (size_t h = 0; h < hkv; ++h)
          for (size_t t = 0; t < n; ++t) {
            for (size_t c = 0; c < dk; ++c) ks[(h * n + t) * dk + c] = k[(h * kTokens + t0 + t) * dk + c];
            for (size_t c = 0; c < dv; ++c) vs[(h * n + t) * dv + c] = v[(h * kTokens + t0 + t) * dv + c];
          }
        Status st = ring.append(ks, vs, n);
        if (st == Status::kOk) st = ring.attend(qs, ys, n, options);
        TA_CHECK(st == Status::kOk);
        if (st != Status::kOk) return;
        for (size_t h = 0; h < hq; ++h)
          for (size_t i = 0; i < n; ++i)
            for (size_t c = 0; c < dv; ++c) {
              const size_t p = t0 + i, lo = first_visible(p, window);
              const double vmax = column_max(v, kTokens, dv, h / (hq / hkv), c, lo, p);
              off += !within_f16_decode_bound(to_float(ys[(h * n + i) * dv + c]),
                                              to_float(y_full[(h * kTokens + p) * dv + c]), p + 1 - lo, vmax);
              ++checked;
            }
      }
    }
    TA_CHECK_MSG(off == 0, "port %s: %zu of %zu fp16 ring outputs past the decode bound", port_name(ports[pi]), off,
                 checked);
  }
}

TA_CASE("kv_cache: int8 decode gives the bytes of one int8 causal forward (linear and ring)") {
  Arena::Scope scope;
  const Dims d = full_dims();
  Sequence<int8_t> s{alloc<int8_t>(d.q_elems()), alloc<int8_t>(d.k_elems()), alloc<int8_t>(d.v_elems())};
  int8_t* y_full = alloc<int8_t>(d.y_elems());
  const size_t ws_bytes = forward_i8_workspace_bytes(d);
  void* ws = alloc<unsigned char>(ws_bytes);
  TA_CHECK((s.q && s.k && s.v && y_full && ws));
  if (!s.q || !s.k || !s.v || !y_full || !ws) return;
  tatest::Rng rng(0x18);
  for (size_t x = 0; x < d.q_elems(); ++x) s.q[x] = static_cast<int8_t>(rng.next_u64() % 256 - 128);
  for (size_t x = 0; x < d.k_elems(); ++x) s.k[x] = static_cast<int8_t>(rng.next_u64() % 256 - 128);
  for (size_t x = 0; x < d.v_elems(); ++x) s.v[x] = static_cast<int8_t>(rng.next_u64() % 256 - 128);
  const float sq[1] = {0.025f}, sk[1] = {0.025f}, sv[1] = {0.025f}, sy[1] = {0.02f};
  const int32_t zq[1] = {3}, zk[1] = {-5}, zv[1] = {7}, zy[1] = {-1};
  Int8Scheme scheme;
  scheme.q = QuantParams{sq, zq, 1};
  scheme.k = QuantParams{sk, zk, 1};
  scheme.v = QuantParams{sv, zv, 1};
  scheme.y = QuantParams{sy, zy, 1};
  Int8HeadPlan plans[kHq];
  TA_CHECK(plan_int8(d, scheme, plans, kHq) == Status::kOk);
  const Int8Plan plan{plans, kHq};
  for (size_t window : {size_t{0}, kWindow}) {
    TA_CHECK(forward_i8(d, ForwardIoI8{s.q, s.k, s.v, y_full}, plan, Workspace{ws, ws_bytes}, full_mask(window)) ==
             Status::kOk);
    size_t differ = 0;
    auto check = [&](size_t t0, size_t n, const int8_t* y) {
      for (size_t h = 0; h < kHq; ++h)
        for (size_t i = 0; i < n; ++i)
          for (size_t c = 0; c < kDv; ++c)
            differ += y[(h * n + i) * kDv + c] != y_full[(h * kTokens + t0 + i) * kDv + c];
    };
    if (window == 0) {
      static KvCache<int8_t, kHq, kHkv, kDk, kDv, kTokens + 3> cache;
      decode(cache, s, nullptr, 0, check, plan);
      static KvCache<int8_t, kHq, kHkv, kDk, kDv, kTokens, 4> chunked;
      decode(chunked, s, kChunks, sizeof kChunks / sizeof kChunks[0], check, plan);
    } else {
      static KvCache<int8_t, kHq, kHkv, kDk, kDv, kWindow + 3, 4, kWindow> ring;
      decode(ring, s, kChunks, sizeof kChunks / sizeof kChunks[0], check, plan);
    }
    TA_CHECK_MSG(differ == 0, "window %zu: %zu int8 outputs differ from the full forward's", window, differ);
  }
}

TA_CASE("kv_cache: rejected appends and attends change nothing") {
  Arena::Scope scope;
  using Cache = KvCache<float, 2, 1, 4, 3, 3, 2>;
  static Cache cache;
  cache.clear();
  float k[2 * 4] = {}, v[2 * 3] = {}, q[2 * 2 * 4] = {}, y[2 * 2 * 3] = {};
  for (size_t x = 0; x < 8; ++x) k[x] = q[x] = q[x + 8] = static_cast<float>(x) * 0.25f;
  for (size_t x = 0; x < 6; ++x) v[x] = static_cast<float>(x);
  TA_CHECK(cache.attend(q, y, 1) == Status::kBadDimension);  // nothing appended yet
  TA_CHECK(cache.append(k, v, 0) == Status::kBadDimension);
  TA_CHECK(cache.append(k, v, 3) == Status::kBadDimension);  // more than MaxNew
  TA_CHECK(cache.append(nullptr, v, 1) == Status::kNullPointer);
  TA_CHECK(cache.append(k, nullptr, 1) == Status::kNullPointer);
  TA_CHECK(cache.position() == 0);
  TA_CHECK(cache.append(k, v, 2) == Status::kOk);
  TA_CHECK(cache.attend(q, y, 3) == Status::kBadDimension);
  TA_CHECK(cache.append(k, v, 2) == Status::kCacheFull);  // 2 + 2 > 3 slots
  TA_CHECK((cache.position() == 2 && cache.size() == 2));
  TA_CHECK(cache.append(k, v, 1) == Status::kOk);
  TA_CHECK(cache.append(k, v, 1) == Status::kCacheFull);
  TA_CHECK(cache.position() == 3);
  // The forward's own checks pass through, and write nothing.
  for (float& x : y) x = -7.0f;
  TA_CHECK(cache.attend(nullptr, y, 1) == Status::kNullPointer);
  Options bad_scale;
  bad_scale.scale = std::numeric_limits<float>::quiet_NaN();
  TA_CHECK(cache.attend(q, y, 1, bad_scale) == Status::kBadScale);
  size_t written = 0;
  for (float x : y) written += x != -7.0f;
  TA_CHECK(written == 0);
  TA_CHECK(cache.attend(q, y, 1) == Status::kOk);
  cache.clear();
  TA_CHECK((cache.position() == 0 && cache.size() == 0));
  TA_CHECK(cache.append(k, v, 2) == Status::kOk);
  // RAM is the keys and values plus the attend's scratch, a compile-time constant.
  static_assert(Cache::kStorageBytes == 1 * 3 * (4 + 3) * sizeof(float), "storage of K and V");
  static_assert(sizeof(Cache) >= Cache::kStorageBytes + Cache::workspace_bytes, "sizeof is the RAM");
  TA_CHECK(std::strcmp(to_string(Status::kCacheFull), "cache_full") == 0);
}

namespace {

// A model of a cache: every token appended since the last clear, in order.
// Random appends, attends and clears (bad sizes and a full cache included)
// must give the model's statuses, and each attend the reference's rows over
// the tokens the model says each query sees.
template <class Cache>
void random_operations(uint64_t seed, const char* what) {
  constexpr size_t kMaxTokens = 48, hq = Cache::dims.hq, hkv = Cache::dims.hkv, dk = Cache::dims.dk,
                   dv = Cache::dims.dv, cap = Cache::dims.m, max_new = Cache::dims.n;
  constexpr size_t window = Cache::kRing ? cap - max_new + 1 : 0;  // the tests' rings: Capacity = W + MaxNew - 1
  static Cache cache;
  static float seq_k[kMaxTokens][hkv][dk], seq_v[kMaxTokens][hkv][dv];
  static float k[hkv * max_new * dk], v[hkv * max_new * dv], q[hq * max_new * dk], y[hq * max_new * dv];
  tatest::Rng rng(seed);
  cache.clear();
  size_t tokens = 0, attends = 0, bad = 0, status_errors = 0;
  double worst = 0;
  for (int op = 0; op < 300; ++op) {
    const uint64_t r = rng.next_u64();
    const size_t n = static_cast<size_t>((r >> 8) % (max_new + 2));  // 0 .. MaxNew + 1
    if (r % 16 == 0) {
      cache.clear();
      tokens = 0;
    } else if (r % 2 == 0) {
      rng.fill_normal(k, sizeof k / sizeof k[0], 1.5f);
      rng.fill_normal(v, sizeof v / sizeof v[0]);
      const Status want = n == 0 || n > max_new                            ? Status::kBadDimension
                          : (!Cache::kRing && tokens + n > cap) || tokens + n > kMaxTokens ? Status::kCacheFull
                                                                                          : Status::kOk;
      if (want == Status::kCacheFull && Cache::kRing) {  // the model's own limit: start over
        cache.clear();
        tokens = 0;
        continue;
      }
      const Status got = cache.append(k, v, n);
      status_errors += got != want;
      if (got == Status::kOk) {
        for (size_t h = 0; h < hkv; ++h)
          for (size_t t = 0; t < n; ++t) {
            for (size_t c = 0; c < dk; ++c) seq_k[tokens + t][h][c] = k[(h * n + t) * dk + c];
            for (size_t c = 0; c < dv; ++c) seq_v[tokens + t][h][c] = v[(h * n + t) * dv + c];
          }
        tokens += n;
      }
    } else {
      rng.fill_normal(q, sizeof q / sizeof q[0], 1.5f);
      const Status want = n == 0 || n > max_new || n > tokens ? Status::kBadDimension : Status::kOk;
      const Status got = cache.attend(q, y, n);
      status_errors += got != want;
      TA_CHECK(cache.position() == tokens);
      if (got != Status::kOk || want != Status::kOk) continue;
      ++attends;
      // Each query alone against the reference over the tokens it sees.
      for (size_t i = 0; i < n; ++i) {
        const size_t p = tokens - n + i, lo = window && p + 1 > window ? p + 1 - window : 0, m = p + 1 - lo;
        // The reference reads K and V as [Hkv][m][D]: the visible tokens, packed.
        static float kd[hkv * kMaxTokens * dk], vd[hkv * kMaxTokens * dv], qq[hq][dk];
        static double yy[hq][dv];
        for (size_t h = 0; h < hkv; ++h)
          for (size_t t = 0; t < m; ++t) {
            for (size_t c = 0; c < dk; ++c) kd[(h * m + t) * dk + c] = seq_k[lo + t][h][c];
            for (size_t c = 0; c < dv; ++c) vd[(h * m + t) * dv + c] = seq_v[lo + t][h][c];
          }
        for (size_t h = 0; h < hq; ++h)
          for (size_t c = 0; c < dk; ++c) qq[h][c] = q[(h * n + i) * dk + c];
        const Dims d{1, m, dk, dv, hq, hkv};
        ref::forward(d, qq[0], kd, vd, Mask{}, effective_scale(d, {}), yy[0]);
        const double vmax = tatest::max_abs(vd, d.v_elems());
        for (size_t h = 0; h < hq; ++h)
          for (size_t c = 0; c < dv; ++c) {
            const double e = std::fabs(y[(h * n + i) * dv + c] - yy[h][c]);
            worst = std::fmax(worst, e);
            bad += !(e <= tatest::kOutAtol * vmax + tatest::kOutRtol * std::fabs(yy[h][c]));
          }
      }
    }
  }
  TA_CHECK_MSG(status_errors == 0, "%s: %zu statuses differ from the model's", what, status_errors);
  TA_CHECK_MSG(bad == 0 && attends > 20, "%s: %zu outputs off the reference (worst %.3g) over %zu attends", what, bad,
               worst, attends);
}

}  // namespace

TA_CASE("kv_cache: random appends, attends and clears follow a model of the cache") {
  random_operations<KvCache<float, 2, 1, 4, 3, 9, 3>>(1, "linear");
  random_operations<KvCache<float, 4, 2, 5, 6, 6, 3, 4>>(2, "ring");
  random_operations<KvCache<float, 3, 3, 8, 2, 4, 1, 4>>(3, "ring, decode");
}
