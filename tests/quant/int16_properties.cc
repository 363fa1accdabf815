// Properties of the int16 path (quant_i16.h) on random and adversarial
// inputs, every mask kind, GQA and per-head scales; its error statuses; and
// apply_wide against a direct computation.
//
// The bounds, for a row with L visible keys, e_j = exp2_q30(u_j), S = sum_j e_j,
// p_j the Q0.15 weights, a_j the exact softmax (in double, from the exact
// integer scores and the real scales), r = sv / sy:
//   row sums:  |sum_j p_j - 32768| <= floor(L / 2). p_j = floor((e_j 2^15 +
//              floor(S/2)) / S) lies in (x_j - 1/2 - 1/(2S), x_j + 1/2] with
//              x_j = 2^15 e_j / S and sum_j x_j = 2^15 exactly; the sum is an
//              integer and L/(2S) < 1/2 (S >= 2^30: the largest score's e is 2^30).
//   weights:   |p_j - 32768 a_j| <= weight_tol(L) = 0.5 + 0.004 + (L + 1) / 32768.
//              0.5 is the rounding above. With t_j the exact base-2 logit
//              difference, e_j = 2^30 2^(t_j) (1 + eta_j) + rho_j, |eta_j| <= 5e-8
//              (exp2_q30's relative error < 2e-8; u rounded to 2^-26: ln2 2^-27 =
//              5.2e-9; the 31-bit logit multiplier: 2^-31 of |u| <= 62 where e_j > 0,
//              2e-8) and |rho_j| <= 1 (the final integer rounding). With S >= 2^30,
//              |e_j / S - a_j| <= 2.2 eta + (L + 1) 2^-30 (rho_j, and S's L rhos),
//              which times 2^15 is 0.0036 + (L + 1) / 32768.
//   outputs:   |y - clamp(r sum_j a_j v_j)| <= 0.5 + r weight_tol(L) / 32768 sum_j |v_j|
//                                             + 2^-29 r max_j |v_j|
//              0.5 for the output rounding, the weight error times |v_j|, and the
//              output multiplier's relative error 2^-31 on |sum_j p_j v_j| / 2^15 <=
//              (1 + L / 2^16) max |v_j| <= 2 max |v_j|. Clamping is 1-Lipschitz.
//   hull:      y is within 1 LSB of [r P vmin, r P vmax] / 32768 (clamped), vmin
//              and vmax over the visible keys, P = sum_j p_j: sum_j p_j v_j lies in
//              [P vmin, P vmax] since p_j >= 0; 0.5 for the rounding and the
//              multiplier's 2^-31. (With P = 32768 that is V's hull; P is off by
//              at most floor(L / 2), the row-sum bound.)
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/kernels_i16.h"
#include "tinyattn/quant_i16.h"
#include "tinyattn/reference.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::Rng;

