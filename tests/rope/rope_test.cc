// Rotary position embedding (tinyattn/rope.h): Hugging Face's formula in
// float64 (golden_rope.h, from gen_rope_vectors.py) and an exact double
// rotation hold apply_rope and RopeTable to kRopeMaxError on every target;
// the table gives the computed path's bits; the rotation's properties
// (norm, identity at 0, composition, relative positions, untouched pass-
// through features); every rejected argument leaves the tensor as it was.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "golden_rope.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/half.h"
#include "tinyattn/rope.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;

namespace {

constexpr double kBound = static_cast<double>(kRopeMaxError);

// The features of pair k of a row: (a, b) indices for rotary width r.
void pair_index(RopeStyle style, size_t r, size_t k, size_t* a, size_t* b) {
  if (style == RopeStyle::kInterleaved) {
    *a = 2 * k;
    *b = 2 * k + 1;
  } else {
    *a = k;
    *b = k + r / 2;
  }
}

double max_abs(double a, double b) { return std::fmax(std::fabs(a), std::fabs(b)); }
double norm(double a, double b) { return std::sqrt(a * a + b * b); }

// Every rotated output of x (in) against want (double or float) within
// bound * max|pair of in| + extra(want); features past r must be in's bits.
template <class Want>
bool within_bound(const Rope& rope, const float* in, const float* got, const Want* want, size_t heads, size_t n,
                  size_t dim, double (*extra)(double), double* worst) {
  const size_t r = rope.rotary_dim ? rope.rotary_dim : dim;
  bool ok = true;
  for (size_t row = 0; row < heads * n; ++row) {
    const float* x = in + row * dim;
    const float* y = got + row * dim;
    const Want* w = want + row * dim;
    for (size_t k = 0; k < r / 2; ++k) {
      size_t ia, ib;
      pair_index(rope.style, r, k, &ia, &ib);
      const double m = max_abs(x[ia], x[ib]);
      for (size_t i : {ia, ib}) {
        const double err = std::fabs(static_cast<double>(y[i]) - static_cast<double>(w[i]));
        const double allowed = kBound * m + extra(static_cast<double>(w[i]));
        if (m > 0 && err / m > *worst) *worst = err / m;
        if (!(err <= allowed)) ok = false;
      }
    }
    if (std::memcmp(x + r, y + r, (dim - r) * sizeof(float)) != 0) ok = false;
  }
  return ok;
}

// The golden outputs are the exact values rounded to float: half an ULP more.
double float_rounding(double w) { return std::ldexp(std::fabs(w), -24); }
// fp16 output: the half rounding of the result (normal or subnormal), plus the float one.
double half_rounding(double w) { return std::ldexp(std::fabs(w), -11) + std::ldexp(1.0, -25) + float_rounding(w); }

Rope rope_of(const golden_rope::Case& c) {
  Rope rope;
  rope.theta = c.theta;
  rope.rotary_dim = c.rotary_dim;
  rope.style = static_cast<RopeStyle>(c.style);
  return rope;
}

// The exact rotation in double: angle p theta^(-2k/r).
void rotate_exact(const Rope& rope, const float* x, double* y, size_t dim, size_t position) {
  const size_t r = rope.rotary_dim ? rope.rotary_dim : dim;
  for (size_t i = 0; i < dim; ++i) y[i] = x[i];
  for (size_t k = 0; k < r / 2; ++k) {
    const double angle =
        static_cast<double>(position) *
        std::pow(static_cast<double>(rope.theta), -2.0 * static_cast<double>(k) / static_cast<double>(r));
    const double c = std::cos(angle), s = std::sin(angle);
    size_t ia, ib;
    pair_index(rope.style, r, k, &ia, &ib);
    y[ia] = x[ia] * c - x[ib] * s;
    y[ib] = x[ib] * c + x[ia] * s;
  }
}

void copy(const float* from, float* to, size_t n) { std::memcpy(to, from, n * sizeof(float)); }

}  // namespace

