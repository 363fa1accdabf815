// The int16 path: plan (setup, floating point once) and forward (integers
// only). Every operation here is specified in quant_i16.h and docs/quant.md
// and mirrored in NumPy by tests/quant/gen_int16_vectors.py; change both
// together. The softmax's integer steps (exp2_q30, the Q0.15
// probabilities) are the int8 path's. Int16Mode::kTflite composes
// tflite16_ops.h and is mirrored by tests/quant/gen_tflite16_vectors.py.
#include <climits>
#include <cmath>
#include <cstring>

#include "detail.h"
#include "tflite16_ops.h"
#include "tinyattn/kernels_i16.h"
#include "tinyattn/quant_i16.h"

namespace tinyattn {

namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr int64_t kWideCap = int64_t{1} << 62;

bool multiplier_ok(FixedMultiplier m) {
  return m.multiplier >= (int32_t{1} << 30) && m.shift >= 0 && m.shift <= 62;
}

// One tensor's scale for head h (count 1 broadcasts); zero points must be 0.
Status tensor_scale(const QuantParams& p, size_t heads, size_t h, double* scale) {
  if (p.count != 1 && p.count != heads) return Status::kBadQuantization;
  const size_t i = p.count == 1 ? 0 : h;
  const float s = p.scale[i];
  if (!std::isfinite(s) || !(s > 0.0f)) return Status::kBadQuantization;
  if (p.zero_point && p.zero_point[i] != 0) return Status::kBadQuantization;
  *scale = s;
  return Status::kOk;
}

// TFLite mode: the int64 requantizations' shifts in [-31, 7] (TFLite's
// asserted domain: every step in int64), the softmax multiplier's in
// [-31, 30] (its int32 left shift below the sign bit, its right shift
// within 31 bits).
bool tflite_multiplier_ok(TfliteMultiplier m, int32_t lo, int32_t hi) {
  return m.multiplier >= (int32_t{1} << 30) && m.shift >= lo && m.shift <= hi;
}

Status validate_native(const Int16HeadPlan& p) {
  if (!multiplier_ok(p.logit) || !multiplier_ok(p.output)) return Status::kBadQuantization;
  return Status::kOk;
}

Status validate_tflite(const Int16HeadPlan& p) {
  const TfliteParamsI16& t = p.tflite;
  if (!tflite_multiplier_ok(t.scores, -31, 7) || !tflite_multiplier_ok(t.output, -31, 7) ||
      !tflite_multiplier_ok(t.beta, -31, 30))
    return Status::kBadQuantization;
  return Status::kOk;
}

// The modes an entry runs: forward_i16() both; AttentionI16<S, M> and the
// int16 self-test one, so an image of one mode links none of the other's
// code (its validation included).
enum ModeSet : unsigned { kNativeOnly = 1, kTfliteOnly = 2, kBothModes = 3 };
constexpr bool runs(unsigned modes, Int16Mode m) { return (modes & (m == Int16Mode::kTflite ? 2u : 1u)) != 0; }

// validate() for an entry that runs kModes: a head of another mode is kUnsupported.
// (The native heads' test first: the native entries' success path as
// before the TFLite mode.)
template <unsigned kModes>
Status validate_head(const Int16HeadPlan& p) {
  if (p.mode != Int16Mode::kNative) {
    if (p.mode != Int16Mode::kTflite) return Status::kBadQuantization;
    if constexpr (runs(kModes, Int16Mode::kTflite)) return validate_tflite(p);
    return Status::kUnsupported;
  }
  if constexpr (runs(kModes, Int16Mode::kNative)) return validate_native(p);
  return Status::kUnsupported;
}

}  // namespace

