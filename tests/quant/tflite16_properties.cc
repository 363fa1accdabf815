// Int16Mode::kTflite beyond the golden outputs: the mode is off by default
// and leaves native plans and outputs as they were; plan_int16 and
// forward_i16 refuse what TFLite's kernels cannot run, writing nothing; the
// weights are the int16 softmax tensor (in [0, 32767], summing to 32768
// within their roundings, one weight for every masked key of a row); heads
// of either mode mix; AttentionI16 takes the mode too.
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/quant_i16.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::Rng;

namespace {

constexpr Dims kDims{5, 9, 7, 6, 2, 1};

struct Setup {
  float sq[2] = {1e-4f, 1.2e-4f}, sk[1] = {1e-4f}, sv[1] = {1e-4f}, sy[2] = {1e-4f, 1.5e-4f},
        ss[2] = {2.3e-3f, 3e-3f};
  Int16Scheme scheme(Int16Mode mode = Int16Mode::kTflite) const {
    Int16Scheme s;
    s.q = QuantParams{sq, nullptr, 2};
    s.k = QuantParams{sk, nullptr, 1};
    s.v = QuantParams{sv, nullptr, 1};
    s.y = QuantParams{sy, nullptr, 2};
    s.softmax_scale = 0.4f;
    s.mode = mode;
    if (mode == Int16Mode::kTflite) s.scores = QuantParams{ss, nullptr, 2};
    return s;
  }
};

struct Tensors {
  int16_t *q, *k, *v, *y;
  uint16_t* w;
  unsigned char* ws;
  size_t ws_bytes;
  bool ok;
};

Tensors make(const Dims& d, uint64_t seed) {
  Tensors t{};
  t.q = alloc<int16_t>(d.q_elems());
  t.k = alloc<int16_t>(d.k_elems());
  t.v = alloc<int16_t>(d.v_elems());
  t.y = alloc<int16_t>(d.y_elems());
  t.w = alloc<uint16_t>(d.weight_elems());
  t.ws_bytes = forward_i16_workspace_bytes(d);
  t.ws = alloc<unsigned char>(t.ws_bytes);
  t.ok = t.q && t.k && t.v && t.y && t.w && t.ws;
  if (!t.ok) return t;
  Rng rng(seed);
  int16_t* const tensors[3] = {t.q, t.k, t.v};
  const size_t sizes[3] = {d.q_elems(), d.k_elems(), d.v_elems()};
  for (int x = 0; x < 3; ++x)
    for (size_t i = 0; i < sizes[x]; ++i) tensors[x][i] = static_cast<int16_t>(rng.next_u64());
  return t;
}

Status run(const Dims& d, Tensors& t, const Int16HeadPlan* plans, const Mask& mask = {}, bool weights = true,
           const Options& o = {}) {
  std::memset(t.y, 0x33, d.y_elems() * sizeof(int16_t));
  std::memset(t.w, 0x33, d.weight_elems() * sizeof(uint16_t));
  return forward_i16(d, ForwardIoI16{t.q, t.k, t.v, t.y, weights ? t.w : nullptr}, Int16Plan{plans, d.hq},
                     Workspace{t.ws, t.ws_bytes}, mask, o);
}

bool untouched(const Dims& d, const Tensors& t) {
  for (size_t i = 0; i < d.y_elems(); ++i)
    if (static_cast<uint16_t>(t.y[i]) != 0x3333) return false;
  for (size_t i = 0; i < d.weight_elems(); ++i)
    if (t.w[i] != 0x3333) return false;
  return true;
}

void expect_plan_error(const Int16Scheme& s, Status want, const char* what) {
  Int16HeadPlan plans[2];
  for (Int16HeadPlan& p : plans) p.tflite.beta.multiplier = 0x7777;
  const Status got = plan_int16(kDims, s, plans, 2);
  TA_CHECK_MSG(got == want, "%s: status %s, want %s", what, to_string(got), to_string(want));
  TA_CHECK_MSG(plans[0].tflite.beta.multiplier == 0x7777 && plans[1].tflite.beta.multiplier == 0x7777 &&
                   plans[0].mode == Int16Mode::kNative,
               "%s: the plans were written", what);
}

}  // namespace

