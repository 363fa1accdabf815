// Fuzz target for tinyattn::KvCache (tinyattn/kv_cache.h): sequences of
// append, attend and clear on a few instantiations (fp32, fp16, int8 and
// KvInt8 storage; grouped-query heads; linear caches, sliding-window rings
// and rings with sinks; small capacities and MaxNew), with counts of 0, past MaxNew, past the capacity
// and far past both, null pointers, options a forward refuses (a NaN scale,
// a port not compiled in, a float scale for int8), and "poison": tokens
// whose values are NaN appended and then cleared, so stale slots hold NaN.
//
// A model of each cache (every token appended since the last clear) decides:
//  * append: kNullPointer (a null K or V), kBadDimension (n == 0 or n >
//    MaxNew), kCacheFull (a linear cache past its capacity), else kOk; attend:
//    kBadDimension (n == 0, n > MaxNew or n > size()), else the forward's
//    own status for the options and pointers given;
//  * a refused call changes nothing: position(), size(), the stored keys and
//    values, and the output buffer (guard values) all stay as they were;
//  * after an accepted append the slots hold the model's tokens (in the
//    slots detail::kv_cache_slot names; KvInt8: the rows as quantized);
//  * an accepted attend writes Y[Hq][n][Dv] and nothing past it, and each of
//    its rows equals one forward over that query's visible tokens (every
//    token up to it, or in a ring the sinks and the window's last ones)
//    packed in order: fp32 within docs/core.md's tolerances against the
//    double reference, fp16 within the KV cache decode bound of docs/core.md
//    against the fp16 forward on the same port, int8 the same bytes as the
//    int8 forward, KvInt8 (whose appends refuse inf and NaN) within the
//    dequantized attention's bound of docs/decode.md.
//    Rows whose visible tokens hold a NaN or inf are left out (docs/hardening.md
//    decides those); a NaN in a stale slot or a token past the window must
//    not reach a row whose visible tokens are finite.
// Built with libFuzzer (TINYATTN_FUZZ, clang) and as a replay program over
// the committed corpus (every host build, tests/fuzz/suite.cmake).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "fuzz_input.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/reference.h"

