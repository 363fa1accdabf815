// The int8 path: plan (setup, floating point once) and forward (integers only).
// Every operation here is specified in docs/quant.md and mirrored in NumPy by
// tests/quant/gen_quant_vectors.py; change both together.
#include <cmath>
#include <cstring>

#include "detail.h"
#include "fixed_point.h"
#include "tflite_ops.h"
#include "tinyattn/kernels_i8.h"
#include "tinyattn/quant.h"

namespace tinyattn {

namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr int32_t kMinLogitShift = 2;

bool zero_point_ok(int32_t z) { return z >= -128 && z <= 127; }

bool multiplier_ok(FixedMultiplier m) {
  return m.multiplier >= (int32_t{1} << 30) && m.shift >= 0 && m.shift <= 62;
}

// TFLite mode: requantization shifts in [-31, 30] keep TFLite's right shift
// within 31 bits and its left shift below the sign bit; the softmax's beta is a
// multiplier above 1 (PreprocessSoftmaxScaling) capped at 2^31 - 1, so its
// left shift is in [1, 31].
bool tflite_multiplier_ok(TfliteMultiplier m, int32_t lo, int32_t hi) {
  return m.multiplier >= (int32_t{1} << 30) && m.shift >= lo && m.shift <= hi;
}

// TFLite's CalculateInputRadius(5, shift, 31), negated: the softmax's diff_min.
int32_t tflite_diff_min(int32_t beta_shift) {
  return -static_cast<int32_t>((int64_t{31} << 26) >> beta_shift);
}

Status validate_tflite(const Int8HeadPlan& p) {
  const TfliteParams& t = p.tflite;
  if (!tflite_multiplier_ok(t.scores, -31, 30) || !tflite_multiplier_ok(t.output, -31, 30) ||
      !tflite_multiplier_ok(t.beta, 1, 31))
    return Status::kBadQuantization;
  // diff_min is what keeps diff * 2^beta.shift inside int32
  if (t.diff_min != tflite_diff_min(t.beta.shift)) return Status::kBadQuantization;
  if (!zero_point_ok(p.q_zero) || !zero_point_ok(p.k_zero) || !zero_point_ok(p.v_zero) || !zero_point_ok(p.y_zero) ||
      !zero_point_ok(t.scores_zero))
    return Status::kBadQuantization;
  return Status::kOk;
}

// One tensor's scale and zero point for head h (count 1 broadcasts).
Status tensor_params(const QuantParams& p, size_t heads, size_t h, double* scale, int32_t* zero) {
  if (p.count != 1 && p.count != heads) return Status::kBadQuantization;
  const size_t i = p.count == 1 ? 0 : h;
  const float s = p.scale[i];
  if (!std::isfinite(s) || !(s > 0.0f)) return Status::kBadQuantization;
  *scale = s;
  *zero = p.zero_point ? p.zero_point[i] : 0;
  if (!zero_point_ok(*zero)) return Status::kBadQuantization;
  return Status::kOk;
}

}  // namespace

namespace {

Status validate_native(const Int8HeadPlan& p) {
  if (!multiplier_ok(p.logit) || !multiplier_ok(p.output)) return Status::kBadQuantization;
  // shift >= 2 keeps |L_j| <= 2^60, so differences of logits (plus a bias) fit int64.
  if (p.logit.shift < kMinLogitShift) return Status::kBadQuantization;
  const bool no_bias = p.bias.multiplier == 0 && p.bias.shift == 0;
  if (!no_bias && !multiplier_ok(p.bias)) return Status::kBadQuantization;
  if (!zero_point_ok(p.q_zero) || !zero_point_ok(p.k_zero) || !zero_point_ok(p.v_zero) || !zero_point_ok(p.y_zero) ||
      !zero_point_ok(p.bias_zero))
    return Status::kBadQuantization;
  return Status::kOk;
}

// The modes an entry runs: forward_i8() both; AttentionI8<S, M> and the
// int8 self-test one, so an image of one mode links none of the other's code
// (its validation included).
enum ModeSet : unsigned { kNativeOnly = 1, kTfliteOnly = 2, kBothModes = 3 };
constexpr bool runs(unsigned modes, Int8Mode m) { return (modes & (m == Int8Mode::kTflite ? 2u : 1u)) != 0; }

// validate() for an entry that runs kModes: a head of another mode is kUnsupported.
template <unsigned kModes>
Status validate_head(const Int8HeadPlan& p) {
  if (p.mode == Int8Mode::kNative) {
    if constexpr (runs(kModes, Int8Mode::kNative)) return validate_native(p);
    return Status::kUnsupported;
  }
  if (p.mode == Int8Mode::kTflite) {
    if constexpr (runs(kModes, Int8Mode::kTflite)) return validate_tflite(p);
    return Status::kUnsupported;
  }
  return Status::kBadQuantization;
}

}  // namespace

