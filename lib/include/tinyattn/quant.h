// int8 attention with an integer-only softmax. docs/quant.md is the full spec.
//
//   real value = scale * (q - zero_point)        q in [-128, 127], per tensor or per head
//
// Two stages:
//  1. plan_int8() (setup, uses floating point once): turns the float scales of
//     Q, K, V and Y and the softmax scale into per-head fixed-point multipliers
//     and shifts, validating everything. The plan is plain integers, so it can
//     also be computed offline and stored in flash.
//  2. forward_i8() (run time, integer arithmetic only, no FPU needed):
//       s_j  = sum_c (q_c - zq)(k_jc - zk)                 int32, exact
//       L_j  = round(s_j * logit multiplier) [+ round((b_j - zb) * bias multiplier)]
//                                                           base-2 logit, 26 fraction bits
//       u_j  = L_j - max_j L_j
//       e_j  = exp2_q30(u_j)                                2^u in Q1.30
//       p_j  = floor((e_j * 2^15 + floor(S / 2)) / S),  S = sum_j e_j
//                                                           probability, Q0.15 in uint16
//       y_c  = clamp(zy + round(sum_j p_j (v_jc - zv) * output multiplier), -128, 127)
//     All rounding is to nearest with ties away from zero, except p_j (ties up,
//     p_j >= 0). Results are bit-identical on every target: the same integer
//     operations in the same order, no SIMD reassociation can change an exact sum.
//
// Masks: every structured mask (causal, window, kv_len), the keep masks, and
// an additive bias given as int8 (ForwardIoI8::bias, quantized like the other
// tensors). A float Mask::bias is kUnsupported here: it would need floating
// point at run time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "tinyattn/attention.h"
#include "tinyattn/port.h"
#include "tinyattn/mask.h"
#include "tinyattn/shape.h"
#include "tinyattn/status.h"