namespace {

using tinyattn::Dims;
using tinyattn::half;
using tinyattn::KvCache;
using tinyattn::Port;
using tinyattn::Status;
using tinyattn_fuzz::Bytes;

constexpr size_t kMaxTokens = 96;  // a sequence longer than this starts over (clear)
constexpr int kMaxOps = 48;

bool fault(Bytes& in, unsigned in256) { return in.u8() >= 256 - in256; }

// Values as floats: multiples of 1/32 in [-4, 4), exact in fp16 and int8 scaled by 32.
float value(uint32_t& s) {
  s = s * 1664525u + 1013904223u;
  return static_cast<float>(static_cast<int>(s >> 24) - 128) / 32.0f;
}

template <class T>
T from_float(float x);
template <>
float from_float<float>(float x) { return x; }
template <>
half from_float<half>(float x) { return tinyattn::to_half(x); }
template <>
int8_t from_float<int8_t>(float x) {
  const float q = x * 32.0f;
  return static_cast<int8_t>(q != q ? 0 : q > 127 ? 127 : q < -128 ? -128 : q);
}

template <class T>
bool finite(T x) {
  if constexpr (std::is_same_v<T, half>) return std::isfinite(tinyattn::to_float(x));
  else if constexpr (std::is_same_v<T, float>) return std::isfinite(x);
  else return true;
}

// The int8 plans every int8 instantiation uses (scales fit the values above).
template <size_t Hq, size_t Hkv, size_t Dk, size_t Dv>
const tinyattn::Int8Plan& int8_plan() {
  static tinyattn::Int8HeadPlan plans[Hq];
  static const tinyattn::Int8Plan plan = [] {
    static const float sq = 1.0f / 32, sk = 1.0f / 32, sv = 1.0f / 32, sy = 1.0f / 32;
    static const int32_t zq = 0, zk = 0, zv = 0, zy = 0;
    tinyattn::Int8Scheme scheme;
    scheme.q = tinyattn::QuantParams{&sq, &zq, 1};
    scheme.k = tinyattn::QuantParams{&sk, &zk, 1};
    scheme.v = tinyattn::QuantParams{&sv, &zv, 1};
    scheme.y = tinyattn::QuantParams{&sy, &zy, 1};
    const Status s = tinyattn::plan_int8(Dims{1, 1, Dk, Dv, Hq, Hkv}, scheme, plans, Hq);
    FUZZ_REQUIRE(s == Status::kOk);
    return tinyattn::Int8Plan{plans, Hq};
  }();
  return plan;
}

// What attend passes after the mask, per type; `expect` collects the
// statuses the forward may give for it (several faults: any of them).
struct Extra {
  tinyattn::Options options;
  bool faulty = false;
  Status expect[3] = {};
  int expects = 0;
  void refuse(Status s) {
    faulty = true;
    if (expects < 3) expect[expects++] = s;
  }
};

Extra any_extra(Bytes& in, bool int8) {
  Extra e;
  const uint8_t port = in.u8();
  if (port >= 128) {
    e.options.port = static_cast<Port>(port % tinyattn::kPortCount);
    if (!tinyattn::port_compiled(e.options.port)) e.refuse(Status::kPortUnavailable);
  }
  if (fault(in, 24)) {
    e.options.scale = std::numeric_limits<float>::quiet_NaN();
    e.refuse(int8 ? Status::kUnsupported : Status::kBadScale);
  } else if (in.chance(64)) {
    e.options.scale = static_cast<float>(in.range(1, 16)) / 16.0f;
    if (int8) e.refuse(Status::kUnsupported);  // the plan holds the int8 scale
  }
  return e;
}

// A row as KvInt8 stores it, scaled back (docs/decode.md: max|x| / 127,
// to nearest, ties away from zero).
void dequantize(const float* x, size_t n, float* out) {
  float amax = 0.0f;
  for (size_t c = 0; c < n; ++c) amax = std::fmax(amax, std::fabs(x[c]));
  const float s = amax / 127.0f;
  for (size_t c = 0; c < n; ++c) {
    float r = s > 0.0f ? std::round(x[c] / s) : 0.0f;
    r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
    out[c] = r * s;
  }
}

template <class Cache, class T>
class Harness {
 public:
  static constexpr Dims d = Cache::dims;
  static constexpr size_t hq = d.hq, hkv = d.hkv, dk = d.dk, dv = d.dv, cap = d.m, max_new = d.n;
  static constexpr tinyattn::detail::KvCacheShape kShape = Cache::shape;
  static constexpr bool kInt8 = std::is_same_v<T, int8_t>;
  static constexpr bool kHalf = std::is_same_v<T, half>;
  // int8 storage of float rows (KvInt8<float>): T is float, the slots int8.
  static constexpr bool kStored8 = !std::is_same_v<typename Cache::Element, T>;
  using E = typename Cache::Element;

  void run(Bytes& in) {
    cache_.clear();
    tokens_ = 0;
    seed_ = in.u32();
    for (int op = 0; op < kMaxOps && in.left() > 0; ++op) {
      const uint8_t kind = in.u8();
      size_t n = in.u8() % (max_new + 2);  // 0 .. MaxNew + 1
      if (fault(in, 8)) n = in.chance(128) ? SIZE_MAX : cap + 1 + in.u8() % 4;
      if (kind < 16) {
        clear();
      } else if (kind < 24) {
        poison(n);
      } else if (kind < 128) {
        append(in, n);
      } else {
        attend(in, n);
      }
    }
  }

 private:
  void clear() {
    cache_.clear();
    tokens_ = 0;
    FUZZ_REQUIRE(cache_.position() == 0 && cache_.size() == 0);
  }

  // NaN (fp16, fp32) tokens appended and then cleared: stale slots hold
  // them (int8 storage refuses them: the appends above test that).
  void poison(size_t n) {
    if constexpr (!kInt8 && !kStored8) {
      if (n == 0 || n > max_new || (!Cache::kRing && tokens_ + n > cap)) return;
      for (T& x : k_) x = from_float<T>(std::numeric_limits<float>::quiet_NaN());
      for (T& x : v_) x = from_float<T>(std::numeric_limits<float>::quiet_NaN());
      FUZZ_REQUIRE(cache_.append(k_, v_, n) == Status::kOk);
      clear();
    } else {
      (void)n;
    }
  }

