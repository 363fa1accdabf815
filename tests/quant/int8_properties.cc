// Properties of the int8 path against an exact double computation on the
// dequantized inputs, on random and adversarial inputs, every mask kind,
// GQA and per-head quantization. The bounds are the ones docs/quant.md states:
//   weights:  |p_j - 32768 a_j| <= kWeightTolLsb                (Q0.15 LSB)
//   row sums: |sum_j p_j - 32768| <= L / 2                       (L visible keys)
//   outputs:  |y - clamp(t)| <= 0.5 + (sv/sy) (kWeightTolLsb / 32768) sum_j |v_j - zv|
//             where t = zy + (sv/sy) sum_j a_j (v_j - zv)        (output LSB)
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/quant.h"
#include "tinyattn/reference.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::Rng;

namespace {

constexpr double kWeightTolLsb = 0.505;

enum class Fill { kRandom, kLargeLogits, kEqualLogits, kSaturating, kExtremes };

struct Problem {
  Dims d;
  int8_t *q, *k, *v, *y;
  uint16_t* w;
  unsigned char* ws;
  float sq[8], sk[8], sv[8], sy[8];
  int32_t zq[8], zk[8], zv[8], zy[8];
  Int8Scheme scheme;
  Int8HeadPlan plans[8];
  int8_t* bias;  // optional int8 additive bias [Hq][N][M] (head stride N*M)
  float sb[8];
  int32_t zb[8];
  bool ok;
};

// Measured maxima over everything this file runs (for docs/quant.md).
struct Worst {
  double weight_lsb = 0, row_sum_lsb = 0, y_lsb = 0, y_lsb_unsaturated_small_l = 0;
  double row_sum_of_bound = 0;  // the largest |sum_j p_j - 32768| / (L/2)
  double y_of_bound = 0;        // the largest output error as a share of its bound
  double y_lsb_v_fits = 0;      // the largest output error where V's range fits Y's and L <= 253
} g_worst;

Problem make(const Dims& d, uint64_t seed, Fill fill, bool per_head, bool zero_points, bool with_bias = false) {
  Problem p{};
  p.d = d;
  p.q = alloc<int8_t>(d.q_elems());
  p.k = alloc<int8_t>(d.k_elems());
  p.v = alloc<int8_t>(d.v_elems());
  p.y = alloc<int8_t>(d.y_elems());
  p.w = alloc<uint16_t>(d.weight_elems());
  p.ws = alloc<unsigned char>(forward_i8_workspace_bytes(d) + 64);
  p.ok = p.q && p.k && p.v && p.y && p.w && p.ws && d.hq <= 8;
  if (!p.ok) return p;
  Rng rng(seed);
  auto fill_tensor = [&](int8_t* x, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const uint64_t r = rng.next_u64();
      x[i] = fill == Fill::kExtremes ? ((r & 1) ? 127 : -128) : static_cast<int8_t>(static_cast<int>(r & 0xff) - 128);
    }
  };
  fill_tensor(p.q, d.q_elems());
  fill_tensor(p.k, d.k_elems());
  fill_tensor(p.v, d.v_elems());
  if (fill == Fill::kEqualLogits)  // every key of a head the same: uniform weights
    for (size_t h = 0; h < d.hkv; ++h)
      for (size_t j = 1; j < d.m; ++j) std::memcpy(p.k + (h * d.m + j) * d.dk, p.k + h * d.m * d.dk, d.dk);
  const float qk = fill == Fill::kLargeLogits ? 0.4f : 0.02f;
  const float vy = fill == Fill::kSaturating ? 0.005f : 0.05f;
  for (size_t h = 0; h < 8; ++h) {
    const float f = per_head ? 1.0f + 0.3f * static_cast<float>(h) : 1.0f;
    p.sq[h] = qk * f;
    p.sk[h] = 1.5f * qk / f;
    p.sv[h] = 0.05f * f;
    p.sy[h] = vy;
    const int32_t z = zero_points ? static_cast<int32_t>(rng.next_u64() % 41) - 20 : 0;
    p.zq[h] = z;
    p.zk[h] = -z / 2;
    p.zv[h] = fill == Fill::kExtremes ? 127 : z / 3;
    p.zy[h] = fill == Fill::kExtremes ? -128 : -z;
  }
  const size_t cq = per_head ? d.hq : 1, ck = per_head ? d.hkv : 1;
  p.scheme.q = QuantParams{p.sq, p.zq, cq};
  p.scheme.k = QuantParams{p.sk, p.zk, ck};
  p.scheme.v = QuantParams{p.sv, p.zv, ck};
  p.scheme.y = QuantParams{p.sy, p.zy, cq};
  p.scheme.softmax_scale = 1.0f / std::sqrt(static_cast<float>(d.dk));
  if (with_bias) {
    p.bias = alloc<int8_t>(d.hq * d.n * d.m);
    if (!p.bias) {
      p.ok = false;
      return p;
    }
    for (size_t x = 0; x < d.hq * d.n * d.m; ++x) p.bias[x] = static_cast<int8_t>(rng.next_u64());
    for (size_t h = 0; h < 8; ++h) {
      p.sb[h] = 0.02f * static_cast<float>(h + 1);  // up to +-2.6 .. +-20 in logit units
      p.zb[h] = zero_points ? static_cast<int32_t>(h) * 5 - 10 : 0;
    }
    p.scheme.bias = QuantParams{p.sb, p.zb, per_head ? d.hq : 1};
  }
  p.ok = plan_int8(d, p.scheme, p.plans, 8) == Status::kOk;
  return p;
}