TA_CASE("rope golden: Hugging Face's formula in float64, fp32") {
  Arena::Scope scope;
  for (size_t ci = 0; ci < sizeof golden_rope::kCases / sizeof golden_rope::kCases[0]; ++ci) {
    const golden_rope::Case& c = golden_rope::kCases[ci];
    const Rope rope = rope_of(c);
    const size_t count = c.heads * c.n * c.dim;
    float* y = alloc<float>(count);
    TA_CHECK(y != nullptr);
    if (!y) return;
    copy(c.x, y, count);
    const Status s = apply_rope(rope, y, c.heads, c.n, c.dim, c.first_position);
    TA_CHECK_MSG(s == Status::kOk, "case %zu: %s", ci, to_string(s));
    double worst = 0;
    TA_CHECK_MSG(within_bound(rope, c.x, y, c.y, c.heads, c.n, c.dim, float_rounding, &worst),
                 "case %zu: worst error %g max|pair| (bound %g)", ci, worst, kBound);
    TA_LOG("case %zu (style %d, theta %g, positions from %zu): worst %g max|pair|", ci, static_cast<int>(c.style),
           static_cast<double>(c.theta), c.first_position, worst);
  }
}

TA_CASE("rope golden: fp16 rows within the bound plus the half rounding") {
  Arena::Scope scope;
  for (size_t ci = 0; ci < sizeof golden_rope::kCases / sizeof golden_rope::kCases[0]; ++ci) {
    const golden_rope::Case& c = golden_rope::kCases[ci];
    const Rope rope = rope_of(c);
    const size_t count = c.heads * c.n * c.dim;
    half* h = alloc<half>(count);
    float* y = alloc<float>(count);
    TA_CHECK((h != nullptr && y != nullptr));
    if (!h || !y) return;
    for (size_t i = 0; i < count; ++i) h[i] = to_half(c.x[i]);  // exact: k / 256, |k| < 1024
    const Status s = apply_rope(rope, h, c.heads, c.n, c.dim, c.first_position);
    TA_CHECK_MSG(s == Status::kOk, "case %zu: %s", ci, to_string(s));
    for (size_t i = 0; i < count; ++i) y[i] = to_float(h[i]);
    double worst = 0;
    TA_CHECK_MSG(within_bound(rope, c.x, y, c.y, c.heads, c.n, c.dim, half_rounding, &worst),
                 "case %zu: worst error %g max|pair|", ci, worst);
  }
}

TA_CASE("rope: exact rotation in double, positions up to 2^24, both styles, partial rotary") {
  Arena::Scope scope;
  constexpr size_t kDim = 48;
  float* x = alloc<float>(kDim);
  float* y = alloc<float>(kDim);
  double* want = alloc<double>(kDim);
  TA_CHECK((x && y && want));
  if (!x || !y || !want) return;
  tatest::Rng rng(7);
  const float thetas[] = {1.0f, 1.01f, 10000.0f, 500000.0f, 1.0e7f, 3.0e38f};
  const uint32_t rotary[] = {0, 2, 16, 32};
  double worst = 0;
  for (RopeStyle style : {RopeStyle::kHalfSplit, RopeStyle::kInterleaved})
    for (float theta : thetas)
      for (uint32_t r : rotary)
        for (int t = 0; t < 12; ++t) {
          Rope rope;
          rope.theta = theta;
          rope.rotary_dim = r;
          rope.style = style;
          // Small positions, around 2^16, and up to 2^24 (position * rotary_dim < 2^32).
          const size_t position = t < 4 ? static_cast<size_t>(t)
                                        : (t < 8 ? 65530 + static_cast<size_t>(t)
                                                 : (static_cast<size_t>(rng.next_u64() % (size_t{1} << 24))));
          rng.fill_normal(x, kDim, 3.0f);
          copy(x, y, kDim);
          TA_CHECK(apply_rope(rope, y, 1, 1, kDim, position) == Status::kOk);
          rotate_exact(rope, x, want, kDim, position);
          double w = 0;
          TA_CHECK_MSG(within_bound(
                           rope, x, y, want, 1, 1, kDim, [](double) { return 0.0; }, &w),
                       "style %d theta %g rotary %u position %zu: %g max|pair|", static_cast<int>(style),
                       static_cast<double>(theta), static_cast<unsigned>(r), position, w);
          worst = std::fmax(worst, w);
        }
  TA_LOG("worst error against the exact rotation: %g max|pair| (bound %g)", worst, kBound);
}

