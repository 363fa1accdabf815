// The decode engine's storage and eviction: attention sinks (the first S
// tokens kept for good in front of a ring) against one forward over the whole
// sequence with the equivalent mask, and the int8 storage of an fp32 cache
// (KvInt8) against the fp32 attention over the rows it stores and against
// the unquantized sequence, on every port.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "golden_decode.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/reference.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;

namespace {

constexpr size_t kHq = 4, kHkv = 2, kDk = 8, kDv = 6, kTokens = 23;
constexpr size_t kChunks[] = {3, 1, 4, 2, 1, 1, 4, 3, 1, 3};
constexpr size_t kChunkCount = sizeof kChunks / sizeof kChunks[0];

struct Sequence {
  float* q;  // [Hq][kTokens][Dk]
  float* k;  // [Hkv][kTokens][Dk]
  float* v;  // [Hkv][kTokens][Dv]
};

Dims full_dims() { return Dims{kTokens, kTokens, kDk, kDv, kHq, kHkv}; }

// Out of line: Arm GCC 12 miscounted the branch lengths of the allocating
// caller with its vector loops inlined (a cbz out of range, Cortex-M55).
__attribute__((noinline)) void fill_sequence(const Sequence& s, uint64_t seed) {
  const Dims d = full_dims();
  tatest::Rng rng(seed);
  rng.fill_normal(s.q, d.q_elems(), 1.5f);
  rng.fill_normal(s.k, d.k_elems(), 1.5f);
  rng.fill_normal(s.v, d.v_elems());
  // Rows of very different magnitudes: each row's own scale must carry them.
  for (size_t t = 0; t < kTokens; t += 5)
    for (size_t c = 0; c < kDv; ++c) s.v[t * kDv + c] *= 40.0f;
  for (size_t c = 0; c < kDk; ++c) s.k[3 * kDk + c] *= 1e-3f;
}

Sequence make_sequence(uint64_t seed) {
  const Dims d = full_dims();
  Sequence s{alloc<float>(d.q_elems()), alloc<float>(d.k_elems()), alloc<float>(d.v_elems())};
  if (s.q && s.k && s.v) fill_sequence(s, seed);
  return s;
}

// The keep mask [kTokens][kTokens] of one forward that a cache of this shape
// reproduces step by step (detail::kv_cache_sees).
uint8_t* full_keep(const detail::KvCacheShape& shape) {
  uint8_t* keep = alloc<uint8_t>(kTokens * kTokens);
  if (!keep) return keep;
  for (size_t p = 0; p < kTokens; ++p)
    for (size_t t = 0; t < kTokens; ++t) keep[p * kTokens + t] = detail::kv_cache_sees(shape, p, t) ? 1 : 0;
  return keep;
}

// Tokens [t0, t0 + n) of x[heads][kTokens][width] as [heads][n][width].
void gather(const float* x, size_t heads, size_t width, size_t t0, size_t n, float* out) {
  for (size_t h = 0; h < heads; ++h)
    for (size_t t = 0; t < n; ++t)
      for (size_t c = 0; c < width; ++c) out[(h * n + t) * width + c] = x[(h * kTokens + t0 + t) * width + c];
}

// Runs the cache over the sequence in the chunks (all 1 when chunks is
// false) and calls check(t0, n, y) with each step's Y[Hq][n][Dv].
template <class Cache, class Check, class... Extra>
bool run_decode(Cache& cache, const Sequence& s, bool chunks, Check check, const Extra&... extra) {
  constexpr size_t max_new = Cache::dims.n;
  float* q = alloc<float>(kHq * max_new * kDk);
  float* k = alloc<float>(kHkv * max_new * kDk);
  float* v = alloc<float>(kHkv * max_new * kDv);
  float* y = alloc<float>(kHq * max_new * kDv);
  TA_CHECK((q && k && v && y));
  if (!q || !k || !v || !y) return false;
  cache.clear();
  for (size_t t0 = 0, step = 0; t0 < kTokens; ++step) {
    size_t n = chunks ? kChunks[step % kChunkCount] : 1;
    n = n > max_new ? max_new : n;
    n = n > kTokens - t0 ? kTokens - t0 : n;
    gather(s.q, kHq, kDk, t0, n, q);
    gather(s.k, kHkv, kDk, t0, n, k);
    gather(s.v, kHkv, kDv, t0, n, v);
    Status st = cache.append(k, v, n);
    if (st == Status::kOk) st = cache.attend(q, y, n, extra...);
    TA_CHECK_MSG(st == Status::kOk, "step at token %zu (n %zu): %s", t0, n, to_string(st));
    if (st != Status::kOk) return false;
    check(t0, n, y);
    t0 += n;
  }
  return true;
}

// fp32 with sinks: each step against the reference over the whole sequence
// with the equivalent keep mask, on every port.
template <class Cache>
void check_sinks(const char* what, bool chunks) {
  Port ports[tatest::kMaxPorts];
  const size_t port_count = tatest::ports_under_test(ports);
  static Cache cache;
  for (size_t pi = 0; pi < port_count; ++pi) {
    Arena::Scope scope;
    const Sequence s = make_sequence(0x51c + pi);
    const Dims d = full_dims();
    uint8_t* keep = full_keep(Cache::shape);
    double* y_ref = alloc<double>(d.y_elems());
    TA_CHECK((s.q && s.k && s.v && keep && y_ref));
    if (!s.q || !s.k || !s.v || !keep || !y_ref) return;
    ref::forward(d, s.q, s.k, s.v, Mask::keep_bytes(keep), effective_scale(d, {}), y_ref);
    const double vmax = tatest::max_abs(s.v, d.v_elems());
    Options options;
    options.port = ports[pi];
    size_t bad = 0;
    double worst = 0;
    run_decode(
        cache, s, chunks,
        [&](size_t t0, size_t n, const float* y) {
          for (size_t h = 0; h < kHq; ++h)
            for (size_t i = 0; i < n; ++i)
              for (size_t c = 0; c < kDv; ++c) {
                const double want = y_ref[(h * kTokens + t0 + i) * kDv + c];
                const double e = std::fabs(y[(h * n + i) * kDv + c] - want);
                worst = std::fmax(worst, e);
                bad += !(e <= tatest::kOutAtol * vmax + tatest::kOutRtol * std::fabs(want));
              }
        },
        options);
    TA_CHECK_MSG(bad == 0, "%s, port %s: %zu outputs off the reference (worst %.3g)", what, port_name(ports[pi]), bad,
                 worst);
  }
}

}  // namespace