// The workspace starts one byte past a 64-byte boundary (so the alignment
// slack is all used) and is followed by a canary.
Status run(Problem& p, const Mask& mask) {
  std::memset(p.y, 0x33, p.d.y_elems());
  std::memset(p.w, 0x33, p.d.weight_elems() * 2);
  const size_t bytes = forward_i8_workspace_bytes(p.d);
  unsigned char* ws = p.ws + 1;
  std::memset(ws + bytes, 0xa5, 63);
  const Status s = forward_i8(p.d, ForwardIoI8{p.q, p.k, p.v, p.y, p.w, p.bias}, Int8Plan{p.plans, p.d.hq},
                              Workspace{ws, bytes}, mask);
  size_t touched = 0;
  for (size_t x = 0; x < 63; ++x) touched += ws[bytes + x] != 0xa5;
  TA_CHECK_MSG(touched == 0, "forward_i8 wrote %zu bytes past its workspace", touched);
  return s;
}

size_t at(const QuantParams& t, size_t h) { return t.count == 1 ? 0 : h; }

// Checks every stated property of one run; returns false on the first kind of failure.
void check(Problem& p, const Mask& mask, const char* what) {
  const Dims& d = p.d;
  const double ss = *p.scheme.softmax_scale;
  double a[128];
  size_t bad_mask = 0, bad_w = 0, bad_sum = 0, bad_y = 0, bad_hull = 0;
  double worst_w = 0, worst_y = 0;
  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv = h / d.group();
    const double sq = p.sq[at(p.scheme.q, h)], sk = p.sk[at(p.scheme.k, kv)];
    const double sv = p.sv[at(p.scheme.v, kv)], sy = p.sy[at(p.scheme.y, h)];
    const int32_t zq = p.zq[at(p.scheme.q, h)], zk = p.zk[at(p.scheme.k, kv)];
    const int32_t zv = p.zv[at(p.scheme.v, kv)], zy = p.zy[at(p.scheme.y, h)];
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      const uint16_t* w = p.w + row * d.m;
      const int8_t* y = p.y + row * d.dv;
      // Exact softmax in double from the integer scores (the dequantized logits).
      double mx = -std::numeric_limits<double>::infinity();
      size_t visible = 0;
      for (size_t j = 0; j < d.m; ++j) {
        a[j] = -std::numeric_limits<double>::infinity();
        if (!ref::visible(mask, d, h, i, j)) continue;
        int64_t dot = 0;
        for (size_t c = 0; c < d.dk; ++c)
          dot += (int64_t{p.q[row * d.dk + c]} - zq) * (int64_t{p.k[(kv * d.m + j) * d.dk + c]} - zk);
        a[j] = ss * sq * sk * static_cast<double>(dot);
        if (p.bias) {
          const size_t b = at(p.scheme.bias, h);
          a[j] += static_cast<double>(p.sb[b]) * (p.bias[(h * d.n + i) * d.m + j] - p.zb[b]);
        }
        mx = a[j] > mx ? a[j] : mx;
        ++visible;
      }
      if (visible == 0) {
        for (size_t j = 0; j < d.m; ++j) bad_mask += w[j] != 0;
        for (size_t c = 0; c < d.dv; ++c) bad_mask += y[c] != zy;
        continue;
      }
      double total = 0;
      for (size_t j = 0; j < d.m; ++j) total += a[j] = std::exp(a[j] - mx);
      int64_t psum = 0;
      for (size_t j = 0; j < d.m; ++j) {
        a[j] /= total;
        psum += w[j];
        if (!ref::visible(mask, d, h, i, j)) {
          bad_mask += w[j] != 0;
          continue;
        }
        const double err = std::fabs(w[j] - 32768.0 * a[j]);
        worst_w = err > worst_w ? err : worst_w;
        bad_w += err > kWeightTolLsb;
      }
      const double sum_err = std::fabs(static_cast<double>(psum) - 32768.0);
      g_worst.row_sum_lsb = sum_err > g_worst.row_sum_lsb ? sum_err : g_worst.row_sum_lsb;
      const double sum_share = sum_err / (0.5 * static_cast<double>(visible));
      g_worst.row_sum_of_bound = sum_share > g_worst.row_sum_of_bound ? sum_share : g_worst.row_sum_of_bound;
      bad_sum += sum_err > 0.5 * static_cast<double>(visible);
      for (size_t c = 0; c < d.dv; ++c) {
        double t = 0, spread = 0, lo = 1e300, hi = -1e300, vmax = 0;
        for (size_t j = 0; j < d.m; ++j) {
          if (!ref::visible(mask, d, h, i, j)) continue;
          const double vj = static_cast<double>(p.v[(kv * d.m + j) * d.dv + c] - zv);
          t += a[j] * vj;
          spread += std::fabs(vj);
          lo = vj < lo ? vj : lo;
          hi = vj > hi ? vj : hi;
          vmax = std::fabs(vj) > vmax ? std::fabs(vj) : vmax;
        }
        const double r = sv / sy;
        const double bound = 0.5 + r * (kWeightTolLsb / 32768.0) * spread + 1e-6;
        auto clamp = [](double x) { return x < -128 ? -128.0 : (x > 127 ? 127.0 : x); };
        const double target = clamp(zy + r * t);
        const double err = std::fabs(y[c] - target);
        worst_y = err > worst_y ? err : worst_y;
        bad_y += err > bound;
        g_worst.y_of_bound = err / bound > g_worst.y_of_bound ? err / bound : g_worst.y_of_bound;
        if (visible <= 253 && r * vmax <= 128)  // docs/quant.md's corollary: then < 1 LSB
          g_worst.y_lsb_v_fits = err > g_worst.y_lsb_v_fits ? err : g_worst.y_lsb_v_fits;
        if (visible <= 128 && target > -128 && target < 127)
          g_worst.y_lsb_unsaturated_small_l = err > g_worst.y_lsb_unsaturated_small_l ? err : g_worst.y_lsb_unsaturated_small_l;
        // Convex hull of the visible values, within the same bound.
        bad_hull += y[c] < clamp(zy + r * lo) - bound || y[c] > clamp(zy + r * hi) + bound;
      }
    }
  }
  g_worst.weight_lsb = worst_w > g_worst.weight_lsb ? worst_w : g_worst.weight_lsb;
  g_worst.y_lsb = worst_y > g_worst.y_lsb ? worst_y : g_worst.y_lsb;
  TA_CHECK_MSG(bad_mask == 0, "%s: %zu masked weights or empty-row outputs are not exactly 0 / zy", what, bad_mask);
  TA_CHECK_MSG(bad_w == 0, "%s: %zu weights off by more than %g LSB (worst %g)", what, bad_w, kWeightTolLsb, worst_w);
  TA_CHECK_MSG(bad_sum == 0, "%s: %zu rows sum further than L/2 from 32768", what, bad_sum);
  TA_CHECK_MSG(bad_y == 0, "%s: %zu outputs outside the stated bound (worst %g LSB)", what, bad_y, worst_y);
  TA_CHECK_MSG(bad_hull == 0, "%s: %zu outputs outside the value hull", what, bad_hull);
}