TA_CASE("tflite16 properties: the mode is off by default and native plans and outputs stay as they were") {
  Arena::Scope scope;
  Setup s;
  TA_CHECK(Int16Scheme{}.mode == Int16Mode::kNative);
  Int16HeadPlan native[2], tfl[2];
  TA_CHECK(plan_int16(kDims, s.scheme(Int16Mode::kNative), native, 2) == Status::kOk);
  TA_CHECK(plan_int16(kDims, s.scheme(), tfl, 2) == Status::kOk);
  for (const Int16HeadPlan& p : native) {
    const TfliteParamsI16& t = p.tflite;
    const bool zero = t.scores.multiplier == 0 && t.scores.shift == 0 && t.beta.multiplier == 0 &&
                      t.beta.shift == 0 && t.output.multiplier == 0 && t.output.shift == 0;
    TA_CHECK_MSG(p.mode == Int16Mode::kNative && zero, "a native plan has TFLite fields");
  }
  for (const Int16HeadPlan& p : tfl) {
    const bool ok = p.mode == Int16Mode::kTflite && p.logit.multiplier == 0 && p.logit.shift == 0 &&
                    p.output.multiplier == 0 && p.output.shift == 0;
    TA_CHECK_MSG(ok, "a TFLite plan with native fields");
  }
  Tensors t = make(kDims, 11);
  if (!t.ok) {
    TA_IGNORE("arena too small");
    return;
  }
  const Mask causal{Causal::kBottomRight};
  TA_CHECK(run(kDims, t, native, causal) == Status::kOk);
  int16_t y_native[kDims.y_elems()];
  std::memcpy(y_native, t.y, sizeof y_native);
  // A native head ignores the TFLite fields: only the mode switches.
  Int16HeadPlan native_with_tflite[2] = {native[0], native[1]};
  for (int h = 0; h < 2; ++h) native_with_tflite[h].tflite = tfl[h].tflite;
  TA_CHECK(run(kDims, t, native_with_tflite, causal) == Status::kOk);
  TA_CHECK(std::memcmp(y_native, t.y, sizeof y_native) == 0);
  // Heads of the two modes mix; each gives its own mode's outputs and weights.
  TA_CHECK(run(kDims, t, tfl, causal) == Status::kOk);
  int16_t y_tfl[kDims.y_elems()];
  uint16_t w_tfl[kDims.weight_elems()];
  std::memcpy(y_tfl, t.y, sizeof y_tfl);
  std::memcpy(w_tfl, t.w, sizeof w_tfl);
  TA_CHECK(std::memcmp(y_native, y_tfl, sizeof y_tfl) != 0);
  TA_CHECK(run(kDims, t, native, causal) == Status::kOk);
  uint16_t w_native[kDims.weight_elems()];
  std::memcpy(w_native, t.w, sizeof w_native);
  const size_t head = kDims.n * kDims.dv, whead = kDims.n * kDims.m;
  const Int16HeadPlan mixed[2] = {native[0], tfl[1]};
  TA_CHECK(run(kDims, t, mixed, causal) == Status::kOk);
  TA_CHECK(std::memcmp(t.y, y_native, head * sizeof(int16_t)) == 0);
  TA_CHECK(std::memcmp(t.y + head, y_tfl + head, head * sizeof(int16_t)) == 0);
  TA_CHECK(std::memcmp(t.w, w_native, whead * sizeof(uint16_t)) == 0);
  TA_CHECK(std::memcmp(t.w + whead, w_tfl + whead, whead * sizeof(uint16_t)) == 0);
  const Int16HeadPlan mixed2[2] = {tfl[0], native[1]};
  TA_CHECK(run(kDims, t, mixed2, causal) == Status::kOk);
  TA_CHECK(std::memcmp(t.y, y_tfl, head * sizeof(int16_t)) == 0);
  TA_CHECK(std::memcmp(t.y + head, y_native + head, head * sizeof(int16_t)) == 0);
  // Keep bytes per head in a mixed plan: the native head reads its own rows of the mask.
  uint8_t keep[2 * kDims.n * kDims.m];
  Rng rng(12);
  for (uint8_t& b : keep) b = static_cast<uint8_t>(rng.next_u64() & 1u);
  Mask per_head;
  per_head.keep = keep;
  per_head.head_stride = kDims.n * kDims.m;
  TA_CHECK(run(kDims, t, native, per_head) == Status::kOk);
  std::memcpy(y_native, t.y, sizeof y_native);
  TA_CHECK(run(kDims, t, tfl, per_head) == Status::kOk);
  std::memcpy(y_tfl, t.y, sizeof y_tfl);
  TA_CHECK(run(kDims, t, mixed2, per_head) == Status::kOk);
  TA_CHECK(std::memcmp(t.y, y_tfl, head * sizeof(int16_t)) == 0);
  TA_CHECK(std::memcmp(t.y + head, y_native + head, head * sizeof(int16_t)) == 0);
}