int64_t apply_wide(FixedMultiplier m, int64_t x) {
  // x * multiplier = hi * 2^32 + lo' with both halves in uint64; the rounding
  // half is added to the low half, and floor(floor(a / 2^32) / 2^b) =
  // floor(a / 2^(32 + b)) lets a shift of 32 or more drop the low half first.
  const uint64_t ux = static_cast<uint64_t>(x);
  const uint64_t mul = static_cast<uint32_t>(m.multiplier);
  const uint64_t half = m.shift > 0 ? uint64_t{1} << (m.shift - 1) : 0;
  const uint64_t hi = (ux >> 32) * mul;                  // < 2^62
  const uint64_t lo = (ux & 0xffffffffu) * mul + half;   // < 2^63 + 2^61
  uint64_t r;
  if (m.shift >= 32) {
    r = (hi + (lo >> 32)) >> (m.shift - 32);
  } else {
    if (hi >= (uint64_t{1} << (30 + m.shift))) return kWideCap;  // hi * 2^(32 - shift) >= 2^62
    r = (hi << (32 - m.shift)) + (lo >> m.shift);
  }
  return r >= static_cast<uint64_t>(kWideCap) ? kWideCap : static_cast<int64_t>(r);
}

Status validate(const Int16HeadPlan& p) { return validate_head<kBothModes>(p); }

namespace {

// The integers TFLite Micro's Prepare() computes for the model's three int16
// ops, from the same float scales, in double and in TFLite's order:
// BatchMatMul (GetQuantizedConvolutionMultipler, then QuantizeMultiplier),
// Softmax (QuantizeMultiplier of s_scores * beta / (10 / 65535)),
// BatchMatMul again with the softmax output's scale 1/32768.
Status plan_tflite(const Dims& d, const Int16Scheme& sc, float beta, Int16HeadPlan* plans) {
  if (!sc.scores.scale) return Status::kNullPointer;
  constexpr double kProbScale = 1.0 / 32768.0;  // the int16 softmax output's scale (zero point 0)
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t h = 0; h < d.hq; ++h) {
      const size_t kv = h / d.group();
      double sq, sk, sv, sy, ss;
      if (Status s = tensor_scale(sc.q, d.hq, h, &sq); s != Status::kOk) return s;
      if (Status s = tensor_scale(sc.k, d.hkv, kv, &sk); s != Status::kOk) return s;
      if (Status s = tensor_scale(sc.v, d.hkv, kv, &sv); s != Status::kOk) return s;
      if (Status s = tensor_scale(sc.y, d.hq, h, &sy); s != Status::kOk) return s;
      if (Status s = tensor_scale(sc.scores, d.hq, h, &ss); s != Status::kOk) return s;
      Int16HeadPlan p;
      p.mode = Int16Mode::kTflite;
      TfliteParamsI16& t = p.tflite;
      if (Status s = detail::quantize_multiplier(sq * sk / ss, &t.scores); s != Status::kOk) return s;
      if (Status s = detail::quantize_multiplier(ss * static_cast<double>(beta) / (10.0 / 65535.0), &t.beta);
          s != Status::kOk)
        return s;
      if (Status s = detail::quantize_multiplier(kProbScale * sv / sy, &t.output); s != Status::kOk) return s;
      if (Status s = validate_tflite(p); s != Status::kOk) return s;
      if (pass == 1) plans[h] = p;
    }
  }
  return Status::kOk;
}

}  // namespace

Status plan_int16(const Dims& d, const Int16Scheme& sc, Int16HeadPlan* plans, size_t capacity) {
  if (Status s = validate(d); s != Status::kOk) return s;
  if (!plans || !sc.q.scale || !sc.k.scale || !sc.v.scale || !sc.y.scale) return Status::kNullPointer;
  if (capacity < d.hq) return Status::kBadQuantization;
  if (sc.mode != Int16Mode::kNative && sc.mode != Int16Mode::kTflite) return Status::kBadQuantization;
  if (sc.softmax_scale && !std::isfinite(*sc.softmax_scale)) return Status::kBadScale;
  const float softmax_scale = sc.softmax_scale ? *sc.softmax_scale : 1.0f / std::sqrt(static_cast<float>(d.dk));
  if (!(softmax_scale > 0.0f)) return Status::kBadQuantization;  // the max-subtraction needs a positive scale
  if (sc.mode == Int16Mode::kTflite) return plan_tflite(d, sc, softmax_scale, plans);
  // Every head first, so an error leaves plans untouched.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t h = 0; h < d.hq; ++h) {
      const size_t kv = h / d.group();
      double sq, sk, sv, sy;
      if (Status s = tensor_scale(sc.q, d.hq, h, &sq); s != Status::kOk) return s;
      if (Status s = tensor_scale(sc.k, d.hkv, kv, &sk); s != Status::kOk) return s;
      if (Status s = tensor_scale(sc.v, d.hkv, kv, &sv); s != Status::kOk) return s;
      if (Status s = tensor_scale(sc.y, d.hq, h, &sy); s != Status::kOk) return s;
      Int16HeadPlan p;
      // Fixed evaluation order (NumPy mirrors it) so the plan is the same everywhere.
      const double logit = static_cast<double>(softmax_scale) * sq * sk * kLog2e * 67108864.0;  // 2^26
      const double output = sv / (sy * 32768.0);
      if (Status s = make_multiplier(logit, &p.logit); s != Status::kOk) return s;
      if (Status s = make_multiplier(output, &p.output); s != Status::kOk) return s;
      if (pass == 1) plans[h] = p;
    }
  }
  return Status::kOk;
}

