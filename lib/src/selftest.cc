// The power-on self-test (tinyattn/selftest.h).
//
// Memory: every tensor lives in one static Scratch object sized at compile
// time from the generated vectors (selftest_vectors.h), so stack use is a few
// small frames and RAM use is sizeof(Scratch) plus the caller's report.
// Printing uses the tiny formatter below, never the printf family (newlib's
// allocates, and its float formatting pulls in malloc).
#include <cmath>
#include <cstring>
#include <limits>

#include "detail.h"
#include "float_math.h"
#include "selftest_common.h"
#include "selftest_vectors.h"
#include "tinyattn/selftest_kernels.h"

namespace tinyattn {

namespace sd = selftest_data;
using detail::Crc32;
using detail::Line;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Tolerances. Inputs are exact multiples of 1/32, so the only error is fp32
// rounding in the kernels (a few ULP per term); 1e-5 leaves headroom for FMA
// and any summation order while still catching a factor of 1 + 2^-12.
constexpr double kKatTol = 1e-5;       // |y - y_ref| <= kKatTol * max|v|; lse likewise
constexpr double kKernelTol = 1e-5;    // kernel primitives against exact double results
constexpr double kRowSumTol = 1e-5;    // |sum_j A_ij - 1|
constexpr double kHullTol = 1e-5;      // distance outside [min v, max v], times max|v|

constexpr Dims kDims{sd::kN, sd::kM, sd::kDk, sd::kDv, sd::kHq, sd::kHkv};
constexpr size_t kRowBytes = keep_bits_row_bytes(sd::kM);
constexpr size_t kExpCount = sizeof sd::kExpX / sizeof sd::kExpX[0];
constexpr size_t kPrimLen = 40;  // longer than two 16-lane vectors, not a multiple of 4

static_assert(sizeof(ExpCoefficients) == sizeof sd::kExpCoefficientBits,
              "the stored exp coefficient bits must cover the whole table");
static_assert(kExpCount <= kPrimLen, "exp points must fit the primitive buffers");

// The tiled case: every key of the 9-key problem repeated kTiledRepeats times,
// in blocks, so M exceeds one key tile and forward() takes its online-softmax
// path (no weights requested). The block of the largest key comes last and
// starts at or after the first tile, so rows with q > 0 find their maximum in a
// later tile and must rescale what they accumulated.
constexpr size_t kTiledRepeats = (kKeyTile + sd::kM - 2) / (sd::kM - 1);
constexpr Dims kTiledDims{sd::kN, sd::kM * kTiledRepeats, 1, 1, 1, 1};
static_assert(forward_uses_tiles(kTiledDims, false), "the tiled case must exercise the tiled path");

constexpr size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

struct Scratch {
  float q[kDims.q_elems()];
  float k[kDims.k_elems()];
  float v[kDims.v_elems()];
  float bias[sd::kN * sd::kM];
  uint8_t keep[sd::kN * sd::kM];
  float y[kDims.y_elems()];
  float weights[kDims.weight_elems()];
  float lse[kDims.lse_elems()];
  float a[kPrimLen];
  float b[kPrimLen];
  float c[kPrimLen];
  char norm_theory[40];
  char line[176];
  float tiled_q[sd::kN];
  float tiled_k[kTiledDims.m];
  float tiled_v[kTiledDims.m];
  alignas(kWorkspaceAlign) unsigned char
      workspace[max_size(forward_workspace_bytes(kDims, true, tinyattn::Scratch::kMinimal),
                         forward_workspace_bytes(kTiledDims, false, tinyattn::Scratch::kMinimal))];
};
// 9.6 KiB of tensors and workspace kept off the stack on purpose: the one reason selftest()
// is not re-entrant (docs/hardening.md).
Scratch g;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// ---------------------------------------------------------------- recording

class Recorder {
 public:
  explicit Recorder(SelftestReport* r) : r_(r) {
    r_->count = 0;
    r_->failures = 0;
  }
  // passed = measured <= bound (NaN fails).
  void add(const char* name, const char* property, const char* theory, double lo, double hi, double measured,
           double bound) {
    add_result(name, property, theory, lo, hi, measured, bound, measured <= bound);
  }
  void add_result(const char* name, const char* property, const char* theory, double lo, double hi,
                  double measured, double bound, bool passed) {
    if (r_->count >= kSelftestMaxChecks) return;
    SelftestCheck& c = r_->checks[r_->count++];
    c = SelftestCheck{name,
                      property,
                      theory,
                      static_cast<float>(lo),
                      static_cast<float>(hi),
                      static_cast<float>(measured),
                      static_cast<float>(bound),
                      passed};
    if (!passed) ++r_->failures;
  }