TA_CASE("rope properties: norm kept, position 0 is the identity, rotations compose") {
  Arena::Scope scope;
  constexpr size_t kDim = 64;
  float* x = alloc<float>(kDim);
  float* y = alloc<float>(kDim);
  float* z = alloc<float>(kDim);
  TA_CHECK((x && y && z));
  if (!x || !y || !z) return;
  tatest::Rng rng(11);
  for (RopeStyle style : {RopeStyle::kHalfSplit, RopeStyle::kInterleaved}) {
    Rope rope;
    rope.style = style;
    rng.fill_normal(x, kDim, 2.0f);
    // Position 0: every angle is 0, cos 1 and sin 0 exactly.
    copy(x, y, kDim);
    TA_CHECK(apply_rope(rope, y, 1, 1, kDim, 0) == Status::kOk);
    for (size_t i = 0; i < kDim; ++i)
      TA_CHECK_MSG(y[i] == x[i], "style %d: position 0 moved feature %zu", static_cast<int>(style), i);
    for (int t = 0; t < 20; ++t) {
      const size_t p = static_cast<size_t>(rng.next_u64() % 100000), q = static_cast<size_t>(rng.next_u64() % 100000);
      rng.fill_normal(x, kDim, 2.0f);
      copy(x, y, kDim);
      copy(x, z, kDim);
      TA_CHECK(apply_rope(rope, y, 1, 1, kDim, p) == Status::kOk);
      TA_CHECK(apply_rope(rope, y, 1, 1, kDim, q) == Status::kOk);      // R(q) R(p) x
      TA_CHECK(apply_rope(rope, z, 1, 1, kDim, p + q) == Status::kOk);  // R(p + q) x
      for (size_t k = 0; k < kDim / 2; ++k) {
        size_t ia, ib;
        pair_index(style, kDim, k, &ia, &ib);
        const double m = max_abs(x[ia], x[ib]);
        // Each rotation is within kBound m of exact per feature (sqrt 2 kBound m
        // in norm); two rotations and the direct one: under 4 kBound m.
        TA_CHECK_MSG(std::fabs(static_cast<double>(y[ia]) - z[ia]) <= 4 * kBound * m &&
                         std::fabs(static_cast<double>(y[ib]) - z[ib]) <= 4 * kBound * m,
                     "style %d: R(%zu) R(%zu) != R(%zu) at pair %zu", static_cast<int>(style), q, p, p + q, k);
        const double before = norm(static_cast<double>(x[ia]), static_cast<double>(x[ib]));
        const double after = norm(static_cast<double>(z[ia]), static_cast<double>(z[ib]));
        TA_CHECK_MSG(std::fabs(after - before) <= 1.5 * kBound * m, "style %d: pair %zu norm %g -> %g",
                     static_cast<int>(style), k, before, after);
      }
    }
  }
}

TA_CASE("rope properties: <R(p) q, R(t) k> depends on p - t only") {
  Arena::Scope scope;
  constexpr size_t kDim = 32;
  float* q = alloc<float>(4 * kDim);
  TA_CHECK(q != nullptr);
  if (!q) return;
  float *k = q + kDim, *qr = q + 2 * kDim, *kr = q + 3 * kDim;
  tatest::Rng rng(13);
  for (RopeStyle style : {RopeStyle::kHalfSplit, RopeStyle::kInterleaved}) {
    Rope rope;
    rope.style = style;
    rope.theta = 500000.0f;
    for (int t = 0; t < 20; ++t) {
      rng.fill_normal(q, kDim);
      rng.fill_normal(k, kDim);
      const size_t pq = static_cast<size_t>(rng.next_u64() % 70000), pk = static_cast<size_t>(rng.next_u64() % 70000);
      const size_t shift = static_cast<size_t>(rng.next_u64() % 1000000);
      double dots[2] = {0, 0}, scale = 0;
      for (int s = 0; s < 2; ++s) {
        copy(q, qr, kDim);
        copy(k, kr, kDim);
        TA_CHECK(apply_rope(rope, qr, 1, 1, kDim, pq + (s ? shift : 0)) == Status::kOk);
        TA_CHECK(apply_rope(rope, kr, 1, 1, kDim, pk + (s ? shift : 0)) == Status::kOk);
        for (size_t i = 0; i < kDim; ++i) dots[s] += static_cast<double>(qr[i]) * kr[i];
      }
      for (size_t j = 0; j < kDim / 2; ++j) {
        size_t ia, ib;
        pair_index(style, kDim, j, &ia, &ib);
        scale += max_abs(q[ia], q[ib]) * max_abs(k[ia], k[ib]);
      }
      // Per pair, each rotated vector is within sqrt 2 kBound m of exact; the
      // two dot products differ by at most twice 2 * 2 kBound sum m_q m_k.
      TA_CHECK_MSG(std::fabs(dots[0] - dots[1]) <= 8 * kBound * scale, "style %d: %g at (%zu, %zu), %g shifted by %zu",
                   static_cast<int>(style), dots[0], pq, pk, dots[1], shift);
    }
  }
}

