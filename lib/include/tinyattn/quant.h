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
//
// Int8Scheme::mode = Int8Mode::kTflite instead reproduces the int8 graph a
// TensorFlow Lite (Micro) model of attention runs (BatchMatMul, Softmax,
// BatchMatMul with TFLite's requantization and its reference softmax), bit
// for bit; a masked key's int8 score is -128 and takes part in the softmax.
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
// M limit of Int8Mode::kTflite: TFLite's softmax sums the exps (each at most
// 1.0) in Q12.19 int32 (kAccumulationIntegerBits = 12), which 4096 keys overflow.
inline constexpr size_t kMaxMTflite = 4095;

// Quantization of one tensor: count == 1 (per tensor) or one entry per head
// of that tensor (Hq for Q and Y, Hkv for K and V).
struct QuantParams {
  const float* scale = nullptr;         // finite and > 0
  const int32_t* zero_point = nullptr;  // in [-128, 127]; nullptr means 0 (symmetric)
  size_t count = 1;
};

// What forward_i8 computes for a head (docs/quant.md).
enum class Int8Mode : int32_t {
  // tinyattn's integer softmax: exact scores, base-2 logits, Q0.15 probabilities.
  kNative = 0,
  // The int8 ops a TensorFlow Lite (Micro) model of attention runs, bit for bit
  // with TFLite's reference kernels: BatchMatMul Q.K^T requantized into an int8
  // score tensor, the int8 Softmax (output scale 1/256, zero point -128), and
  // BatchMatMul P.V requantized into Y.
  kTflite = 1,
};

struct Int8Scheme {
  QuantParams q, k, v, y;
  std::optional<float> softmax_scale;  // unset: 1/sqrt(Dk), as fp32 forward(); kTflite: the softmax's beta
  // Optional additive logit bias (ForwardIoI8::bias): real = scale * (b - zero_point),
  // added to the scaled logits; count 1 or Hq. bias.scale == nullptr: no bias. kNative only.
  QuantParams bias;
  Int8Mode mode = Int8Mode::kNative;
  // kTflite only: the int8 score tensor Q.K^T is requantized into (the
  // BatchMatMul's output, from the model's calibration); count 1 or Hq.
  QuantParams scores;
};

// real ~= multiplier * 2^-shift, multiplier in [2^30, 2^31), shift in [0, 62].
struct FixedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// TFLite's form of a multiplier (tflite::QuantizeMultiplier), so a model's own
// numbers can be copied in: real ~= multiplier * 2^(shift - 31), multiplier in
// [2^30, 2^31); shift > 0 shifts left.
struct TfliteMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// The integers TFLite's Prepare() computes for the three ops of one head
// (Int8Mode::kTflite). None depends on the element type, so a 16x8 path can
// take the same struct.
struct TfliteParams {
  TfliteMultiplier scores;  // BatchMatMul Q.K^T: sq * sk / s_scores; shift in [-31, 30]
  int32_t scores_zero = 0;  // the int8 score tensor's zero point
  TfliteMultiplier beta;    // Softmax input_multiplier, input_left_shift (PreprocessSoftmaxScaling); shift in [1, 31]
  int32_t diff_min = 0;     // Softmax diff_min: -CalculateInputRadius(5, beta.shift)
  TfliteMultiplier output;  // BatchMatMul P.V: (1/256) * sv / sy; shift in [-31, 30]
};