namespace {

double weight_tol(size_t visible) { return 0.504 + static_cast<double>(visible + 1) / 32768.0; }

enum class Fill { kRandom, kLargeLogits, kSmallLogits, kEqualLogits, kSaturating, kExtremes };

constexpr size_t kMaxHeads = 8;

struct Problem {
  Dims d;
  int16_t *q, *k, *v, *y;
  uint16_t* w;
  unsigned char* ws;
  double* a;  // one row of exact probabilities
  float sq[kMaxHeads], sk[kMaxHeads], sv[kMaxHeads], sy[kMaxHeads];
  Int16Scheme scheme;
  Int16HeadPlan plans[kMaxHeads];
  bool ok;
};

// Measured maxima over everything this file checks.
struct Worst {
  double weight_lsb = 0, weight_of_bound = 0, row_sum_of_bound = 0, y_lsb = 0, y_of_bound = 0, hull_lsb = 0;
} g_worst;

double max_of(double a, double b) { return a > b ? a : b; }

int16_t random_i16(Rng& rng) { return static_cast<int16_t>(static_cast<int32_t>(rng.next_u64() & 0xffff) - 32768); }

int16_t extreme_i16(Rng& rng) {
  static const int16_t kEnds[] = {-32768, 32767, -32767, 0, -32768, 32767};
  return kEnds[rng.next_u64() % 6];
}

Problem make(const Dims& d, uint64_t seed, Fill fill, bool per_head) {
  Problem p{};
  p.d = d;
  p.q = alloc<int16_t>(d.q_elems());
  p.k = alloc<int16_t>(d.k_elems());
  p.v = alloc<int16_t>(d.v_elems());
  p.y = alloc<int16_t>(d.y_elems());
  p.w = alloc<uint16_t>(d.weight_elems());
  p.ws = alloc<unsigned char>(forward_i16_workspace_bytes(d) + 64);
  p.a = alloc<double>(d.m);
  p.ok = p.q && p.k && p.v && p.y && p.w && p.ws && p.a && d.hq <= kMaxHeads;
  if (!p.ok) return p;
  Rng rng(seed);
  auto fill_tensor = [&](int16_t* x, size_t n) {
    for (size_t i = 0; i < n; ++i) x[i] = fill == Fill::kExtremes ? extreme_i16(rng) : random_i16(rng);
  };
  fill_tensor(p.q, d.q_elems());
  fill_tensor(p.k, d.k_elems());
  fill_tensor(p.v, d.v_elems());
  if (fill == Fill::kEqualLogits)  // every key of a head the same: uniform weights
    for (size_t h = 0; h < d.hkv; ++h)
      for (size_t j = 1; j < d.m; ++j)
        std::memcpy(p.k + (h * d.m + j) * d.dk, p.k + h * d.m * d.dk, d.dk * sizeof(int16_t));
  // Random: logits of a few units over the int16 range (many non-zero weights).
  float qs = 5e-5f, ks = 1e-4f;
  if (fill == Fill::kLargeLogits) qs = ks = 1e-3f;  // logit shift < 32, peaked rows
  if (fill == Fill::kSmallLogits) qs = ks = 2e-6f;  // logit shift > 32, flat rows
  const float vy = fill == Fill::kSaturating ? 1e-4f : 2.5e-4f;
  for (size_t h = 0; h < kMaxHeads; ++h) {
    const float f = per_head ? 1.0f + 0.3f * static_cast<float>(h) : 1.0f;
    p.sq[h] = qs * f;
    p.sk[h] = ks / f;
    p.sv[h] = (fill == Fill::kSaturating ? 3e-3f : 3e-4f) * f;
    p.sy[h] = vy;
  }
  const size_t cq = per_head ? d.hq : 1, ck = per_head ? d.hkv : 1;
  p.scheme.q = QuantParams{p.sq, nullptr, cq};
  p.scheme.k = QuantParams{p.sk, nullptr, ck};
  p.scheme.v = QuantParams{p.sv, nullptr, ck};
  p.scheme.y = QuantParams{p.sy, nullptr, cq};
  p.scheme.softmax_scale = 1.0f / std::sqrt(static_cast<float>(d.dk));
  p.ok = plan_int16(d, p.scheme, p.plans, kMaxHeads) == Status::kOk;
  return p;
}

// The workspace starts one byte past a 64-byte boundary (so the alignment
// slack is all used) and is followed by a canary.
Status run(Problem& p, const Mask& mask, Port port = Port::kDefault) {
  std::memset(p.y, 0x33, p.d.y_elems() * sizeof(int16_t));
  std::memset(p.w, 0x33, p.d.weight_elems() * sizeof(uint16_t));
  const size_t bytes = forward_i16_workspace_bytes(p.d);
  unsigned char* ws = p.ws + 1;
  std::memset(ws + bytes, 0xa5, 63);
  const Status s = forward_i16(p.d, ForwardIoI16{p.q, p.k, p.v, p.y, p.w}, Int16Plan{p.plans, p.d.hq},
                               Workspace{ws, bytes}, mask, Options{{}, port});
  size_t touched = 0;
  for (size_t x = 0; x < 63; ++x) touched += ws[bytes + x] != 0xa5;
  TA_CHECK_MSG(touched == 0, "forward_i16 wrote %zu bytes past its workspace", touched);
  return s;
}

size_t at(const QuantParams& t, size_t h) { return t.count == 1 ? 0 : h; }

double clamp16(double x) { return x < -32768.0 ? -32768.0 : (x > 32767.0 ? 32767.0 : x); }

// Checks every stated property of one run.
void check(Problem& p, const Mask& mask, const char* what) {
  const Dims& d = p.d;
  const double ss = *p.scheme.softmax_scale;
  double* a = p.a;
  size_t bad_mask = 0, bad_range = 0, bad_w = 0, bad_sum = 0, bad_y = 0, bad_hull = 0;
  double worst_w = 0, worst_y = 0;
  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv = h / d.group();
    const double sq = p.sq[at(p.scheme.q, h)], sk = p.sk[at(p.scheme.k, kv)];
    const double r = static_cast<double>(p.sv[at(p.scheme.v, kv)]) / p.sy[at(p.scheme.y, h)];
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      const uint16_t* w = p.w + row * d.m;
      const int16_t* y = p.y + row * d.dv;
      // Exact scores; the softmax in double from their exact differences.
      int64_t mx = 0;
      size_t visible = 0;
      for (size_t j = 0; j < d.m; ++j) {
        if (!ref::visible(mask, d, h, i, j)) continue;
        int64_t dot = 0;
        for (size_t c = 0; c < d.dk; ++c)
          dot += int64_t{p.q[row * d.dk + c]} * int64_t{p.k[(kv * d.m + j) * d.dk + c]};
        a[j] = static_cast<double>(dot);  // exact: |dot| <= 2^45
        if (visible == 0 || dot > mx) mx = dot;
        ++visible;
      }
      int64_t psum = 0;
      for (size_t j = 0; j < d.m; ++j) {
        psum += w[j];
        bad_range += w[j] > 32768;  // p_j in [0, 2^15]; a negative one would show here
        if (!ref::visible(mask, d, h, i, j)) bad_mask += w[j] != 0;
      }
      if (visible == 0) {  // no visible key: weights and outputs exactly 0
        for (size_t c = 0; c < d.dv; ++c) bad_mask += y[c] != 0;
        continue;
      }
      double total = 0;
      for (size_t j = 0; j < d.m; ++j) {
        if (!ref::visible(mask, d, h, i, j)) continue;
        a[j] = std::exp(ss * sq * sk * (a[j] - static_cast<double>(mx)));
        total += a[j];
      }
      const double wtol = weight_tol(visible);
      for (size_t j = 0; j < d.m; ++j) {
        if (!ref::visible(mask, d, h, i, j)) continue;
        a[j] /= total;
        const double err = std::fabs(w[j] - 32768.0 * a[j]);
        worst_w = max_of(worst_w, err);
        g_worst.weight_of_bound = max_of(g_worst.weight_of_bound, err / wtol);
        bad_w += err > wtol;
      }
      const double sum_err = std::fabs(static_cast<double>(psum) - 32768.0);
      const double sum_bound = static_cast<double>(visible / 2);
      g_worst.row_sum_of_bound = max_of(g_worst.row_sum_of_bound, sum_bound > 0 ? sum_err / sum_bound : sum_err);
      bad_sum += sum_err > sum_bound;
      for (size_t c = 0; c < d.dv; ++c) {
        double t = 0, spread = 0, vmax = 0, lo = 1e300, hi = -1e300;
        for (size_t j = 0; j < d.m; ++j) {
          if (!ref::visible(mask, d, h, i, j)) continue;
          const double vj = p.v[(kv * d.m + j) * d.dv + c];
          t += a[j] * vj;
          spread += std::fabs(vj);
          vmax = max_of(vmax, std::fabs(vj));
          lo = vj < lo ? vj : lo;
          hi = vj > hi ? vj : hi;
        }
        const double bound = 0.5 + r * wtol / 32768.0 * spread + std::ldexp(r * vmax, -29);
        const double err = std::fabs(y[c] - clamp16(r * t));
        worst_y = max_of(worst_y, err);
        g_worst.y_of_bound = max_of(g_worst.y_of_bound, err / bound);
        bad_y += err > bound;
        const double scale = r * static_cast<double>(psum) / 32768.0;
        const double below = clamp16(scale * lo) - y[c], above = y[c] - clamp16(scale * hi);
        g_worst.hull_lsb = max_of(g_worst.hull_lsb, max_of(below, above));
        bad_hull += below > 1.0 || above > 1.0;
      }
    }
  }
  g_worst.weight_lsb = max_of(g_worst.weight_lsb, worst_w);
  g_worst.y_lsb = max_of(g_worst.y_lsb, worst_y);
  TA_CHECK_MSG(bad_mask == 0, "%s: %zu masked weights or empty-row outputs are not exactly 0", what, bad_mask);
  TA_CHECK_MSG(bad_range == 0, "%s: %zu weights outside [0, 32768]", what, bad_range);
  TA_CHECK_MSG(bad_w == 0, "%s: %zu weights off by more than weight_tol(L) (worst %g LSB)", what, bad_w, worst_w);
  TA_CHECK_MSG(bad_sum == 0, "%s: %zu rows sum further than floor(L/2) from 32768", what, bad_sum);
  TA_CHECK_MSG(bad_y == 0, "%s: %zu outputs outside the stated bound (worst %g LSB)", what, bad_y, worst_y);
  TA_CHECK_MSG(bad_hull == 0, "%s: %zu outputs outside the value hull", what, bad_hull);
}

