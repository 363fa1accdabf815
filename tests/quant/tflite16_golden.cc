// Int16Mode::kTflite against the committed golden vectors
// (tests/quant/golden_tflite_i16.h, from gen_tflite16_vectors.py: a model of
// TFLite Micro's int16 reference kernels). Every target runs this file on
// every compiled port, so matching here means the mode's bytes are the same
// everywhere.
#include <cstring>

#include "golden_tflite_i16.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/kernels_i16.h"
#include "tinyattn/quant_i16.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::ports_under_test;

namespace {

constexpr int kPlanFields = 11;
constexpr size_t kMaxHeads = 8;

Dims dims_of(const golden_tflite_i16::Case& c) {
  return Dims{c.dims[0], c.dims[1], c.dims[2], c.dims[3], c.dims[4], c.dims[5]};
}

Int16Scheme scheme_of(const golden_tflite_i16::Case& c) {
  Int16Scheme s;
  QuantParams* t[5] = {&s.q, &s.k, &s.v, &s.y, &s.scores};
  for (int i = 0; i < 5; ++i) *t[i] = QuantParams{c.scale[i], nullptr, c.count[i]};
  if (c.has_softmax_scale) s.softmax_scale = c.softmax_scale;
  s.mode = Int16Mode::kTflite;
  return s;
}

Mask mask_of(const golden_tflite_i16::Case& c) {
  Mask m;
  m.causal = c.causal == 0 ? Causal::kNone : (c.causal == 1 ? Causal::kTopLeft : Causal::kBottomRight);
  m.window = Window{c.window_left, c.window_right, c.window_align ? Align::kBottomRight : Align::kTopLeft};
  m.kv_len = c.kv_len;
  if (c.keep_kind == 1) m.keep = c.keep;
  if (c.keep_kind == 2) m.keep_bits = c.keep;
  m.head_stride = c.head_stride;
  return m;
}

void fields_of(const Int16HeadPlan& p, int32_t (&f)[kPlanFields]) {
  const TfliteParamsI16& t = p.tflite;
  const int32_t v[kPlanFields] = {p.logit.multiplier,  p.logit.shift,        p.output.multiplier,
                                  p.output.shift,      static_cast<int32_t>(p.mode), t.scores.multiplier,
                                  t.scores.shift,      t.beta.multiplier,    t.beta.shift,
                                  t.output.multiplier, t.output.shift};
  for (int i = 0; i < kPlanFields; ++i) f[i] = v[i];
}

// The plan as TFLite's integers, straight from the golden file: what a
// firmware copying them from its model would pass.
void plans_from_fields(const golden_tflite_i16::Case& c, size_t hq, Int16HeadPlan* plans) {
  for (size_t h = 0; h < hq; ++h) {
    const int32_t* f = c.plan + kPlanFields * h;
    Int16HeadPlan& p = plans[h];
    p.mode = static_cast<Int16Mode>(f[4]);
    p.tflite = TfliteParamsI16{{f[5], f[6]}, {f[7], f[8]}, {f[9], f[10]}};
  }
}

}  // namespace

TA_CASE("tflite16 golden: plans match the generator (TFLite Micro's Prepare)") {
  for (const golden_tflite_i16::Case& c : golden_tflite_i16::kCases) {
    const Dims d = dims_of(c);
    Int16HeadPlan plans[kMaxHeads];
    const Status s = plan_int16(d, scheme_of(c), plans, kMaxHeads);
    TA_CHECK_MSG(s == Status::kOk, "%s: plan status %s", c.name, to_string(s));
    if (s != Status::kOk) continue;
    for (size_t h = 0; h < d.hq; ++h) {
      int32_t got[kPlanFields];
      fields_of(plans[h], got);
      for (int f = 0; f < kPlanFields; ++f)
        TA_CHECK_MSG(got[f] == c.plan[kPlanFields * h + f], "%s head %zu field %d: %ld, generator %ld", c.name, h, f,
                     static_cast<long>(got[f]), static_cast<long>(c.plan[kPlanFields * h + f]));
      TA_CHECK_MSG(validate(plans[h]) == Status::kOk, "%s head %zu: plan does not validate", c.name, h);
    }
  }
}