TA_CASE("tflite16 properties: plan_int16 refuses what TFLite's Prepare cannot plan, writing nothing") {
  Setup s;
  Int16Scheme sc = s.scheme();
  sc.scores = QuantParams{};
  expect_plan_error(sc, Status::kNullPointer, "no score scale");
  const float bad[] = {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  for (float b : bad) {
    Setup t;
    t.ss[1] = b;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "bad score scale");
  }
  {
    sc = s.scheme();
    const int32_t zero_points[2] = {0, 3};
    sc.scores.zero_point = zero_points;
    expect_plan_error(sc, Status::kBadQuantization, "score zero point 3");
  }
  sc = s.scheme();
  sc.scores.count = 3;
  expect_plan_error(sc, Status::kBadQuantization, "score count 3 with Hq 2");
  {  // sq sk / s_scores >= 128: a shift beyond 7, outside the int64 requantization's domain
    Setup t;
    t.ss[0] = 1e-11f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "score multiplier too large");
  }
  {  // (1/32768) sv / sy below 2^-32: TFLite would flush it to 0
    Setup t;
    t.sv[0] = 1e-20f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "output multiplier vanishing");
  }
  {  // s_scores * beta / (10 / 65535) >= 2^30: the softmax's left shift past 30
    Setup t;
    t.ss[1] = 1e6f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "softmax multiplier too large");
  }
  {  // and below 2^-32: vanishing
    Setup t;
    t.ss[1] = 1e-14f;
    t.sq[1] = 1e-13f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "softmax multiplier vanishing");
  }
  sc = s.scheme();
  sc.mode = static_cast<Int16Mode>(2);
  expect_plan_error(sc, Status::kBadQuantization, "unknown mode");
  sc = s.scheme();
  sc.softmax_scale = -1.0f;
  expect_plan_error(sc, Status::kBadQuantization, "negative beta");
}

