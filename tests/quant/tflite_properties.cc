// Int8Mode::kTflite beyond the golden bytes: the mode is off by default and
// leaves native plans and outputs as they were; plan_int8 and forward_i8
// refuse what TFLite's kernels cannot run, writing nothing; the weights are
// the softmax tensor plus 128; heads of either mode mix; AttentionI8 takes
// the mode too.
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/quant.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::Rng;

namespace {

constexpr Dims kDims{5, 9, 7, 6, 2, 1};

struct Setup {
  float sq[2] = {0.05f, 0.06f}, sk[1] = {0.04f}, sv[1] = {0.05f}, sy[2] = {0.04f, 0.05f}, ss[2] = {0.3f, 0.25f};
  int32_t zq[2] = {3, -2}, zk[1] = {-5}, zv[1] = {7}, zy[2] = {-4, 2}, zs[2] = {9, -3};
  Int8Scheme scheme(Int8Mode mode = Int8Mode::kTflite) const {
    Int8Scheme s;
    s.q = QuantParams{sq, zq, 2};
    s.k = QuantParams{sk, zk, 1};
    s.v = QuantParams{sv, zv, 1};
    s.y = QuantParams{sy, zy, 2};
    s.softmax_scale = 0.4f;
    s.mode = mode;
    if (mode == Int8Mode::kTflite) s.scores = QuantParams{ss, zs, 2};
    return s;
  }
};

struct Tensors {
  int8_t *q, *k, *v, *y;
  uint16_t* w;
  unsigned char* ws;
  size_t ws_bytes;
  bool ok;
};

Tensors make(const Dims& d, uint64_t seed) {
  Tensors t{};
  t.q = alloc<int8_t>(d.q_elems());
  t.k = alloc<int8_t>(d.k_elems());
  t.v = alloc<int8_t>(d.v_elems());
  t.y = alloc<int8_t>(d.y_elems());
  t.w = alloc<uint16_t>(d.weight_elems());
  t.ws_bytes = forward_i8_workspace_bytes(d);
  t.ws = alloc<unsigned char>(t.ws_bytes);
  t.ok = t.q && t.k && t.v && t.y && t.w && t.ws;
  if (!t.ok) return t;
  Rng rng(seed);
  int8_t* const tensors[3] = {t.q, t.k, t.v};
  const size_t sizes[3] = {d.q_elems(), d.k_elems(), d.v_elems()};
  for (int x = 0; x < 3; ++x)
    for (size_t i = 0; i < sizes[x]; ++i) tensors[x][i] = static_cast<int8_t>(rng.next_u64());
  return t;
}

Status run(const Dims& d, Tensors& t, const Int8HeadPlan* plans, const Mask& mask = {}, bool weights = true) {
  std::memset(t.y, 0x33, d.y_elems());
  std::memset(t.w, 0x33, d.weight_elems() * 2);
  return forward_i8(d, ForwardIoI8{t.q, t.k, t.v, t.y, weights ? t.w : nullptr}, Int8Plan{plans, d.hq},
                    Workspace{t.ws, t.ws_bytes}, mask);
}

bool untouched(const Dims& d, const Tensors& t) {
  for (size_t i = 0; i < d.y_elems(); ++i)
    if (static_cast<uint8_t>(t.y[i]) != 0x33) return false;
  for (size_t i = 0; i < d.weight_elems(); ++i)
    if (t.w[i] != 0x3333) return false;
  return true;
}

void expect_plan_error(const Int8Scheme& s, Status want, const char* what) {
  Int8HeadPlan plans[2];
  for (Int8HeadPlan& p : plans) p.q_zero = 0x7777;
  const Status got = plan_int8(kDims, s, plans, 2);
  TA_CHECK_MSG(got == want, "%s: status %s, want %s", what, to_string(got), to_string(want));
  TA_CHECK_MSG(plans[0].q_zero == 0x7777 && plans[1].q_zero == 0x7777 && plans[0].mode == Int8Mode::kNative,
               "%s: the plans were written", what);
}

}  // namespace

