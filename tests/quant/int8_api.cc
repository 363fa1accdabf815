// The int8 API: every bad quantization parameter and every other rejected
// request returns its status and writes nothing; the compile-time API gives
// the same bytes as the run-time one.
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/quant.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;

namespace {

constexpr Dims kDims{4, 6, 8, 5, 2, 1};
const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

struct Setup {
  float sq[2] = {0.02f, 0.03f}, sk[1] = {0.04f}, sv[1] = {0.05f}, sy[2] = {0.05f, 0.06f};
  int32_t zq[2] = {1, -2}, zk[1] = {3}, zv[1] = {-4}, zy[2] = {5, 6};
  Int8Scheme scheme() const {
    Int8Scheme s;
    s.q = QuantParams{sq, zq, 2};
    s.k = QuantParams{sk, zk, 1};
    s.v = QuantParams{sv, zv, 1};
    s.y = QuantParams{sy, zy, 2};
    return s;
  }
};

// plan_int8 with one field changed must fail with `want` and leave the plans untouched.
void expect_plan_error(const Int8Scheme& s, Status want, const char* what) {
  Int8HeadPlan plans[2];
  for (Int8HeadPlan& p : plans) p.q_zero = p.k_zero = p.v_zero = p.y_zero = 0x7777;
  const Status got = plan_int8(kDims, s, plans, 2);
  TA_CHECK_MSG(got == want, "%s: status %s, want %s", what, to_string(got), to_string(want));
  size_t written = 0;
  for (const Int8HeadPlan& p : plans)
    written += p.q_zero != 0x7777 || p.y_zero != 0x7777 || p.logit.multiplier != 0 || p.output.shift != 0;
  TA_CHECK_MSG(written == 0, "%s: the plans were written", what);
}

}  // namespace

TA_CASE("int8 api: bad scales, zero points and multipliers are rejected before any write") {
  const float bad_scales[] = {0.0f, -0.0f, -0.5f, kNan, kInf, -kInf};
  for (float b : bad_scales) {
    for (int t = 0; t < 4; ++t) {
      Setup s;
      float* target[4] = {&s.sq[1], &s.sk[0], &s.sv[0], &s.sy[0]};
      *target[t] = b;
      expect_plan_error(s.scheme(), Status::kBadQuantization, "bad scale");
    }
  }
  const int32_t bad_zero[] = {128, -129, 1000, INT32_MIN};
  for (int32_t z : bad_zero)
    for (int t = 0; t < 4; ++t) {
      Setup s;
      int32_t* target[4] = {&s.zq[0], &s.zk[0], &s.zv[0], &s.zy[1]};
      *target[t] = z;
      expect_plan_error(s.scheme(), Status::kBadQuantization, "zero point out of range");
    }
  {  // per-head count that is neither 1 nor the head count
    Setup s;
    Int8Scheme sc = s.scheme();
    sc.k.count = 2;
    expect_plan_error(sc, Status::kBadQuantization, "K count 2 with Hkv 1");
    sc = s.scheme();
    sc.q.count = 3;
    expect_plan_error(sc, Status::kBadQuantization, "Q count 3 with Hq 2");
  }
  {  // requantization multiplier sv / (sy 2^15) that would overflow (>= 2^31) or vanish (< 2^-32)
    Setup s;
    s.sv[0] = 1e38f;
    s.sy[0] = 1e-30f;
    expect_plan_error(s.scheme(), Status::kBadQuantization, "overflowing output multiplier");
    Setup t;
    t.sv[0] = 1e-30f;
    t.sy[0] = 1e10f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "vanishing output multiplier");
  }
  {  // logit multiplier (a one-unit score step worth >= 32 in log2) that would overflow
    Setup s;
    s.sq[0] = 100.0f;
    s.sk[0] = 100.0f;
    expect_plan_error(s.scheme(), Status::kBadQuantization, "overflowing logit multiplier");
  }
  {  // softmax scale: not finite, or not positive
    Setup s;
    Int8Scheme sc = s.scheme();
    sc.softmax_scale = kNan;
    expect_plan_error(sc, Status::kBadScale, "NaN softmax scale");
    sc.softmax_scale = 0.0f;
    expect_plan_error(sc, Status::kBadQuantization, "zero softmax scale");
    sc.softmax_scale = -1.0f;
    expect_plan_error(sc, Status::kBadQuantization, "negative softmax scale");
  }
  {  // the optional int8 bias: its scale, zero point, count and multiplier
    const float bad_bias_scales[] = {0.0f, -1.0f, kNan, kInf, 1e9f};  // 1e9: multiplier >= 2^31
    for (float b : bad_bias_scales) {
      Setup s;
      float sb = b;
      Int8Scheme sc = s.scheme();
      sc.bias = QuantParams{&sb, nullptr, 1};
      expect_plan_error(sc, Status::kBadQuantization, "bad bias scale");
    }
    Setup s;
    float sb[2] = {0.1f, 0.2f};
    int32_t zb[2] = {0, 128};
    Int8Scheme sc = s.scheme();
    sc.bias = QuantParams{sb, zb, 2};
    expect_plan_error(sc, Status::kBadQuantization, "bias zero point 128");
    sc.bias = QuantParams{sb, nullptr, 3};
    expect_plan_error(sc, Status::kBadQuantization, "bias count 3 with Hq 2");
  }
  {  // a logit multiplier with shift < 2 (one score unit worth >= 8 in log2)
    Setup s;
    s.sq[0] = 3.0f;  // 3 * 3 * log2(e) = 13 per unit: representable, but shift 1
    s.sk[0] = 3.0f;
    Int8Scheme sc = s.scheme();
    sc.softmax_scale = 1.0f;
    expect_plan_error(sc, Status::kBadQuantization, "logit shift below 2");
  }
  {  // missing scale array; too small a plan array
    Setup s;
    Int8Scheme sc = s.scheme();
    sc.v.scale = nullptr;
    expect_plan_error(sc, Status::kNullPointer, "null V scale");
    Int8HeadPlan one[1];
    TA_CHECK(plan_int8(kDims, s.scheme(), one, 1) == Status::kBadQuantization);
  }
  {  // the good scheme plans
    Setup s;
    Int8HeadPlan plans[2];
    TA_CHECK(plan_int8(kDims, s.scheme(), plans, 2) == Status::kOk);
  }
}