TA_CASE("rope properties: features past rotary_dim keep their bits; heads and tokens at their positions") {
  Arena::Scope scope;
  constexpr size_t kHeads = 3, kN = 5, kDim = 20;
  float* x = alloc<float>(kHeads * kN * kDim);
  float* y = alloc<float>(kHeads * kN * kDim);
  TA_CHECK((x && y));
  if (!x || !y) return;
  tatest::Rng rng(17);
  for (RopeStyle style : {RopeStyle::kHalfSplit, RopeStyle::kInterleaved}) {
    Rope rope;
    rope.style = style;
    rope.rotary_dim = 12;
    rng.fill_normal(x, kHeads * kN * kDim);
    // Pass-through features may hold anything, NaN and infinities included.
    for (size_t row = 0; row < kHeads * kN; ++row) {
      x[row * kDim + 12] = std::numeric_limits<float>::quiet_NaN();
      x[row * kDim + 13] = -std::numeric_limits<float>::infinity();
    }
    copy(x, y, kHeads * kN * kDim);
    TA_CHECK(apply_rope(rope, y, kHeads, kN, kDim, 40) == Status::kOk);
    for (size_t h = 0; h < kHeads; ++h)
      for (size_t i = 0; i < kN; ++i) {
        const size_t row = (h * kN + i) * kDim;
        TA_CHECK_MSG(std::memcmp(x + row + 12, y + row + 12, 8 * sizeof(float)) == 0,
                     "style %d head %zu token %zu: pass-through features changed", static_cast<int>(style), h, i);
        float one[kDim];
        copy(x + row, one, kDim);
        detail::RopeRow r;
        TA_CHECK(detail::rope_prepare(rope, kDim, &r) == Status::kOk);
        detail::rope_row(r, one, 40 + i);
        TA_CHECK_MSG(std::memcmp(one, y + row, sizeof one) == 0, "style %d head %zu token %zu: not rope_row at %zu",
                     static_cast<int>(style), h, i, 40 + i);
      }
  }
}