TA_CASE("kv_cache: sinks and a ring equal one forward that keeps the first tokens and a window") {
  // 2 sinks, window 5: a query sees tokens 0, 1 and its last 5.
  check_sinks<KvCache<float, kHq, kHkv, kDk, kDv, 2 + 5, 1, 5, 2>>("sinks 2, window 5, decode", false);
  // MaxNew 4 needs 2 + 5 + 3 slots; the ring part (8 slots) wraps twice.
  check_sinks<KvCache<float, kHq, kHkv, kDk, kDv, 2 + 5 + 3, 4, 5, 2>>("sinks 2, window 5, chunked", true);
  // One sink, window 1: the sink and the token itself.
  check_sinks<KvCache<float, kHq, kHkv, kDk, kDv, 2, 1, 1, 1>>("sink 1, window 1", false);
  // Sinks the window still covers at the start.
  check_sinks<KvCache<float, kHq, kHkv, kDk, kDv, 4 + 9, 4, 6, 4>>("sinks 4, window 6, chunked", true);
}

TA_CASE("kv_cache: int8 caches with sinks give the bytes of one int8 forward with the equivalent mask") {
  Arena::Scope scope;
  const Dims d = full_dims();
  int8_t *q = alloc<int8_t>(d.q_elems()), *k = alloc<int8_t>(d.k_elems()), *v = alloc<int8_t>(d.v_elems());
  int8_t* y_full = alloc<int8_t>(d.y_elems());
  const size_t ws_bytes = forward_i8_workspace_bytes(d);
  void* ws = alloc<unsigned char>(ws_bytes);
  using Cache = KvCache<int8_t, kHq, kHkv, kDk, kDv, 3 + 4 + 3, 4, 4, 3>;
  uint8_t* keep = full_keep(Cache::shape);
  int8_t *qs = alloc<int8_t>(kHq * 4 * kDk), *ks = alloc<int8_t>(kHkv * 4 * kDk), *vs = alloc<int8_t>(kHkv * 4 * kDv);
  int8_t* ys = alloc<int8_t>(kHq * 4 * kDv);
  TA_CHECK((q && k && v && y_full && ws && keep && qs && ks && vs && ys));
  if (!q || !k || !v || !y_full || !ws || !keep || !qs || !ks || !vs || !ys) return;
  tatest::Rng rng(0x5188);
  for (size_t x = 0; x < d.q_elems(); ++x) q[x] = static_cast<int8_t>(rng.next_u64() % 256 - 128);
  for (size_t x = 0; x < d.k_elems(); ++x) k[x] = static_cast<int8_t>(rng.next_u64() % 256 - 128);
  for (size_t x = 0; x < d.v_elems(); ++x) v[x] = static_cast<int8_t>(rng.next_u64() % 256 - 128);
  const float sq[1] = {0.03f}, sk[1] = {0.02f}, sv[1] = {0.025f}, sy[1] = {0.02f};
  const int32_t zq[1] = {-2}, zk[1] = {4}, zv[1] = {-7}, zy[1] = {1};
  Int8Scheme scheme;
  scheme.q = QuantParams{sq, zq, 1};
  scheme.k = QuantParams{sk, zk, 1};
  scheme.v = QuantParams{sv, zv, 1};
  scheme.y = QuantParams{sy, zy, 1};
  Int8HeadPlan plans[kHq];
  TA_CHECK(plan_int8(d, scheme, plans, kHq) == Status::kOk);
  const Int8Plan plan{plans, kHq};
  TA_CHECK(forward_i8(d, ForwardIoI8{q, k, v, y_full}, plan, Workspace{ws, ws_bytes}, Mask::keep_bytes(keep)) ==
           Status::kOk);
  static Cache cache;
  cache.clear();
  size_t differ = 0;
  for (size_t t0 = 0, step = 0; t0 < kTokens; ++step) {
    const size_t n = kChunks[step % kChunkCount] > kTokens - t0 ? kTokens - t0 : kChunks[step % kChunkCount];
    for (size_t h = 0; h < kHq; ++h)
      for (size_t t = 0; t < n; ++t)
        for (size_t c = 0; c < kDk; ++c) qs[(h * n + t) * kDk + c] = q[(h * kTokens + t0 + t) * kDk + c];
    for (size_t h = 0; h < kHkv; ++h)
      for (size_t t = 0; t < n; ++t) {
        for (size_t c = 0; c < kDk; ++c) ks[(h * n + t) * kDk + c] = k[(h * kTokens + t0 + t) * kDk + c];
        for (size_t c = 0; c < kDv; ++c) vs[(h * n + t) * kDv + c] = v[(h * kTokens + t0 + t) * kDv + c];
      }
    Status st = cache.append(ks, vs, n);
    if (st == Status::kOk) st = cache.attend(qs, ys, n, plan);
    TA_CHECK(st == Status::kOk);
    if (st != Status::kOk) return;
    for (size_t h = 0; h < kHq; ++h)
      for (size_t i = 0; i < n; ++i)
        for (size_t c = 0; c < kDv; ++c)
          differ += ys[(h * n + i) * kDv + c] != y_full[(h * kTokens + t0 + i) * kDv + c];
    t0 += n;
  }
  TA_CHECK_MSG(differ == 0, "%zu int8 outputs differ from the full forward's", differ);
}