  void append(Bytes& in, size_t n) {
    const size_t rows = n <= max_new ? n : max_new;
    for (size_t h = 0; h < hkv; ++h)
      for (size_t t = 0; t < rows; ++t) {
        for (size_t c = 0; c < dk; ++c) k_[(h * rows + t) * dk + c] = from_float<T>(value(seed_));
        for (size_t c = 0; c < dv; ++c) v_[(h * rows + t) * dv + c] = from_float<T>(value(seed_));
      }
    // A non-finite value now and then (fp32, fp16): rows that see it are left
    // out below; int8 storage refuses the append.
    bool inf = false;
    if (!kInt8 && rows > 0 && fault(in, 16)) {
      v_[in.range(0, hkv * rows * dv - 1)] = from_float<T>(std::numeric_limits<float>::infinity());
      inf = true;
    }
    const bool null_k = fault(in, 8), null_v = fault(in, 8);
    const bool bad_n = n == 0 || n > max_new;
    const bool full = !Cache::kRing && tokens_ + (bad_n ? 0 : n) > cap;
    const bool unstorable = kStored8 && inf;
    if (!bad_n && !null_k && !null_v && tokens_ + n > kMaxTokens) {  // the model's own limit
      clear();
      return;
    }
    Snapshot before(cache_);
    const Status s = cache_.append(null_k ? nullptr : k_, null_v ? nullptr : v_, n);
    if (null_k || null_v || bad_n || full || unstorable) {
      FUZZ_REQUIRE((s == Status::kNullPointer && (null_k || null_v)) || (s == Status::kBadDimension && bad_n) ||
                   (s == Status::kCacheFull && full) || (s == Status::kBadQuantization && unstorable));
      FUZZ_REQUIRE(before.same(cache_));
      return;
    }
    FUZZ_REQUIRE(s == Status::kOk);
    for (size_t h = 0; h < hkv; ++h)
      for (size_t t = 0; t < n; ++t) {
        for (size_t c = 0; c < dk; ++c) seq_k_[tokens_ + t][h][c] = k_[(h * n + t) * dk + c];
        for (size_t c = 0; c < dv; ++c) seq_v_[tokens_ + t][h][c] = v_[(h * n + t) * dv + c];
      }
    tokens_ += n;
    FUZZ_REQUIRE(cache_.position() == tokens_ && cache_.size() == (tokens_ < cap ? tokens_ : cap));
    // The new tokens in their slots (int8 storage: the scaled-back rows).
    for (size_t t = tokens_ - n; t < tokens_; ++t)
      for (size_t h = 0; h < hkv; ++h) {
        const size_t slot = h * cap + tinyattn::detail::kv_cache_slot(kShape, t);
        if constexpr (kStored8) {
          float want[dk > dv ? dk : dv];
          dequantize(seq_k_[t][h], dk, want);
          for (size_t c = 0; c < dk; ++c)
            FUZZ_REQUIRE(static_cast<float>(cache_.keys()[slot * dk + c]) * cache_.key_scales()[slot] == want[c]);
          dequantize(seq_v_[t][h], dv, want);
          for (size_t c = 0; c < dv; ++c)
            FUZZ_REQUIRE(static_cast<float>(cache_.values()[slot * dv + c]) * cache_.value_scales()[slot] == want[c]);
        } else {
          FUZZ_REQUIRE(std::memcmp(cache_.keys() + slot * dk, seq_k_[t][h], dk * sizeof(T)) == 0);
          FUZZ_REQUIRE(std::memcmp(cache_.values() + slot * dv, seq_v_[t][h], dv * sizeof(T)) == 0);
        }
      }
  }

  void attend(Bytes& in, size_t n) {
    const size_t rows = n <= max_new ? n : max_new;
    for (size_t x = 0; x < hq * rows * dk; ++x) q_[x] = from_float<T>(value(seed_));
    Extra e = any_extra(in, kInt8);
    const bool null_q = fault(in, 8), null_y = fault(in, 8);
    if (null_q) e.refuse(Status::kNullPointer);
    if (null_y) e.refuse(Status::kNullPointer);
    const bool bad_n = n == 0 || n > max_new || n > cache_.size();
    // Guard values: Y[Hq][n][Dv] and past it.
    T guard;
    std::memset(static_cast<void*>(&guard), 0x5A, sizeof guard);
    for (T& x : y_) x = guard;
    Snapshot before(cache_);
    Status s;
    T* y = null_y ? nullptr : y_;
    const T* q = null_q ? nullptr : q_;
    if constexpr (kInt8) {
      s = cache_.attend(q, y, n, int8_plan<hq, hkv, dk, dv>(), e.options);
    } else if constexpr (kHalf) {
      s = cache_.attend(q, y, n, tinyattn::OptionsF16(e.options));
    } else {
      s = cache_.attend(q, y, n, e.options);
    }
    FUZZ_REQUIRE(before.same(cache_));  // attend changes no state, accepted or not
    if (bad_n || e.faulty) {
      bool ok = s == Status::kBadDimension && bad_n;
      for (int i = 0; i < e.expects; ++i) ok = ok || s == e.expect[i];
      FUZZ_REQUIRE(ok && s != Status::kOk);
      for (const T& x : y_) FUZZ_REQUIRE(std::memcmp(&x, &guard, sizeof x) == 0);
      return;
    }
    FUZZ_REQUIRE(s == Status::kOk);
    for (size_t x = hq * n * dv; x < sizeof y_ / sizeof y_[0]; ++x) FUZZ_REQUIRE(std::memcmp(&y_[x], &guard, sizeof guard) == 0);
    for (size_t i = 0; i < n; ++i) check_row(i, n, e.options);
  }