namespace {

using detail::Tensor;

// find_port() looks up the call's kernels (false: the port is not compiled
// in), at this point of the checks: the caller's lookup, so that an image
// links only the tables its calls can reach.
template <unsigned kModes, class FindPort>
Status validate_forward_i16(const Dims& d, const ForwardIoI16& io, const Int16Plan& plan, Workspace ws,
                            const Mask& mask, const Options& o, FindPort find_port) {
  if (Status s = validate(d); s != Status::kOk) return s;
  if (d.dk > kMaxDkInt16 || d.m > kMaxMInt16) return Status::kBadDimension;
  if (Status s = validate(mask, d); s != Status::kOk) return s;
  if (mask.bias) return Status::kUnsupported;
  if (o.scale) return Status::kUnsupported;  // the plan holds the softmax scale
  if (o.softcap) return Status::kUnsupported;  // no exact fixed-point tanh
  if (!find_port()) return Status::kPortUnavailable;
  const Tensor inputs[] = {{io.q, d.q_elems() * sizeof(int16_t), alignof(int16_t), true},
                           {io.k, d.k_elems() * sizeof(int16_t), alignof(int16_t), true},
                           {io.v, d.v_elems() * sizeof(int16_t), alignof(int16_t), true},
                           {plan.heads, plan.count * sizeof(Int16HeadPlan), alignof(Int16HeadPlan), true},
                           detail::keep_tensor(mask, d)};
  const Tensor outputs[] = {{io.y, d.y_elems() * sizeof(int16_t), alignof(int16_t), true},
                            {io.weights, d.weight_elems() * sizeof(uint16_t), alignof(uint16_t), false}};
  if (Status s = detail::check_pointers(inputs, outputs, ws); s != Status::kOk) return s;
  if (plan.count != d.hq) return Status::kBadQuantization;
  for (size_t h = 0; h < d.hq; ++h)
    if (Status s = validate_head<kModes>(plan.heads[h]); s != Status::kOk) return s;
  return detail::check_memory(inputs, outputs, ws, forward_i16_workspace_bytes(d), ws.bytes);
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

// The int16 score tensor of row i: the exact sums s[0..r.size()) of the
// keys in the range requantized, every other key -32768 (outside the range
// or dropped by the keep mask). Returns the row's maximum.
TINYATTN_NOINLINE int32_t tflite_scores(const int64_t* s, const Dims& d, const Mask& mask, size_t h, size_t i,
                                        KeyRange r, TfliteMultiplier m, int32_t* out) {
  const bool element_masks = mask.keep || mask.keep_bits;
  int32_t max = -32768;
  for (size_t j = 0; j < d.m; ++j) {
    const bool visible = j >= r.lo && j < r.hi && (!element_masks || kept(mask, d, h, i, j));
    out[j] = visible ? tflite_ops::requantize_i16(s[j - r.lo], m) : -32768;
    max = out[j] > max ? out[j] : max;
  }
  return max;
}

// TFLite's int16 softmax of a row in place (scores in, outputs in
// [0, 32767] out); returns the sum of the outputs.
TINYATTN_NOINLINE int32_t tflite_softmax(int32_t* x, size_t n, int32_t max, TfliteMultiplier beta) {
  int32_t sum = 0;  // n <= kMaxMInt16 exps of at most 32767: int32
  for (size_t j = 0; j < n; ++j) {
    x[j] = tflite_ops::softmax16_exp(x[j] - max, beta);
    sum += x[j];
  }
  int right_shift = 0;
  const int32_t reciprocal = tflite_ops::softmax16_reciprocal(sum, &right_shift);
  int32_t total = 0;
  for (size_t j = 0; j < n; ++j) {
    x[j] = tflite_ops::softmax16_output(x[j], reciprocal, right_shift);
    total += x[j];
  }
  return total;
}

// tflite_softmax on the port's TFLite-16 kernels (in a frame of its own, as
// tflite_softmax: the reciprocal's 64-bit temporaries stay out of
// tflite_head's).
TINYATTN_NOINLINE int32_t port_softmax(const KernelsI16Tflite& tk, int32_t* x, size_t n, int32_t max,
                                       TfliteMultiplier beta) {
  const int32_t sum = tk.exps(x, n, max, beta, tflite_ops::kTflite16ExpLut);
  int right_shift = 0;
  const int32_t reciprocal = tflite_ops::softmax16_reciprocal(sum, &right_shift);
  return tk.outputs(x, n, reciprocal, right_shift);
}

// P.V of a row whose weights sum past KernelsI16::weighted_sum's bound: the
// BatchMatMul's int64 sums, column by column, requantized.
TINYATTN_NOINLINE void tflite_weighted_sum_i64(const int32_t* p, const int16_t* v, const Dims& d, TfliteMultiplier m,
                                               int16_t* y) {
  for (size_t c = 0; c < d.dv; ++c) {
    int64_t acc = 0;
    for (size_t j = 0; j < d.m; ++j) acc += static_cast<int64_t>(p[j]) * v[j * d.dv + c];
    y[c] = static_cast<int16_t>(tflite_ops::requantize_i16(acc, m));
  }
}

// One query head of Int16Mode::kTflite, row by row: the port's exact int64
// scores over the key range, TFLite's requantization into the int16 score
// tensor (masked keys -32768), TFLite's int16 softmax over all M keys, P.V
// over all M keys (the route's exact int32 weighted_sum where the weights
// keep its contract, else int64) and TFLite's requantization into Y. The
// per-element steps run the port's TFLite-16 kernels where it has them
// (kernels_i16.h), otherwise tflite16_ops.h's.
TINYATTN_NOINLINE void tflite_head(const TfliteRouteI16& route, const Dims& d, const ForwardIoI16& io,
                                   const Int16HeadPlan& p, size_t h, const Mask& mask, int64_t* s, int32_t* x,
                                   int32_t* acc) {
  const KernelsI16Tflite* tk = route.steps;
  const TfliteParamsI16& t = p.tflite;
  const bool element_masks = mask.keep || mask.keep_bits;
  const size_t kv_head = h / d.group();
  const int16_t* k_head = io.k + kv_head * d.m * d.dk;
  const int16_t* v_head = io.v + kv_head * d.m * d.dv;
  for (size_t i = 0; i < d.n; ++i) {
    const size_t row = h * d.n + i;
    const KeyRange r = key_range(mask, i, d.n, d.m);
    if (r.size()) route.scores(io.q + row * d.dk, k_head + r.lo * d.dk, d.dk, r.size(), d.dk, s);
    int32_t total = 0;
    if (tk) {
      for (size_t j = 0; j < r.lo; ++j) x[j] = -32768;
      for (size_t j = r.hi; j < d.m; ++j) x[j] = -32768;
      int32_t max = r.size() ? tk->requantize(s, r.size(), t.scores, x + r.lo) : -32768;
      // The keys an element mask drops, after the requantization of the
      // whole range: the same -32768 and maximum as tflite_scores gives.
      if (element_masks && r.size()) {
        max = -32768;
        for (size_t j = r.lo; j < r.hi; ++j) {
          if (!kept(mask, d, h, i, j)) x[j] = -32768;
          max = x[j] > max ? x[j] : max;
        }
      }
      total = port_softmax(*tk, x, d.m, max, t.beta);
    } else {
      const int32_t max = tflite_scores(s, d, mask, h, i, r, t.scores, x);
      total = tflite_softmax(x, d.m, max, t.beta);
    }
    if (io.weights)
      for (size_t j = 0; j < d.m; ++j) io.weights[row * d.m + j] = static_cast<uint16_t>(x[j]);
    int16_t* y_row = io.y + row * d.dv;
    // Each weight is at most 32767; their sum can pass 32768 + M/2 by a few
    // units (1/(1+x)'s table rounds up by up to 2.6 parts in 32768).
    if (static_cast<uint32_t>(total) > kProbOne + d.m / 2) {
      tflite_weighted_sum_i64(x, v_head, d, t.output, y_row);
      continue;
    }
    route.weighted_sum(x, v_head, d.dv, d.m, d.dv, acc);
    if (tk)
      tk->requantize_y(acc, d.dv, t.output, y_row);
    else
      for (size_t c = 0; c < d.dv; ++c) y_row[c] = static_cast<int16_t>(tflite_ops::requantize_i16(acc[c], t.output));
  }
}

// Validated plans with TFLite heads, head by head; a native head of a mixed
// plan runs forward_i16_validated on that head alone (its Q, K, V, Y,
// weights and keep mask), so the native loop is the same code either way.
// kern: the port's table (null where no head runs the native mode).
template <unsigned kModes>
void run_tflite_heads(const KernelsI16* kern, const TfliteRouteI16& route, const Dims& d, const ForwardIoI16& io,
                      const Int16Plan& plan, Workspace ws, const Mask& mask) {
  // The workspace rows of forward_i16_validated: M int64 scores, M int32
  // (scores, exps, weights), Dv int32 sums.
  int64_t* s = reinterpret_cast<int64_t*>(detail::workspace_floats(ws));
  int32_t* x = reinterpret_cast<int32_t*>(s + align_up(d.m * sizeof(int64_t), kWorkspaceAlign) / sizeof(int64_t));
  int32_t* acc = x + align_up(d.m * sizeof(int32_t), kWorkspaceAlign) / sizeof(int32_t);
  for (size_t h = 0; h < d.hq; ++h) {
    const Int16HeadPlan& p = plan.heads[h];
    if (p.mode == Int16Mode::kTflite) {
      tflite_head(route, d, io, p, h, mask, s, x, acc);
      continue;
    }
    if constexpr (runs(kModes, Int16Mode::kNative)) {
      const size_t kv = h / d.group();
      const Dims one{d.n, d.m, d.dk, d.dv, 1, 1};
      const ForwardIoI16 head_io{io.q + h * d.n * d.dk, io.k + kv * d.m * d.dk, io.v + kv * d.m * d.dv,
                                 io.y + h * d.n * d.dv, io.weights ? io.weights + h * d.n * d.m : nullptr};
      Mask head_mask = mask;
      if (mask.keep) head_mask.keep = mask.keep + h * mask.head_stride;
      if (mask.keep_bits) head_mask.keep_bits = mask.keep_bits + h * mask.head_stride;
      detail::forward_i16_validated(*kern, one, head_io, Int16Plan{&p, 1}, ws, head_mask);
    }
  }
}

}  // namespace

void detail::forward_i16_validated(const KernelsI16& kern, const Dims& d, const ForwardIoI16& io,
                                   const Int16Plan& plan, Workspace ws, const Mask& mask) {
  const bool element_masks = mask.keep || mask.keep_bits;
  // aligned, keeps the pointer's provenance
  int64_t* s = reinterpret_cast<int64_t*>(detail::workspace_floats(ws));
  int32_t* e = reinterpret_cast<int32_t*>(s + align_up(d.m * sizeof(int64_t), kWorkspaceAlign) / sizeof(int64_t));
  int32_t* acc = e + align_up(d.m * sizeof(int32_t), kWorkspaceAlign) / sizeof(int32_t);
  // Marks a key the keep mask drops. No score can equal it: |s| <= 2^45.
  constexpr int64_t kMasked = INT64_MIN;

  for (size_t h = 0; h < d.hq; ++h) {
    const Int16HeadPlan& p = plan.heads[h];
    const size_t kv_head = h / d.group();
    const int16_t* k_head = io.k + kv_head * d.m * d.dk;
    const int16_t* v_head = io.v + kv_head * d.m * d.dv;
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      int16_t* y_row = io.y + row * d.dv;
      uint16_t* w_row = io.weights ? io.weights + row * d.m : nullptr;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      const size_t len = r.size();
      if (w_row) std::memset(w_row, 0, d.m * sizeof(uint16_t));

      int64_t max_score = len ? kern.scores(io.q + row * d.dk, k_head + r.lo * d.dk, d.dk, len, d.dk, s) : kMasked;
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
      if (!any) {  // no visible key: the output is real zero
        for (size_t c = 0; c < d.dv; ++c) y_row[c] = 0;
        continue;
      }
      const int64_t sum = kern.exp_row(s, len, p.logit, max_score, e);
      kern.probabilities(e, len, sum, e);
      if (w_row)
        for (size_t j = 0; j < len; ++j) w_row[r.lo + j] = static_cast<uint16_t>(e[j]);
      kern.weighted_sum(e, v_head + r.lo * d.dv, d.dv, len, d.dv, acc);
      kern.requantize(acc, d.dv, p.output, y_row);
    }
  }
}