 private:
  SelftestReport* r_;
};

// Running min / max / worst of a quantity.
struct Span {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  double worst = 0.0;
  void see(double x) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  void deviation(double d) {
    if (d != d) d = std::numeric_limits<double>::infinity();  // NaN counts as the worst
    if (d > worst) worst = d;
  }
  double low() const { return lo > hi ? 0.0 : lo; }
  double high() const { return lo > hi ? 0.0 : hi; }
};

double fabs_d(double x) { return x < 0 ? -x : x; }

// ULP of a float-sized value: 2^(exponent - 23), subnormals share 2^-149.
double ulp_of(double x) {
  const float f = static_cast<float>(fabs_d(x));
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  int exponent = static_cast<int>((bits >> 23) & 0xFF);
  if (exponent == 0) exponent = 1;
  return std::ldexp(1.0, exponent - 127 - 23);
}

// ---------------------------------------------------------------- the checks

struct Context {
  const KernelsF32& kern;
  const SelftestVectors& vec;
  const ExpCoefficients& coeff;
  const Port* port;  // non-null: run the known answers through the public forward()
  Recorder& rec;
};

void check_integrity(const Context& cx) {
  uint32_t words[sizeof(ExpCoefficients) / sizeof(uint32_t)];
  std::memcpy(words, &cx.coeff, sizeof words);
  uint32_t wrong = 0;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i)
    if (words[i] != cx.vec.exp_coefficient_bits[i]) ++wrong;
  cx.rec.add("exp_table", "exp coefficient table intact", "0 wrong words", wrong, wrong, wrong, 0);

  const SelftestVectors& v = cx.vec;
  Crc32 crc;
  detail::crc_inputs(crc, v, kDims, sd::kN * kRowBytes, sd::kN * sd::kM);
  crc.f32s(v.expected_y, v.expected_y_count);
  crc.f32s(v.expected_lse, v.expected_lse_count);
  crc.f32s(v.exp_x, v.exp_count);
  crc.f64s(v.exp_y, v.exp_count);
  for (size_t i = 0; i < sizeof(ExpCoefficients) / sizeof(uint32_t); ++i) crc.u32(v.exp_coefficient_bits[i]);
  const uint32_t bad = crc.value() == v.crc32 ? 0 : 1;
  cx.rec.add("vectors_crc", "stored vectors intact (CRC-32)", "0 mismatches", bad, bad, bad, 0);
}

void check_exp(const Context& cx) {
  const SelftestVectors& v = cx.vec;
  const size_t n = v.exp_count <= kPrimLen ? v.exp_count : kPrimLen;
  cx.kern.exp(v.exp_x, g.a, n);
  Span ulps;
  for (size_t i = 0; i < n; ++i) {
    const double err = fabs_d(static_cast<double>(g.a[i]) - v.exp_y[i]) / ulp_of(v.exp_y[i]);
    ulps.see(err);
    ulps.deviation(err);
  }
  cx.rec.add("exp_ulp", "exp accuracy on [-87.3, 0] (ULP)", "<= 1.25 ULP", ulps.low(), ulps.high(), ulps.worst,
             kExpMaxUlp);

  // The edges of the contract: flush to exactly 0, NaN stays NaN, overflow to +inf.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float in[] = {-88.0f, -100.0f, -kInf, nan, 89.0f, 0.0f};
  constexpr size_t kIn = sizeof in / sizeof in[0];
  cx.kern.exp(in, g.b, kIn);
  uint32_t wrong = 0;
  for (size_t i = 0; i < 3; ++i) wrong += g.b[i] == 0.0f && !std::signbit(g.b[i]) ? 0 : 1;
  wrong += g.b[3] != g.b[3] ? 0 : 1;
  wrong += g.b[4] == kInf ? 0 : 1;
  wrong += g.b[5] == 1.0f ? 0 : 1;
  cx.rec.add("exp_special", "exp(-88)=+0, exp(NaN)=NaN, exp(89)=inf", "0 wrong", wrong, wrong, wrong, 0);
}

// Deterministic small test data, exact in fp32: multiples of 1/8 in [-4, 4).
float pattern(size_t j, size_t salt) { return static_cast<float>(static_cast<int>((j * 37 + salt * 11) % 64) - 32) / 8.0f; }

