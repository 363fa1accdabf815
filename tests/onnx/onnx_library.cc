// ONNX Attention's cases (tests/onnx/cases/onnx_cases.h, from the committed
// generator of the operator's definition) through the library on every
// target: per batch element, past keys and values joined before the new ones,
// is_causal with a past as Mask::causal_offset(P), with nonpad_kv_seqlen as
// Mask::causal_cache(valid, N), the attn_mask as a per-head bias, softcap,
// scale, and qk_matmul_output as ForwardIo::scores (modes 0-2) or the weights
// (mode 3); fp16 cases through forward_f16. Tolerances are the manifest's:
// docs/core.md's fp32 bound and docs/quant.md's fp16 one.
#include <cmath>
#include <cstring>

#include "cases/onnx_cases.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"

using namespace tinyattn;
using tatest::alloc;

namespace {

constexpr double kF16Ulp = 1.0 / 2048, kF16MinSub = 1.0 / 33554432.0;

struct Tolerance {
  double y_vmax, y_rel, y_abs, a_abs, a_rel, s_abs, s_rel;
};
// tests/onnx/gen_onnx_attention.py's TOL.
constexpr Tolerance kF32{2e-5, 2e-5, 0.0, 2e-6, 2e-5, 1e-5, 1e-5};
constexpr Tolerance kF16{2e-5 * (1 + kF16Ulp), 2e-5 + kF16Ulp, kF16MinSub, 2e-6 + kF16MinSub, 2e-5 + kF16Ulp, 0, 0};

float input(const onnx_cases::Case& c, const float* f, const uint16_t* bits, size_t at) {
  return c.f16 ? to_float(half::from_bits(bits[at])) : f[at];
}

// [B][H][S][D] element (b, h, s, d) of a case tensor.
size_t at4(size_t h_count, size_t s_count, size_t d_count, size_t b, size_t h, size_t s, size_t d) {
  return ((b * h_count + h) * s_count + s) * d_count + d;
}

struct Outcome {
  size_t bad = 0;
  double worst_y = 0;  // max |y - y_ref| / max|v|
};

Outcome run_case(const onnx_cases::Case& c) {
  Outcome out;
  tatest::Arena::Scope scope;
  const size_t t = c.p + c.m;
  const Dims d{c.n, t, c.dk, c.dv, c.hq, c.hkv};
  float* q = alloc<float>(d.q_elems());
  float* k = alloc<float>(d.k_elems());
  float* v = alloc<float>(d.v_elems());
  float* y = alloc<float>(d.y_elems());
  float* qk = alloc<float>(d.weight_elems());
  half *qh = alloc<half>(d.q_elems()), *kh = alloc<half>(d.k_elems()), *vh = alloc<half>(d.v_elems());
  half *yh = alloc<half>(d.y_elems()), *ah = alloc<half>(d.weight_elems());
  const size_t ws_bytes = c.f16 ? forward_f16_workspace_bytes(d) : forward_workspace_bytes(d);
  void* ws = alloc<unsigned char>(ws_bytes);
  if (!q || !k || !v || !y || !qk || !qh || !kh || !vh || !yh || !ah || !ws) {
    TA_CHECK_MSG(false, "%s: the test arena is too small", c.name);
    out.bad = 1;
    return out;
  }
  const Tolerance& tol = c.f16 ? kF16 : kF32;
  double vmax = 0;  // over every value, past included (as the tool's test)
  for (size_t x = 0; x < c.b * c.hkv * c.m * c.dv; ++x) vmax = std::fmax(vmax, std::fabs(input(c, c.v, c.v_bits, x)));
  for (size_t x = 0; x < c.b * c.hkv * c.p * c.dv; ++x)
    vmax = std::fmax(vmax, std::fabs(input(c, c.past_v, c.past_v_bits, x)));
  for (size_t b = 0; b < c.b; ++b) {
    for (size_t h = 0; h < c.hq; ++h)
      for (size_t i = 0; i < c.n; ++i)
        for (size_t x = 0; x < c.dk; ++x)
          q[(h * c.n + i) * c.dk + x] = input(c, c.q, c.q_bits, at4(c.hq, c.n, c.dk, b, h, i, x));
    for (size_t h = 0; h < c.hkv; ++h)
      for (size_t j = 0; j < t; ++j) {
        const bool past = j < c.p;
        const size_t s = past ? j : j - c.p, s_count = past ? c.p : c.m;
        for (size_t x = 0; x < c.dk; ++x)
          k[(h * t + j) * c.dk + x] = past ? input(c, c.past_k, c.past_k_bits, at4(c.hkv, s_count, c.dk, b, h, s, x))
                                           : input(c, c.k, c.k_bits, at4(c.hkv, s_count, c.dk, b, h, s, x));
        for (size_t x = 0; x < c.dv; ++x)
          v[(h * t + j) * c.dv + x] = past ? input(c, c.past_v, c.past_v_bits, at4(c.hkv, s_count, c.dv, b, h, s, x))
                                           : input(c, c.v, c.v_bits, at4(c.hkv, s_count, c.dv, b, h, s, x));
      }
    // ONNX's masks as the library's: the causal rule's offset is the past
    // length, or valid - N for an external cache; keys from valid on are padding.
    Mask mask;
    if (c.is_causal && c.p > 0) {
      mask = Mask::causal_offset(static_cast<int32_t>(c.p));
    } else if (c.is_causal && c.nonpad) {
      mask = Mask::causal_cache(static_cast<uint32_t>(c.nonpad[b]), static_cast<uint32_t>(c.n));
    } else if (c.is_causal) {
      mask = Mask::causal_top_left();
    } else if (c.nonpad) {
      mask = Mask::key_padding(static_cast<uint32_t>(c.nonpad[b]));
    }
    if (c.bias) {
      mask.bias = c.bias + b * c.hq * c.n * t;
      mask.head_stride = c.n * t;
    }
    Options options;
    if (c.softcap > 0) options.softcap = c.softcap;
    if (c.scale > 0) options.scale = c.scale;
    Status s;
    if (c.f16) {
      for (size_t x = 0; x < d.q_elems(); ++x) qh[x] = to_half(q[x]);
      for (size_t x = 0; x < d.k_elems(); ++x) kh[x] = to_half(k[x]);
      for (size_t x = 0; x < d.v_elems(); ++x) vh[x] = to_half(v[x]);
      s = forward_f16(d, ForwardIoF16{qh, kh, vh, yh, c.mode == 3 ? ah : nullptr, nullptr}, Workspace{ws, ws_bytes},
                      mask, options);
      for (size_t x = 0; x < d.y_elems(); ++x) y[x] = to_float(yh[x]);
      if (c.mode == 3)
        for (size_t x = 0; x < d.weight_elems(); ++x) qk[x] = to_float(ah[x]);
    } else {
      ForwardIo io{q, k, v, y, c.mode == 3 ? qk : nullptr, nullptr};
      if (c.mode >= 0 && c.mode <= 2) {
        io.scores = qk;
        io.score_stage = c.mode == 2 ? ScoreStage::kMasked : ScoreStage::kSoftcapped;
      }
      s = forward(d, io, Workspace{ws, ws_bytes}, mask, options);
    }
    TA_CHECK_MSG(s == Status::kOk, "%s, batch %zu: %s", c.name, b, to_string(s));
    if (s != Status::kOk) {
      ++out.bad;
      continue;
    }
    for (size_t x = 0; x < d.y_elems(); ++x) {
      const double want = c.y[b * d.y_elems() + x], e = std::fabs(y[x] - want);
      out.worst_y = std::fmax(out.worst_y, e / vmax);
      out.bad += !(e <= tol.y_vmax * vmax + tol.y_rel * std::fabs(want) + tol.y_abs);
    }
    if (c.qk) {
      for (size_t x = 0; x < d.weight_elems(); ++x) {
        const double want = c.qk[b * d.weight_elems() + x], got = qk[x];
        if (std::isinf(want)) {
          out.bad += got != want;  // a masked logit is -inf exactly
          continue;
        }
        const double bound = c.mode == 3 ? tol.a_abs + tol.a_rel * want : tol.s_abs + tol.s_rel * std::fabs(want);
        out.bad += !(std::fabs(got - want) <= bound);
      }
    }
  }
  return out;
}

}  // namespace

TA_CASE("onnx: every ONNX Attention case through the library matches the operator's outputs") {
  double worst_f32 = 0, worst_f16 = 0;
  for (const onnx_cases::Case& c : onnx_cases::kCases) {
    const Outcome o = run_case(c);
    TA_CHECK_MSG(o.bad == 0, "%s: %zu outputs outside the tolerance (worst |y - y_ref| / max|v| %.3g)", c.name, o.bad,
                 o.worst_y);
    (c.f16 ? worst_f16 : worst_f32) = std::fmax(c.f16 ? worst_f16 : worst_f32, o.worst_y);
  }
  TA_LOG("onnx cases: %zu, worst |y - y_ref| / max|v|: fp32 %.3g, fp16 %.3g",
         sizeof onnx_cases::kCases / sizeof onnx_cases::kCases[0], worst_f32, worst_f16);
}