TA_CASE("int8 api: forward_i8 rejects bad plans and requests without writing") {
  Arena::Scope scope;
  const Dims d = kDims;
  int8_t* q = alloc<int8_t>(d.q_elems());
  int8_t* k = alloc<int8_t>(d.k_elems());
  int8_t* v = alloc<int8_t>(d.v_elems());
  int8_t* y = alloc<int8_t>(d.y_elems());
  uint16_t* w = alloc<uint16_t>(d.weight_elems());
  const size_t wsb = forward_i8_workspace_bytes(d);
  unsigned char* ws = alloc<unsigned char>(wsb);
  TA_CHECK((q && k && v && y && w && ws));
  if (!(q && k && v && y && w && ws)) return;
  for (size_t i = 0; i < d.q_elems(); ++i) q[i] = static_cast<int8_t>(i * 7);
  for (size_t i = 0; i < d.k_elems(); ++i) k[i] = static_cast<int8_t>(i * 5);
  for (size_t i = 0; i < d.v_elems(); ++i) v[i] = static_cast<int8_t>(i * 3);
  Setup s;
  Int8HeadPlan good[2];
  TA_CHECK(plan_int8(d, s.scheme(), good, 2) == Status::kOk);
  const ForwardIoI8 io{q, k, v, y, w};

  Options opt;  // what the next expect() passes
  auto expect = [&](Status want, const ForwardIoI8& io_, const Int8Plan& plan, Workspace wsp, const Mask& mask,
                    const char* what) {
    std::memset(y, 0x11, d.y_elems());
    std::memset(w, 0x11, d.weight_elems() * 2);
    const Status got = forward_i8(d, io_, plan, wsp, mask, opt);
    TA_CHECK_MSG(got == want, "%s: status %s, want %s", what, to_string(got), to_string(want));
    size_t written = 0;
    for (size_t i = 0; i < d.y_elems(); ++i) written += static_cast<uint8_t>(y[i]) != 0x11;
    for (size_t i = 0; i < d.weight_elems(); ++i) written += w[i] != 0x1111;
    TA_CHECK_MSG(written == 0, "%s: %zu output elements written", what, written);
  };
  const Workspace wsp{ws, wsb};
  // Each invalid plan field.
  for (int field = 0; field < 11; ++field) {
    Int8HeadPlan bad[2] = {good[0], good[1]};
    switch (field) {
      case 0: bad[1].logit.multiplier = 0; break;
      case 1: bad[1].logit.multiplier = (1 << 30) - 1; break;  // not normalised
      case 2: bad[0].logit.shift = 63; break;
      case 3: bad[0].output.shift = -1; break;
      case 4: bad[0].output.multiplier = -5; break;
      case 5: bad[1].q_zero = 128; break;
      case 6: bad[0].v_zero = -129; break;
      case 7: bad[1].y_zero = 300; break;
      case 8: bad[0].logit.shift = 1; break;                       // below the minimum 2
      case 9: bad[1].bias = FixedMultiplier{5, 3}; break;          // neither unset nor normalised
      default: bad[0].bias_zero = -200; break;
    }
    expect(Status::kBadQuantization, io, Int8Plan{bad, 2}, wsp, Mask{}, "invalid plan field");
  }
  expect(Status::kBadQuantization, io, Int8Plan{good, 1}, wsp, Mask{}, "plan count != Hq");
  int8_t* bias = alloc<int8_t>(d.n * d.m);
  for (size_t i = 0; i < d.n * d.m; ++i) bias[i] = static_cast<int8_t>(i);
  expect(Status::kBadQuantization, ForwardIoI8{q, k, v, y, w, bias}, Int8Plan{good, 2}, wsp, Mask{},
         "int8 bias with a plan made without one");
  {
    float sb = 0.1f;
    Int8Scheme sc = s.scheme();
    sc.bias = QuantParams{&sb, nullptr, 1};
    Int8HeadPlan with_bias[2];
    TA_CHECK(plan_int8(d, sc, with_bias, 2) == Status::kOk);
    expect(Status::kAliasing, ForwardIoI8{q, k, v, y, w, reinterpret_cast<const int8_t*>(w)}, Int8Plan{with_bias, 2},
           wsp, Mask{}, "bias overlapping the weights");
    TA_CHECK(forward_i8(d, ForwardIoI8{q, k, v, y, w, bias}, Int8Plan{with_bias, 2}, wsp) == Status::kOk);
  }
  expect(Status::kNullPointer, io, Int8Plan{nullptr, 2}, wsp, Mask{}, "null plan");
  const float float_bias[4 * 6] = {};
  expect(Status::kUnsupported, io, Int8Plan{good, 2}, wsp, Mask::additive(float_bias), "float bias");
  opt.softcap = 30.0f;  // no integer form of the cap
  expect(Status::kUnsupported, io, Int8Plan{good, 2}, wsp, Mask{}, "softcap");
  opt = Options{};
  expect(Status::kWorkspaceTooSmall, io, Int8Plan{good, 2}, Workspace{ws, wsb - 1}, Mask{}, "small workspace");
  expect(Status::kBadMask, io, Int8Plan{good, 2}, wsp, Mask::key_padding(7), "kv_len > M");
  expect(Status::kAliasing, ForwardIoI8{q, k, v, y, reinterpret_cast<uint16_t*>(ws)}, Int8Plan{good, 2}, wsp, Mask{},
         "weights inside the workspace");
  expect(Status::kNullPointer, ForwardIoI8{q, nullptr, v, y, w}, Int8Plan{good, 2}, wsp, Mask{}, "null K");
  // Dk above the int32-exact limit.
  const Dims wide{1, 1, kMaxDkInt8 + 1, 1};
  TA_CHECK(forward_i8(wide, io, Int8Plan{good, 1}, wsp) == Status::kBadDimension);
  // And the good request works.
  TA_CHECK(forward_i8(d, io, Int8Plan{good, 2}, wsp) == Status::kOk);
}