Status validate(const Int8HeadPlan& p) { return validate_head<kBothModes>(p); }

namespace {

// The integers TFLite's Prepare() computes for the model's three ops, from the
// same float scales: BatchMatMul (GetQuantizedConvolutionMultipler, then
// QuantizeMultiplier), Softmax (PreprocessSoftmaxScaling with 5 integer bits,
// CalculateInputRadius), BatchMatMul again. Doubles in TFLite's order.
Status plan_tflite(const Dims& d, const Int8Scheme& sc, float beta, Int8HeadPlan* plans) {
  if (sc.bias.scale) return Status::kUnsupported;  // a TFLite graph would add it as one more requantized op
  if (!sc.scores.scale) return Status::kNullPointer;
  constexpr double kProbScale = 1.0 / 256.0;  // the int8 softmax output's scale (zero point -128)
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t h = 0; h < d.hq; ++h) {
      const size_t kv = h / d.group();
      double sq, sk, sv, sy, ss;
      Int8HeadPlan p;
      p.mode = Int8Mode::kTflite;
      TfliteParams& t = p.tflite;
      if (Status s = tensor_params(sc.q, d.hq, h, &sq, &p.q_zero); s != Status::kOk) return s;
      if (Status s = tensor_params(sc.k, d.hkv, kv, &sk, &p.k_zero); s != Status::kOk) return s;
      if (Status s = tensor_params(sc.v, d.hkv, kv, &sv, &p.v_zero); s != Status::kOk) return s;
      if (Status s = tensor_params(sc.y, d.hq, h, &sy, &p.y_zero); s != Status::kOk) return s;
      if (Status s = tensor_params(sc.scores, d.hq, h, &ss, &t.scores_zero); s != Status::kOk) return s;
      if (Status s = detail::quantize_multiplier(sq * sk / ss, &t.scores); s != Status::kOk) return s;
      if (Status s = detail::quantize_multiplier(kProbScale * sv / sy, &t.output); s != Status::kOk) return s;
      const double beta_real = static_cast<double>(beta) * ss * 67108864.0;  // 2^(31 - 5)
      if (!(beta_real > 1.0)) return Status::kBadQuantization;  // QuantizeMultiplierGreaterThanOne
      if (Status s = detail::quantize_multiplier(beta_real < 2147483647.0 ? beta_real : 2147483647.0, &t.beta);
          s != Status::kOk)
        return s;
      if (!tflite_multiplier_ok(t.scores, -31, 30) || !tflite_multiplier_ok(t.output, -31, 30) ||
          !tflite_multiplier_ok(t.beta, 1, 31))
        return Status::kBadQuantization;
      t.diff_min = tflite_diff_min(t.beta.shift);
      if (pass == 1) plans[h] = p;
    }
  }
  return Status::kOk;
}

}  // namespace