TA_CASE("tflite properties: the mode is off by default and native plans and bytes stay as they were") {
  Arena::Scope scope;
  Setup s;
  TA_CHECK(Int8Scheme{}.mode == Int8Mode::kNative);
  Int8HeadPlan native[2], tfl[2];
  TA_CHECK(plan_int8(kDims, s.scheme(Int8Mode::kNative), native, 2) == Status::kOk);
  TA_CHECK(plan_int8(kDims, s.scheme(), tfl, 2) == Status::kOk);
  for (const Int8HeadPlan& p : native) {
    const TfliteParams& t = p.tflite;
    TA_CHECK(p.mode == Int8Mode::kNative);
    const bool zero = t.scores.multiplier == 0 && t.scores.shift == 0 && t.scores_zero == 0 &&
                      t.beta.multiplier == 0 && t.beta.shift == 0 && t.diff_min == 0 && t.output.multiplier == 0 &&
                      t.output.shift == 0;
    TA_CHECK_MSG(zero, "a native plan has TFLite fields");
  }
  for (const Int8HeadPlan& p : tfl) {
    const bool ok = p.mode == Int8Mode::kTflite && p.logit.multiplier == 0;
    TA_CHECK_MSG(ok, "a TFLite plan with native fields");
  }
  Tensors t = make(kDims, 11);
  if (!t.ok) {
    TA_IGNORE("arena too small");
    return;
  }
  const Mask causal{Causal::kBottomRight};
  TA_CHECK(run(kDims, t, native, causal) == Status::kOk);
  int8_t y_native[kDims.y_elems()];
  std::memcpy(y_native, t.y, sizeof y_native);
  // A native head ignores the TFLite fields: only the mode switches.
  Int8HeadPlan native_with_tflite[2] = {native[0], native[1]};
  for (int h = 0; h < 2; ++h) native_with_tflite[h].tflite = tfl[h].tflite;
  TA_CHECK(run(kDims, t, native_with_tflite, causal) == Status::kOk);
  TA_CHECK(std::memcmp(y_native, t.y, sizeof y_native) == 0);
  // Heads of the two modes mix; each gives its own mode's bytes.
  TA_CHECK(run(kDims, t, tfl, causal) == Status::kOk);
  int8_t y_tfl[kDims.y_elems()];
  std::memcpy(y_tfl, t.y, sizeof y_tfl);
  TA_CHECK(std::memcmp(y_native, y_tfl, sizeof y_tfl) != 0);
  const Int8HeadPlan mixed[2] = {native[0], tfl[1]};
  TA_CHECK(run(kDims, t, mixed, causal) == Status::kOk);
  const size_t head = kDims.n * kDims.dv;
  TA_CHECK(std::memcmp(t.y, y_native, head) == 0);
  TA_CHECK(std::memcmp(t.y + head, y_tfl + head, head) == 0);
}

TA_CASE("tflite properties: plan_int8 refuses what TFLite's Prepare cannot plan, writing nothing") {
  Setup s;
  Int8Scheme sc = s.scheme();
  sc.scores = QuantParams{};
  expect_plan_error(sc, Status::kNullPointer, "no score scale");
  sc = s.scheme();
  const float bias_scale = 0.1f;
  sc.bias = QuantParams{&bias_scale, nullptr, 1};
  expect_plan_error(sc, Status::kUnsupported, "int8 bias in TFLite mode");
  const float bad[] = {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  for (float b : bad) {
    Setup t;
    t.ss[1] = b;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "bad score scale");
  }
  {
    Setup t;
    t.zs[0] = 128;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "score zero point 128");
  }
  sc = s.scheme();
  sc.scores.count = 3;
  expect_plan_error(sc, Status::kBadQuantization, "score count 3 with Hq 2");
  {  // beta * s_scores * 2^26 <= 1: QuantizeMultiplierGreaterThanOne refuses it
    Setup t;
    t.ss[0] = t.ss[1] = 1e-9f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "softmax multiplier not above 1");
  }
  {  // sq sk / s_scores >= 2^30: a left shift beyond 30
    Setup t;
    t.ss[0] = 1e-15f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "score multiplier too large");
  }
  {  // (1/256) sv / sy below 2^-32: TFLite would flush it to 0
    Setup t;
    t.sv[0] = 1e-20f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "output multiplier vanishing");
  }
  sc = s.scheme();
  sc.mode = static_cast<Int8Mode>(2);
  expect_plan_error(sc, Status::kBadQuantization, "unknown mode");
}