TA_CASE("int8 api: the compile-time API matches forward_i8 byte for byte") {
  using S = Shape<kDims.n, kDims.m, kDims.dk, kDims.dv, kDims.hq, kDims.hkv>;
  static AttentionI8<S> attn;
  static AttentionI8<S>::Q q;
  static AttentionI8<S>::K k;
  static AttentionI8<S>::V v;
  static AttentionI8<S>::Y y, y_rt;
  static AttentionI8<S>::Weights w;
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(i * 37 + 3);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<int8_t>(i * 53 + 1);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int8_t>(i * 29 + 7);
  // Unconfigured: the all-zero plan is invalid.
  TA_CHECK(attn(q, k, v, y) == Status::kBadQuantization);
  Setup s;
  Setup bad;
  bad.sy[0] = 0.0f;
  TA_CHECK(attn.configure(bad.scheme()) == Status::kBadQuantization);
  TA_CHECK(attn(q, k, v, y) == Status::kBadQuantization);  // still unconfigured
  TA_CHECK(attn.configure(s.scheme()) == Status::kOk);
  TA_CHECK(attn(q, k, v, y, Mask::causal_bottom_right(), &w) == Status::kOk);

  Arena::Scope scope;
  unsigned char* ws = alloc<unsigned char>(forward_i8_workspace_bytes(kDims));
  Int8HeadPlan plans[2];
  TA_CHECK(plan_int8(kDims, s.scheme(), plans, 2) == Status::kOk);
  TA_CHECK(forward_i8(kDims, ForwardIoI8{q.data(), k.data(), v.data(), y_rt.data(), nullptr}, Int8Plan{plans, 2},
                      Workspace{ws, forward_i8_workspace_bytes(kDims)}, Mask::causal_bottom_right()) == Status::kOk);
  TA_CHECK(std::memcmp(y.data(), y_rt.data(), y.size()) == 0);
  TA_LOG("AttentionI8<%zu,%zu,%zu,%zu,%zu,%zu>: sizeof %zu bytes", kDims.n, kDims.m, kDims.dk, kDims.dv, kDims.hq,
         kDims.hkv, sizeof attn);
}