// Everything forward_i8 needs for one query head: integers only.
struct Int8HeadPlan {
  FixedMultiplier logit;   // softmax_scale * sq * sk * log2(e) * 2^26; shift >= 2 (kNative)
  FixedMultiplier output;  // sv / (sy * 2^15) (kNative)
  FixedMultiplier bias;    // sb * log2(e) * 2^26, or {0, 0}: no bias planned (kNative)
  int32_t q_zero = 0, k_zero = 0, v_zero = 0, y_zero = 0, bias_zero = 0;
  Int8Mode mode = Int8Mode::kNative;  // kTflite: logit, output, bias are not read (plan_int8 leaves them 0)
  TfliteParams tflite;                // kTflite only (all 0 in a kNative plan)
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
// non-finite softmax scale, kNullPointer for a missing scale array (scores
// included in kTflite mode), kUnsupported for a bias in kTflite mode.
Status plan_int8(const Dims& d, const Int8Scheme& scheme, Int8HeadPlan* plans, size_t plan_capacity);

// The fixed-point form of a positive real: kBadQuantization if not representable.
Status make_multiplier(double real, FixedMultiplier* out);

// Checks a plan made elsewhere (offline): the mode, multipliers, shifts, zero
// points (kTflite: the TfliteParams ranges above, diff_min exactly TFLite's).
Status validate(const Int8HeadPlan& p);

struct ForwardIoI8 {
  const int8_t* q = nullptr;  // [Hq][N][Dk]
  const int8_t* k = nullptr;  // [Hkv][M][Dk]
  const int8_t* v = nullptr;  // [Hkv][M][Dv]
  int8_t* y = nullptr;        // [Hq][N][Dv]        required
  // [Hq][N][M], optional. kNative: Q0.15 probabilities (p / 32768). kTflite:
  // the softmax tensor's int8 values plus 128, in [0, 255] (p / 256).
  uint16_t* weights = nullptr;
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
// kTflite heads with a workspace this large keep each head's softmax exps in
// a table of the 256 values an int8 score difference can take, each computed
// once per head instead of once per key (the same bytes as without it).
constexpr size_t forward_i8_tflite_workspace_bytes(const Dims& d) {
  return forward_i8_workspace_bytes(d) + 256 * sizeof(int32_t);
}

// Validates everything, then computes. On error nothing is written.
// Extra statuses beyond forward(): kBadDimension for Dk > kMaxDkInt8 or
// M >= kMaxMInt8 (M > kMaxMTflite with a kTflite head),
// kBadQuantization for a plan with the wrong count or invalid entries (or
// without a bias multiplier when io.bias is set), kUnsupported for io.bias
// with a kTflite head, for a mask
// with a float bias, for options.scale set (the plan holds the softmax
// scale) or for options.softcap set (no logit capping in integer arithmetic),
// kPortUnavailable for a port not compiled into this build (as every
// entry point). options.port picks the kernels (kernels_i8.h); every port
// gives the same bytes.
Status forward_i8(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws, const Mask& mask = {},
                  const Options& options = {});

namespace detail {
// forward_i8() on the build's default port, the port bound at compile time
// (default_kernels_i8), for plans whose heads are all of kMode (others:
// kUnsupported): AttentionI8<S, kMode>, which takes no Options, links no
// other port's int8 kernels and none of the other mode's code.
template <Int8Mode kMode>
Status forward_i8_default_port(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws,
                               const Mask& mask);
extern template Status forward_i8_default_port<Int8Mode::kNative>(const Dims&, const ForwardIoI8&, const Int8Plan&,
                                                                  Workspace, const Mask&);
extern template Status forward_i8_default_port<Int8Mode::kTflite>(const Dims&, const ForwardIoI8&, const Int8Plan&,
                                                                  Workspace, const Mask&);
// forward_i8() for plans of kNative heads alone (others: kUnsupported): the
// int8 self-test, which links none of kTflite's code.
Status forward_i8_native(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws, const Mask& mask,
                         const Options& o);
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
// kMode: the mode of its plan (a scheme or plan of the other mode gives
// kUnsupported), so an image links that mode's code alone;
// AttentionI8<S, Int8Mode::kTflite> runs TFLite's ops.
template <class S, Int8Mode kMode = Int8Mode::kNative>
// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): workspace_ is scratch (below)
class AttentionI8 {
 public:
  static constexpr Dims dims = S::dims;
  static constexpr size_t workspace_bytes =
      kMode == Int8Mode::kTflite ? forward_i8_tflite_workspace_bytes(dims) : forward_i8_workspace_bytes(dims);

  using Q = std::array<int8_t, dims.q_elems()>;
  using K = std::array<int8_t, dims.k_elems()>;
  using V = std::array<int8_t, dims.v_elems()>;
  using Y = std::array<int8_t, dims.y_elems()>;
  using Weights = std::array<uint16_t, dims.weight_elems()>;

  Status configure(const Int8Scheme& scheme) {
    return scheme.mode == kMode ? plan_int8(dims, scheme, plans_, dims.hq) : Status::kUnsupported;
  }
  // Adopts a plan computed elsewhere (e.g. offline); validated on each call.
  void set_plan(const std::array<Int8HeadPlan, dims.hq>& plans) {
    for (size_t h = 0; h < dims.hq; ++h) plans_[h] = plans[h];
  }
  Int8Plan plan() const { return Int8Plan{plans_, dims.hq}; }

  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask = {}, Weights* weights = nullptr) {
    return run(ForwardIoI8{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr}, mask);
  }
  Status run(const ForwardIoI8& io, const Mask& mask = {}) {
    return detail::forward_i8_default_port<kMode>(dims, io, plan(), Workspace{workspace_, sizeof workspace_}, mask);
  }

 private:
  Int8HeadPlan plans_[dims.hq] = {};  // all-zero: invalid until configured
  // Scratch, written before it is read on every call: left uninitialised (no memset per object).
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
};

}  // namespace tinyattn