  // Query i of the n newest against one forward over its visible tokens, packed.
  void check_row(size_t i, size_t n, const tinyattn::Options& options) {
    const size_t p = tokens_ - n + i;
    size_t visible[kMaxTokens], m = 0;
    for (size_t t = 0; t <= p; ++t)
      if (tinyattn::detail::kv_cache_sees(kShape, p, t)) visible[m++] = t;
    std::vector<T> kd(hkv * m * dk), vd(hkv * m * dv), qq(hq * dk), yy(hq * dv);
    bool visible_finite = true;
    for (size_t h = 0; h < hkv; ++h)
      for (size_t t = 0; t < m; ++t) {
        for (size_t c = 0; c < dk; ++c) kd[(h * m + t) * dk + c] = seq_k_[visible[t]][h][c];
        for (size_t c = 0; c < dv; ++c) {
          vd[(h * m + t) * dv + c] = seq_v_[visible[t]][h][c];
          visible_finite = visible_finite && finite(seq_v_[visible[t]][h][c]);
        }
      }
    for (size_t h = 0; h < hq; ++h)
      for (size_t c = 0; c < dk; ++c) qq[h * dk + c] = q_[(h * n + i) * dk + c];
    if constexpr (kStored8) {  // what the storage computes with: the rows as quantized
      for (size_t r = 0; r < hkv * m; ++r) {
        dequantize(&kd[r * dk], dk, &kd[r * dk]);
        dequantize(&vd[r * dv], dv, &vd[r * dv]);
      }
      for (size_t h = 0; h < hq; ++h) dequantize(&qq[h * dk], dk, &qq[h * dk]);
    }
    const Dims pd{1, m, dk, dv, hq, hkv};
    auto got = [&](size_t h, size_t c) { return y_[(h * n + i) * dv + c]; };
    if (!visible_finite) return;
    if constexpr (kInt8) {
      std::vector<unsigned char> ws(tinyattn::forward_i8_workspace_bytes(pd));
      FUZZ_REQUIRE(tinyattn::forward_i8(pd, tinyattn::ForwardIoI8{qq.data(), kd.data(), vd.data(), yy.data()},
                                        int8_plan<hq, hkv, dk, dv>(), tinyattn::Workspace{ws.data(), ws.size()}, {},
                                        options) == Status::kOk);
      for (size_t h = 0; h < hq; ++h)
        for (size_t c = 0; c < dv; ++c) FUZZ_REQUIRE(got(h, c) == yy[h * dv + c]);
    } else if constexpr (kHalf) {
      std::vector<unsigned char> ws(tinyattn::forward_f16_workspace_bytes(pd));
      FUZZ_REQUIRE(tinyattn::forward_f16(pd, tinyattn::ForwardIoF16{qq.data(), kd.data(), vd.data(), yy.data()},
                                         tinyattn::Workspace{ws.data(), ws.size()}, {},
                                         tinyattn::OptionsF16(options)) == Status::kOk);
      // docs/core.md, the fp16 decode bound.
      for (size_t h = 0; h < hq; ++h)
        for (size_t c = 0; c < dv; ++c) {
          const float a = tinyattn::to_float(got(h, c)), b = tinyattn::to_float(yy[h * dv + c]);
          double vmax = 0;
          for (size_t t = 0; t < m; ++t) vmax = std::fmax(vmax, std::fabs(tinyattn::to_float(vd[((h / (hq / hkv)) * m + t) * dv + c])));
          const double bound = std::ldexp(std::fabs(a) + std::fabs(b), -11) + std::ldexp(1.0, -24) +
                               4.0 * static_cast<double>(m) * std::ldexp(vmax, -24);
          FUZZ_REQUIRE(std::fabs(static_cast<double>(a) - b) <= bound);
        }
    } else {
      std::vector<double> ref(hq * dv);
      tinyattn::ref::forward(pd, qq.data(), kd.data(), vd.data(), tinyattn::Mask{}, tinyattn::effective_scale(pd, options),
                             ref.data());
      double vmax = 0;
      for (float x : vd) vmax = std::fmax(vmax, std::fabs(x));
      // docs/core.md, "Tolerances": |y - y_ref| <= 2e-5 max|V| + 2e-5 |y_ref|;
      // int8 storage: plus its integer weights' rounding (docs/decode.md).
      const double weights = kStored8 ? (0.5 * static_cast<double>(m) + 1) / tinyattn::kProbOne * vmax : 0.0;
      for (size_t x = 0; x < hq * dv; ++x)
        FUZZ_REQUIRE(std::fabs(got(x / dv, x % dv) - ref[x]) <= 2e-5 * vmax + 2e-5 * std::fabs(ref[x]) + weights);
    }
  }