TA_CASE("tflite16 properties: forward_i16 refuses bad TFLite plan fields with kBadQuantization, writing nothing") {
  Arena::Scope scope;
  Setup s;
  Int16HeadPlan good[2];
  TA_CHECK(plan_int16(kDims, s.scheme(), good, 2) == Status::kOk);
  Tensors t = make(kDims, 12);
  if (!t.ok) {
    TA_IGNORE("arena too small");
    return;
  }
  struct Bad {
    const char* what;
    void (*apply)(Int16HeadPlan&);
  };
  const Bad bads[] = {
      {"mode 2", [](Int16HeadPlan& p) { p.mode = static_cast<Int16Mode>(2); }},
      {"mode -1", [](Int16HeadPlan& p) { p.mode = static_cast<Int16Mode>(-1); }},
      {"score multiplier below 2^30", [](Int16HeadPlan& p) { p.tflite.scores.multiplier = (1 << 30) - 1; }},
      {"score shift 8", [](Int16HeadPlan& p) { p.tflite.scores.shift = 8; }},
      {"score shift -32", [](Int16HeadPlan& p) { p.tflite.scores.shift = -32; }},
      {"output multiplier 0", [](Int16HeadPlan& p) { p.tflite.output.multiplier = 0; }},
      {"output multiplier negative", [](Int16HeadPlan& p) { p.tflite.output.multiplier = -5; }},
      {"output shift 8", [](Int16HeadPlan& p) { p.tflite.output.shift = 8; }},
      {"output shift -32", [](Int16HeadPlan& p) { p.tflite.output.shift = -32; }},
      {"beta multiplier below 2^30", [](Int16HeadPlan& p) { p.tflite.beta.multiplier = 1000; }},
      {"beta shift 31", [](Int16HeadPlan& p) { p.tflite.beta.shift = 31; }},
      {"beta shift -32", [](Int16HeadPlan& p) { p.tflite.beta.shift = -32; }},
      {"all zero (a kTflite head never planned)", [](Int16HeadPlan& p) {
         p = Int16HeadPlan{};
         p.mode = Int16Mode::kTflite;
       }},
  };
  for (const Bad& b : bads) {
    Int16HeadPlan plans[2] = {good[0], good[1]};
    b.apply(plans[1]);
    const Status st = run(kDims, t, plans);
    TA_CHECK_MSG(st == Status::kBadQuantization, "%s: status %s", b.what, to_string(st));
    TA_CHECK_MSG(untouched(kDims, t), "%s: output written", b.what);
    TA_CHECK_MSG(validate(plans[1]) == Status::kBadQuantization, "%s: validate() accepts it", b.what);
  }
  // The ends of the ranges are accepted.
  Int16HeadPlan edge[2] = {good[0], good[1]};
  edge[1].tflite.scores = TfliteMultiplier{INT32_MAX, 7};
  edge[1].tflite.beta = TfliteMultiplier{1 << 30, 30};
  edge[1].tflite.output = TfliteMultiplier{1 << 30, -31};
  TA_CHECK(validate(edge[1]) == Status::kOk);
  TA_CHECK(run(kDims, t, edge) == Status::kOk);
  // M past the limit, a float bias, options.scale and softcap: refused, nothing written.
  {
    constexpr Dims big{1, kMaxMInt16 + 1, 1, 1, 2, 1};
    const Status st = forward_i16(big, ForwardIoI16{t.q, t.k, t.v, t.y}, Int16Plan{good, 2}, Workspace{t.ws, 0});
    TA_CHECK_MSG(st == Status::kBadDimension, "M = 65536: status %s", to_string(st));
  }
  const float fbias[kDims.n * kDims.m] = {};
  Mask m;
  m.bias = fbias;
  Status st = run(kDims, t, good, m);
  TA_CHECK_MSG(st == Status::kUnsupported, "float bias: status %s", to_string(st));
  TA_CHECK(untouched(kDims, t));
  Options o;
  o.scale = 0.5f;
  st = run(kDims, t, good, Mask{}, true, o);
  TA_CHECK_MSG(st == Status::kUnsupported, "options.scale: status %s", to_string(st));
  o = Options{};
  o.softcap = 30.0f;
  st = run(kDims, t, good, Mask{}, true, o);
  TA_CHECK_MSG(st == Status::kUnsupported, "options.softcap: status %s", to_string(st));
  TA_CHECK(untouched(kDims, t));
}