namespace {

// The test's own quantizer: the rule docs/decode.md states (scale max|x| /
// 127, fp16 scales rounded up; x / scale to nearest, ties away from zero,
// within +-127).
template <class Scale>
float quantize(const float* x, size_t n, int8_t* out) {
  float amax = 0.0f;
  for (size_t c = 0; c < n; ++c) amax = std::fmax(amax, std::fabs(x[c]));
  float s = amax / 127.0f;
  if (sizeof(Scale) == sizeof(half)) {
    half h = to_half(s);
    if (to_float(h) < s) h.bits = static_cast<uint16_t>(h.bits + 1);
    s = to_float(h);
  }
  for (size_t c = 0; c < n; ++c) {
    float r = s > 0.0f ? std::round(x[c] / s) : 0.0f;
    r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
    out[c] = static_cast<int8_t>(r);
  }
  return s;
}

// x as its rows quantized and scaled back: what the cache computes with.
template <class Scale>
void dequantized(const float* x, size_t rows, size_t n, float* out) {
  int8_t q8[64];
  for (size_t r = 0; r < rows; ++r) {
    const float s = quantize<Scale>(x + r * n, n, q8);
    for (size_t c = 0; c < n; ++c) out[r * n + c] = s * static_cast<float>(q8[c]);
  }
}

float scale_value(float s) { return s; }
float scale_value(half s) { return to_float(s); }

// KvInt8<Scale>: the stored bytes and scales are the rule's, in the slots
// detail::kv_cache_slot names; each step equals the fp32 attention over the
// dequantized rows within fp32's tolerance plus the integer weights'
// rounding, and the unquantized attention within the bound that the logits'
// actual quantization error gives (docs/decode.md).
template <class Scale, class Cache>
void check_int8_storage(const char* what, bool chunks) {
  static_assert(std::is_same<Cache, KvCache<KvInt8<Scale>, Cache::dims.hq, Cache::dims.hkv, Cache::dims.dk,
                                            Cache::dims.dv, Cache::shape.capacity, Cache::shape.max_new,
                                            Cache::shape.window, Cache::shape.sinks>>::value,
                "the cache stores KvInt8<Scale>");
  Port ports[tatest::kMaxPorts];
  const size_t port_count = tatest::ports_under_test(ports);
  static Cache cache;
  for (size_t pi = 0; pi < port_count; ++pi) {
    Arena::Scope scope;
    const Sequence s = make_sequence(0x18c + pi);
    const Dims d = full_dims();
    uint8_t* keep = full_keep(Cache::shape);
    float *qh = alloc<float>(d.q_elems()), *kh = alloc<float>(d.k_elems()), *vh = alloc<float>(d.v_elems());
    double* y_deq = alloc<double>(d.y_elems());
    double* y_exact = alloc<double>(d.y_elems());
    TA_CHECK((s.q && s.k && s.v && keep && qh && kh && vh && y_deq && y_exact));
    if (!s.q || !s.k || !s.v || !keep || !qh || !kh || !vh || !y_deq || !y_exact) return;
    dequantized<float>(s.q, kHq * kTokens, kDk, qh);  // queries: fp32 scales
    dequantized<Scale>(s.k, kHkv * kTokens, kDk, kh);
    dequantized<Scale>(s.v, kHkv * kTokens, kDv, vh);
    const Mask mask = Mask::keep_bytes(keep);
    const double scale = effective_scale(d, {});
    ref::forward(d, qh, kh, vh, mask, scale, y_deq);
    ref::forward(d, s.q, s.k, s.v, mask, scale, y_exact);
    const double vmax = tatest::max_abs(s.v, d.v_elems());
    double v_err = 0;  // the largest |v - v^| over the sequence
    for (size_t x = 0; x < d.v_elems(); ++x) v_err = std::fmax(v_err, std::fabs(s.v[x] - vh[x]));
    Options options;
    options.port = ports[pi];
    size_t bad_deq = 0, bad_exact = 0, bad_bytes = 0;
    double worst_deq = 0, worst_exact = 0;
    run_decode(
        cache, s, chunks,
        [&](size_t t0, size_t n, const float* y) {
          // The slots of the new tokens hold the rule's bytes and scales.
          for (size_t h = 0; h < kHkv; ++h)
            for (size_t t = t0; t < t0 + n; ++t) {
              const size_t slot = h * Cache::shape.capacity + detail::kv_cache_slot(Cache::shape, t);
              int8_t q8[kDk > kDv ? kDk : kDv];
              const float sk = quantize<Scale>(s.k + (h * kTokens + t) * kDk, kDk, q8);
              bad_bytes += std::memcmp(q8, cache.keys() + slot * kDk, kDk) != 0 ||
                           scale_value(cache.key_scales()[slot]) != sk;
              const float sv = quantize<Scale>(s.v + (h * kTokens + t) * kDv, kDv, q8);
              bad_bytes += std::memcmp(q8, cache.values() + slot * kDv, kDv) != 0 ||
                           scale_value(cache.value_scales()[slot]) != sv;
            }
          for (size_t h = 0; h < kHq; ++h)
            for (size_t i = 0; i < n; ++i) {
              const size_t p = t0 + i, kvh = h / (kHq / kHkv);
              // The logits' quantization error on this row, and the keys it sees.
              double eps = 0;
              size_t seen = 0;
              for (size_t t = 0; t <= p; ++t) {
                if (!keep[p * kTokens + t]) continue;
                ++seen;
                double exact = 0, deq = 0;
                for (size_t c = 0; c < kDk; ++c) {
                  const size_t qa = (h * kTokens + p) * kDk + c, ka = (kvh * kTokens + t) * kDk + c;
                  exact += static_cast<double>(s.q[qa]) * s.k[ka];
                  deq += static_cast<double>(qh[qa]) * kh[ka];
                }
                eps = std::fmax(eps, scale * std::fabs(exact - deq));
              }
              // Integer weights: each within half a unit of kProbOne's share,
              // at most (seen / 2) / kProbOne of the largest |v^| in all.
              const double rounding = (0.5 * static_cast<double>(seen) + 1) / kProbOne * vmax;
              for (size_t c = 0; c < kDv; ++c) {
                const size_t at = (h * kTokens + p) * kDv + c;
                const double got = y[(h * n + i) * kDv + c];
                const double e_deq = std::fabs(got - y_deq[at]), e_exact = std::fabs(got - y_exact[at]);
                worst_deq = std::fmax(worst_deq, e_deq / vmax);
                worst_exact = std::fmax(worst_exact, e_exact / vmax);
                bad_deq += !(e_deq <= tatest::kOutAtol * vmax + tatest::kOutRtol * std::fabs(y_deq[at]) + rounding);
                bad_exact += !(e_exact <= std::expm1(2 * eps) * vmax + v_err + rounding + tatest::kOutAtol * vmax);
              }
            }
        },
        options);
    TA_CHECK_MSG(bad_bytes == 0, "%s, port %s: %zu stored rows differ from the quantization rule", what,
                 port_name(ports[pi]), bad_bytes);
    TA_CHECK_MSG(bad_deq == 0, "%s, port %s: %zu outputs off the dequantized attention (worst %.3g max|v|)", what,
                 port_name(ports[pi]), bad_deq, worst_deq);
    TA_CHECK_MSG(bad_exact == 0, "%s, port %s: %zu outputs past the quantization bound (worst %.3g max|v|)", what,
                 port_name(ports[pi]), bad_exact, worst_exact);
  }
}

}  // namespace