Status forward_i16(const Dims& d, const ForwardIoI16& io, const Int16Plan& plan, Workspace ws, const Mask& mask,
                   const Options& o) {
  const KernelsI16* kern = nullptr;
  auto find_port = [&] { return (kern = kernels_i16(o.port)) != nullptr; };
  if (Status s = validate_forward_i16<kBothModes>(d, io, plan, ws, mask, o, find_port); s != Status::kOk) return s;
  bool tflite = false;
  for (size_t h = 0; h < d.hq; ++h) tflite = tflite || plan.heads[h].mode == Int16Mode::kTflite;
  if (tflite)
    run_tflite_heads<kBothModes>(kern, {kern->scores, kern->weighted_sum, tflite_kernels_i16(o.port)}, d, io, plan, ws,
                                 mask);
  else
    detail::forward_i16_validated(*kern, d, io, plan, ws, mask);
  return Status::kOk;
}

Status detail::forward_i16_native(const Dims& d, const ForwardIoI16& io, const Int16Plan& plan, Workspace ws,
                                  const Mask& mask, const Options& o) {
  const KernelsI16* kern = nullptr;
  auto find_port = [&] { return (kern = kernels_i16(o.port)) != nullptr; };
  if (Status s = validate_forward_i16<kNativeOnly>(d, io, plan, ws, mask, o, find_port); s != Status::kOk) return s;
  detail::forward_i16_validated(*kern, d, io, plan, ws, mask);
  return Status::kOk;
}