const Dims kShapes[] = {{1, 1, 1, 1}, {3, 7, 17, 5}, {7, 17, 33, 7}, {16, 16, 32, 32}, {5, 100, 16, 9},
                        {4, 12, 8, 6, 4, 2}, {6, 9, 8, 5, 4, 1}};

void sweep(const Mask& mask, const char* what, Fill fill, bool per_head, bool zero_points, uint64_t seed,
           bool with_bias = false) {
  for (const Dims& d : kShapes) {
    Arena::Scope scope;
    Problem p = make(d, seed++, fill, per_head, zero_points, with_bias);
    TA_CHECK_MSG(p.ok, "%s: setup failed", what);
    if (!p.ok) continue;
    Mask m = mask;
    if (m.kv_len != kAllKeys && m.kv_len > d.m) m.kv_len = static_cast<uint32_t>(d.m / 2);
    if (with_bias) m.head_stride = d.n * d.m;
    const Status s = run(p, m);
    TA_CHECK_MSG(s == Status::kOk, "%s: status %s", what, to_string(s));
    if (s == Status::kOk) check(p, m, what);
  }
}

}  // namespace

namespace {

void random_inputs() {
  sweep(Mask::none(), "random", Fill::kRandom, false, false, 100);
  sweep(Mask::none(), "random, zero points, per head", Fill::kRandom, true, true, 200);
}

void adversarial_inputs() {
  sweep(Mask::none(), "large logits", Fill::kLargeLogits, false, true, 300);
  sweep(Mask::none(), "all-equal logits", Fill::kEqualLogits, true, true, 400);
  sweep(Mask::none(), "saturating outputs", Fill::kSaturating, false, true, 500);
  sweep(Mask::none(), "extreme values and zero points", Fill::kExtremes, false, false, 600);
}

}  // namespace