const Dims kShapes[] = {{1, 1, 1, 1},        {3, 7, 13, 5},      {7, 17, 33, 7},    {16, 16, 32, 32},
                        {5, 100, 16, 9},     {4, 12, 8, 6, 4, 2}, {6, 9, 8, 5, 4, 1}, {2, 9, 256, 5},
                        {3, 11, 1, 1, 2, 2}};

void sweep(const Mask& mask, const char* what, Fill fill, bool per_head, uint64_t seed) {
  for (const Dims& d : kShapes) {
    Arena::Scope scope;
    Problem p = make(d, seed++, fill, per_head);
    TA_CHECK_MSG(p.ok, "%s: setup failed", what);
    if (!p.ok) continue;
    Mask m = mask;
    if (m.kv_len != kAllKeys && m.kv_len > d.m) m.kv_len = static_cast<uint32_t>(d.m / 2);
    const Status s = run(p, m);
    TA_CHECK_MSG(s == Status::kOk, "%s: status %s", what, to_string(s));
    if (s == Status::kOk) check(p, m, what);
  }
}

void random_inputs() {
  sweep(Mask::none(), "random", Fill::kRandom, false, 100);
  sweep(Mask::none(), "random, per head", Fill::kRandom, true, 200);
}

void adversarial_inputs() {
  sweep(Mask::none(), "large logits", Fill::kLargeLogits, false, 300);
  sweep(Mask::none(), "small logits", Fill::kSmallLogits, true, 350);
  sweep(Mask::none(), "all-equal logits", Fill::kEqualLogits, true, 400);
  sweep(Mask::none(), "saturating outputs", Fill::kSaturating, false, 500);
  sweep(Mask::none(), "extreme values", Fill::kExtremes, false, 600);
  sweep(Mask::none(), "extreme values, per head", Fill::kExtremes, true, 650);
}

}  // namespace

TA_CASE("int16 properties: random inputs, no mask, per tensor and per head") { random_inputs(); }

TA_CASE("int16 properties: adversarial inputs") { adversarial_inputs(); }

TA_CASE("int16 properties: every structured mask") {
  sweep(Mask::causal_top_left(), "causal top-left", Fill::kRandom, true, 700);
  sweep(Mask::causal_bottom_right(), "causal bottom-right", Fill::kRandom, false, 800);
  sweep(Mask::sliding_window(2, 1, Align::kTopLeft), "window", Fill::kRandom, false, 900);
  sweep(Mask::sliding_window(0, 0, Align::kBottomRight), "diagonal window", Fill::kLargeLogits, false, 1000);
  sweep(Mask::key_padding(3), "kv_len", Fill::kRandom, true, 1100);
  sweep(Mask::causal_offset(2), "causal offset 2", Fill::kRandom, false, 1150);
  sweep(Mask::causal_offset(-1), "causal offset -1", Fill::kExtremes, true, 1170);
  Mask empty = Mask::sliding_window(-3, 3, Align::kTopLeft);  // rows near the end see nothing
  empty.kv_len = 2;
  sweep(empty, "window beyond kv_len (rows with no visible key)", Fill::kRandom, false, 1200);
}

