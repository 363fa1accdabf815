// int16 attention (16-bit activations, symmetric scales, as TFLite's 16x8
// mode quantizes them) with the int8 path's integer softmax. docs/quant.md,
// "int16", is the full spec.
//
//   real value = scale * q        q in [-32768, 32767], zero point 0, per tensor or per head
//
// Two stages, as int8 (quant.h): plan_int16() turns the float scales into
// per-head fixed-point multipliers once; forward_i16() is integer-only:
//   s_j  = sum_c q_c k_jc                                int64, exact (|s| <= 2^30 Dk)
//   u_j  = -round((max_j s_j - s_j) * logit multiplier)   base-2 logit difference,
//                                                         26 fraction bits, <= 0
//                                                         (saturating at -2^62)
//   e_j  = exp2_q30(u_j)                                  2^u in Q1.30
//   p_j  = floor((e_j * 2^15 + floor(S / 2)) / S),  S = sum_j e_j
//                                                         probability, Q0.15 in uint16
//   y_c  = clamp(round(sum_j p_j v_jc * output multiplier), -32768, 32767)
//                                                         sum exact in int32 (M <= kMaxMInt16)
// Rounding is to nearest with ties away from zero (p_j: ties up, as int8).
// The logit differences are rounded once, from exact score differences, so
// 16-bit inputs keep their resolution up to the softmax. Results are
// bit-identical on every target and every port.
//
// Masks: every structured mask (causal, window, kv_len) and the keep masks;
// no additive bias. A row with no visible key gives zeros.
//
// Int16Scheme::mode = Int16Mode::kTflite instead reproduces the 16x8 graph a
// TensorFlow Lite Micro model of attention runs (BatchMatMul with int64 sums
// requantized into an int16 score tensor, the int16 Softmax with TFLite's
// exp and 1/(1+x) lookup tables, BatchMatMul P.V), bit for bit; a masked
// key's score is -32768 and takes part in the softmax.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "tinyattn/attention.h"
#include "tinyattn/mask.h"
#include "tinyattn/port.h"
#include "tinyattn/quant.h"
#include "tinyattn/shape.h"
#include "tinyattn/status.h"