  // A cache's observable state: position, size, the stored keys and values.
  struct Snapshot {
    explicit Snapshot(const Cache& c) : position(c.position()), size(c.size()) {
      std::memcpy(keys, c.keys(), sizeof keys);
      std::memcpy(values, c.values(), sizeof values);
    }
    bool same(const Cache& c) const {
      return c.position() == position && c.size() == size && std::memcmp(keys, c.keys(), sizeof keys) == 0 &&
             std::memcmp(values, c.values(), sizeof values) == 0;
    }
    size_t position, size;
    E keys[hkv * cap * dk];
    E values[hkv * cap * dv];
  };

  Cache cache_;
  size_t tokens_ = 0;
  uint32_t seed_ = 0;
  T seq_k_[kMaxTokens][hkv][dk];
  T seq_v_[kMaxTokens][hkv][dv];
  T k_[hkv * max_new * dk], v_[hkv * max_new * dv], q_[hq * max_new * dk];
  T y_[hq * max_new * dv + 8];  // and a guard past the largest Y
};

template <class Cache, class T>
void run(Bytes& in) {
  static Harness<Cache, T> h;  // static: the caches and the model are a few KB
  h.run(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  const uint8_t which = in.u8();
  switch (which % 7) {
    case 0: run<KvCache<float, 2, 1, 4, 3, 6, 3>, float>(in); break;         // linear, GQA
    case 1: run<KvCache<float, 4, 2, 5, 3, 6, 3, 4>, float>(in); break;      // ring: window 4
    case 2: run<KvCache<float, 1, 1, 3, 2, 2, 1, 2>, float>(in); break;      // ring of two slots, decode
    case 3: run<KvCache<half, 2, 2, 8, 4, 5, 2, 4>, half>(in); break;        // fp16 ring
    case 4: run<KvCache<half, 2, 1, 4, 4, 4, 2>, half>(in); break;           // fp16 linear
    case 5: run<KvCache<int8_t, 2, 1, 4, 4, 5, 2>, int8_t>(in); break;       // int8 linear
    default:
      // Bytes from 0xE0 (no earlier input used them): the newer caches, so
      // every committed input decodes as it did.
      if (which < 0xE0) {
        run<KvCache<int8_t, 2, 2, 4, 3, 4, 2, 3>, int8_t>(in);  // int8 ring
      } else if (which % 4 == 0) {
        run<KvCache<float, 2, 1, 4, 3, 2 + 3 + 2, 3, 3, 2>, float>(in);  // ring with 2 sinks
      } else if (which % 4 == 1) {
        run<KvCache<int8_t, 2, 2, 4, 3, 1 + 2 + 1, 2, 2, 1>, int8_t>(in);  // int8 ring with a sink
      } else if (which % 4 == 2) {
        run<KvCache<tinyattn::KvInt8<>, 2, 1, 4, 3, 6, 3>, float>(in);  // int8 storage, linear
      } else {
        run<KvCache<tinyattn::KvInt8<>, 4, 2, 5, 3, 1 + 4 + 2, 3, 4, 1>, float>(in);  // int8 storage, sink and ring
      }
      break;
  }
  return 0;
}