// The default port, bound at compile time: kernels_i16() and every other
// port's table stay out of images that never name a port, and an image of
// the TFLite mode alone reaches the port through its route alone.
template <Int16Mode kMode>
Status detail::forward_i16_default_port(const Dims& d, const ForwardIoI16& io, const Int16Plan& plan, Workspace ws,
                                        const Mask& mask) {
  if constexpr (kMode == Int16Mode::kTflite) {
    TfliteRouteI16 route;
    auto find_port = [&] { return (route = default_tflite_route_i16()).scores != nullptr; };
    if (Status s = validate_forward_i16<kTfliteOnly>(d, io, plan, ws, mask, Options{}, find_port); s != Status::kOk)
      return s;
    run_tflite_heads<kTfliteOnly>(nullptr, route, d, io, plan, ws, mask);
  } else {
    const KernelsI16* kern = nullptr;
    auto find_port = [&] { return (kern = default_kernels_i16()) != nullptr; };
    if (Status s = validate_forward_i16<kNativeOnly>(d, io, plan, ws, mask, Options{}, find_port); s != Status::kOk)
      return s;
    detail::forward_i16_validated(*kern, d, io, plan, ws, mask);
  }
  return Status::kOk;
}
template Status detail::forward_i16_default_port<Int16Mode::kNative>(const Dims&, const ForwardIoI16&,
                                                                     const Int16Plan&, Workspace, const Mask&);
template Status detail::forward_i16_default_port<Int16Mode::kTflite>(const Dims&, const ForwardIoI16&,
                                                                     const Int16Plan&, Workspace, const Mask&);

}  // namespace tinyattn