// scores: exact in double (inputs are multiples of 1/32 with 17 terms).
void check_scores(const Context& cx) {
  const KernelsF32& kern = cx.kern;
  const float scale = 0.375f;
  Span err;
  for (size_t count = 1; count <= sd::kM; ++count) {
    kern.scores(g.q, g.k, sd::kDk, count, sd::kDk, scale, g.a);
    for (size_t j = 0; j < count; ++j) {
      double dot = 0.0, mag = 0.0;
      for (size_t c = 0; c < sd::kDk; ++c) {
        dot += static_cast<double>(g.q[c]) * g.k[j * sd::kDk + c];
        mag += fabs_d(static_cast<double>(g.q[c]) * g.k[j * sd::kDk + c]);
      }
      const double e = fabs_d(g.a[j] - scale * dot) / (scale * mag + 1e-30);
      err.see(e);
      err.deviation(e);
    }
  }
  cx.rec.add("kernel_scores", "scores = scale * q.k (rel. error)", "0 (fp32 rounding)", err.low(), err.high(),
             err.worst, kKernelTol);
}

// row_max: the maximum at the first, a middle and the last position, every length.
void check_row_max(const Context& cx) {
  const KernelsF32& kern = cx.kern;
  uint32_t wrong = 0;
  for (size_t n = 1; n <= kPrimLen; ++n) {
    const size_t where[] = {0, n / 2, n - 1};
    for (size_t w : where) {
      for (size_t j = 0; j < n; ++j) g.a[j] = pattern(j, n);
      g.a[w] = 5.0f;
      if (kern.row_max(g.a, n) != 5.0f) ++wrong;
    }
    g.a[n - 1] = std::numeric_limits<float>::quiet_NaN();  // NaN in the last lane wins
    const float m = kern.row_max(g.a, n);
    if (m == m) ++wrong;
  }
  cx.rec.add("kernel_row_max", "row_max (every length, max/NaN anywhere)", "0 wrong", wrong, wrong, wrong, 0);
}

// exp_shift_sum: agrees with the exp kernel on x - shift, and returns their sum.
void check_exp_shift_sum(const Context& cx) {
  const KernelsF32& kern = cx.kern;
  const float shift = 1.5f;
  const size_t n = cx.vec.exp_count <= kPrimLen ? cx.vec.exp_count : kPrimLen;
  for (size_t j = 0; j < n; ++j) {
    g.a[j] = cx.vec.exp_x[j] + shift;
    g.b[j] = g.a[j] - shift;
  }
  kern.exp(g.b, g.c, n);
  const float sum = kern.exp_shift_sum(g.a, n, shift);
  Span err;
  double want = 0.0;
  for (size_t j = 0; j < n; ++j) {
    want += g.c[j];
    const double e = fabs_d(static_cast<double>(g.a[j]) - g.c[j]) / ulp_of(g.c[j]);
    err.see(e);
    err.deviation(e / (2.0 * kExpMaxUlp));
  }
  err.deviation(fabs_d(sum - want) / (want * kKernelTol));
  cx.rec.add("kernel_exp_shift_sum", "exp(x - shift) and its sum (ULP vs exp)", "<= 2.5 ULP, sum exact",
             err.low(), err.high(), err.worst, 1.0);
}

// weighted_sum: every prefix of the keys, a strided sub-block of V, a != 1.
void check_weighted_sum(const Context& cx) {
  const KernelsF32& kern = cx.kern;
  Span err;
  for (size_t j = 0; j < sd::kM; ++j) g.b[j] = static_cast<float>(j + 1) / 64.0f;
  const float a = 0.75f;
  const size_t widths[] = {sd::kDv, sd::kDv - 1, 1};
  for (size_t dv : widths) {
    for (size_t count = 1; count <= sd::kM; ++count) {
      kern.weighted_sum(g.b, g.v, sd::kDv, count, dv, a, g.a);
      for (size_t c = 0; c < dv; ++c) {
        double want = 0.0, mag = 0.0;
        for (size_t j = 0; j < count; ++j) {
          want += static_cast<double>(g.b[j]) * g.v[j * sd::kDv + c];
          mag += fabs_d(static_cast<double>(g.b[j]) * g.v[j * sd::kDv + c]);
        }
        const double e = fabs_d(g.a[c] - a * want) / (a * mag + 1e-30);
        err.see(e);
        err.deviation(e);
      }
    }
  }
  cx.rec.add("kernel_weighted_sum", "y = a * sum_j p_j v_j (rel. error)", "0 (fp32 rounding)", err.low(),
             err.high(), err.worst, kKernelTol);
}