TA_CASE("int8 properties: random inputs, no mask, per tensor and per head") { random_inputs(); }

TA_CASE("int8 properties: adversarial inputs") { adversarial_inputs(); }

TA_CASE("int8 properties: every structured mask") {
  sweep(Mask::causal_top_left(), "causal top-left", Fill::kRandom, true, true, 700);
  sweep(Mask::causal_bottom_right(), "causal bottom-right", Fill::kRandom, false, true, 800);
  sweep(Mask::sliding_window(2, 1, Align::kTopLeft), "window", Fill::kRandom, false, false, 900);
  sweep(Mask::sliding_window(0, 0, Align::kBottomRight), "diagonal window", Fill::kLargeLogits, false, true, 1000);
  sweep(Mask::key_padding(3), "kv_len", Fill::kRandom, true, true, 1100);
  sweep(Mask::causal_offset(2), "causal offset 2", Fill::kRandom, false, true, 1150);
  sweep(Mask::causal_offset(-1), "causal offset -1", Fill::kLargeLogits, true, false, 1170);
  Mask empty = Mask::sliding_window(-3, 3, Align::kTopLeft);  // rows near the end see nothing
  empty.kv_len = 2;
  sweep(empty, "window beyond kv_len (fully masked rows)", Fill::kRandom, false, true, 1200);
}

TA_CASE("int8 properties: int8 additive bias, per tensor and per head, with masks") {
  sweep(Mask::none(), "bias", Fill::kRandom, false, false, 1400, true);
  sweep(Mask::none(), "bias, per head, zero points", Fill::kRandom, true, true, 1500, true);
  sweep(Mask::causal_bottom_right(), "bias, causal", Fill::kLargeLogits, true, true, 1600, true);
  sweep(Mask::sliding_window(1, 1, Align::kTopLeft), "bias, window", Fill::kEqualLogits, false, true, 1700, true);
}

TA_CASE("int8 properties: keep bytes and keep bits, per head") {
  for (int bits = 0; bits < 2; ++bits) {
    for (const Dims& d : kShapes) {
      Arena::Scope scope;
      Problem p = make(d, 1300 + d.m, Fill::kRandom, true, true);
      const size_t row_bytes = bits ? keep_bits_row_bytes(d.m) : d.m;
      uint8_t* keep = alloc<uint8_t>(d.hq * d.n * row_bytes);
      if (!p.ok || !keep) continue;
      Rng rng(d.n * 31 + d.m);
      for (size_t x = 0; x < d.hq * d.n * row_bytes; ++x) keep[x] = static_cast<uint8_t>(rng.next_u64());
      if (!bits)
        for (size_t x = 0; x < d.hq * d.n * row_bytes; ++x) keep[x] = keep[x] < 100;
      std::memset(keep, 0, row_bytes);  // row 0 of head 0 sees nothing
      Mask m = bits ? Mask::keep_bitmask(keep) : Mask::keep_bytes(keep);
      m.head_stride = d.n * row_bytes;
      m.causal = d.n == d.m ? Causal::kTopLeft : Causal::kNone;
      const Status s = run(p, m);
      TA_CHECK_MSG(s == Status::kOk, "keep: status %s", to_string(s));
      if (s == Status::kOk) check(p, m, bits ? "keep bits" : "keep bytes");
    }
  }
}