TA_CASE("kv_cache: int8 storage (fp32 scales) against the dequantized and the exact attention") {
  check_int8_storage<float, KvCache<KvInt8<>, kHq, kHkv, kDk, kDv, kTokens>>("linear, decode", false);
  check_int8_storage<float, KvCache<KvInt8<>, kHq, kHkv, kDk, kDv, kTokens, 4>>("linear, chunked", true);
  check_int8_storage<float, KvCache<KvInt8<>, kHq, kHkv, kDk, kDv, 2 + 5 + 3, 4, 5, 2>>("sinks 2, window 5", true);
  check_int8_storage<float, KvCache<KvInt8<>, kHq, kHkv, kDk, kDv, 6, 1, 6>>("ring, window 6", false);
}

TA_CASE("kv_cache: int8 storage with fp16 scales") {
  check_int8_storage<half, KvCache<KvInt8<half>, kHq, kHkv, kDk, kDv, kTokens, 2>>("linear, chunked", true);
  check_int8_storage<half, KvCache<KvInt8<half>, kHq, kHkv, kDk, kDv, 1 + 4 + 1, 2, 4, 1>>("sink 1, window 4", true);
}

TA_CASE("kv_cache: int8 storage refuses what int8 cannot hold, and its RAM is a constant") {
  using Cache = KvCache<KvInt8<half>, 2, 1, 4, 3, 8>;
  static Cache cache;
  cache.clear();
  float k[4] = {1, -2, 3, 0.5f}, v[3] = {1, 2, 3}, q[2 * 4] = {1, 0, 0, 1, 0, 1, 1, 0}, y[2 * 3] = {};
  k[2] = std::numeric_limits<float>::infinity();
  TA_CHECK(cache.append(k, v, 1) == Status::kBadQuantization);
  k[2] = std::numeric_limits<float>::quiet_NaN();
  TA_CHECK(cache.append(k, v, 1) == Status::kBadQuantization);
  k[2] = 1e7f;  // the fp16 scale would pass 65504
  TA_CHECK(cache.append(k, v, 1) == Status::kBadQuantization);
  TA_CHECK(cache.position() == 0);
  k[2] = 3.0f;
  TA_CHECK(cache.append(k, v, 1) == Status::kOk);
  TA_CHECK(cache.append(nullptr, v, 1) == Status::kNullPointer);
  TA_CHECK(cache.attend(q, y, 2) == Status::kBadDimension);
  Options bad;
  bad.scale = std::numeric_limits<float>::infinity();
  TA_CHECK(cache.attend(q, y, 1, bad) == Status::kBadScale);
  TA_CHECK(cache.attend(q, q, 1) == Status::kAliasing);
  TA_CHECK(cache.attend(q, y, 1) == Status::kOk);
  // One token: every row is that token's value, up to its quantization.
  for (size_t c = 0; c < 3; ++c) TA_CHECK(std::fabs(y[c] - v[c]) <= 3.0f / 254 + 1e-5f);
  // A query of inf gives a NaN row; the other head's row is unharmed.
  q[0] = std::numeric_limits<float>::infinity();
  TA_CHECK(cache.attend(q, y, 1) == Status::kOk);
  TA_CHECK((std::isnan(y[0]) && std::isfinite(y[3])));
  static_assert(Cache::kStorageBytes == 1 * 8 * (4 + 3 + 2 * sizeof(half)), "int8 rows and two fp16 scales per slot");
  static_assert(sizeof(Cache) >= Cache::kStorageBytes + Cache::workspace_bytes, "sizeof is the RAM");
}