// axpy and scale: exact for these inputs (multiples of 1/8 times 1/2).
void check_axpy_and_scale(const Context& cx) {
  const KernelsF32& kern = cx.kern;
  uint32_t wrong = 0;
  for (size_t n = 1; n <= kPrimLen; n += 3) {
    for (size_t j = 0; j < n; ++j) {
      g.a[j] = pattern(j, 1);
      g.b[j] = pattern(j, 2);
    }
    kern.axpy(0.5f, g.a, g.b, n);
    for (size_t j = 0; j < n; ++j)
      if (g.b[j] != 0.5f * pattern(j, 1) + pattern(j, 2)) ++wrong;
  }
  cx.rec.add("kernel_axpy", "y += a * x (exact here)", "0 wrong", wrong, wrong, wrong, 0);
  wrong = 0;
  for (size_t n = 1; n <= kPrimLen; n += 3) {
    for (size_t j = 0; j < n; ++j) g.a[j] = pattern(j, 3);
    kern.scale(g.a, n, -0.5f);
    for (size_t j = 0; j < n; ++j)
      if (g.a[j] != -0.5f * pattern(j, 3)) ++wrong;
  }
  cx.rec.add("kernel_scale", "x *= a (exact here)", "0 wrong", wrong, wrong, wrong, 0);
}

// Each kernel of the table against its definition, on the self-test vectors.
void check_kernels(const Context& cx) {
  check_scores(cx);
  check_row_max(cx);
  check_exp_shift_sum(cx);
  check_weighted_sum(cx);
  check_axpy_and_scale(cx);
}

Mask case_mask(const sd::Case& c) {
  switch (c.kind) {
    case sd::CaseKind::kPlain: return Mask::none();
    case sd::CaseKind::kCausalTopLeft: return Mask::causal_top_left();
    case sd::CaseKind::kCausalBottomRight: return Mask::causal_bottom_right();
    case sd::CaseKind::kWindowTopLeft: return Mask::sliding_window(c.a, c.b, Align::kTopLeft);
    case sd::CaseKind::kWindowBottomRight: return Mask::sliding_window(c.a, c.b, Align::kBottomRight);
    case sd::CaseKind::kKvLen: return Mask::key_padding(static_cast<uint32_t>(c.a));
    case sd::CaseKind::kKeepBytes: return Mask::keep_bytes(g.keep);
    case sd::CaseKind::kKeepBits: return Mask::keep_bitmask(nullptr);  // set by the caller (vector data)
    case sd::CaseKind::kBias: return Mask::additive(g.bias);
    case sd::CaseKind::kTiled: return Mask::none();
    case sd::CaseKind::kSoftcapBias: return Mask::additive(g.bias);
    case sd::CaseKind::kCausalCache:
      return Mask::causal_cache(static_cast<uint32_t>(c.a), static_cast<uint32_t>(sd::kN));
  }
  return Mask::none();
}

// softcap: Options::softcap, 0 for none.
bool run_forward(const Context& cx, const Dims& d, const Mask& mask, const ForwardIo& io, float softcap = 0.0f) {
  const Workspace ws{g.workspace, sizeof g.workspace};
  if (cx.port) {
    Options o;
    o.port = *cx.port;
    if (softcap != 0.0f) o.softcap = softcap;
    return forward(d, io, ws, mask, o) == Status::kOk;
  }
  detail::run_route(cx.kern, d, io, ws, mask, effective_scale(d, Options{}), softcap);
  return true;
}

bool run_forward(const Context& cx, const Dims& d, const Mask& mask, float softcap = 0.0f) {
  return run_forward(cx, d, mask, ForwardIo{g.q, g.k, g.v, g.y, g.weights, g.lse}, softcap);
}

// Property figures gathered over every known-answer run.
struct Properties {
  Span row_sum, weight, hull, y_norm;
  double norm_ratio = 0.0;
  uint32_t masked_wrong = 0, masked_rows = 0;
};

