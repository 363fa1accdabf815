// The int8 path against the committed golden vectors (tests/quant/golden_i8.h,
// from gen_quant_vectors.py). Every target runs this file, so matching the
// same bytes here means the int8 outputs are byte-identical across targets.
#include <cstring>

#include "golden_i8.h"
#include "support.h"
#include "tinyattn/kernels_i8.h"
#include "tatest.h"
#include "tinyattn/quant.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::ports_under_test;

namespace {

Dims dims_of(const golden_i8::Case& c) {
  return Dims{c.dims[0], c.dims[1], c.dims[2], c.dims[3], c.dims[4], c.dims[5]};
}

Int8Scheme scheme_of(const golden_i8::Case& c) {
  Int8Scheme s;
  QuantParams* t[4] = {&s.q, &s.k, &s.v, &s.y};
  for (int i = 0; i < 4; ++i) *t[i] = QuantParams{c.scale[i], c.zero[i], c.count[i]};
  if (c.has_softmax_scale) s.softmax_scale = c.softmax_scale;
  if (c.bias) s.bias = QuantParams{c.bias_scale, c.bias_zero, c.bias_count};
  return s;
}

Mask mask_of(const golden_i8::Case& c) {
  Mask m;
  m.causal = c.causal == 0 ? Causal::kNone : (c.causal == 1 ? Causal::kTopLeft : Causal::kBottomRight);
  m.window = Window{c.window_left, c.window_right, c.window_align ? Align::kBottomRight : Align::kTopLeft};
  m.kv_len = c.kv_len;
  if (c.keep_kind == 1) m.keep = c.keep;
  if (c.keep_kind == 2) m.keep_bits = c.keep;
  m.head_stride = c.head_stride;
  return m;
}

}  // namespace

TA_CASE("int8 golden: plans match the generator") {
  for (const golden_i8::Case& c : golden_i8::kCases) {
    const Dims d = dims_of(c);
    Int8HeadPlan plans[8];
    const Status s = plan_int8(d, scheme_of(c), plans, 8);
    TA_CHECK_MSG(s == Status::kOk, "%s: plan status %s", c.name, to_string(s));
    if (s != Status::kOk) continue;
    for (size_t h = 0; h < d.hq; ++h) {
      const int32_t* g = c.plan + 11 * h;
      const Int8HeadPlan& p = plans[h];
      const int32_t got[11] = {p.logit.multiplier, p.logit.shift, p.output.multiplier, p.output.shift,
                               p.bias.multiplier,  p.bias.shift,  p.q_zero,            p.k_zero,
                               p.v_zero,           p.y_zero,      p.bias_zero};
      for (int f = 0; f < 11; ++f)
        TA_CHECK_MSG(got[f] == g[f], "%s head %zu field %d: %ld, generator %ld", c.name, h, f,
                     static_cast<long>(got[f]), static_cast<long>(g[f]));
    }
  }
}

TA_CASE("int8 golden: outputs and weights are byte-identical to the generator on every port") {
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t port_count = ports_under_test(ports);
  for (size_t pi = 0; pi < port_count; ++pi) {
    const tinyattn::Port port = ports[pi];
    const tinyattn::KernelsI8* kern = tinyattn::kernels_i8(port);
    TA_CHECK_MSG(kern != nullptr, "%s: no int8 kernels", port_name(port));
    if (!kern) continue;
    for (const golden_i8::Case& c : golden_i8::kCases) {
      Arena::Scope scope;
      const Dims d = dims_of(c);
      Int8HeadPlan plans[8];
      if (plan_int8(d, scheme_of(c), plans, 8) != Status::kOk) {
        TA_CHECK_MSG(false, "%s: no plan", c.name);
        continue;
      }
      int8_t* y = alloc<int8_t>(d.y_elems());
      uint16_t* w = alloc<uint16_t>(d.weight_elems());
      unsigned char* ws = alloc<unsigned char>(forward_i8_workspace_bytes(d));
      std::memset(y, 0x5a, d.y_elems());
      std::memset(w, 0x5a, d.weight_elems() * 2);
      const Status s = forward_i8(d, ForwardIoI8{c.q, c.k, c.v, y, w, c.bias}, Int8Plan{plans, d.hq},
                                  Workspace{ws, forward_i8_workspace_bytes(d)}, mask_of(c), Options{{}, port});
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
      forward_i8(d, ForwardIoI8{c.q, c.k, c.v, y, nullptr, c.bias}, Int8Plan{plans, d.hq},
                 Workspace{ws, forward_i8_workspace_bytes(d)}, mask_of(c), Options{{}, port});
      TA_CHECK_MSG(std::memcmp(y, c.y, d.y_elems()) == 0, "%s/%s %s: output depends on whether weights are requested",
                   kern->port, kern->simd_target(), c.name);
    }
  }
}

TA_CASE("int8 golden: exp2_q30 at named points") {
  // 2^0 = 1, 2^-1, 2^-31 (rounds to 0.5 LSB -> 1 with ties away), far below -> 0.
  TA_CHECK(exp2_q30(0) == (1 << 30));
  TA_CHECK(exp2_q30(int64_t{1} << 40) == (1 << 30));
  TA_CHECK(exp2_q30(-(int64_t{1} << 26)) == (1 << 29));
  TA_CHECK(exp2_q30(-(int64_t{30} << 26)) == 1);
  TA_CHECK(exp2_q30(-(int64_t{31} << 26)) == 1);
  TA_CHECK(exp2_q30(-(int64_t{32} << 26)) == 0);
  TA_CHECK(exp2_q30(-(int64_t{1} << 62)) == 0);
  TA_CHECK(rounding_rshift(5, 1) == 3);
  TA_CHECK(rounding_rshift(-5, 1) == -3);
  TA_CHECK(rounding_rshift(-4, 1) == -2);
  TA_CHECK(rounding_rshift(INT64_MIN, 62) == -2);
  TA_CHECK(rounding_rshift(INT64_MAX, 62) == 2);
}