Status plan_int8(const Dims& d, const Int8Scheme& sc, Int8HeadPlan* plans, size_t capacity) {
  if (Status s = validate(d); s != Status::kOk) return s;
  if (!plans || !sc.q.scale || !sc.k.scale || !sc.v.scale || !sc.y.scale) return Status::kNullPointer;
  if (capacity < d.hq) return Status::kBadQuantization;
  if (sc.softmax_scale && !std::isfinite(*sc.softmax_scale)) return Status::kBadScale;
  const float softmax_scale = sc.softmax_scale ? *sc.softmax_scale : 1.0f / std::sqrt(static_cast<float>(d.dk));
  if (!(softmax_scale > 0.0f)) return Status::kBadQuantization;  // the max-subtraction needs a positive scale
  if (sc.mode == Int8Mode::kTflite) return plan_tflite(d, sc, softmax_scale, plans);
  if (sc.mode != Int8Mode::kNative) return Status::kBadQuantization;
  // Every head first, so an error leaves plans untouched.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t h = 0; h < d.hq; ++h) {
      const size_t kv = h / d.group();
      double sq, sk, sv, sy;
      Int8HeadPlan p;
      if (Status s = tensor_params(sc.q, d.hq, h, &sq, &p.q_zero); s != Status::kOk) return s;
      if (Status s = tensor_params(sc.k, d.hkv, kv, &sk, &p.k_zero); s != Status::kOk) return s;
      if (Status s = tensor_params(sc.v, d.hkv, kv, &sv, &p.v_zero); s != Status::kOk) return s;
      if (Status s = tensor_params(sc.y, d.hq, h, &sy, &p.y_zero); s != Status::kOk) return s;
      // Fixed evaluation order (NumPy mirrors it) so the plan is the same everywhere.
      const double logit = static_cast<double>(softmax_scale) * sq * sk * kLog2e * 67108864.0;  // 2^26
      const double output = sv / (sy * 32768.0);
      if (Status s = make_multiplier(logit, &p.logit); s != Status::kOk) return s;
      if (p.logit.shift < kMinLogitShift) return Status::kBadQuantization;
      if (Status s = make_multiplier(output, &p.output); s != Status::kOk) return s;
      if (sc.bias.scale) {
        double sb;
        if (Status s = tensor_params(sc.bias, d.hq, h, &sb, &p.bias_zero); s != Status::kOk) return s;
        if (Status s = make_multiplier(sb * kLog2e * 67108864.0, &p.bias); s != Status::kOk) return s;
      }
      if (pass == 1) plans[h] = p;
    }
  }
  return Status::kOk;
}