void gather_properties(const Dims& d, const float* expected_lse, Properties& p) {
  double vmax = 0.0;
  for (size_t x = 0; x < d.v_elems(); ++x)
    if (fabs_d(g.v[x]) > vmax) vmax = fabs_d(g.v[x]);
  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kvh = h / d.group();
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      const float* w = g.weights + row * d.m;
      const float* y = g.y + row * d.dv;
      if (expected_lse[row] == -kInf) {  // no visible key: everything exactly zero
        ++p.masked_rows;
        for (size_t j = 0; j < d.m; ++j) p.masked_wrong += w[j] == 0.0f ? 0 : 1;
        for (size_t c = 0; c < d.dv; ++c) p.masked_wrong += y[c] == 0.0f ? 0 : 1;
        p.masked_wrong += g.lse[row] == -kInf ? 0 : 1;
        continue;
      }
      double sum = 0.0;
      for (size_t j = 0; j < d.m; ++j) {
        sum += w[j];
        p.weight.see(w[j]);
        p.weight.deviation(w[j] >= 0.0f ? 0.0 : (w[j] < 0.0f ? -static_cast<double>(w[j]) : kInf));
      }
      p.row_sum.see(sum);
      p.row_sum.deviation(fabs_d(sum - 1.0));
      // y is a convex combination of the values with nonzero weight.
      double y_sq = 0.0, v_sq_max = 0.0;
      for (size_t c = 0; c < d.dv; ++c) {
        double lo = kInf, hi = -kInf;
        for (size_t j = 0; j < d.m; ++j) {
          if (w[j] == 0.0f) continue;
          const double vc = g.v[(kvh * d.m + j) * d.dv + c];
          if (vc < lo) lo = vc;
          if (vc > hi) hi = vc;
        }
        const double yc = y[c];
        p.hull.see(yc);
        const double out = yc < lo ? lo - yc : yc > hi ? yc - hi : (yc == yc ? 0.0 : kInf);
        p.hull.deviation(out / vmax);
        y_sq += yc * yc;
      }
      for (size_t j = 0; j < d.m; ++j) {
        if (w[j] == 0.0f) continue;
        double v_sq = 0.0;
        for (size_t c = 0; c < d.dv; ++c) v_sq += static_cast<double>(g.v[(kvh * d.m + j) * d.dv + c]) * g.v[(kvh * d.m + j) * d.dv + c];
        if (v_sq > v_sq_max) v_sq_max = v_sq;
      }
      const double yn = std::sqrt(y_sq);
      p.y_norm.see(yn);
      const double ratio = yn / std::sqrt(v_sq_max);
      if (!(ratio <= p.norm_ratio)) p.norm_ratio = ratio == ratio ? ratio : kInf;
    }
  }
}