namespace {

// A cache with RoPE against the same cache fed rows rotated beforehand by
// apply_rope at the same positions: the same bits, every step.
template <class Cache>
void check_rope_same_bits(const Rope& rope, size_t origin, const char* what) {
  Arena::Scope scope;
  static Cache with_rope, plain;
  const Sequence s = make_sequence(0x207e);
  const Dims d = full_dims();
  Sequence r{alloc<float>(d.q_elems()), alloc<float>(d.k_elems()), alloc<float>(d.v_elems())};
  float* y_plain = alloc<float>(d.y_elems());
  TA_CHECK((s.q && r.q && r.k && r.v && y_plain));
  if (!s.q || !r.q || !r.k || !r.v || !y_plain) return;
  std::memcpy(r.q, s.q, d.q_elems() * sizeof(float));
  std::memcpy(r.k, s.k, d.k_elems() * sizeof(float));
  std::memcpy(r.v, s.v, d.v_elems() * sizeof(float));
  TA_CHECK(apply_rope(rope, r.q, kHq, kTokens, kDk, origin) == Status::kOk);
  TA_CHECK(apply_rope(rope, r.k, kHkv, kTokens, kDk, origin) == Status::kOk);
  with_rope.reset();
  plain.reset();
  TA_CHECK(with_rope.set_rope(rope, origin) == Status::kOk);
  run_decode(plain, r, true, [&](size_t t0, size_t n, const float* y) {
    for (size_t h = 0; h < kHq; ++h)
      for (size_t i = 0; i < n; ++i)
        std::memcpy(y_plain + (h * kTokens + t0 + i) * kDv, y + (h * n + i) * kDv, kDv * sizeof(float));
  });
  size_t differ = 0;
  run_decode(with_rope, s, true, [&](size_t t0, size_t n, const float* y) {
    for (size_t h = 0; h < kHq; ++h)
      for (size_t i = 0; i < n; ++i)
        differ += std::memcmp(y_plain + (h * kTokens + t0 + i) * kDv, y + (h * n + i) * kDv, kDv * sizeof(float)) != 0;
  });
  TA_CHECK_MSG(differ == 0, "%s: %zu rows differ from the cache fed rotated rows", what, differ);
  // Set only on an empty cache; reset() drops it.
  TA_CHECK(with_rope.set_rope(rope) == Status::kUnsupported);
  with_rope.clear();
  TA_CHECK(with_rope.set_rope(rope, origin) == Status::kOk);
}

}  // namespace