namespace {

using detail::Tensor;

// find_port() looks up the call's kernels (false: the port is not
// compiled in), at this point of the checks: the caller's lookup, so that
// an image links only the tables its calls can reach.
template <unsigned kModes, class FindPort>
Status validate_forward_i8(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws,
                           const Mask& mask, const Options& o, FindPort find_port) {
  if (Status s = validate(d); s != Status::kOk) return s;
  if (d.dk > kMaxDkInt8 || d.m >= kMaxMInt8) return Status::kBadDimension;
  if (Status s = validate(mask, d); s != Status::kOk) return s;
  if (mask.bias) return Status::kUnsupported;
  if (o.scale) return Status::kUnsupported;  // the plan holds the softmax scale
  // tanh of an integer score has no exact fixed-point form the plan could state
  if (o.softcap) return Status::kUnsupported;
  if (!find_port()) return Status::kPortUnavailable;
  const Tensor inputs[] = {{io.q, d.q_elems(), 1, true},
                           {io.k, d.k_elems(), 1, true},
                           {io.v, d.v_elems(), 1, true},
                           {plan.heads, plan.count * sizeof(Int8HeadPlan), alignof(Int8HeadPlan), true},
                           {io.bias, io.bias ? detail::mask_rows_bytes(d, d.m, mask.head_stride) : 0},
                           detail::keep_tensor(mask, d)};
  const Tensor outputs[] = {{io.y, d.y_elems(), 1, true},
                            {io.weights, d.weight_elems() * sizeof(uint16_t), alignof(uint16_t), false}};
  if (Status s = detail::check_pointers(inputs, outputs, ws); s != Status::kOk) return s;
  if (plan.count != d.hq) return Status::kBadQuantization;
  for (size_t h = 0; h < d.hq; ++h) {
    if (Status s = validate_head<kModes>(plan.heads[h]); s != Status::kOk) return s;
    if (plan.heads[h].mode == Int8Mode::kTflite) {
      if (io.bias) return Status::kUnsupported;
      if (d.m > kMaxMTflite) return Status::kBadDimension;  // the softmax's Q12.19 sum
    } else if (io.bias && plan.heads[h].bias.multiplier == 0) {
      return Status::kBadQuantization;
    }
  }
  return detail::check_memory(inputs, outputs, ws, forward_i8_workspace_bytes(d), ws.bytes);
}

bool kept(const Mask& mask, const Dims& d, size_t h, size_t i, size_t j) {
  const size_t head_offset = h * mask.head_stride;
  if (mask.keep) return mask.keep[head_offset + i * d.m + j] != 0;
  if (mask.keep_bits) {
    const uint8_t* row = mask.keep_bits + head_offset + i * keep_bits_row_bytes(d.m);
    return (row[j >> 3] >> (j & 7)) & 1u;
  }
  return true;
}

// tflite_ops.h's softmax passes and requantization where the port has no
// TFLite-mode kernels, each in a frame of its own: inlined into tflite_head,
// their 64-bit temporaries on a core without a long multiply (Armv6-M) put
// forward_i8 past the stack bound (docs/hardening.md).
TINYATTN_NOINLINE int32_t portable_softmax_exps(int32_t* s, size_t n, int32_t max, const TfliteParams& t,
                                                int32_t* exps) {
  return tflite_ops::softmax_exps(s, n, max, t, exps);
}
TINYATTN_NOINLINE void portable_softmax_outputs(int32_t* e, size_t n, int32_t scale, int exponent) {
  tflite_ops::softmax_outputs(e, n, scale, exponent);
}
// A row's int32 scores into the int8 score tensor, masked keys -128; returns its maximum.
TINYATTN_NOINLINE int32_t portable_requantize_scores(int32_t* s, const Dims& d, const Mask& mask, size_t h, size_t i,
                                                     KeyRange r, const TfliteParams& t) {
  const bool element_masks = mask.keep || mask.keep_bits;
  int32_t max = -128;
  for (size_t j = 0; j < d.m; ++j) {
    const bool visible = j >= r.lo && j < r.hi && (!element_masks || kept(mask, d, h, i, j));
    s[j] = visible ? tflite_ops::requantize(s[j], t.scores, t.scores_zero) : -128;
    max = s[j] > max ? s[j] : max;
  }
  return max;
}
TINYATTN_NOINLINE void portable_requantize_y(const int32_t* acc, size_t n, TfliteMultiplier m, int32_t zero,
                                             int8_t* y) {
  for (size_t c = 0; c < n; ++c) y[c] = static_cast<int8_t>(tflite_ops::requantize(acc[c], m, zero));
}

// One query head of Int8Mode::kTflite, row by row: the port's exact scores
// over the key range, TFLite's requantization into the int8 score tensor
// (masked keys -128), TFLite's softmax over all M keys, the port's exact
// P.V sums of the weights (softmax output + 128) and TFLite's requantization.
// The products are the route's; the per-element steps run the port's
// TFLite-mode kernels where it has them (kernels_i8.h), otherwise
// tflite_ops.h's.
void tflite_head(const TfliteRouteI8& route, const Dims& d, const ForwardIoI8& io, const Int8HeadPlan& p, size_t h,
                 const Mask& mask, int32_t* s, int32_t* acc, int32_t* exps) {
  const KernelsI8Tflite* tk = route.steps;
  if (exps)
    for (size_t i = 0; i < tflite_ops::kExpTableSize; ++i) exps[i] = -1;
  const TfliteParams& t = p.tflite;
  const bool element_masks = mask.keep || mask.keep_bits;
  const size_t kv_head = h / d.group();
  const int8_t* k_head = io.k + kv_head * d.m * d.dk;
  const int8_t* v_head = io.v + kv_head * d.m * d.dv;
  for (size_t i = 0; i < d.n; ++i) {
    const size_t row = h * d.n + i;
    const KeyRange r = key_range(mask, i, d.n, d.m);
    const int32_t top = r.size() ? route.scores(io.q + row * d.dk, k_head + r.lo * d.dk, d.dk, r.size(), d.dk,
                                               p.q_zero, p.k_zero, s + r.lo)
                                 : 0;
    int32_t max = -128;
    if (tk) {
      for (size_t j = 0; j < r.lo; ++j) s[j] = -128;
      for (size_t j = r.hi; j < d.m; ++j) s[j] = -128;
      if (r.size()) {
        tk->requantize(s + r.lo, r.size(), t.scores, t.scores_zero, s + r.lo, nullptr);
        // The keys an element mask drops, after the requantization of the
        // whole range: the same -128 as portable_requantize_scores gives.
        if (element_masks)
          for (size_t j = r.lo; j < r.hi; ++j)
            if (!kept(mask, d, h, i, j)) s[j] = -128;
        // MBQM is monotonic where x 2^shift does not wrap (shift <= 0): the
        // largest sum gives the largest score (with every key kept).
        max = t.scores.shift <= 0 && !element_masks ? tflite_ops::requantize(top, t.scores, t.scores_zero)
                                                    : tflite_ops::softmax_max(s + r.lo, r.size());
      }
    } else {
      max = portable_requantize_scores(s, d, mask, h, i, r, t);
    }
    // TFLite's softmax_row (tflite_ops.h) in its passes.
    const int32_t sum = exps && tk ? tk->exps(s, d.m, max, t, exps) : portable_softmax_exps(s, d.m, max, t, exps);
    int exponent = 0;
    const int32_t scale = tflite_ops::softmax_reciprocal(sum, &exponent);
    if (tk)
      tk->outputs(s, d.m, scale, exponent);
    else
      portable_softmax_outputs(s, d.m, scale, exponent);
    if (io.weights)
      for (size_t j = 0; j < d.m; ++j) io.weights[row * d.m + j] = static_cast<uint16_t>(s[j]);
    // weights in [0, 255] summing to about 256: inside weighted_sum's contract
    route.weighted_sum(s, v_head, d.dv, d.m, d.dv, p.v_zero, acc);
    int8_t* y_row = io.y + row * d.dv;
    if (tk)
      tk->requantize(acc, d.dv, t.output, p.y_zero, nullptr, y_row);
    else
      portable_requantize_y(acc, d.dv, t.output, p.y_zero, y_row);
  }
}

TfliteRouteI8 no_tflite_route() { return {}; }

// kern: the port's table (null where no head runs the native mode);
// tflite_route(): the TFLite mode's route, looked up per TFLite head, so
// native heads do not pay for it.
template <unsigned kModes, class TfliteRoute>
void run_forward_i8(const KernelsI8* kern, TfliteRoute tflite_route, const Dims& d, const ForwardIoI8& io,
                    const Int8Plan& plan, Workspace ws, const Mask& mask) {
  const bool element_masks = mask.keep || mask.keep_bits;
  int32_t* s = reinterpret_cast<int32_t*>(detail::workspace_floats(ws));  // aligned, keeps the pointer's provenance
  int32_t* acc = s + align_up(d.m * sizeof(int32_t), kWorkspaceAlign) / sizeof(int32_t);
  // Marks a key the keep mask drops. No score can equal it: |s| < 2^31 - 1.
  constexpr int32_t kMasked = INT32_MIN;
  // kTflite: a workspace of forward_i8_tflite_workspace_bytes holds the exp table after acc.
  int32_t* exps = nullptr;
  if constexpr (runs(kModes, Int8Mode::kTflite)) {
    if (ws.bytes >= forward_i8_tflite_workspace_bytes(d))
      exps = acc + align_up(d.dv * sizeof(int32_t), kWorkspaceAlign) / sizeof(int32_t);
  }

  for (size_t h = 0; h < d.hq; ++h) {
    const Int8HeadPlan& p = plan.heads[h];
    if constexpr (runs(kModes, Int8Mode::kTflite)) {
      if (p.mode == Int8Mode::kTflite) {
        tflite_head(tflite_route(), d, io, p, h, mask, s, acc, exps);
        continue;
      }
    }
    if constexpr (!runs(kModes, Int8Mode::kNative)) continue;
    const size_t kv_head = h / d.group();
    const int8_t* k_head = io.k + kv_head * d.m * d.dk;
    const int8_t* v_head = io.v + kv_head * d.m * d.dv;
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      const int8_t* q_row = io.q + row * d.dk;
      int8_t* y_row = io.y + row * d.dv;
      uint16_t* w_row = io.weights ? io.weights + row * d.m : nullptr;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      const size_t len = r.size();
      if (w_row) std::memset(w_row, 0, d.m * sizeof(uint16_t));

      // Scores: exact int32 dot products of zero-point-corrected values
      // (|s| <= 255 * 255 * kMaxDkInt8 < 2^31).
      int32_t max_score = len ? kern->scores(q_row, k_head + r.lo * d.dk, d.dk, len, d.dk, p.q_zero, p.k_zero, s)
                              : kMasked;
      bool any = len > 0;
      if (element_masks) {
        any = false;
        max_score = kMasked;
        for (size_t j = 0; j < len; ++j) {
          if (!kept(mask, d, h, i, r.lo + j)) {
            s[j] = kMasked;
          } else {
            if (!any || s[j] > max_score) max_score = s[j];
            any = true;
          }
        }
      }
      if (!any) {  // no visible key: the output is real zero, i.e. the zero point
        for (size_t c = 0; c < d.dv; ++c) y_row[c] = static_cast<int8_t>(p.y_zero);
        continue;
      }

      int64_t sum = 0;
      if (io.bias) {
        // Base-2 logit with 26 fraction bits: |L| <= 2^60 + 2^39 (logit shift >= 2).
        // The bias breaks the monotonicity in s, so the logits are formed here.
        const int8_t* b_row = io.bias + h * mask.head_stride + i * d.m + r.lo;
        auto logit = [&](size_t j) {
          return detail::apply_inline(p.logit, s[j]) +
                 detail::apply_inline(p.bias, static_cast<int64_t>(b_row[j]) - p.bias_zero);
        };
        bool first = true;
        int64_t max = 0;
        for (size_t j = 0; j < len; ++j) {
          if (s[j] == kMasked) continue;
          const int64_t l = logit(j);
          if (first || l > max) max = l;
          first = false;
        }
        for (size_t j = 0; j < len; ++j) {
          s[j] = s[j] == kMasked ? 0 : exp2_q30(logit(j) - max);  // u_j in (-2^62, 0]
          sum += s[j];
        }
      } else {
        // apply() is monotonic in s, so the largest score gives the largest logit.
        sum = kern->exp_row(s, len, p.logit, detail::apply_inline(p.logit, max_score), s);
      }

      // Probabilities in Q0.15, then P V in int32 (kernels_i8.h: exact).
      kern->probabilities(s, len, sum, s);
      if (w_row)
        for (size_t j = 0; j < len; ++j) w_row[r.lo + j] = static_cast<uint16_t>(s[j]);
      kern->weighted_sum(s, v_head + r.lo * d.dv, d.dv, len, d.dv, p.v_zero, acc);
      kern->requantize(acc, d.dv, p.output, p.y_zero, y_row);
    }
  }
}

}  // namespace