TA_CASE("int8 properties: agreement with the fp32 reference on dequantized inputs") {
  // tinyattn::ref (the spec) on float copies of the dequantized tensors.
  const Dims d{6, 21, 16, 8, 2, 1};
  Arena::Scope scope;
  Problem p = make(d, 77, Fill::kRandom, true, true);
  float* qf = alloc<float>(d.q_elems());
  float* kf = alloc<float>(d.k_elems());
  float* vf = alloc<float>(d.v_elems());
  double* yr = alloc<double>(d.y_elems());
  TA_CHECK((p.ok && qf && kf && vf && yr));
  if (!(p.ok && qf && kf && vf && yr)) return;
  for (size_t h = 0; h < d.hq; ++h)
    for (size_t x = 0; x < d.n * d.dk; ++x)
      qf[h * d.n * d.dk + x] = p.sq[h] * static_cast<float>(p.q[h * d.n * d.dk + x] - p.zq[h]);
  for (size_t x = 0; x < d.k_elems(); ++x) kf[x] = p.sk[0] * static_cast<float>(p.k[x] - p.zk[0]);
  for (size_t x = 0; x < d.v_elems(); ++x) vf[x] = p.sv[0] * static_cast<float>(p.v[x] - p.zv[0]);
  const Mask mask = Mask::causal_bottom_right();
  TA_CHECK(run(p, mask) == Status::kOk);
  ref::forward(d, qf, kf, vf, mask, *p.scheme.softmax_scale, yr);
  size_t bad = 0;
  double worst = 0;
  for (size_t h = 0; h < d.hq; ++h)
    for (size_t x = 0; x < d.n * d.dv; ++x) {
      const size_t e = h * d.n * d.dv + x;
      const double real = p.sy[h] * (p.y[e] - p.zy[h]);
      const double err = std::fabs(real - yr[e]) / p.sy[h];
      worst = err > worst ? err : worst;
      bad += err > 1.0;  // 21 keys with V inside Y's range: < 1 output LSB (docs/quant.md)
    }
  TA_CHECK_MSG(bad == 0, "%zu outputs differ from the reference by more than 1 LSB (worst %g)", bad, worst);
}

// The largest errors the cases above measured, held to docs/quant.md's
// bounds. Run alone or before them (a filter, another order), it measures the
// random and adversarial sweeps itself first.
TA_CASE("int8 properties: measured maxima") {
  if (!(g_worst.weight_lsb > 0 && g_worst.y_lsb > 0)) {
    random_inputs();
    adversarial_inputs();
  }
  TA_CHECK_MSG(g_worst.weight_lsb > 0 && g_worst.y_lsb > 0, "nothing measured");
  TA_LOG("worst weight error %.4f Q15 LSB, worst row-sum error %.1f LSB (%.3g of L/2), worst output error %.4f LSB "
         "(%.3g of its bound; %.4f with <= 128 keys, unsaturated; %.4f where V's range fits Y's, L <= 253)",
         g_worst.weight_lsb, g_worst.row_sum_lsb, g_worst.row_sum_of_bound, g_worst.y_lsb, g_worst.y_of_bound,
         g_worst.y_lsb_unsaturated_small_l, g_worst.y_lsb_v_fits);
  TA_CHECK(g_worst.weight_lsb <= kWeightTolLsb);  // |p_j - 32768 a_j| <= 0.505
  TA_CHECK(g_worst.row_sum_of_bound <= 1.0);      // |sum_j p_j - 32768| <= L/2
  TA_CHECK(g_worst.y_of_bound <= 1.0);            // 0.5 + (sv/sy)(0.505/32768) sum_j |v_j - zv|
  TA_CHECK(g_worst.y_lsb_v_fits < 1.0);           // y is floor(t) or ceil(t)
}