TA_CASE("kv_cache: RoPE rotates keys on append and queries on attend at their positions") {
  Rope half_split;  // theta 10^4, the whole head, rotate_half
  Rope interleaved;
  interleaved.style = RopeStyle::kInterleaved;
  interleaved.theta = 5e5f;
  interleaved.rotary_dim = 4;  // partial: features 4..7 stay
  check_rope_same_bits<KvCache<float, kHq, kHkv, kDk, kDv, kTokens, 4>>(half_split, 0, "fp32, rotate_half");
  check_rope_same_bits<KvCache<float, kHq, kHkv, kDk, kDv, 2 + 5 + 3, 4, 5, 2>>(interleaved, 1000,
                                                                                 "fp32 sinks, interleaved, offset");
  check_rope_same_bits<KvCache<KvInt8<>, kHq, kHkv, kDk, kDv, kTokens, 4>>(half_split, 7, "int8 storage");
  check_rope_same_bits<KvCache<KvInt8<half>, kHq, kHkv, kDk, kDv, 3 + 4 + 3, 4, 4, 3>>(interleaved, 0,
                                                                                      "int8 storage, sinks");

  // And one semantic check: the reference over the sequence rotated at
  // absolute positions, with the causal mask, on the default port.
  Arena::Scope scope;
  const Dims d = full_dims();
  const Sequence s = make_sequence(0x4e11);
  float *qr = alloc<float>(d.q_elems()), *kr = alloc<float>(d.k_elems());
  double* y_ref = alloc<double>(d.y_elems());
  TA_CHECK((s.q && qr && kr && y_ref));
  if (!s.q || !qr || !kr || !y_ref) return;
  std::memcpy(qr, s.q, d.q_elems() * sizeof(float));
  std::memcpy(kr, s.k, d.k_elems() * sizeof(float));
  TA_CHECK(apply_rope(half_split, qr, kHq, kTokens, kDk, 0) == Status::kOk);
  TA_CHECK(apply_rope(half_split, kr, kHkv, kTokens, kDk, 0) == Status::kOk);
  ref::forward(d, qr, kr, s.v, Mask::causal_top_left(), effective_scale(d, {}), y_ref);
  const double vmax = tatest::max_abs(s.v, d.v_elems());
  static KvCache<float, kHq, kHkv, kDk, kDv, kTokens> cache;
  cache.reset();
  TA_CHECK(cache.set_rope(half_split) == Status::kOk);
  size_t bad = 0;
  run_decode(cache, s, false, [&](size_t t0, size_t n, const float* y) {
    for (size_t h = 0; h < kHq; ++h)
      for (size_t c = 0; c < kDv; ++c) {
        const double want = y_ref[(h * kTokens + t0) * kDv + c];
        bad += !(std::fabs(y[(h * n) * kDv + c] - want) <= tatest::kOutAtol * vmax + tatest::kOutRtol * std::fabs(want));
      }
  });
  TA_CHECK_MSG(bad == 0, "%zu outputs off the reference over the rotated sequence", bad);
  // int8 compute: no RoPE (its rows are another model's integers).
  static KvCache<int8_t, 2, 1, 4, 4, 8> i8;
  TA_CHECK(i8.set_rope(half_split) == Status::kUnsupported);
  Rope bad_rope;
  bad_rope.rotary_dim = 3;
  TA_CHECK(cache.set_rope(bad_rope) != Status::kOk);
}

namespace {

constexpr size_t kStreamSteps = 100, kStreamHq = 8, kStreamHkv = 4, kStreamD = 8;
float stream_q[kStreamSteps][kStreamHq * kStreamD], stream_k[kStreamSteps][kStreamHkv * kStreamD],
    stream_v[kStreamSteps][kStreamHkv * kStreamD];

void model_step(size_t t, float* q, float* k, float* v) {
  std::memcpy(q, stream_q[t], sizeof stream_q[t]);
  std::memcpy(k, stream_k[t], sizeof stream_k[t]);
  std::memcpy(v, stream_v[t], sizeof stream_v[t]);
}

}  // namespace