void detail::forward_i8_validated(const KernelsI8& kernels, const Dims& d, const ForwardIoI8& io, const Int8Plan& plan,
                                  Workspace ws, const Mask& mask) {
  run_forward_i8<kNativeOnly>(&kernels, no_tflite_route, d, io, plan, ws, mask);
}

Status forward_i8(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws, const Mask& mask,
                  const Options& o) {
  const KernelsI8* kern = nullptr;
  auto find_port = [&] { return (kern = kernels_i8(o.port)) != nullptr; };
  if (Status s = validate_forward_i8<kBothModes>(d, io, plan, ws, mask, o, find_port); s != Status::kOk) return s;
  auto route = [&] { return TfliteRouteI8{kern->scores, kern->weighted_sum, tflite_kernels_i8(o.port)}; };
  run_forward_i8<kBothModes>(kern, route, d, io, plan, ws, mask);
  return Status::kOk;
}

Status detail::forward_i8_native(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws,
                                 const Mask& mask, const Options& o) {
  const KernelsI8* kern = nullptr;
  auto find_port = [&] { return (kern = kernels_i8(o.port)) != nullptr; };
  if (Status s = validate_forward_i8<kNativeOnly>(d, io, plan, ws, mask, o, find_port); s != Status::kOk) return s;
  run_forward_i8<kNativeOnly>(kern, no_tflite_route, d, io, plan, ws, mask);
  return Status::kOk;
}

