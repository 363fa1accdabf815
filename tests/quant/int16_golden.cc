// The int16 path against the committed golden vectors (tests/quant/golden_i16.h,
// from gen_int16_vectors.py). Every target runs this file, so matching the
// same integers here means the int16 outputs are identical across targets.
#include <cstring>

#include "golden_i16.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/kernels_i16.h"
#include "tinyattn/quant_i16.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::ports_under_test;

namespace {

Dims dims_of(const golden_i16::Case& c) {
  return Dims{c.dims[0], c.dims[1], c.dims[2], c.dims[3], c.dims[4], c.dims[5]};
}

Int16Scheme scheme_of(const golden_i16::Case& c) {
  Int16Scheme s;
  QuantParams* t[4] = {&s.q, &s.k, &s.v, &s.y};
  for (int i = 0; i < 4; ++i) *t[i] = QuantParams{c.scale[i], nullptr, c.count[i]};
  if (c.has_softmax_scale) s.softmax_scale = c.softmax_scale;
  return s;
}

Mask mask_of(const golden_i16::Case& c) {
  Mask m;
  m.causal = c.causal == 0 ? Causal::kNone : (c.causal == 1 ? Causal::kTopLeft : Causal::kBottomRight);
  m.window = Window{c.window_left, c.window_right, c.window_align ? Align::kBottomRight : Align::kTopLeft};
  m.kv_len = c.kv_len;
  if (c.keep_kind == 1) m.keep = c.keep;
  if (c.keep_kind == 2) m.keep_bits = c.keep;
  m.head_stride = c.head_stride;
  return m;
}

constexpr size_t kMaxHeads = 8;

// Counts the outputs and weights that differ from the case's; first: the first differing output.
struct Diff {
  size_t y = 0, w = 0, first = 0;
};
Diff compare(const golden_i16::Case& c, const Dims& d, const int16_t* y, const uint16_t* w) {
  Diff r;
  for (size_t i = 0; i < d.y_elems(); ++i)
    if (y[i] != c.y[i] && r.y++ == 0) r.first = i;
  if (w)
    for (size_t i = 0; i < d.weight_elems(); ++i) r.w += w[i] != c.weights[i];
  return r;
}

}  // namespace

TA_CASE("int16 golden: plans match the generator") {
  for (const golden_i16::Case& c : golden_i16::kCases) {
    const Dims d = dims_of(c);
    Int16HeadPlan plans[kMaxHeads];
    const Status s = plan_int16(d, scheme_of(c), plans, kMaxHeads);
    TA_CHECK_MSG(s == Status::kOk, "%s: plan status %s", c.name, to_string(s));
    if (s != Status::kOk) continue;
    for (size_t h = 0; h < d.hq; ++h) {
      const int32_t* g = c.plan + 4 * h;
      const Int16HeadPlan& p = plans[h];
      const int32_t got[4] = {p.logit.multiplier, p.logit.shift, p.output.multiplier, p.output.shift};
      for (int f = 0; f < 4; ++f)
        TA_CHECK_MSG(got[f] == g[f], "%s head %zu field %d: %ld, generator %ld", c.name, h, f,
                     static_cast<long>(got[f]), static_cast<long>(g[f]));
      TA_CHECK_MSG(p.mode == Int16Mode::kNative, "%s head %zu: mode", c.name, h);
    }
  }
}