TA_CASE("kv_cache: the documented streaming loop (int8 storage, RoPE, sinks) runs") {
  tatest::Rng rng(260);
  rng.fill_normal(stream_q[0], kStreamSteps * kStreamHq * kStreamD, 1.5f);
  rng.fill_normal(stream_k[0], kStreamSteps * kStreamHkv * kStreamD, 1.5f);
  rng.fill_normal(stream_v[0], kStreamSteps * kStreamHkv * kStreamD);
  float q[kStreamHq * kStreamD], k[kStreamHkv * kStreamD], v[kStreamHkv * kStreamD], y[kStreamHq * kStreamD];
  const size_t steps = kStreamSteps;
  // The same stream through an fp32 cache: the int8 storage stays near it.
  static KvCache<float, 8, 4, 8, 8, 4 + 60, 1, 60, 4> f32;
  f32.reset();
  TA_CHECK(f32.set_rope(Rope{}) == Status::kOk);
  size_t far = 0, decoded = 0;

  // The example, verbatim.
  static tinyattn::KvCache<tinyattn::KvInt8<>, 8, 4, 8, 8, 4 + 60, 1, 60, 4> cache;  // 4 sinks + a 60-token window
  tinyattn::Rope rope;  // theta 10000, rotate_half over the whole head
  tinyattn::Status s = cache.set_rope(rope);
  for (size_t t = 0; s == tinyattn::Status::kOk && t < steps; ++t) {
    model_step(t, q, k, v);  // this token's Q[8][1][8], K[4][1][8], V[4][1][8] (fp32)
    s = cache.append(k, v, 1);  // a ring: never kCacheFull
    if (s == tinyattn::Status::kOk) s = cache.attend(q, y, 1);  // Y[8][1][8]
    float y32[kStreamHq * kStreamD];
    TA_CHECK((f32.append(k, v, 1) == Status::kOk && f32.attend(q, y32, 1) == Status::kOk));
    for (size_t c = 0; c < kStreamHq * kStreamD; ++c) far += !(std::fabs(y[c] - y32[c]) <= 0.05f * 4.5f);
    decoded += s == tinyattn::Status::kOk;
  }

  TA_CHECK(decoded == kStreamSteps);
  TA_CHECK(cache.size() == 64);
  TA_CHECK_MSG(far == 0, "%zu outputs more than 5 %% of max|v| from the fp32 cache's", far);
}

namespace {

// One golden case (tests/kv_cache/gen_decode_vectors.py, NumPy): the
// sequence decoded token by token through Cache, each row against NumPy's.
template <class Cache>
void check_golden(const golden_decode::Case& c) {
  using golden_decode::kD;
  using golden_decode::kHkv;
  using golden_decode::kHq;
  using golden_decode::kTokens;
  static Cache cache;
  TA_CHECK_MSG(Cache::shape.window == c.window && Cache::shape.sinks == c.sinks &&
                   (Cache::kStorageBytes < kHkv * Cache::shape.capacity * 2 * kD * sizeof(float)) == c.int8_storage,
               "%s: the cache type is not the case's", c.name);
  cache.reset();
  if (c.rope_style >= 0) {
    Rope rope;
    rope.style = static_cast<RopeStyle>(c.rope_style);
    rope.theta = c.theta;
    rope.rotary_dim = c.rotary_dim;
    TA_CHECK(cache.set_rope(rope, c.origin) == Status::kOk);
  }
  float q[kHq * kD], k[kHkv * kD], v[kHkv * kD], y[kHq * kD];
  const double vmax = tatest::max_abs(golden_decode::kV, kHkv * kTokens * kD);
  size_t bad = 0;
  double worst = 0;
  for (size_t p = 0; p < kTokens; ++p) {
    for (size_t h = 0; h < kHq; ++h) std::memcpy(q + h * kD, golden_decode::kQ + (h * kTokens + p) * kD, sizeof(float) * kD);
    for (size_t h = 0; h < kHkv; ++h) {
      std::memcpy(k + h * kD, golden_decode::kK + (h * kTokens + p) * kD, sizeof(float) * kD);
      std::memcpy(v + h * kD, golden_decode::kV + (h * kTokens + p) * kD, sizeof(float) * kD);
    }
    Status s = cache.append(k, v, 1);
    if (s == Status::kOk) s = cache.attend(q, y, 1);
    TA_CHECK_MSG(s == Status::kOk, "%s, token %zu: %s", c.name, p, to_string(s));
    if (s != Status::kOk) return;
    // fp32 tolerances, RoPE's 2^-21 per rotated element, and for the int8
    // storage its integer weights' rounding over the keys the row sees.
    const double seen = static_cast<double>(p + 1);
    const double extra = (c.rope_style >= 0 ? 1e-5 : 0.0) + (c.int8_storage ? (0.5 * seen + 1) / kProbOne : 0.0);
    for (size_t x = 0; x < kHq * kD; ++x) {
      const double want = c.y[((x / kD) * kTokens + p) * kD + x % kD];
      const double e = std::fabs(y[x] - want);
      worst = std::fmax(worst, e / vmax);
      bad += !(e <= (tatest::kOutAtol + extra) * vmax + tatest::kOutRtol * std::fabs(want));
    }
  }
  TA_CHECK_MSG(bad == 0, "%s: %zu outputs off NumPy's (worst %.3g max|v|)", c.name, bad, worst);
}

}  // namespace