TA_CASE("int16 properties: keep bytes and keep bits, per head") {
  for (int bits = 0; bits < 2; ++bits) {
    for (const Dims& d : kShapes) {
      Arena::Scope scope;
      Problem p = make(d, 1300 + d.m, Fill::kRandom, true);
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

// The largest errors the cases above measured, against the bounds of the
// file's header. Run alone (a filter, another order), it measures the
// random and adversarial sweeps itself first.
TA_CASE("int16 properties: measured maxima") {
  if (!(g_worst.weight_lsb > 0 && g_worst.y_lsb > 0)) {
    random_inputs();
    adversarial_inputs();
  }
  TA_CHECK_MSG(g_worst.weight_lsb > 0 && g_worst.y_lsb > 0, "nothing measured");
  TA_LOG("worst weight error %.4f Q15 LSB (%.3g of its bound), row sums %.3g of floor(L/2), worst output error "
         "%.4f LSB (%.3g of its bound), hull excess %.4f LSB",
         g_worst.weight_lsb, g_worst.weight_of_bound, g_worst.row_sum_of_bound, g_worst.y_lsb, g_worst.y_of_bound,
         g_worst.hull_lsb);
  TA_CHECK(g_worst.weight_of_bound <= 1.0);
  TA_CHECK(g_worst.row_sum_of_bound <= 1.0);
  TA_CHECK(g_worst.y_of_bound <= 1.0);
  TA_CHECK(g_worst.hull_lsb <= 1.0);
}

// |s| = 2^45 at the Dk limit: the scores, their difference (2^46) and apply_wide stay exact.
TA_CASE("int16 properties: Dk = kMaxDkInt16 with extreme values is exact") {
  const Dims d{1, 2, kMaxDkInt16, 2};
  Arena::Scope scope;
  int16_t* q = alloc<int16_t>(d.q_elems());
  int16_t* k = alloc<int16_t>(d.k_elems());
  unsigned char* ws = alloc<unsigned char>(forward_i16_workspace_bytes(d));
  if (!(q && k && ws)) {
    TA_IGNORE("the arena cannot hold Dk = 32768");
  }
  for (size_t c = 0; c < d.dk; ++c) q[c] = k[c] = -32768;       // s_0 = 2^45
  for (size_t c = 0; c < d.dk; ++c) k[d.dk + c] = 32767;          // s_1 = -2^45 + 2^30
  const int16_t v[4] = {-32768, 32767, 12345, -1};
  const float sq = 1e-5f, sk = 1e-5f, sv = 1e-4f;  // sv = sy: y = v exactly where p = 32768
  Int16Scheme sc;
  sc.q = QuantParams{&sq, nullptr, 1};
  sc.k = QuantParams{&sk, nullptr, 1};
  sc.v = QuantParams{&sv, nullptr, 1};
  sc.y = QuantParams{&sv, nullptr, 1};
  Int16HeadPlan plan;
  TA_CHECK(plan_int16(d, sc, &plan, 1) == Status::kOk);
  int16_t y[2] = {7, 7};
  uint16_t w[2] = {7, 7};
  TA_CHECK(forward_i16(d, ForwardIoI16{q, k, v, y, w}, Int16Plan{&plan, 1},
                       Workspace{ws, forward_i16_workspace_bytes(d)}) == Status::kOk);
  TA_CHECK_MSG(w[0] == 32768 && w[1] == 0 && y[0] == -32768 && y[1] == 32767, "Dk limit: w %d %d, y %d %d",
               static_cast<int>(w[0]), static_cast<int>(w[1]), static_cast<int>(y[0]), static_cast<int>(y[1]));
}

// M = 65535 equal keys: every p_j = round(32768 / 65535) = 1, the row sums to
// 32768 + floor(L/2) (the bound, reached), and sum_j p_j v_j = 65535 * -32768 is int32-exact.
TA_CASE("int16 properties: M = kMaxMInt16 reaches the row-sum bound and stays int32-exact") {
  const Dims d{1, kMaxMInt16, 1, 2};
  Arena::Scope scope;
  int16_t* k = alloc<int16_t>(d.k_elems());
  int16_t* v = alloc<int16_t>(d.v_elems());
  uint16_t* w = alloc<uint16_t>(d.weight_elems());
  unsigned char* ws = alloc<unsigned char>(forward_i16_workspace_bytes(d));
  if (!(k && v && w && ws)) {
    TA_IGNORE("the arena cannot hold M = 65535");
  }
  const int16_t q[1] = {-32768};
  for (size_t j = 0; j < d.m; ++j) {
    k[j] = 32767;
    v[2 * j] = 32767;
    v[2 * j + 1] = -32768;
  }
  const float sq = 1e-4f, sk = 1e-4f, sy = 1e-4f, sv = 0.5f * sy;  // r = 1/2: the output multiplier is exact
  Int16Scheme sc;
  sc.q = QuantParams{&sq, nullptr, 1};
  sc.k = QuantParams{&sk, nullptr, 1};
  sc.v = QuantParams{&sv, nullptr, 1};
  sc.y = QuantParams{&sy, nullptr, 1};
  Int16HeadPlan plan;
  TA_CHECK(plan_int16(d, sc, &plan, 1) == Status::kOk);
  int16_t y[2] = {7, 7};
  TA_CHECK(forward_i16(d, ForwardIoI16{q, k, v, y, w}, Int16Plan{&plan, 1},
                       Workspace{ws, forward_i16_workspace_bytes(d)}) == Status::kOk);
  size_t not_one = 0;
  for (size_t j = 0; j < d.m; ++j) not_one += w[j] != 1;
  // 65535 * 32767 / 65536 = 32766.50002 -> 32767; -65535 * 32768 / 65536 = -32767.5 -> -32768 (ties away)
  TA_CHECK_MSG(not_one == 0 && y[0] == 32767 && y[1] == -32768, "M limit: %zu weights not 1, y %d %d", not_one,
               static_cast<int>(y[0]), static_cast<int>(y[1]));
}

TA_CASE("int16 properties: every port gives the scalar port's outputs and weights on random shapes") {
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t port_count = tatest::ports_under_test(ports);
  Rng rng(4242);
  size_t compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    static const size_t kHeads[][2] = {{1, 1}, {2, 1}, {4, 2}, {3, 3}};
    const size_t* heads = kHeads[rng.next_u64() % 4];
    auto below = [&rng](size_t n) { return 1 + static_cast<size_t>(rng.next_u64() % n); };
    const size_t n = below(9), m = below(40), dk = below(70), dv = below(20);
    const Dims d{n, m, dk, dv, heads[0], heads[1]};
    const Fill fills[] = {Fill::kRandom, Fill::kLargeLogits, Fill::kSmallLogits, Fill::kExtremes, Fill::kSaturating};
    Arena::Scope scope;
    Problem p = make(d, 5000 + static_cast<uint64_t>(trial), fills[trial % 5], trial % 2 == 1);
    int16_t* y0 = alloc<int16_t>(d.y_elems());
    uint16_t* w0 = alloc<uint16_t>(d.weight_elems());
    uint8_t* bits = alloc<uint8_t>(d.n * keep_bits_row_bytes(d.m));
    TA_CHECK((p.ok && y0 && w0 && bits));
    if (!(p.ok && y0 && w0 && bits)) continue;
    for (size_t x = 0; x < d.n * keep_bits_row_bytes(d.m); ++x) bits[x] = static_cast<uint8_t>(rng.next_u64());
    Mask masks[4] = {Mask::none(), Mask::causal_bottom_right(), Mask::sliding_window(3, 2, Align::kTopLeft),
                     Mask::keep_bitmask(bits)};
    const Mask& mask = masks[trial % 4];
    if (run(p, mask, Port::kScalar) != Status::kOk) {
      TA_CHECK_MSG(false, "trial %d: scalar failed", trial);
      continue;
    }
    std::memcpy(y0, p.y, d.y_elems() * sizeof(int16_t));
    std::memcpy(w0, p.w, d.weight_elems() * sizeof(uint16_t));
    for (size_t pi = 0; pi < port_count; ++pi) {
      const Status s = run(p, mask, ports[pi]);
      const bool same = s == Status::kOk && std::memcmp(y0, p.y, d.y_elems() * sizeof(int16_t)) == 0 &&
                        std::memcmp(w0, p.w, d.weight_elems() * sizeof(uint16_t)) == 0;
      TA_CHECK_MSG(same, "%s, trial %d (%zu,%zu,%zu,%zu,%zu,%zu): status %s, differs from scalar",
                   port_name(ports[pi]), trial, d.n, d.m, d.dk, d.dv, d.hq, d.hkv, to_string(s));
      ++compared;
    }
  }
  TA_CHECK(compared >= 40);
}

// --- error statuses ------------------------------------------------------------

namespace {

constexpr Dims kDims{4, 6, 8, 5, 2, 1};
const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

struct Setup {
  float sq[2] = {2e-4f, 3e-4f}, sk[1] = {1e-4f}, sv[1] = {3e-4f}, sy[2] = {2.5e-4f, 3e-4f};
  int32_t zq[2] = {0, 0}, zk[1] = {0}, zv[1] = {0}, zy[2] = {0, 0};
  Int16Scheme scheme() const {
    Int16Scheme s;
    s.q = QuantParams{sq, zq, 2};
    s.k = QuantParams{sk, zk, 1};
    s.v = QuantParams{sv, zv, 1};
    s.y = QuantParams{sy, zy, 2};
    return s;
  }
};

// plan_int16 must fail with `want` and leave the plans untouched.
void expect_plan_error(const Int16Scheme& s, Status want, const char* what, const Dims& d = kDims) {
  Int16HeadPlan plans[2];
  for (Int16HeadPlan& p : plans) p.logit = p.output = FixedMultiplier{0x7777, 0x77};
  const Status got = plan_int16(d, s, plans, 2);
  TA_CHECK_MSG(got == want, "%s: status %s, want %s", what, to_string(got), to_string(want));
  size_t written = 0;
  for (const Int16HeadPlan& p : plans)
    written += p.logit.multiplier != 0x7777 || p.logit.shift != 0x77 || p.output.multiplier != 0x7777 ||
               p.output.shift != 0x77 || p.mode != Int16Mode::kNative;
  TA_CHECK_MSG(written == 0, "%s: the plans were written", what);
}

}  // namespace

TA_CASE("int16 errors: plan_int16 rejects bad scales, zero points and multipliers before any write") {
  const float bad_scales[] = {0.0f, -0.0f, -0.5f, kNan, kInf, -kInf};
  for (float b : bad_scales)
    for (int t = 0; t < 4; ++t) {
      Setup s;
      float* target[4] = {&s.sq[1], &s.sk[0], &s.sv[0], &s.sy[0]};
      *target[t] = b;
      expect_plan_error(s.scheme(), Status::kBadQuantization, "bad scale");
    }
  const int32_t bad_zero[] = {1, -1, 127, INT32_MIN};
  for (int32_t z : bad_zero)
    for (int t = 0; t < 4; ++t) {
      Setup s;
      int32_t* target[4] = {&s.zq[1], &s.zk[0], &s.zv[0], &s.zy[0]};
      *target[t] = z;
      expect_plan_error(s.scheme(), Status::kBadQuantization, "non-zero zero point");
    }
  {  // a count that is neither 1 nor the head count
    Setup s;
    Int16Scheme sc = s.scheme();
    sc.k.count = 2;
    expect_plan_error(sc, Status::kBadQuantization, "K count 2 with Hkv 1");
    sc = s.scheme();
    sc.y.count = 3;
    expect_plan_error(sc, Status::kBadQuantization, "Y count 3 with Hq 2");
  }
  {  // multipliers outside make_multiplier's range
    Setup s;
    s.sv[0] = 1e38f;
    s.sy[0] = 1e-30f;
    expect_plan_error(s.scheme(), Status::kBadQuantization, "overflowing output multiplier");
    Setup t;
    t.sv[0] = 1e-30f;
    t.sy[0] = 1e10f;
    expect_plan_error(t.scheme(), Status::kBadQuantization, "vanishing output multiplier");
    Setup u;
    u.sq[0] = 100.0f;
    u.sk[0] = 100.0f;
    expect_plan_error(u.scheme(), Status::kBadQuantization, "overflowing logit multiplier");
    Setup v;
    v.sq[1] = 1e-20f;
    v.sk[0] = 1e-20f;
    expect_plan_error(v.scheme(), Status::kBadQuantization, "vanishing logit multiplier");
  }
  {  // softmax scale: not finite (kBadScale), or not positive
    Setup s;
    Int16Scheme sc = s.scheme();
    sc.softmax_scale = kNan;
    expect_plan_error(sc, Status::kBadScale, "NaN softmax scale");
    sc.softmax_scale = kInf;
    expect_plan_error(sc, Status::kBadScale, "infinite softmax scale");
    sc.softmax_scale = 0.0f;
    expect_plan_error(sc, Status::kBadQuantization, "zero softmax scale");
    sc.softmax_scale = -1.0f;
    expect_plan_error(sc, Status::kBadQuantization, "negative softmax scale");
  }
  {  // unknown mode; missing scale array; too small a plan array
    Setup s;
    Int16Scheme sc = s.scheme();
    sc.mode = static_cast<Int16Mode>(99);
    expect_plan_error(sc, Status::kBadQuantization, "unknown mode");
    sc = s.scheme();
    sc.v.scale = nullptr;
    expect_plan_error(sc, Status::kNullPointer, "null V scale");
    Int16HeadPlan one[1];
    TA_CHECK(plan_int16(kDims, s.scheme(), one, 1) == Status::kBadQuantization);
    TA_CHECK(plan_int16(kDims, s.scheme(), nullptr, 2) == Status::kNullPointer);
  }
  {  // the good scheme plans, with zero-point arrays of zeros or none
    Setup s;
    Int16HeadPlan plans[2];
    TA_CHECK(plan_int16(kDims, s.scheme(), plans, 2) == Status::kOk);
    TA_CHECK((validate(plans[0]) == Status::kOk && validate(plans[1]) == Status::kOk));
    Int16Scheme sc = s.scheme();
    sc.q.zero_point = sc.k.zero_point = sc.v.zero_point = sc.y.zero_point = nullptr;
    Int16HeadPlan again[2];
    TA_CHECK(plan_int16(kDims, sc, again, 2) == Status::kOk);
    TA_CHECK(std::memcmp(plans, again, sizeof plans) == 0);
  }
}

TA_CASE("int16 errors: forward_i16 rejects bad plans and requests without writing") {
  Arena::Scope scope;
  const Dims d = kDims;
  int16_t* q = alloc<int16_t>(d.q_elems());
  int16_t* k = alloc<int16_t>(d.k_elems());
  int16_t* v = alloc<int16_t>(d.v_elems());
  int16_t* y = alloc<int16_t>(d.y_elems());
  uint16_t* w = alloc<uint16_t>(d.weight_elems());
  const size_t wsb = forward_i16_workspace_bytes(d);
  unsigned char* ws = alloc<unsigned char>(wsb);
  TA_CHECK((q && k && v && y && w && ws));
  if (!(q && k && v && y && w && ws)) return;
  Rng rng(31);
  for (size_t i = 0; i < d.q_elems(); ++i) q[i] = random_i16(rng);
  for (size_t i = 0; i < d.k_elems(); ++i) k[i] = random_i16(rng);
  for (size_t i = 0; i < d.v_elems(); ++i) v[i] = random_i16(rng);
  Setup s;
  Int16HeadPlan good[2];
  TA_CHECK(plan_int16(d, s.scheme(), good, 2) == Status::kOk);
  const ForwardIoI16 io{q, k, v, y, w};
  const Workspace wsp{ws, wsb};

  Options opt;  // what the next expect() passes
  Dims dims = d;
  auto expect = [&](Status want, const ForwardIoI16& io_, const Int16Plan& plan, Workspace wsp_, const Mask& mask,
                    const char* what) {
    std::memset(y, 0x11, d.y_elems() * sizeof(int16_t));
    std::memset(w, 0x11, d.weight_elems() * sizeof(uint16_t));
    std::memset(ws, 0x11, wsb);
    const Status got = forward_i16(dims, io_, plan, wsp_, mask, opt);
    TA_CHECK_MSG(got == want, "%s: status %s, want %s", what, to_string(got), to_string(want));
    size_t written = 0;
    for (size_t i = 0; i < d.y_elems(); ++i) written += static_cast<uint16_t>(y[i]) != 0x1111;
    for (size_t i = 0; i < d.weight_elems(); ++i) written += w[i] != 0x1111;
    for (size_t i = 0; i < wsb; ++i) written += ws[i] != 0x11;
    TA_CHECK_MSG(written == 0, "%s: %zu output or workspace bytes written", what, written);
  };
  // kBadQuantization: each invalid plan field, the plan count.
  for (int field = 0; field < 8; ++field) {
    Int16HeadPlan bad[2] = {good[0], good[1]};
    switch (field) {
      case 0: bad[1].logit.multiplier = 0; break;
      case 1: bad[1].logit.multiplier = (1 << 30) - 1; break;  // not normalised
      case 2: bad[0].logit.shift = 63; break;
      case 3: bad[0].logit.shift = -1; break;
      case 4: bad[0].output.shift = -1; break;
      case 5: bad[0].output.multiplier = -5; break;
      case 6: bad[1].output.shift = 63; break;
      default: bad[1].mode = static_cast<Int16Mode>(99); break;
    }
    expect(Status::kBadQuantization, io, Int16Plan{bad, 2}, wsp, Mask{}, "invalid plan field");
    TA_CHECK((validate(bad[0]) == Status::kBadQuantization || validate(bad[1]) == Status::kBadQuantization));
  }
  expect(Status::kBadQuantization, io, Int16Plan{good, 1}, wsp, Mask{}, "plan count 1 with Hq 2");
  expect(Status::kBadQuantization, io, Int16Plan{good, 3}, wsp, Mask{}, "plan count 3 with Hq 2");
  // kBadDimension: Dk and M above the exact limits (checked before the pointers and sizes).
  dims = Dims{1, 1, kMaxDkInt16 + 1, 1};
  expect(Status::kBadDimension, io, Int16Plan{good, 1}, wsp, Mask{}, "Dk > kMaxDkInt16");
  dims = Dims{1, kMaxMInt16 + 1, 1, 1};
  expect(Status::kBadDimension, io, Int16Plan{good, 1}, wsp, Mask{}, "M > kMaxMInt16");
  dims = d;
  // kUnsupported: what the plan holds or integers cannot do.
  const float float_bias[4 * 6] = {};
  expect(Status::kUnsupported, io, Int16Plan{good, 2}, wsp, Mask::additive(float_bias), "float mask bias");
  opt.scale = 0.5f;
  expect(Status::kUnsupported, io, Int16Plan{good, 2}, wsp, Mask{}, "options.scale");
  opt = Options{};
  opt.softcap = 30.0f;
  expect(Status::kUnsupported, io, Int16Plan{good, 2}, wsp, Mask{}, "options.softcap");
  opt = Options{};
  // kNullPointer: each required pointer.
  expect(Status::kNullPointer, ForwardIoI16{nullptr, k, v, y, w}, Int16Plan{good, 2}, wsp, Mask{}, "null Q");
  expect(Status::kNullPointer, ForwardIoI16{q, nullptr, v, y, w}, Int16Plan{good, 2}, wsp, Mask{}, "null K");
  expect(Status::kNullPointer, ForwardIoI16{q, k, nullptr, y, w}, Int16Plan{good, 2}, wsp, Mask{}, "null V");
  expect(Status::kNullPointer, ForwardIoI16{q, k, v, nullptr, w}, Int16Plan{good, 2}, wsp, Mask{}, "null Y");
  expect(Status::kNullPointer, io, Int16Plan{nullptr, 2}, wsp, Mask{}, "null plan");
  expect(Status::kNullPointer, io, Int16Plan{good, 2}, Workspace{nullptr, wsb}, Mask{}, "null workspace");
  // kWorkspaceTooSmall.
  expect(Status::kWorkspaceTooSmall, io, Int16Plan{good, 2}, Workspace{ws, wsb - 1}, Mask{}, "small workspace");
  // kAliasing: Y over Q, the weights over Y, the weights inside the workspace.
  expect(Status::kAliasing, ForwardIoI16{y, k, v, y, w}, Int16Plan{good, 2}, wsp, Mask{}, "Y overlapping Q");
  expect(Status::kAliasing, ForwardIoI16{q, k, v, y, reinterpret_cast<uint16_t*>(y + 1)}, Int16Plan{good, 2}, wsp,
         Mask{}, "weights overlapping Y");
  expect(Status::kAliasing, ForwardIoI16{q, k, v, y, reinterpret_cast<uint16_t*>(ws)}, Int16Plan{good, 2}, wsp,
         Mask{}, "weights inside the workspace");
  // kMisaligned: an odd int16 pointer.
  int16_t* odd = alloc<int16_t>(d.q_elems() + 1);
  TA_CHECK(odd != nullptr);
  if (odd) {
    const int16_t* odd_q = reinterpret_cast<const int16_t*>(reinterpret_cast<const unsigned char*>(odd) + 1);
    expect(Status::kMisaligned, ForwardIoI16{odd_q, k, v, y, w}, Int16Plan{good, 2}, wsp, Mask{}, "odd Q");
    int16_t* odd_y = reinterpret_cast<int16_t*>(reinterpret_cast<unsigned char*>(odd) + 1);
    expect(Status::kMisaligned, ForwardIoI16{q, k, v, odd_y, w}, Int16Plan{good, 2}, wsp, Mask{}, "odd Y");
  }
  // kBadMask, as every entry point.
  expect(Status::kBadMask, io, Int16Plan{good, 2}, wsp, Mask::key_padding(7), "kv_len > M");
  // kPortUnavailable: an unknown port value, and every port not compiled in.
  opt.port = static_cast<Port>(200);
  expect(Status::kPortUnavailable, io, Int16Plan{good, 2}, wsp, Mask{}, "port 200");
  for (Port port : kAllPorts) {
    opt.port = port;
    if (!port_compiled(port)) {
      TA_CHECK(kernels_i16(port) == nullptr);
      expect(Status::kPortUnavailable, io, Int16Plan{good, 2}, wsp, Mask{}, port_name(port));
    } else {
      TA_CHECK_MSG(kernels_i16(port) != nullptr, "%s: compiled, but no int16 table", port_name(port));
    }
  }
  opt = Options{};
  // And the good request works.
  TA_CHECK(forward_i16(d, io, Int16Plan{good, 2}, wsp) == Status::kOk);
}

// --- apply_wide ------------------------------------------------------------------

namespace {

struct WideCase {
  int32_t multiplier, shift;
  int64_t x, want;  // min(floor((x m + 2^(shift-1)) / 2^shift), 2^62)
};

// Around both branches (shift < 32: the high half shifted left, with its early
// cap; shift >= 32: the low half dropped first), ties and saturation thresholds.
const WideCase kWideCases[] = {
    {1073741824, 0, 0, 0},                                                  // zero
    {1073741824, 0, 4294967295, 4611686017353646080},                       // shift 0, one below 2^62
    {1073741824, 0, 4294967296, 4611686018427387904},                       // shift 0, early cap (hi = 2^30)
    {1073741825, 0, 4294967292, 4611686018427387900},                       // shift 0, hi = 0, one below
    {1073741825, 0, 4294967293, 4611686018427387904},                       // shift 0, hi = 0, late cap
    {2147483647, 0, 2147483648, 4611686016279904256},                       // shift 0, largest below 2^62
    {2147483647, 1, 1, 1073741824},                                         // a tie rounds up
    {2147483647, 1, 4294967298, 4611686018427387903},                       // 2^62 - 1, hi below the early cap
    {2147483647, 1, 4294967299, 4611686018427387904},                       // the low half carries: late cap
    {1073754169, 16, 281471740580182, 4611686018427381916},                 // shift 16, one below the threshold
    {1073754169, 16, 281471740580183, 4611686018427387904},                 // shift 16, the threshold
    {2147483647, 30, 2305843010287435776, 4611686018427387903},             // shift 30, one below the threshold
    {2147483647, 30, 2305843010287435777, 4611686018427387904},             // shift 30, the threshold
    {1073741824, 31, 1, 1},                                                 // shift 31, a tie
    {1073741825, 31, 2147483647, 1073741824},                               // shift 31
    {2147483647, 31, 4611686020574871552, 4611686018427387903},             // shift 31, one below the threshold
    {2147483647, 31, 4611686020574871553, 4611686018427387904},             // shift 31, the threshold
    {2147483647, 31, INT64_MAX, 4611686018427387904},                       // shift 31, early cap
    {2147483647, 32, 3, 1},                                                 // shift 32, 1.4999 rounds down
    {2147483647, 32, 4294967295, 2147483647},                               // shift 32
    {1073741824, 32, 8589934594, 2147483649},                               // shift 32, a tie rounds up
    {2147483647, 32, INT64_MAX, 4611686016279904256},                       // shift 32, the largest product
    {2147483647, 33, INT64_MAX, 2305843008139952128},                       // shift 33
    {1073741831, 45, 35184372101177, 1073741831},                           // shift 45, a typical logit
    {2147483647, 62, INT64_MAX, 4294967294},                                // shift 62
    {1073741824, 62, 1, 0},                                                 // shift 62, rounds to 0
    {1073741824, 62, 2147483648, 1},                                        // shift 62, a tie rounds up
};

}  // namespace

TA_CASE("int16 apply_wide: named cases around both shift branches and saturation") {
  for (const WideCase& c : kWideCases) {
    const int64_t got = apply_wide(FixedMultiplier{c.multiplier, c.shift}, c.x);
    TA_CHECK_MSG(got == c.want, "apply_wide(%ld, shift %d, x = %g): %g, want %g", static_cast<long>(c.multiplier),
                 static_cast<int>(c.shift), static_cast<double>(c.x), static_cast<double>(got),
                 static_cast<double>(c.want));
  }
#if defined(__SIZEOF_INT128__)
  // The table itself, and a random sweep, against a 128-bit product.
  auto reference = [](FixedMultiplier m, int64_t x) {
    unsigned __int128 p = static_cast<unsigned __int128>(static_cast<uint64_t>(x)) * static_cast<uint32_t>(m.multiplier);
    if (m.shift > 0) p += static_cast<unsigned __int128>(1) << (m.shift - 1);
    p >>= m.shift;
    const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 62;
    return static_cast<int64_t>(p < cap ? p : cap);
  };
  for (const WideCase& c : kWideCases)
    TA_CHECK(reference(FixedMultiplier{c.multiplier, c.shift}, c.x) == c.want);
  Rng rng(2024);
  size_t bad = 0;
  static const int32_t kEdgeShifts[] = {0, 1, 30, 31, 32, 33, 62};
  for (int it = 0; it < 200000; ++it) {
    const int bits = static_cast<int>(rng.next_u64() % 64);  // x < 2^bits, every magnitude
    const int64_t x = bits == 0 ? 0 : static_cast<int64_t>(rng.next_u64() >> (64 - bits));
    const int32_t mult = static_cast<int32_t>((uint32_t{1} << 30) + (rng.next_u64() & 0x3fffffffu));
    const int32_t shift = (it & 1) ? kEdgeShifts[rng.next_u64() % 7] : static_cast<int32_t>(rng.next_u64() % 63);
    const FixedMultiplier m{mult, shift};
    const int64_t got = apply_wide(m, x), want = reference(m, x);
    if (got != want && bad++ == 0)
      TA_CHECK_MSG(false, "apply_wide(%ld, shift %d, x = %g): %g, want %g", static_cast<long>(mult),
                   static_cast<int>(shift), static_cast<double>(x), static_cast<double>(got),
                   static_cast<double>(want));
  }
  TA_CHECK_MSG(bad == 0, "%zu of 200000 random apply_wide calls differ from the 128-bit product", bad);
#endif
}