TA_CASE("int16 golden: outputs and weights are identical to the generator's on every port") {
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t port_count = ports_under_test(ports);
  for (size_t pi = 0; pi < port_count; ++pi) {
    const tinyattn::Port port = ports[pi];
    const KernelsI16* kern = kernels_i16(port);
    TA_CHECK_MSG(kern != nullptr, "%s: no int16 kernels", port_name(port));
    if (!kern) continue;
    for (const golden_i16::Case& c : golden_i16::kCases) {
      Arena::Scope scope;
      const Dims d = dims_of(c);
      Int16HeadPlan plans[kMaxHeads];
      if (plan_int16(d, scheme_of(c), plans, kMaxHeads) != Status::kOk) {
        TA_CHECK_MSG(false, "%s: no plan", c.name);
        continue;
      }
      int16_t* y = alloc<int16_t>(d.y_elems());
      uint16_t* w = alloc<uint16_t>(d.weight_elems());
      const size_t wsb = forward_i16_workspace_bytes(d);
      unsigned char* ws = alloc<unsigned char>(wsb);
      if (!(y && w && ws)) {
        TA_CHECK_MSG(false, "%s: arena", c.name);
        continue;
      }
      std::memset(y, 0x5a, d.y_elems() * sizeof(int16_t));
      std::memset(w, 0x5a, d.weight_elems() * sizeof(uint16_t));
      const Status s = forward_i16(d, ForwardIoI16{c.q, c.k, c.v, y, w}, Int16Plan{plans, d.hq}, Workspace{ws, wsb},
                                   mask_of(c), Options{{}, port});
      TA_CHECK_MSG(s == Status::kOk, "%s/%s %s: status %s", kern->port, kern->simd_target(), c.name, to_string(s));
      const Diff diff = compare(c, d, y, w);
      TA_CHECK_MSG(diff.y == 0, "%s/%s %s: %zu outputs differ (first at %zu: %d, golden %d)", kern->port,
                   kern->simd_target(), c.name, diff.y, diff.first, static_cast<int>(y[diff.first]),
                   static_cast<int>(c.y[diff.first]));
      TA_CHECK_MSG(diff.w == 0, "%s/%s %s: %zu weights differ", kern->port, kern->simd_target(), c.name, diff.w);

      // Without weights requested, the outputs are the same.
      std::memset(y, 0x5a, d.y_elems() * sizeof(int16_t));
      const Status s2 = forward_i16(d, ForwardIoI16{c.q, c.k, c.v, y, nullptr}, Int16Plan{plans, d.hq},
                                    Workspace{ws, wsb}, mask_of(c), Options{{}, port});
      TA_CHECK_MSG(s2 == Status::kOk && compare(c, d, y, nullptr).y == 0,
                   "%s/%s %s: output depends on whether weights are requested", kern->port, kern->simd_target(),
                   c.name);
    }
  }
}

TA_CASE("int16 golden: AttentionI16<S> gives the generator's outputs") {
  // The GQA case with per-head scales under a bottom-right causal mask.
  using S = Shape<3, 8, 7, 6, 4, 2>;
  const golden_i16::Case* found = nullptr;
  for (const golden_i16::Case& c : golden_i16::kCases)
    if (std::strcmp(c.name, "causal bottom-right, GQA, per head") == 0) found = &c;
  TA_CHECK_MSG(found != nullptr, "golden case missing");
  if (!found) return;
  const golden_i16::Case& c = *found;
  const Dims d = dims_of(c);
  const Dims sd = S::dims;
  TA_CHECK_MSG(d.n == sd.n && d.m == sd.m && d.dk == sd.dk && d.dv == sd.dv && d.hq == sd.hq && d.hkv == sd.hkv,
               "the golden case's dims are not S's");
  TA_CHECK((c.causal == 2 && c.count[0] == sd.hq));

  static AttentionI16<S> attn;
  static AttentionI16<S>::Q q;
  static AttentionI16<S>::K k;
  static AttentionI16<S>::V v;
  static AttentionI16<S>::Y y;
  static AttentionI16<S>::Weights w;
  std::memcpy(q.data(), c.q, sizeof q);
  std::memcpy(k.data(), c.k, sizeof k);
  std::memcpy(v.data(), c.v, sizeof v);
  TA_CHECK(attn(q, k, v, y) == Status::kBadQuantization);  // unconfigured: the all-zero plan is invalid
  TA_CHECK(attn.configure(scheme_of(c)) == Status::kOk);
  y.fill(0x5a5a);
  w.fill(0x5a5a);
  TA_CHECK(attn(q, k, v, y, mask_of(c), &w) == Status::kOk);
  const Diff diff = compare(c, d, y.data(), w.data());
  TA_CHECK_MSG(diff.y == 0 && diff.w == 0, "configure(): %zu outputs, %zu weights differ", diff.y, diff.w);

  // A plan adopted from the generator (as from an offline tool) gives the same.
  std::array<Int16HeadPlan, S::dims.hq> plans{};
  for (size_t h = 0; h < S::dims.hq; ++h) {
    plans[h].logit = FixedMultiplier{c.plan[4 * h], c.plan[4 * h + 1]};
    plans[h].output = FixedMultiplier{c.plan[4 * h + 2], c.plan[4 * h + 3]};
  }
  static AttentionI16<S> adopted;
  adopted.set_plan(plans);
  y.fill(0x5a5a);
  TA_CHECK(adopted.run(ForwardIoI16{q.data(), k.data(), v.data(), y.data(), nullptr}, mask_of(c)) == Status::kOk);
  TA_CHECK_MSG(compare(c, d, y.data(), nullptr).y == 0, "set_plan(): outputs differ");
}
