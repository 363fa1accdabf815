// Int8Mode::kTflite against the committed golden vectors
// (tests/quant/golden_tflite_i8.h, from gen_tflite_vectors.py: a model of
// TFLite's int8 reference kernels). Every target runs this file on every
// compiled port, so matching here means the TFLite mode's bytes are the same
// everywhere.
#include <cstring>

#include "golden_tflite_i8.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/kernels_i8.h"
#include "tinyattn/quant.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::ports_under_test;

namespace {

constexpr int kPlanFields = 20;

Dims dims_of(const golden_tflite_i8::Case& c) {
  return Dims{c.dims[0], c.dims[1], c.dims[2], c.dims[3], c.dims[4], c.dims[5]};
}

Int8Scheme scheme_of(const golden_tflite_i8::Case& c) {
  Int8Scheme s;
  QuantParams* t[5] = {&s.q, &s.k, &s.v, &s.y, &s.scores};
  for (int i = 0; i < 5; ++i) *t[i] = QuantParams{c.scale[i], c.zero[i], c.count[i]};
  if (c.has_softmax_scale) s.softmax_scale = c.softmax_scale;
  s.mode = Int8Mode::kTflite;
  return s;
}

Mask mask_of(const golden_tflite_i8::Case& c) {
  Mask m;
  m.causal = c.causal == 0 ? Causal::kNone : (c.causal == 1 ? Causal::kTopLeft : Causal::kBottomRight);
  m.window = Window{c.window_left, c.window_right, c.window_align ? Align::kBottomRight : Align::kTopLeft};
  m.kv_len = c.kv_len;
  if (c.keep_kind == 1) m.keep = c.keep;
  if (c.keep_kind == 2) m.keep_bits = c.keep;
  m.head_stride = c.head_stride;
  return m;
}

void fields_of(const Int8HeadPlan& p, int32_t (&f)[kPlanFields]) {
  const TfliteParams& t = p.tflite;
  const int32_t v[kPlanFields] = {p.logit.multiplier, p.logit.shift,        p.output.multiplier, p.output.shift,
                                  p.bias.multiplier,  p.bias.shift,         p.q_zero,            p.k_zero,
                                  p.v_zero,           p.y_zero,             p.bias_zero,         static_cast<int32_t>(p.mode),
                                  t.scores.multiplier, t.scores.shift,      t.scores_zero,       t.beta.multiplier,
                                  t.beta.shift,       t.diff_min,           t.output.multiplier, t.output.shift};
  for (int i = 0; i < kPlanFields; ++i) f[i] = v[i];
}

}  // namespace

TA_CASE("tflite golden: plans match the generator (TFLite's Prepare)") {
  for (const golden_tflite_i8::Case& c : golden_tflite_i8::kCases) {
    const Dims d = dims_of(c);
    Int8HeadPlan plans[8];
    const Status s = plan_int8(d, scheme_of(c), plans, 8);
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

TA_CASE("tflite golden: outputs and weights are byte-identical to the generator on every port") {
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t port_count = ports_under_test(ports);
  for (size_t pi = 0; pi < port_count; ++pi) {
    const tinyattn::Port port = ports[pi];
    const tinyattn::KernelsI8* kern = tinyattn::kernels_i8(port);
    TA_CHECK_MSG(kern != nullptr, "%s: no int8 kernels", port_name(port));
    if (!kern) continue;
    for (const golden_tflite_i8::Case& c : golden_tflite_i8::kCases) {
      Arena::Scope scope;
      const Dims d = dims_of(c);
      // The plan as TFLite's integers, straight from the golden file: what a
      // firmware copying them from its model would pass.
      Int8HeadPlan plans[8];
      for (size_t h = 0; h < d.hq; ++h) {
        const int32_t* f = c.plan + kPlanFields * h;
        Int8HeadPlan& p = plans[h];
        p.q_zero = f[6];
        p.k_zero = f[7];
        p.v_zero = f[8];
        p.y_zero = f[9];
        p.mode = static_cast<Int8Mode>(f[11]);
        p.tflite = TfliteParams{{f[12], f[13]}, f[14], {f[15], f[16]}, f[17], {f[18], f[19]}};
      }
      // The workspace with room for the exp table; the plain one is checked below.
      const size_t ws_bytes = forward_i8_tflite_workspace_bytes(d);
      int8_t* y = alloc<int8_t>(d.y_elems());
      uint16_t* w = alloc<uint16_t>(d.weight_elems());
      unsigned char* ws = alloc<unsigned char>(ws_bytes);
      if (!y || !w || !ws) {
        TA_IGNORE("tflite golden: arena too small");
        return;
      }
      std::memset(y, 0x5a, d.y_elems());
      std::memset(w, 0x5a, d.weight_elems() * 2);
      const Status s = forward_i8(d, ForwardIoI8{c.q, c.k, c.v, y, w}, Int8Plan{plans, d.hq}, Workspace{ws, ws_bytes},
                                  mask_of(c), Options{{}, port});
      TA_CHECK_MSG(s == Status::kOk, "%s/%s %s: status %s", kern->port, kern->simd_target(), c.name, to_string(s));
      size_t bad_y = 0, bad_w = 0, first = 0;
      for (size_t i = 0; i < d.y_elems(); ++i)
        if (y[i] != c.y[i] && bad_y++ == 0) first = i;
      for (size_t i = 0; i < d.weight_elems(); ++i)
        if (w[i] != c.weights[i]) ++bad_w;
      TA_CHECK_MSG(bad_y == 0, "%s/%s %s: %zu output bytes differ (first at %zu: %d, golden %d)", kern->port,
                   kern->simd_target(), c.name, bad_y, first, static_cast<int>(y[first]), static_cast<int>(c.y[first]));
      TA_CHECK_MSG(bad_w == 0, "%s/%s %s: %zu weights differ", kern->port, kern->simd_target(), c.name, bad_w);

      // Without weights requested, the output bytes are the same.
      std::memset(y, 0x5a, d.y_elems());
      forward_i8(d, ForwardIoI8{c.q, c.k, c.v, y}, Int8Plan{plans, d.hq}, Workspace{ws, ws_bytes}, mask_of(c),
                 Options{{}, port});
      TA_CHECK_MSG(std::memcmp(y, c.y, d.y_elems()) == 0, "%s/%s %s: output depends on whether weights are requested",
                   kern->port, kern->simd_target(), c.name);

      // Nor on whether the workspace holds the exp table.
      std::memset(y, 0x5a, d.y_elems());
      std::memset(w, 0x5a, d.weight_elems() * 2);
      TA_CHECK(forward_i8(d, ForwardIoI8{c.q, c.k, c.v, y, w}, Int8Plan{plans, d.hq},
                          Workspace{ws, forward_i8_workspace_bytes(d)}, mask_of(c),
                          Options{{}, port}) == Status::kOk);
      TA_CHECK_MSG(std::memcmp(y, c.y, d.y_elems()) == 0 &&
                       std::memcmp(w, c.weights, d.weight_elems() * sizeof(uint16_t)) == 0,
                   "%s/%s %s: output or weights depend on the exp table", kern->port, kern->simd_target(), c.name);
    }
  }
}