TA_CASE("rope: positions near SIZE_MAX are defined (angles wrap modulo a turn)") {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  Rope rope;
  const size_t last = std::numeric_limits<size_t>::max();
  TA_CHECK(apply_rope(rope, x, 1, 2, 4, last - 1) == Status::kOk);
  for (size_t k = 0; k < 2; ++k)
    for (size_t p = 0; p < 2; ++p) {
      const float* row = x + 4 * p;
      const double before = norm(1.0 + 4.0 * static_cast<double>(p) + static_cast<double>(k),
                                 3.0 + 4.0 * static_cast<double>(p) + static_cast<double>(k));
      TA_CHECK_MSG(
          std::fabs(norm(static_cast<double>(row[k]), static_cast<double>(row[k + 2])) - before) < 1e-5 * before,
          "row %zu pair %zu", p, k);
    }
  float y[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  TA_CHECK(apply_rope(rope, y, 1, 2, 4, last) == Status::kBadDimension);  // positions last, last + 1
  TA_CHECK((y[0] == 1 && y[7] == 8));
}

TA_CASE("rope: the table gives the computed path's bits, fp32 and fp16") {
  Arena::Scope scope;
  static RopeTable<32, 96> table;  // 24 KiB
  static_assert(RopeTable<32, 96>::kBytes == 2 * 96 * 16 * sizeof(float), "cos and sin per position and pair");
  constexpr size_t kHeads = 2, kN = 7, kDim = 40;
  float* x = alloc<float>(kHeads * kN * kDim);
  float* a = alloc<float>(kHeads * kN * kDim);
  float* b = alloc<float>(kHeads * kN * kDim);
  half* ha = alloc<half>(kHeads * kN * kDim);
  half* hb = alloc<half>(kHeads * kN * kDim);
  TA_CHECK((x && a && b && ha && hb));
  if (!x || !a || !b || !ha || !hb) return;
  tatest::Rng rng(19);
  for (RopeStyle style : {RopeStyle::kHalfSplit, RopeStyle::kInterleaved})
    for (float theta : {10000.0f, 1.0e6f}) {
      Rope rope;
      rope.style = style;
      rope.theta = theta;
      rope.rotary_dim = 32;
      TA_CHECK(table.init(rope) == Status::kOk);
      for (size_t first : {size_t{0}, size_t{50}, size_t{89}}) {
        rng.fill_normal(x, kHeads * kN * kDim, 4.0f);
        copy(x, a, kHeads * kN * kDim);
        copy(x, b, kHeads * kN * kDim);
        TA_CHECK(apply_rope(rope, a, kHeads, kN, kDim, first) == Status::kOk);
        TA_CHECK(table.apply(b, kHeads, kN, kDim, first) == Status::kOk);
        TA_CHECK_MSG(std::memcmp(a, b, kHeads * kN * kDim * sizeof(float)) == 0,
                     "style %d theta %g first %zu: table and computed fp32 differ", static_cast<int>(style),
                     static_cast<double>(theta), first);
        for (size_t i = 0; i < kHeads * kN * kDim; ++i) ha[i] = hb[i] = to_half(x[i]);
        TA_CHECK(apply_rope(rope, ha, kHeads, kN, kDim, first) == Status::kOk);
        TA_CHECK(table.apply(hb, kHeads, kN, kDim, first) == Status::kOk);
        TA_CHECK_MSG(std::memcmp(ha, hb, kHeads * kN * kDim * sizeof(half)) == 0,
                     "style %d theta %g first %zu: table and computed fp16 differ", static_cast<int>(style),
                     static_cast<double>(theta), first);
      }
    }
  // The golden case with a whole 64-wide head at positions 0..2, through a table.
  static RopeTable<64, 3> whole;
  const golden_rope::Case& c = golden_rope::kCases[0];
  TA_CHECK(whole.init(rope_of(c)) == Status::kOk);
  float* y = alloc<float>(c.heads * c.n * c.dim);
  TA_CHECK(y != nullptr);
  if (!y) return;
  copy(c.x, y, c.heads * c.n * c.dim);
  TA_CHECK(whole.apply(y, c.heads, c.n, c.dim, c.first_position) == Status::kOk);
  double worst = 0;
  TA_CHECK(within_bound(rope_of(c), c.x, y, c.y, c.heads, c.n, c.dim, float_rounding, &worst));
}

TA_CASE("rope: every rejected argument is a status and leaves the tensor untouched") {
  float x[16];
  for (size_t i = 0; i < 16; ++i) x[i] = static_cast<float>(i) + 0.5f;
  auto untouched = [&x]() {
    for (size_t i = 0; i < 16; ++i)
      if (x[i] != static_cast<float>(i) + 0.5f) return false;
    return true;
  };
  Rope ok;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Bad {
    const char* what;
    Rope rope;
    size_t heads, n, dim, first;
    Status want;
  };
  Rope odd = ok, wide = ok, nan_theta = ok, inf_theta = ok, small_theta = ok, zero_theta = ok, style = ok;
  odd.rotary_dim = 3;
  wide.rotary_dim = 10;
  nan_theta.theta = nan;
  inf_theta.theta = inf;
  small_theta.theta = 0.5f;
  zero_theta.theta = -0.0f;
  style.style = static_cast<RopeStyle>(2);
  const Bad cases[] = {
      {"heads 0", ok, 0, 2, 8, 0, Status::kBadHeads},
      {"heads > kMaxDim", ok, kMaxDim + 1, 1, 8, 0, Status::kBadHeads},
      {"n 0", ok, 1, 0, 8, 0, Status::kBadDimension},
      {"n > kMaxDim", ok, 1, kMaxDim + 1, 8, 0, Status::kBadDimension},
      {"dim 0", ok, 1, 2, 0, 0, Status::kBadDimension},
      {"dim > kMaxDim", ok, 1, 1, kMaxDim + 1, 0, Status::kBadDimension},
      {"odd head, whole", ok, 1, 2, 7, 0, Status::kBadDimension},
      {"rotary_dim odd", odd, 1, 2, 8, 0, Status::kBadDimension},
      {"rotary_dim > dim", wide, 1, 2, 8, 0, Status::kBadDimension},
      {"theta NaN", nan_theta, 1, 2, 8, 0, Status::kBadScale},
      {"theta inf", inf_theta, 1, 2, 8, 0, Status::kBadScale},
      {"theta < 1", small_theta, 1, 2, 8, 0, Status::kBadScale},
      {"theta -0", zero_theta, 1, 2, 8, 0, Status::kBadScale},
      {"style 2", style, 1, 2, 8, 0, Status::kUnsupported},
      {"positions past SIZE_MAX", ok, 1, 2, 8, std::numeric_limits<size_t>::max(), Status::kBadDimension},
  };
  for (const Bad& b : cases) {
    TA_CHECK_MSG(apply_rope(b.rope, x, b.heads, b.n, b.dim, b.first) == b.want, "%s", b.what);
    TA_CHECK_MSG(untouched(), "%s wrote", b.what);
    half h[16] = {};
    TA_CHECK_MSG(apply_rope(b.rope, h, b.heads, b.n, b.dim, b.first) == b.want, "fp16 %s", b.what);
  }
  TA_CHECK(validate(ok, 8) == Status::kOk);
  TA_CHECK(validate(odd, 8) == Status::kBadDimension);
  TA_CHECK(apply_rope(ok, static_cast<float*>(nullptr), 1, 1, 8, 0) == Status::kNullPointer);
  TA_CHECK(apply_rope(ok, static_cast<half*>(nullptr), 1, 1, 8, 0) == Status::kNullPointer);
  alignas(4) unsigned char bytes[40] = {};
  float* misaligned = reinterpret_cast<float*>(bytes + 1);
  TA_CHECK(apply_rope(ok, misaligned, 1, 1, 8, 0) == Status::kMisaligned);
  detail::RopeRow row;
  TA_CHECK(detail::rope_prepare(ok, 8, nullptr) == Status::kNullPointer);
  TA_CHECK(detail::rope_prepare(style, 8, &row) == Status::kUnsupported);

  // The table: before init, a wrong rotary_dim or head width, positions past its end.
  static RopeTable<8, 4> table;
  TA_CHECK(!table.ready());
  TA_CHECK(table.apply(x, 1, 2, 8, 0) == Status::kUnsupported);
  Rope wrong = ok;
  wrong.rotary_dim = 4;
  TA_CHECK(table.init(wrong) == Status::kBadDimension);
  TA_CHECK(table.init(nan_theta) == Status::kBadScale);
  TA_CHECK(!table.ready());
  TA_CHECK(table.init(ok) == Status::kOk);  // whole head: rows must be 8 wide
  TA_CHECK(table.apply(x, 1, 2, 16, 0) == Status::kBadDimension);
  TA_CHECK(table.apply(x, 1, 2, 8, 3) == Status::kBadDimension);  // positions 3, 4
  TA_CHECK(table.apply(x, 1, 1, 8, 4) == Status::kBadDimension);
  TA_CHECK(table.apply(x, 1, 1, 8, std::numeric_limits<size_t>::max()) == Status::kBadDimension);
  TA_CHECK(table.apply(static_cast<float*>(nullptr), 1, 1, 8, 0) == Status::kNullPointer);
  TA_CHECK(table.apply(x, 0, 1, 8, 0) == Status::kBadHeads);
  TA_CHECK(untouched());
  TA_CHECK(table.apply(x, 1, 2, 8, 2) == Status::kOk);  // positions 2, 3: the last two
  TA_CHECK(!untouched());
}