TA_CASE("tflite16 properties: weights are the int16 softmax tensor, summing to 32768 within their roundings") {
  Arena::Scope scope;
  Setup s;
  Int16HeadPlan plans[2];
  TA_CHECK(plan_int16(kDims, s.scheme(), plans, 2) == Status::kOk);
  Tensors t = make(kDims, 14);
  if (!t.ok) {
    TA_IGNORE("arena too small");
    return;
  }
  // Keep bits per head: row 2 of head 1 sees nothing.
  uint8_t keep[2 * kDims.n * 2];
  Rng rng(15);
  for (uint8_t& b : keep) b = static_cast<uint8_t>(rng.next_u64());
  keep[kDims.n * 2 + 2 * 2] = keep[kDims.n * 2 + 2 * 2 + 1] = 0;
  Mask mask;
  mask.keep_bits = keep;
  mask.head_stride = kDims.n * 2;
  TA_CHECK(run(kDims, t, plans, mask) == Status::kOk);
  size_t masked_keys = 0;
  for (size_t h = 0; h < kDims.hq; ++h)
    for (size_t i = 0; i < kDims.n; ++i) {
      const uint16_t* w = t.w + (h * kDims.n + i) * kDims.m;
      uint32_t sum = 0, masked = 0;
      bool same = true, in_range = true;
      for (size_t j = 0; j < kDims.m; ++j) {
        sum += w[j];
        in_range = in_range && w[j] <= 32767;
        if (!((keep[h * mask.head_stride + i * 2 + (j >> 3)] >> (j & 7)) & 1u)) {
          // every masked key has the score -32768, so one weight
          if (masked && w[j] != masked - 1) same = false;
          masked = w[j] + 1u;
          ++masked_keys;
        }
      }
      TA_CHECK_MSG(in_range && same, "head %zu row %zu: weights out of [0, 32767] or masked keys differ", h, i);
      // each weight rounds once (M / 2), the reciprocal's table by up to 3 parts in 32768
      TA_CHECK_MSG(sum + kDims.m / 2 + 3 >= 32768 && sum <= 32768 + kDims.m / 2 + 3, "head %zu row %zu: sum %u", h,
                   i, static_cast<unsigned>(sum));
    }
  TA_CHECK(masked_keys > 0);
  // The fully masked row: a uniform softmax over all M keys (TFLite's graph
  // has no notion of an empty row), so Y is V's mean, not zero.
  const uint16_t* w = t.w + (1 * kDims.n + 2) * kDims.m;
  for (size_t j = 1; j < kDims.m; ++j) TA_CHECK(w[j] == w[0]);
  TA_CHECK(w[0] == 3641);  // 32768 / 9, rounded once
  // Requesting the weights does not change Y.
  int16_t y[kDims.y_elems()];
  std::memcpy(y, t.y, sizeof y);
  TA_CHECK(run(kDims, t, plans, mask, false) == Status::kOk);
  TA_CHECK(std::memcmp(y, t.y, sizeof y) == 0);
  // Every port gives the same outputs and weights.
  TA_CHECK(run(kDims, t, plans, mask) == Status::kOk);
  uint16_t w0[kDims.weight_elems()];
  std::memcpy(w0, t.w, sizeof w0);
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t port_count = tatest::ports_under_test(ports);
  for (size_t pi = 0; pi < port_count; ++pi) {
    TA_CHECK(run(kDims, t, plans, mask, true, Options{{}, ports[pi]}) == Status::kOk);
    TA_CHECK_MSG(std::memcmp(y, t.y, sizeof y) == 0 && std::memcmp(w0, t.w, sizeof w0) == 0, "%s differs",
                 port_name(ports[pi]));
  }
}

TA_CASE("tflite16 properties: AttentionI16 configured for TFLite gives forward_i16's outputs") {
  Arena::Scope scope;
  using S = Shape<5, 9, 7, 6, 2, 1>;
  static AttentionI16<S, Int16Mode::kTflite> attn;
  Setup s;
  TA_CHECK(attn.configure(s.scheme()) == Status::kOk);
  TA_CHECK(attn.configure(s.scheme(Int16Mode::kNative)) == Status::kUnsupported);
  // An AttentionI16 of the other mode refuses the scheme, and a plan of it set directly.
  static AttentionI16<S> native;
  TA_CHECK(native.configure(s.scheme()) == Status::kUnsupported);
  Int16HeadPlan plans[2];
  TA_CHECK(plan_int16(kDims, s.scheme(), plans, 2) == Status::kOk);
  Tensors t = make(kDims, 16);
  if (!t.ok) {
    TA_IGNORE("arena too small");
    return;
  }
  const Mask causal{Causal::kTopLeft};
  TA_CHECK(run(kDims, t, plans, causal) == Status::kOk);
  int16_t y[kDims.y_elems()];
  std::memcpy(y, t.y, sizeof y);
  std::memset(t.y, 0, sizeof y);
  TA_CHECK(attn.run(ForwardIoI16{t.q, t.k, t.v, t.y}, causal) == Status::kOk);
  TA_CHECK(std::memcmp(y, t.y, sizeof y) == 0);
  native.set_plan({plans[0], plans[1]});
  std::memset(t.y, 0x5a, sizeof y);
  TA_CHECK(native.run(ForwardIoI16{t.q, t.k, t.v, t.y}) == Status::kUnsupported);
  for (size_t i = 0; i < kDims.y_elems(); ++i) TA_CHECK(static_cast<uint16_t>(t.y[i]) == 0x5a5a);
  // And the TFLite one a native plan.
  Int16HeadPlan native_plans[2];
  TA_CHECK(plan_int16(kDims, s.scheme(Int16Mode::kNative), native_plans, 2) == Status::kOk);
  attn.set_plan({native_plans[0], native_plans[1]});
  TA_CHECK(attn.run(ForwardIoI16{t.q, t.k, t.v, t.y}) == Status::kUnsupported);
  for (size_t i = 0; i < kDims.y_elems(); ++i) TA_CHECK(static_cast<uint16_t>(t.y[i]) == 0x5a5a);
}