TA_CASE("tflite properties: forward_i8 refuses bad TFLite plan fields with kBadQuantization, writing nothing") {
  Arena::Scope scope;
  Setup s;
  Int8HeadPlan good[2];
  TA_CHECK(plan_int8(kDims, s.scheme(), good, 2) == Status::kOk);
  Tensors t = make(kDims, 12);
  if (!t.ok) {
    TA_IGNORE("arena too small");
    return;
  }
  struct Bad {
    const char* what;
    void (*apply)(Int8HeadPlan&);
  };
  const Bad bads[] = {
      {"mode 2", [](Int8HeadPlan& p) { p.mode = static_cast<Int8Mode>(2); }},
      {"mode -1", [](Int8HeadPlan& p) { p.mode = static_cast<Int8Mode>(-1); }},
      {"score multiplier below 2^30", [](Int8HeadPlan& p) { p.tflite.scores.multiplier = (1 << 30) - 1; }},
      {"score shift 31", [](Int8HeadPlan& p) { p.tflite.scores.shift = 31; }},
      {"score shift -32", [](Int8HeadPlan& p) { p.tflite.scores.shift = -32; }},
      {"output multiplier 0", [](Int8HeadPlan& p) { p.tflite.output.multiplier = 0; }},
      {"output shift -32", [](Int8HeadPlan& p) { p.tflite.output.shift = -32; }},
      {"beta multiplier negative", [](Int8HeadPlan& p) { p.tflite.beta.multiplier = -5; }},
      {"beta shift 0", [](Int8HeadPlan& p) {
         p.tflite.beta.shift = 0;
         p.tflite.diff_min = -(31 << 26);
       }},
      {"beta shift 32", [](Int8HeadPlan& p) { p.tflite.beta.shift = 32; }},
      {"diff_min one below TFLite's", [](Int8HeadPlan& p) { p.tflite.diff_min -= 1; }},
      {"diff_min one above TFLite's", [](Int8HeadPlan& p) { p.tflite.diff_min += 1; }},
      {"score zero point 128", [](Int8HeadPlan& p) { p.tflite.scores_zero = 128; }},
      {"q zero point -129", [](Int8HeadPlan& p) { p.q_zero = -129; }},
      {"y zero point 200", [](Int8HeadPlan& p) { p.y_zero = 200; }},
  };
  for (const Bad& b : bads) {
    Int8HeadPlan plans[2] = {good[0], good[1]};
    b.apply(plans[1]);
    const Status st = run(kDims, t, plans);
    TA_CHECK_MSG(st == Status::kBadQuantization, "%s: status %s", b.what, to_string(st));
    TA_CHECK_MSG(untouched(kDims, t), "%s: output written", b.what);
    TA_CHECK_MSG(validate(plans[1]) == Status::kBadQuantization, "%s: validate() accepts it", b.what);
  }
  // M beyond the Q12.19 sum, an int8 bias, a float bias: refused, nothing written.
  {
    constexpr Dims big{1, kMaxMTflite + 1, 1, 1, 2, 1};
    Tensors tb = make(big, 13);
    if (tb.ok) {
      const Status st = run(big, tb, good);
      TA_CHECK_MSG(st == Status::kBadDimension, "M = 4096: status %s", to_string(st));
      TA_CHECK(untouched(big, tb));
    }
  }
  const int8_t bias[kDims.n * kDims.m] = {};
  std::memset(t.y, 0x33, kDims.y_elems());
  Status st = forward_i8(kDims, ForwardIoI8{t.q, t.k, t.v, t.y, nullptr, bias}, Int8Plan{good, 2},
                         Workspace{t.ws, t.ws_bytes});
  TA_CHECK_MSG(st == Status::kUnsupported, "int8 bias: status %s", to_string(st));
  const float fbias[kDims.n * kDims.m] = {};
  Mask m;
  m.bias = fbias;
  st = run(kDims, t, good, m);
  TA_CHECK_MSG(st == Status::kUnsupported, "float bias: status %s", to_string(st));
  TA_CHECK(untouched(kDims, t));
}