void check_known_answers(const Context& cx, Properties& props) {
  const SelftestVectors& vec = cx.vec;
  double vmax = 0.0;
  for (size_t x = 0; x < kDims.v_elems(); ++x)
    if (fabs_d(g.v[x]) > vmax) vmax = fabs_d(g.v[x]);
  for (const sd::Case& c : sd::kCases) {
    Dims d = kDims;
    d.hq = c.hq;
    Mask mask = case_mask(c);
    if (c.kind == sd::CaseKind::kKeepBits) mask.keep_bits = vec.keep_bits;
    const float* want_y = vec.expected_y + c.y_offset;
    const float* want_lse = vec.expected_lse + c.lse_offset;
    Span err;
    const bool tiled = c.kind == sd::CaseKind::kTiled;
    if (tiled) d = kTiledDims;
    // NOLINTNEXTLINE(bugprone-branch-clone): different cases that report the same failure
    if (c.y_offset + d.y_elems() > vec.expected_y_count || c.lse_offset + d.lse_elems() > vec.expected_lse_count) {
      err.deviation(kInf);
    } else if (tiled) {
      for (size_t i = 0; i < sd::kN; ++i) g.tiled_q[i] = g.q[i * sd::kDk];
      size_t largest = 0;
      for (size_t j = 1; j < sd::kM; ++j)
        if (g.k[j * sd::kDk] > g.k[largest * sd::kDk]) largest = j;
      for (size_t j = 0; j < kTiledDims.m; ++j) {
        size_t key = j / kTiledRepeats;                          // blocks in key order...
        key = key == sd::kM - 1 ? largest : key >= largest ? key + 1 : key;  // ...the largest key last
        g.tiled_k[j] = g.k[key * sd::kDk];
        g.tiled_v[j] = g.v[key * sd::kDv];
      }
      // Each key appears kTiledRepeats times: the same Y, and lse grows by ln(repeats).
      const float ln_repeats = detail::log_f32(static_cast<float>(kTiledRepeats));
      if (!run_forward(cx, d, mask, ForwardIo{g.tiled_q, g.tiled_k, g.tiled_v, g.y, nullptr, g.lse})) {
        err.deviation(kInf);
      } else {
        for (size_t i = 0; i < sd::kN; ++i) {
          const double ey = fabs_d(static_cast<double>(g.y[i]) - want_y[i]) / vmax;
          const double want_l = static_cast<double>(want_lse[i]) + ln_repeats;
          const double el = fabs_d(static_cast<double>(g.lse[i]) - want_l) / (1.0 + fabs_d(want_l));
          err.see(ey);
          err.see(el);
          err.deviation(ey);
          err.deviation(el);
        }
      }
    } else if (!run_forward(cx, d, mask, c.kind == sd::CaseKind::kSoftcapBias ? sd::kSoftcap : 0.0f)) {
      err.deviation(kInf);
    } else {
      for (size_t x = 0; x < d.y_elems(); ++x) {
        const double e = fabs_d(static_cast<double>(g.y[x]) - want_y[x]) / vmax;
        err.see(e);
        err.deviation(e);
      }
      for (size_t r = 0; r < d.lse_elems(); ++r) {
        if (want_lse[r] == -kInf) {
          err.deviation(g.lse[r] == -kInf ? 0.0 : kInf);
          continue;
        }
        const double e = fabs_d(static_cast<double>(g.lse[r]) - want_lse[r]) / (1.0 + fabs_d(want_lse[r]));
        err.see(e);
        err.deviation(e);
      }
      gather_properties(d, want_lse, props);
    }
    cx.rec.add(c.name, c.title, "y, lse = float64 ref.", err.low(), err.high(),
               err.worst, kKatTol);
  }
}

void check_masked_rows(const Context& cx, Properties& props) {
  // Every key padded away: each row must be exactly zero with lse = -inf.
  static constexpr float kAllMasked[sd::kHq * sd::kN] = {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf};
  static_assert(sd::kHq * sd::kN == 8, "kAllMasked covers every row");
  for (size_t x = 0; x < kDims.y_elems(); ++x) g.y[x] = 1.0f;  // must be overwritten
  for (size_t x = 0; x < kDims.weight_elems(); ++x) g.weights[x] = 1.0f;
  if (run_forward(cx, kDims, Mask::key_padding(0)))
    gather_properties(kDims, kAllMasked, props);
  else
    ++props.masked_wrong;
  cx.rec.add("masked_row", "fully masked rows: y = 0, A = 0, lse = -inf", "0 wrong elements",
             props.masked_wrong, props.masked_wrong, props.masked_wrong, 0);
}

void check_properties(const Context& cx, const Properties& p) {
  cx.rec.add("row_sum", "row sum normalization (sum_j A_ij = 1)", "1.000000", p.row_sum.low(), p.row_sum.high(),
             p.row_sum.worst, kRowSumTol);
  cx.rec.add("weights_nonnegative", "non-negativity (A_ij >= 0)", ">= 0.0", p.weight.low(), p.weight.high(),
             p.weight.worst, 0.0);
  cx.rec.add("convex_hull", "outputs in the convex hull of V", "min v <= y <= max v", p.hull.low(),
             p.hull.high(), p.hull.worst, kHullTol);
  // The notebook's norm form: ||y_i|| <= max_j ||v_j||.
  double vn_lo = kInf, vn_hi = 0.0;
  for (size_t j = 0; j < kDims.hkv * kDims.m; ++j) {
    double s = 0.0;
    for (size_t c = 0; c < kDims.dv; ++c) s += static_cast<double>(g.v[j * kDims.dv + c]) * g.v[j * kDims.dv + c];
    const double n = std::sqrt(s);
    if (n < vn_lo) vn_lo = n;
    if (n > vn_hi) vn_hi = n;
  }
  Line(g.norm_theory, sizeof g.norm_theory).str("[").fixed(vn_lo, 2).str(", ").fixed(vn_hi, 2).str("]");
  cx.rec.add("norm_bound", "convex hull norm boundedness (||y_i||)", g.norm_theory, p.y_norm.low(),
             p.y_norm.high(), p.norm_ratio, 1.0 + kHullTol);
}