namespace tinyattn {

// Probability 1.0 in the Q0.15 weights (stored as uint16, so 1.0 fits).
inline constexpr uint32_t kProbOne = 32768;
// Dk limit of the int8 path: 255 * 255 * 32768 < 2^31 keeps the int32 scores exact.
inline constexpr size_t kMaxDkInt8 = 32768;
// M limit of the int8 path: the P V sums stay exact in int32
// (255 * (2^15 + M / 2) < 2^31).
inline constexpr size_t kMaxMInt8 = size_t{1} << 23;
// Fraction bits of the base-2 logits fed to exp2_q30.
inline constexpr int kLogitFracBits = 26;

// Quantization of one tensor: count == 1 (per tensor) or one entry per head
// of that tensor (Hq for Q and Y, Hkv for K and V).
struct QuantParams {
  const float* scale = nullptr;         // finite and > 0
  const int32_t* zero_point = nullptr;  // in [-128, 127]; nullptr means 0 (symmetric)
  size_t count = 1;
};

struct Int8Scheme {
  QuantParams q, k, v, y;
  std::optional<float> softmax_scale;  // unset: 1/sqrt(Dk), as fp32 forward()
  // Optional additive logit bias (ForwardIoI8::bias): real = scale * (b - zero_point),
  // added to the scaled logits; count 1 or Hq. bias.scale == nullptr: no bias.
  QuantParams bias;
};

// real ~= multiplier * 2^-shift, multiplier in [2^30, 2^31), shift in [0, 62].
struct FixedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// Everything forward_i8 needs for one query head: integers only.
struct Int8HeadPlan {
  FixedMultiplier logit;   // softmax_scale * sq * sk * log2(e) * 2^26; shift >= 2
  FixedMultiplier output;  // sv / (sy * 2^15)
  FixedMultiplier bias;    // sb * log2(e) * 2^26, or {0, 0}: no bias planned
  int32_t q_zero = 0, k_zero = 0, v_zero = 0, y_zero = 0, bias_zero = 0;
};

// A plan: one Int8HeadPlan per query head.
struct Int8Plan {
  const Int8HeadPlan* heads = nullptr;
  size_t count = 0;
};

// Setup: fills plans[0..d.hq). Returns kBadQuantization (writing nothing) for a
// zero, negative, NaN or infinite scale, a zero point outside [-128, 127], a
// count that is neither 1 nor the head count, or a multiplier outside the
// range above (an overflowing or vanishing requantization), kBadScale for a
// non-finite softmax scale, kNullPointer for a missing scale array.
Status plan_int8(const Dims& d, const Int8Scheme& scheme, Int8HeadPlan* plans, size_t plan_capacity);

// The fixed-point form of a positive real: kBadQuantization if not representable.
Status make_multiplier(double real, FixedMultiplier* out);

// Checks a plan made elsewhere (offline): multipliers, shifts, zero points.
Status validate(const Int8HeadPlan& p);

struct ForwardIoI8 {
  const int8_t* q = nullptr;  // [Hq][N][Dk]
  const int8_t* k = nullptr;  // [Hkv][M][Dk]
  const int8_t* v = nullptr;  // [Hkv][M][Dv]
  int8_t* y = nullptr;        // [Hq][N][Dv]        required
  uint16_t* weights = nullptr;  // [Hq][N][M] Q0.15 probabilities, optional
  // Optional additive logit bias [N][M] (per query head every Mask::head_stride
  // elements, like the keep masks; 0 broadcasts); needs a plan made with
  // Int8Scheme::bias. Use the keep masks, not a bias, to mask keys out.
  const int8_t* bias = nullptr;
};

// Scratch: a row of M int32 scores and a row of Dv int32 sums, plus alignment slack.
constexpr size_t forward_i8_workspace_bytes(const Dims& d) {
  return align_up(d.m * sizeof(int32_t), kWorkspaceAlign) + align_up(d.dv * sizeof(int32_t), kWorkspaceAlign) +
         kWorkspaceAlign;
}

// Validates everything, then computes. On error nothing is written.
// Extra statuses beyond forward(): kBadDimension for Dk > kMaxDkInt8 or
// M >= kMaxMInt8,
// kBadQuantization for a plan with the wrong count or invalid entries (or
// without a bias multiplier when io.bias is set), kUnsupported for a mask
// with a float bias, for options.scale set (the plan holds the softmax
// scale) or for options.softcap set (no logit capping in integer arithmetic),
// kPortUnavailable for a port not compiled into this build (as every
// entry point). options.port picks the kernels (kernels_i8.h); every port
// gives the same bytes.
Status forward_i8(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws, const Mask& mask = {},
                  const Options& options = {});

namespace detail {
// forward_i8() on the build's default port, the port bound at compile time
// (default_kernels_i8): AttentionI8, which takes no Options, links no other
// port's int8 kernels.
Status forward_i8_default_port(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws,
                               const Mask& mask);
}  // namespace detail

// The integer building blocks, exposed so users and tests can reproduce them.
// x * 2^-s rounded to nearest, ties away from zero (s in [0, 62]).
int64_t rounding_rshift(int64_t x, int s);
// round(x * m.multiplier * 2^-m.shift); |x * multiplier| must be < 2^63.
int64_t apply(FixedMultiplier m, int64_t x);
// 2^(u / 2^26) in Q1.30 for u <= 0 (1.0 -> 2^30); relative error < 2e-8 plus rounding.
int32_t exp2_q30(int64_t u_q26);

// Compile-time shape, owning its plan and workspace.
//   static tinyattn::AttentionI8<tinyattn::Shape<16, 16, 32, 32>> attn;
//   attn.configure(scheme);          // once; kBadQuantization leaves it unconfigured
//   attn(q, k, v, y);                // integer only
template <class S>
// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): workspace_ is scratch (below)
class AttentionI8 {
 public:
  static constexpr Dims dims = S::dims;
  static constexpr size_t workspace_bytes = forward_i8_workspace_bytes(dims);

  using Q = std::array<int8_t, dims.q_elems()>;
  using K = std::array<int8_t, dims.k_elems()>;
  using V = std::array<int8_t, dims.v_elems()>;
  using Y = std::array<int8_t, dims.y_elems()>;
  using Weights = std::array<uint16_t, dims.weight_elems()>;

  Status configure(const Int8Scheme& scheme) { return plan_int8(dims, scheme, plans_, dims.hq); }
  // Adopts a plan computed elsewhere (e.g. offline); validated on each call.
  void set_plan(const std::array<Int8HeadPlan, dims.hq>& plans) {
    for (size_t h = 0; h < dims.hq; ++h) plans_[h] = plans[h];
  }
  Int8Plan plan() const { return Int8Plan{plans_, dims.hq}; }

  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask = {}, Weights* weights = nullptr) {
    return run(ForwardIoI8{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr}, mask);
  }
  Status run(const ForwardIoI8& io, const Mask& mask = {}) {
    return detail::forward_i8_default_port(dims, io, plan(), Workspace{workspace_, sizeof workspace_}, mask);
  }

 private:
  Int8HeadPlan plans_[dims.hq] = {};  // all-zero: invalid until configured
  // Scratch, written before it is read on every call: left uninitialised (no memset per object).
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
};

}  // namespace tinyattn