TA_CASE("tflite properties: weights are the int8 softmax output plus 128") {
  Arena::Scope scope;
  Setup s;
  Int8HeadPlan plans[2];
  TA_CHECK(plan_int8(kDims, s.scheme(), plans, 2) == Status::kOk);
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
  for (size_t h = 0; h < kDims.hq; ++h)
    for (size_t i = 0; i < kDims.n; ++i) {
      const uint16_t* w = t.w + (h * kDims.n + i) * kDims.m;
      uint32_t sum = 0, masked = 0;
      bool same = true, in_range = true;
      for (size_t j = 0; j < kDims.m; ++j) {
        sum += w[j];
        in_range = in_range && w[j] <= 255;
        if (!((keep[h * mask.head_stride + i * 2 + (j >> 3)] >> (j & 7)) & 1u)) {
          // every masked key has the score -128, so one weight
          if (masked && w[j] != masked - 1) same = false;
          masked = w[j] + 1u;
        }
      }
      TA_CHECK_MSG(in_range && same, "head %zu row %zu: weights out of [0, 255] or masked keys differ", h, i);
      // each weight rounds once: the row sums to 256 within M / 2 (plus the reciprocal's error)
      TA_CHECK_MSG(sum + kDims.m / 2 + 1 >= 256 && sum <= 256 + kDims.m / 2 + 1, "head %zu row %zu: sum %u", h, i,
                   static_cast<unsigned>(sum));
    }
  // The fully masked row: a uniform softmax over all M keys (TFLite's graph
  // has no notion of an empty row), so Y is V's mean, not the zero point.
  const uint16_t* w = t.w + (1 * kDims.n + 2) * kDims.m;
  for (size_t j = 1; j < kDims.m; ++j) TA_CHECK(w[j] == w[0]);
  TA_CHECK(w[0] == 28);  // round(256 / 9)
  // Requesting the weights does not change Y.
  int8_t y[kDims.y_elems()];
  std::memcpy(y, t.y, sizeof y);
  TA_CHECK(run(kDims, t, plans, mask, false) == Status::kOk);
  TA_CHECK(std::memcmp(y, t.y, sizeof y) == 0);
}

TA_CASE("tflite properties: AttentionI8 configured for TFLite gives forward_i8's bytes") {
  Arena::Scope scope;
  using S = Shape<5, 9, 7, 6, 2, 1>;
  static AttentionI8<S, Int8Mode::kTflite> attn;
  Setup s;
  TA_CHECK(attn.configure(s.scheme()) == Status::kOk);
  // An AttentionI8 of the other mode refuses the scheme, and a plan of it set directly.
  static AttentionI8<S> native;
  TA_CHECK(native.configure(s.scheme()) == Status::kUnsupported);
  Int8HeadPlan plans[2];
  TA_CHECK(plan_int8(kDims, s.scheme(), plans, 2) == Status::kOk);
  Tensors t = make(kDims, 16);
  if (!t.ok) {
    TA_IGNORE("arena too small");
    return;
  }
  TA_CHECK(run(kDims, t, plans) == Status::kOk);
  int8_t y[kDims.y_elems()];
  std::memcpy(y, t.y, sizeof y);
  std::memset(t.y, 0, kDims.y_elems());
  TA_CHECK(attn.run(ForwardIoI8{t.q, t.k, t.v, t.y}) == Status::kOk);
  TA_CHECK(std::memcmp(y, t.y, sizeof y) == 0);
  native.set_plan({plans[0], plans[1]});
  std::memset(t.y, 0x5a, kDims.y_elems());
  TA_CHECK(native.run(ForwardIoI8{t.q, t.k, t.v, t.y}) == Status::kUnsupported);
  for (size_t i = 0; i < kDims.y_elems(); ++i) TA_CHECK(t.y[i] == 0x5a);
}