void decode_inputs(const SelftestVectors& v) {
  for (size_t x = 0; x < kDims.q_elems(); ++x) g.q[x] = v.q[x] * sd::kInputScale;
  for (size_t x = 0; x < kDims.k_elems(); ++x) g.k[x] = v.k[x] * sd::kInputScale;
  for (size_t x = 0; x < kDims.v_elems(); ++x) g.v[x] = v.v[x] * sd::kInputScale;
  for (size_t i = 0; i < sd::kN; ++i)
    for (size_t j = 0; j < sd::kM; ++j) {
      const size_t x = i * sd::kM + j;
      // Convert first, then overwrite: GCC 12 for Cortex-M55 otherwise emits a
      // conditional vcvt inside an IT block, which its assembler rejects.
      g.bias[x] = static_cast<float>(v.bias[x]) * sd::kBiasScale;
      if (v.bias[x] == sd::kBiasNegInf) g.bias[x] = -kInf;
      g.keep[x] = (v.keep_bits[i * kRowBytes + j / 8] >> (j % 8)) & 1u;
    }
}

// ---------------------------------------------------------------- printing

constexpr size_t kColTheory = 49, kColMin = 74, kColMax = 90, kColStatus = 106;

void print_table(WriteFn write, const SelftestReport& r) {
  static constexpr const char* kTitles[] = {"property", "theoretical", "empirical min", "empirical max", "status"};
  static constexpr size_t kStarts[] = {1, kColTheory, kColMin, kColMax, kColStatus};
  detail::print_table_head(write, g.line, sizeof g.line, kTitles, kStarts);
  for (uint32_t i = 0; i < r.count; ++i) {
    const SelftestCheck& c = r.checks[i];
    Line l(g.line, sizeof g.line);
    l.str("| ").str(c.property).pad(kColTheory - 1).str("| ").str(c.theory).pad(kColMin - 1).str("| ");
    l.num(c.lo).pad(kColMax - 1).str("| ").num(c.hi).pad(kColStatus - 1).str(c.passed ? "| PASS   |\n" : "| FAIL   |\n");
    write(g.line);
  }
}

Status run(const Context& cx, SelftestReport* report, WriteFn write, SelftestFormat format) {
  decode_inputs(cx.vec);
  check_integrity(cx);
  check_exp(cx);
  check_kernels(cx);
  Properties props;
  check_known_answers(cx, props);
  check_masked_rows(cx, props);
  check_properties(cx, props);

  detail::print_report(write, format, "selftest", cx.kern, *report, g.line, sizeof g.line, print_table);
  return Status::kOk;
}

bool table_complete(const KernelsF32& k) {
  return k.simd_target && k.scores && k.row_max && k.exp_shift_sum && k.weighted_sum && k.axpy && k.scale && k.exp;
}

}  // namespace

const SelftestVectors& selftest_vectors() {
  static constexpr SelftestVectors kVectors{
      sd::kQ,          sd::kK,           sd::kV,
      sd::kKeepMaskBits,   sd::kBiasValues,        sd::kExpectedY,
      sd::kExpectedLse, sizeof sd::kExpectedY / sizeof(float), sizeof sd::kExpectedLse / sizeof(float),
      sd::kExpX,       sd::kExpY,        kExpCount,
      sd::kExpCoefficientBits,           sd::kCrc32};
  return kVectors;
}

Status selftest_with(const KernelsF32& kernels, const SelftestVectors& vectors, const ExpCoefficients& coefficients,
                     SelftestReport* report, WriteFn write, SelftestFormat format) {
  if (!report || !table_complete(kernels)) return Status::kNullPointer;
  Recorder rec(report);
  const Context cx{kernels, vectors, coefficients, nullptr, rec};
  return run(cx, report, write, format);
}

Status selftest_kernels(const KernelsF32& kernels, SelftestReport* report, WriteFn write, SelftestFormat format) {
  return selftest_with(kernels, selftest_vectors(), kExpCoefficients, report, write, format);
}

Status selftest(SelftestReport* report, Port port, WriteFn write, SelftestFormat format) {
  if (!report) return Status::kNullPointer;
  const KernelsF32* k = kernels_f32(port);
  if (!k) return Status::kPortUnavailable;
  if (!table_complete(*k)) return Status::kNullPointer;
  Recorder rec(report);
  const Context cx{*k, selftest_vectors(), kExpCoefficients, &port, rec};
  return run(cx, report, write, format);
}

}  // namespace tinyattn