// The default port, bound at compile time: kernels_i8() and every other
// port's table stay out of images that never name a port, and an image of
// the TFLite mode alone reaches the port through its route alone.
template <Int8Mode kMode>
Status detail::forward_i8_default_port(const Dims& d, const ForwardIoI8& io, const Int8Plan& plan, Workspace ws,
                                       const Mask& mask) {
  if constexpr (kMode == Int8Mode::kTflite) {
    TfliteRouteI8 route;
    auto find_port = [&] { return (route = default_tflite_route_i8()).scores != nullptr; };
    if (Status s = validate_forward_i8<kTfliteOnly>(d, io, plan, ws, mask, Options{}, find_port); s != Status::kOk)
      return s;
    run_forward_i8<kTfliteOnly>(nullptr, [&route] { return route; }, d, io, plan, ws, mask);
  } else {
    const KernelsI8* kern = nullptr;
    auto find_port = [&] { return (kern = default_kernels_i8()) != nullptr; };
    if (Status s = validate_forward_i8<kNativeOnly>(d, io, plan, ws, mask, Options{}, find_port); s != Status::kOk)
      return s;
    run_forward_i8<kNativeOnly>(kern, no_tflite_route, d, io, plan, ws, mask);
  }
  return Status::kOk;
}
template Status detail::forward_i8_default_port<Int8Mode::kNative>(const Dims&, const ForwardIoI8&, const Int8Plan&,
                                                                   Workspace, const Mask&);
template Status detail::forward_i8_default_port<Int8Mode::kTflite>(const Dims&, const ForwardIoI8&, const Int8Plan&,
                                                                   Workspace, const Mask&);

}  // namespace tinyattn