TA_CASE("kv_cache: sinks, RoPE and the int8 storage against NumPy's decode") {
  using golden_decode::kCases;
  check_golden<KvCache<float, 4, 2, 8, 8, 2 + 5, 1, 5, 2>>(kCases[0]);
  check_golden<KvCache<float, 4, 2, 8, 8, 6, 1, 6>>(kCases[1]);
  check_golden<KvCache<KvInt8<>, 4, 2, 8, 8, 20>>(kCases[2]);
  check_golden<KvCache<KvInt8<>, 4, 2, 8, 8, 3 + 4, 1, 4, 3>>(kCases[3]);
}

TA_CASE("kv_cache: int8 storage for an fp16 model gives the fp32-facing cache's rows, rounded to half") {
  // The same tokens (rounded to half) through KvInt8<float, half> and
  // KvInt8<float>: the storage and the arithmetic are the same, so each
  // fp16 output is the fp32 one rounded, bit for bit (with RoPE and sinks).
  Arena::Scope scope;
  const Sequence s = make_sequence(0xf16b);
  const Dims d = full_dims();
  TA_CHECK((s.q && s.k && s.v));
  if (!s.q || !s.k || !s.v) return;
  for (float* x : {s.q, s.k, s.v}) {
    const size_t count = x == s.q ? d.q_elems() : x == s.k ? d.k_elems() : d.v_elems();
    for (size_t e = 0; e < count; ++e) x[e] = to_float(to_half(x[e]));
  }
  static KvCache<KvInt8<float, half>, kHq, kHkv, kDk, kDv, 2 + 5 + 3, 4, 5, 2> f16;
  static KvCache<KvInt8<float>, kHq, kHkv, kDk, kDv, 2 + 5 + 3, 4, 5, 2> f32;
  Rope rope;
  rope.style = RopeStyle::kInterleaved;
  f16.reset();
  f32.reset();
  TA_CHECK((f16.set_rope(rope, 9) == Status::kOk && f32.set_rope(rope, 9) == Status::kOk));
  half qh[kHq * 4 * kDk], kh[kHkv * 4 * kDk], vh[kHkv * 4 * kDv], yh[kHq * 4 * kDv];
  float qf[kHq * 4 * kDk], kf[kHkv * 4 * kDk], vf[kHkv * 4 * kDv], yf[kHq * 4 * kDv];
  size_t differ = 0, steps = 0;
  for (size_t t0 = 0, step = 0; t0 < kTokens; ++step) {
    const size_t n = kChunks[step % kChunkCount] > kTokens - t0 ? kTokens - t0 : kChunks[step % kChunkCount];
    gather(s.q, kHq, kDk, t0, n, qf);
    gather(s.k, kHkv, kDk, t0, n, kf);
    gather(s.v, kHkv, kDv, t0, n, vf);
    to_half(qf, qh, kHq * n * kDk);
    to_half(kf, kh, kHkv * n * kDk);
    to_half(vf, vh, kHkv * n * kDv);
    Status a = f16.append(kh, vh, n), b = f32.append(kf, vf, n);
    if (a == Status::kOk) a = f16.attend(qh, yh, n);
    if (b == Status::kOk) b = f32.attend(qf, yf, n);
    TA_CHECK((a == Status::kOk && b == Status::kOk));
    if (a != Status::kOk || b != Status::kOk) return;
    for (size_t x = 0; x < kHq * n * kDv; ++x) differ += yh[x].bits != to_half(yf[x]).bits;
    ++steps;
    t0 += n;
  }
  TA_CHECK_MSG(differ == 0, "%zu fp16 outputs are not the fp32-facing cache's rounded", differ);
  TA_CHECK(steps > 5);
  // Storage: the same bytes and scales.
  TA_CHECK(std::memcmp(f16.keys(), f32.keys(), sizeof(int8_t) * kHkv * (2 + 5 + 3) * kDk) == 0);
  TA_CHECK(std::memcmp(f16.value_scales(), f32.value_scales(), sizeof(float) * kHkv * (2 + 5 + 3)) == 0);
}