namespace tinyattn {

// Dk limit of the int16 path: |s| <= 2^30 * 32768 = 2^45 keeps the score
// differences and their products with a 31-bit multiplier in 96 bits.
inline constexpr size_t kMaxDkInt16 = 32768;
// M limit: 32768 * (2^15 + M / 2) < 2^31 keeps the P V sums exact in int32.
inline constexpr size_t kMaxMInt16 = 65535;

// What forward_i16 computes for a head. The value of the enumerator is
// stored in plans (offline plans included), so new modes are appended.
enum class Int16Mode : int32_t {
  // tinyattn's integer softmax on exact 64-bit scores (above).
  kNative = 0,
  // The int16 ops a TensorFlow Lite Micro model of attention runs, bit for
  // bit with TFLite's reference kernels: BatchMatMul Q.K^T requantized into
  // an int16 score tensor, the int16 Softmax (output scale 1/32768, zero
  // point 0), and BatchMatMul P.V requantized into Y (docs/quant.md).
  kTflite = 1,
};

// Scales of Q, K, V and Y (QuantParams of quant.h; zero_point nullptr or
// all zero: the 16-bit tensors are symmetric).
struct Int16Scheme {
  QuantParams q, k, v, y;
  std::optional<float> softmax_scale;  // unset: 1/sqrt(Dk), as fp32 forward(); kTflite: the softmax's beta
  Int16Mode mode = Int16Mode::kNative;
  // kTflite only: the int16 score tensor Q.K^T is requantized into (the
  // BatchMatMul's output, from the model's calibration); count 1 or Hq.
  QuantParams scores;
};

// The integers TFLite's Prepare() computes for the three int16 ops of one
// head (Int16Mode::kTflite), in TFLite's conventions (TfliteMultiplier).
struct TfliteParamsI16 {
  TfliteMultiplier scores;  // BatchMatMul Q.K^T: sq * sk / s_scores; shift in [-31, 7]
  TfliteMultiplier beta;    // Softmax input multiplier: s_scores * beta / (10 / 65535); shift in [-31, 30]
  TfliteMultiplier output;  // BatchMatMul P.V: (1/32768) * sv / sy; shift in [-31, 7]
};

// Everything forward_i16 needs for one query head: integers only.
struct Int16HeadPlan {
  FixedMultiplier logit;   // softmax_scale * sq * sk * log2(e) * 2^26 (kNative)
  FixedMultiplier output;  // sv / (sy * 2^15) (kNative)
  Int16Mode mode = Int16Mode::kNative;  // kTflite: logit and output are not read (plan_int16 leaves them 0)
  TfliteParamsI16 tflite;               // kTflite only (all 0 in a kNative plan)
};

struct Int16Plan {
  const Int16HeadPlan* heads = nullptr;
  size_t count = 0;
};

// Setup: fills plans[0..d.hq). Returns kBadQuantization (writing nothing)
// for a zero, negative, NaN or infinite scale, a non-zero zero point, a
// count that is neither 1 nor the head count, a multiplier outside
// make_multiplier()'s range (kTflite: outside TfliteParamsI16's ranges) or
// an unknown mode; kBadScale for a non-finite softmax scale; kNullPointer
// for a missing scale array (scores included in kTflite mode).
Status plan_int16(const Dims& d, const Int16Scheme& scheme, Int16HeadPlan* plans, size_t plan_capacity);

// Checks a plan made elsewhere (offline): the mode, the multipliers and
// shifts (kTflite: TfliteParamsI16's ranges).
Status validate(const Int16HeadPlan& p);

struct ForwardIoI16 {
  const int16_t* q = nullptr;  // [Hq][N][Dk]
  const int16_t* k = nullptr;  // [Hkv][M][Dk]
  const int16_t* v = nullptr;  // [Hkv][M][Dv]
  int16_t* y = nullptr;        // [Hq][N][Dv]        required
  // [Hq][N][M], optional: Q0.15 probabilities (p / 32768); kTflite: the
  // int16 softmax tensor, in [0, 32767] (also p / 32768).
  uint16_t* weights = nullptr;
};

// Scratch: a row of M int64 scores, a row of M int32 exps, a row of Dv int32
// sums, plus alignment slack.
constexpr size_t forward_i16_workspace_bytes(const Dims& d) {
  return align_up(d.m * sizeof(int64_t), kWorkspaceAlign) + align_up(d.m * sizeof(int32_t), kWorkspaceAlign) +
         align_up(d.dv * sizeof(int32_t), kWorkspaceAlign) + kWorkspaceAlign;
}

// Validates everything, then computes. On error nothing is written.
// Statuses beyond forward(): kBadDimension for Dk > kMaxDkInt16 or
// M > kMaxMInt16; kBadQuantization for a plan with the wrong count or an
// invalid entry; kUnsupported for a mask with a float bias, options.scale
// (the plan holds the softmax scale) or options.softcap. options.port picks
// the kernels (kernels_i16.h); every port gives the same bytes. Heads of
// the two modes may be mixed in one plan.
Status forward_i16(const Dims& d, const ForwardIoI16& io, const Int16Plan& plan, Workspace ws,
                   const Mask& mask = {}, const Options& options = {});

// round(x * m.multiplier * 2^-m.shift) for 0 <= x, exact (the product is
// formed in 96 bits), saturating at 2^62.
int64_t apply_wide(FixedMultiplier m, int64_t x);

namespace detail {
// forward_i16() on the build's default port bound at compile time
// (default_kernels_i16), for plans whose heads are all of kMode (others:
// kUnsupported): AttentionI16<S, kMode>, which links no other port's
// kernels and none of the other mode's code.
template <Int16Mode kMode>
Status forward_i16_default_port(const Dims& d, const ForwardIoI16& io, const Int16Plan& plan, Workspace ws,
                                const Mask& mask);
extern template Status forward_i16_default_port<Int16Mode::kNative>(const Dims&, const ForwardIoI16&,
                                                                    const Int16Plan&, Workspace, const Mask&);
extern template Status forward_i16_default_port<Int16Mode::kTflite>(const Dims&, const ForwardIoI16&,
                                                                    const Int16Plan&, Workspace, const Mask&);
// forward_i16() for plans of kNative heads alone (others: kUnsupported): the
// int16 self-test, which links none of kTflite's code.
Status forward_i16_native(const Dims& d, const ForwardIoI16& io, const Int16Plan& plan, Workspace ws,
                          const Mask& mask, const Options& o);
}  // namespace detail

// Compile-time shape, owning its plan and workspace.
//   static tinyattn::AttentionI16<tinyattn::Shape<16, 16, 64, 64>> attn;
//   attn.configure(scheme);          // once; kBadQuantization leaves it unconfigured
//   attn(q, k, v, y);                // integer only
// kMode: the mode of its plan (a scheme or plan of the other mode gives
// kUnsupported), so an image links that mode's code alone;
// AttentionI16<S, Int16Mode::kTflite> runs TFLite's ops.
template <class S, Int16Mode kMode = Int16Mode::kNative>
// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): workspace_ is scratch (below)
class AttentionI16 {
 public:
  static constexpr Dims dims = S::dims;
  static constexpr size_t workspace_bytes = forward_i16_workspace_bytes(dims);

  using Q = std::array<int16_t, dims.q_elems()>;
  using K = std::array<int16_t, dims.k_elems()>;
  using V = std::array<int16_t, dims.v_elems()>;
  using Y = std::array<int16_t, dims.y_elems()>;
  using Weights = std::array<uint16_t, dims.weight_elems()>;

  Status configure(const Int16Scheme& scheme) {
    return scheme.mode == kMode ? plan_int16(dims, scheme, plans_, dims.hq) : Status::kUnsupported;
  }
  // Adopts a plan computed elsewhere (e.g. offline); validated on each call.
  void set_plan(const std::array<Int16HeadPlan, dims.hq>& plans) {
    for (size_t h = 0; h < dims.hq; ++h) plans_[h] = plans[h];
  }
  Int16Plan plan() const { return Int16Plan{plans_, dims.hq}; }

  Status operator()(const Q& q, const K& k, const V& v, Y& y, const Mask& mask = {}, Weights* weights = nullptr) {
    return run(ForwardIoI16{q.data(), k.data(), v.data(), y.data(), weights ? weights->data() : nullptr}, mask);
  }
  Status run(const ForwardIoI16& io, const Mask& mask = {}) {
    return detail::forward_i16_default_port<kMode>(dims, io, plan(), Workspace{workspace_, sizeof workspace_},
                                                   mask);
  }

 private:
  Int16HeadPlan plans_[dims.hq] = {};  // all-zero multipliers: invalid until configured
  // Scratch, written before it is read on every call: left uninitialised (no memset per object).
  alignas(kWorkspaceAlign) unsigned char workspace_[workspace_bytes];
};

}  // namespace tinyattn