TA_CASE("tflite16 golden: outputs and weights are identical to the generator on every port") {
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t port_count = ports_under_test(ports);
  for (size_t pi = 0; pi < port_count; ++pi) {
    const tinyattn::Port port = ports[pi];
    const tinyattn::KernelsI16* kern = tinyattn::kernels_i16(port);
    TA_CHECK_MSG(kern != nullptr, "%s: no int16 kernels", port_name(port));
    if (!kern) continue;
    for (const golden_tflite_i16::Case& c : golden_tflite_i16::kCases) {
      Arena::Scope scope;
      const Dims d = dims_of(c);
      Int16HeadPlan plans[kMaxHeads];
      plans_from_fields(c, d.hq, plans);
      const size_t ws_bytes = forward_i16_workspace_bytes(d);
      int16_t* y = alloc<int16_t>(d.y_elems());
      uint16_t* w = alloc<uint16_t>(d.weight_elems());
      unsigned char* ws = alloc<unsigned char>(ws_bytes);
      if (!y || !w || !ws) {
        TA_IGNORE("tflite16 golden: arena too small");
        return;
      }
      std::memset(y, 0x5a, d.y_elems() * sizeof(int16_t));
      std::memset(w, 0x5a, d.weight_elems() * sizeof(uint16_t));
      const Status s = forward_i16(d, ForwardIoI16{c.q, c.k, c.v, y, w}, Int16Plan{plans, d.hq},
                                   Workspace{ws, ws_bytes}, mask_of(c), Options{{}, port});
      TA_CHECK_MSG(s == Status::kOk, "%s/%s %s: status %s", kern->port, kern->simd_target(), c.name, to_string(s));
      size_t bad_y = 0, bad_w = 0, first = 0;
      for (size_t i = 0; i < d.y_elems(); ++i)
        if (y[i] != c.y[i] && bad_y++ == 0) first = i;
      for (size_t i = 0; i < d.weight_elems(); ++i) bad_w += w[i] != c.weights[i];
      TA_CHECK_MSG(bad_y == 0, "%s/%s %s: %zu outputs differ (first at %zu: %d, golden %d)", kern->port,
                   kern->simd_target(), c.name, bad_y, first, static_cast<int>(y[first]),
                   static_cast<int>(c.y[first]));
      TA_CHECK_MSG(bad_w == 0, "%s/%s %s: %zu weights differ", kern->port, kern->simd_target(), c.name, bad_w);

      // Without weights requested, the outputs are the same.
      std::memset(y, 0x5a, d.y_elems() * sizeof(int16_t));
      TA_CHECK(forward_i16(d, ForwardIoI16{c.q, c.k, c.v, y}, Int16Plan{plans, d.hq}, Workspace{ws, ws_bytes},
                           mask_of(c), Options{{}, port}) == Status::kOk);
      TA_CHECK_MSG(std::memcmp(y, c.y, d.y_elems() * sizeof(int16_t)) == 0,
                   "%s/%s %s: outputs depend on whether weights are requested", kern->port, kern->simd_target(),
                   c.name);
    }
  }
}

TA_CASE("tflite16 golden: AttentionI16<S, Int16Mode::kTflite> gives the generator's outputs") {
  // The GQA case with per-head scales (Hq 4, Hkv 2), through the default port.
  const golden_tflite_i16::Case& c = golden_tflite_i16::kCases[1];
  using S = Shape<3, 7, 9, 3, 4, 2>;
  const Dims d = dims_of(c);
  const bool same_shape = d.n == S::dims.n && d.m == S::dims.m && d.dk == S::dims.dk && d.dv == S::dims.dv &&
                          d.hq == S::dims.hq && d.hkv == S::dims.hkv;
  TA_CHECK(same_shape);
  static AttentionI16<S, Int16Mode::kTflite> attn;
  static AttentionI16<S, Int16Mode::kTflite>::Q q;
  static AttentionI16<S, Int16Mode::kTflite>::K k;
  static AttentionI16<S, Int16Mode::kTflite>::V v;
  static AttentionI16<S, Int16Mode::kTflite>::Y y;
  static AttentionI16<S, Int16Mode::kTflite>::Weights w;
  std::memcpy(q.data(), c.q, sizeof q);
  std::memcpy(k.data(), c.k, sizeof k);
  std::memcpy(v.data(), c.v, sizeof v);
  TA_CHECK(attn.configure(scheme_of(c)) == Status::kOk);
  TA_CHECK(attn(q, k, v, y, mask_of(c), &w) == Status::kOk);
  TA_CHECK(std::memcmp(y.data(), c.y, sizeof y) == 0);
  TA_CHECK(std::memcmp(w.data(), c.weights, sizeof w) == 0);
  // A plan copied from the model's numbers, adopted.
  static AttentionI16<S, Int16Mode::kTflite> adopted;
  std::array<Int16HeadPlan, S::dims.hq> plans{};
  plans_from_fields(c, S::dims.hq, plans.data());
  adopted.set_plan(plans);
  y.fill(0x5a5a);
  TA_CHECK(adopted(q, k, v, y, mask_of(c)) == Status::kOk);
  TA_CHECK(std::memcmp(y.data(), c.y, sizeof y) == 0);
}
