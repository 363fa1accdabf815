// The KernelsF32 contract (tinyattn/kernels.h), checked primitive by primitive
// for every port at every length from 1 to 70 (below, at and past every
// vector width and unroll factor): values against double-precision sums,
// row_max's NaN rule at every position, and no write outside the given range.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "support.h"
#include "tatest.h"

using tinyattn::KernelsF32;
using namespace tatest;

namespace {

constexpr size_t kMaxLen = 70;
constexpr float kGuardValue = -777.0f;

struct Ports {
  tinyattn::Port ports[tatest::kMaxPorts];
  size_t n;
  Ports() : n(ports_under_test(ports)) {}
};

Guarded<float> guarded(size_t n) { return Guarded<float>::make(n, kGuardValue); }

// dot(a, b) over n in double, b strided by ldb (1: contiguous; a column of a
// row-major matrix otherwise); *terms gets sum |a[c] * b[c*ldb]| (the scale
// of its rounding error).
double dot_terms_strided(const float* a, const float* b, size_t ldb, size_t n, double* terms) {
  double want = 0.0, t = 0.0;
  for (size_t c = 0; c < n; ++c) {
    const double x = static_cast<double>(a[c]) * b[c * ldb];
    want += x;
    t += std::fabs(x);
  }
  *terms = t;
  return want;
}

double dot_terms(const float* a, const float* b, size_t n, double* terms) {
  return dot_terms_strided(a, b, 1, n, terms);
}

// |got - want| <= tol * scale_of_terms, with scale_of_terms = sum |terms|.
bool near(float got, double want, double abs_terms) {
  return std::fabs(static_cast<double>(got) - want) <= 4e-7 * abs_terms + 1e-30;
}

}  // namespace

TA_CASE("kernels: scores are scaled dot products for every count and dk") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    size_t bad = 0, overrun = 0;
    Rng rng(7);
    for (size_t dk = 1; dk <= kMaxLen; dk += (dk < 20 ? 1 : 7))
      for (size_t count = 1; count <= 11; ++count) {
        Arena::Scope scope;
        const size_t ldk = dk + 3;  // rows apart, as for a sliced key matrix
        float* q = alloc<float>(dk);
        float* kk = alloc<float>(count * ldk);
        auto s = guarded(count);
        if (!q || !kk || !s.base) TA_IGNORE("arena too small");
        rng.fill_normal(q, dk);
        rng.fill_normal(kk, count * ldk);
        k.scores(q, kk, ldk, count, dk, 0.5f, s.data());
        for (size_t j = 0; j < count; ++j) {
          double terms = 0.0;
          const double want = dot_terms(q, kk + j * ldk, dk, &terms);
          if (!near(s.data()[j], 0.5 * want, 0.5 * terms * static_cast<double>(dk))) ++bad;
        }
        overrun += !s.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu scores off", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(overrun == 0, "%s/%s: scores wrote outside s[0, count) %zu times", k.port, k.simd_target(), overrun);
  }
}

// A KV-cache ring holds a key in another slot, so at another position of a
// scores call, than one forward over the sequence does: equal logits need a
// key's score to be the same bits at every position and call length (the
// fp16 decode bound of docs/core.md rests on it).
TA_CASE("kernels: a key's score is the same bits at every position of every scores call") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    constexpr size_t kKeys = 19;
    size_t differ = 0, compared = 0;
    Rng rng(11);
    for (size_t dk : {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 70}) {
      Arena::Scope scope;
      float* q = alloc<float>(dk);
      float* kk = alloc<float>(kKeys * dk);
      float* all = alloc<float>(kKeys);
      float* part = alloc<float>(kKeys);
      if (!q || !kk || !all || !part) TA_IGNORE("arena too small");
      // Products of both signs and many magnitudes: sums that round differently in different orders.
      rng.fill_normal(q, dk, 100.0f);
      rng.fill_normal(kk, kKeys * dk, 100.0f);
      k.scores(q, kk, dk, kKeys, dk, 0.37f, all);
      for (size_t start = 0; start < kKeys; ++start)
        for (size_t count = 1; start + count <= kKeys; ++count) {
          k.scores(q, kk + start * dk, dk, count, dk, 0.37f, part);
          for (size_t j = 0; j < count; ++j, ++compared) differ += std::memcmp(&part[j], &all[start + j], sizeof(float)) != 0;
        }
    }
    TA_CHECK_MSG(differ == 0, "%s/%s: %zu of %zu scores change with their position in the call", k.port,
                 k.simd_target(), differ, compared);
  }
}

TA_CASE("kernels: row_max finds the maximum anywhere, -inf rows stay -inf, and NaN anywhere wins") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    size_t wrong_max = 0, missed_nan = 0;
    Arena::Scope scope;
    float* x = alloc<float>(kMaxLen);
    size_t all_masked = 0;
    for (size_t n = 1; n <= kMaxLen; ++n) {
      for (size_t i = 0; i < n; ++i) x[i] = -std::numeric_limits<float>::infinity();
      all_masked += k.row_max(x, n) != -std::numeric_limits<float>::infinity();  // a fully masked row
    }
    TA_CHECK_MSG(all_masked == 0, "%s/%s: %zu rows of -inf did not give -inf", k.port, k.simd_target(), all_masked);
    for (size_t n = 1; n <= kMaxLen; ++n)
      for (size_t pos = 0; pos < n; ++pos) {
        for (size_t i = 0; i < n; ++i) x[i] = -std::numeric_limits<float>::infinity();
        x[pos] = -3.0f;  // the only finite value: every other lane is -inf (masked keys)
        if (k.row_max(x, n) != -3.0f) ++wrong_max;
        for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f - 10.0f;
        x[pos] = std::numeric_limits<float>::quiet_NaN();
        const float m = k.row_max(x, n);
        if (m == m) ++missed_nan;
      }
    TA_CHECK_MSG(wrong_max == 0, "%s/%s: %zu wrong maxima", k.port, k.simd_target(), wrong_max);
    TA_CHECK_MSG(missed_nan == 0, "%s/%s: %zu rows with a NaN did not return NaN", k.port, k.simd_target(), missed_nan);
  }
}

// softmax_short_rows against the three primitives it replaces, to the bit:
// every length up to short_rows_max taken, every longer one declined, every row
// count, a gap between rows (ld > n) that must stay untouched, and rows whose
// maximum is -inf (all masked), +inf or NaN, which it must leave as they were,
// in calls of one row and of several.
TA_CASE("kernels: softmax_short_rows is row_max, exp_shift_sum and scale to the bit, and leaves non-finite rows alone") {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Ports pl;
  size_t with = 0;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    if (!k.softmax_short_rows) continue;
    ++with;
    Arena::Scope scope;
    constexpr size_t kRows = tinyattn::kShortRowsAtOnce;
    const size_t ld = kMaxLen + 3;
    float* got = alloc<float>(kRows * ld);
    float* want = alloc<float>(kRows * ld);
    if (!got || !want) TA_IGNORE("the test arena cannot hold the rows");
    Rng rng(31 + pi);
    size_t longest = 0, differ = 0, wrong_max = 0, touched = 0, declined_touched = 0, wrong_decline = 0;
    for (size_t n = 1; n <= kMaxLen; ++n) {
      for (size_t count = 1; count <= kRows; ++count) {
        for (size_t i = 0; i < kRows * ld; ++i) got[i] = kGuardValue;
        for (size_t r = 0; r < count; ++r) {
          float* x = got + r * ld;
          for (size_t j = 0; j < n; ++j) x[j] = rng.uniform(-4.0f, 4.0f);
          const size_t pos = (r * 7 + n) % n;
          // Row r's case; a call of one row (a kernel of its own in a port)
          // takes each case in turn as n grows.
          const size_t kind = count == 1 ? n % 6 : r;
          if (kind == 1) x[pos] = -1e30f;  // a lane that exp flushes to 0
          if (kind == 2) x[pos] = std::numeric_limits<float>::quiet_NaN();
          if (kind == 3) x[pos] = kInf;
          if (kind == 4)
            for (size_t j = 0; j < n; ++j) x[j] = -kInf;  // every key masked
          if (kind == 5) x[pos] = -kInf;
        }
        std::memcpy(want, got, kRows * ld * sizeof(float));
        float max[kRows], sum[kRows];
        const bool taken = k.softmax_short_rows(got, ld, count, n, max, sum);
        wrong_decline += taken != (n <= k.short_rows_max);
        if (!taken) {
          declined_touched += std::memcmp(got, want, kRows * ld * sizeof(float)) != 0;
          continue;
        }
        longest = n > longest ? n : longest;
        for (size_t r = 0; r < count; ++r) {
          float* w = want + r * ld;
          const float m = k.row_max(w, n);
          wrong_max += std::memcmp(&m, &max[r], sizeof m) != 0;
          if (m > -kInf && m < kInf) {
            const float total = k.exp_shift_sum(w, n, m);
            k.scale(w, n, 1.0f / total);
            differ += total != sum[r];
          }
        }
        // Rows past count, the gap past each row's n, and the non-finite rows:
        // as they were (want holds them unchanged).
        for (size_t i = 0; i < kRows * ld; ++i) {
          const bool row_part = i / ld < count && i % ld < n;
          if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            if (row_part) ++differ;
            else ++touched;
          }
        }
      }
    }
    TA_CHECK_MSG(longest >= 1, "%s/%s: softmax_short_rows declined every length", k.port, k.simd_target());
    TA_CHECK_MSG(wrong_decline == 0 && k.short_rows_max < kMaxLen,
                 "%s/%s: %zu calls taken or declined against short_rows_max %zu", k.port, k.simd_target(),
                 wrong_decline, k.short_rows_max);
    TA_CHECK_MSG(differ == 0, "%s/%s: %zu values or sums differ from the three primitives", k.port, k.simd_target(),
                 differ);
    TA_CHECK_MSG(wrong_max == 0, "%s/%s: %zu maxima differ from row_max", k.port, k.simd_target(), wrong_max);
    TA_CHECK_MSG(touched == 0 && declined_touched == 0, "%s/%s: wrote outside its rows (%zu, declined %zu)", k.port,
                 k.simd_target(), touched, declined_touched);
    TA_CHECK_MSG(!k.softmax_short_rows(got, ld, kRows + 1, 1, nullptr, nullptr),
                 "%s/%s: took more rows than kShortRowsAtOnce", k.port, k.simd_target());
  }
  if (with == 0) TA_IGNORE("no port in this build has softmax_short_rows");
}

TA_CASE("kernels: weighted_sum, axpy and scale for every length") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    size_t bad = 0, overrun = 0;
    Rng rng(11);
    for (size_t dv = 1; dv <= kMaxLen; ++dv)
      for (size_t count : {size_t{1}, size_t{2}, size_t{3}, size_t{9}}) {
        Arena::Scope scope;
        const size_t ldv = dv + 5;
        float* p = alloc<float>(count);
        float* v = alloc<float>(count * ldv);
        float* x = alloc<float>(dv);
        float* y0 = alloc<float>(dv);
        auto y = guarded(dv);
        if (!p || !v || !x || !y0 || !y.base) TA_IGNORE("arena too small");
        rng.fill_uniform(p, count, 0.0f, 1.0f);
        rng.fill_normal(v, count * ldv);
        rng.fill_normal(x, dv);
        k.weighted_sum(p, v, ldv, count, dv, 0.25f, y.data());
        for (size_t c = 0; c < dv; ++c) {
          double want = 0.0, terms = 0.0;
          for (size_t j = 0; j < count; ++j) {
            want += static_cast<double>(p[j]) * v[j * ldv + c];
            terms += std::fabs(static_cast<double>(p[j]) * v[j * ldv + c]);
          }
          if (!near(y.data()[c], 0.25 * want, 0.25 * terms * static_cast<double>(count))) ++bad;
        }
        overrun += !y.intact();
        std::memcpy(y0, y.data(), dv * sizeof(float));
        k.axpy(-1.5f, x, y.data(), dv);
        for (size_t c = 0; c < dv; ++c) {
          const double want = static_cast<double>(y0[c]) - 1.5 * x[c];
          if (!near(y.data()[c], want, std::fabs(static_cast<double>(y0[c])) + std::fabs(1.5 * x[c]))) ++bad;
        }
        overrun += !y.intact();
        std::memcpy(y0, y.data(), dv * sizeof(float));
        k.scale(y.data(), dv, 3.0f);
        for (size_t c = 0; c < dv; ++c)
          if (y.data()[c] != y0[c] * 3.0f) ++bad;  // one rounding: exact agreement
        overrun += !y.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu values off in weighted_sum/axpy/scale", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(overrun == 0, "%s/%s: %zu writes outside [0, n)", k.port, k.simd_target(), overrun);
  }
}

TA_CASE("kernels: exp writes exactly n values") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    size_t overrun = 0;
    for (size_t n = 1; n <= kMaxLen; ++n) {
      Arena::Scope scope;
      float* x = alloc<float>(n);
      auto e = guarded(n);
      if (!x || !e.base) TA_IGNORE("arena too small");
      for (size_t i = 0; i < n; ++i) x[i] = -0.1f * static_cast<float>(i);
      k.exp(x, e.data(), n);
      overrun += !e.intact();
    }
    TA_CHECK_MSG(overrun == 0, "%s/%s: exp wrote outside out[0, n) %zu times", k.port, k.simd_target(), overrun);
  }
}

// The optional block primitives, where a port has them: every row count up to
// kBlockRows, odd counts and widths (tails of every vector width), strided
// rows, each element against a double-precision sum, and nothing written
// outside the given rows and columns (the gaps between strided rows included).
TA_CASE("kernels: scores_block and weighted_sum_block match double sums for every row count") {
  Ports pl;
  // 128 and 131: long dot products (16 vectors of 8 lanes and past it) with
  // and without a partial vector, where every port takes its widest tile.
  const size_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 128, 131};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    TA_CHECK_MSG((k.scores_block == nullptr) == (k.weighted_sum_block == nullptr),
                 "%s/%s: block primitives come in pairs", k.port, k.simd_target());
    if (!k.scores_block || !k.weighted_sum_block) continue;
    size_t bad_s = 0, bad_y = 0, overrun = 0, cases = 0;
    Rng rng(23);
    for (size_t rows = 1; rows <= tinyattn::kBlockRows; ++rows)
      for (size_t count : sizes)
        for (size_t width : sizes) {
          if (count * width > 3000 && width != 33) continue;  // keep the run short
          Arena::Scope scope;
          const size_t ldq = width + 1, ldk = width + 3, lds = count + 2;  // rows apart, gaps in between
          const size_t ldv = width + 5, ldp = count + 3, ldy = width + 2;
          float* q = alloc<float>(rows * ldq);
          float* kk = alloc<float>(count * ldk);
          float* v = alloc<float>(count * ldv);
          float* p = alloc<float>(rows * ldp);
          auto s = guarded(rows * lds);
          auto y = guarded(rows * ldy);
          if (!q || !kk || !v || !p || !s.base || !y.base) TA_IGNORE("arena too small");
          rng.fill_normal(q, rows * ldq);
          rng.fill_normal(kk, count * ldk);
          rng.fill_normal(v, count * ldv);
          rng.fill_uniform(p, rows * ldp, 0.0f, 1.0f);
          for (size_t r = 0; r < rows; ++r) p[r * ldp + (r + 1) % count] = 0.0f;  // zero weights (finite V)
          const float a[tinyattn::kBlockRows] = {0.5f, 1.0f, -2.0f, 0.125f};
          ++cases;
          k.scores_block(q, ldq, rows, kk, ldk, count, width, 0.75f, s.data(), lds);
          k.weighted_sum_block(p, ldp, rows, v, ldv, count, width, a, y.data(), ldy);
          for (size_t r = 0; r < rows; ++r) {
            for (size_t j = 0; j < count; ++j) {
              double terms = 0.0;
              const double want = dot_terms(q + r * ldq, kk + j * ldk, width, &terms);
              if (!near(s.data()[r * lds + j], 0.75 * want, 0.75 * terms * static_cast<double>(width))) ++bad_s;
            }
            for (size_t j = count; j < lds; ++j) overrun += s.data()[r * lds + j] != kGuardValue;
            for (size_t c = 0; c < width; ++c) {
              double terms = 0.0;
              const double want = dot_terms_strided(p + r * ldp, v + c, ldv, count, &terms);
              const double ar = a[r];
              if (!near(y.data()[r * ldy + c], ar * want, std::fabs(ar) * terms * static_cast<double>(count))) ++bad_y;
            }
            for (size_t c = width; c < ldy; ++c) overrun += y.data()[r * ldy + c] != kGuardValue;
          }
          overrun += s.intact() ? 0 : 1;
          overrun += y.intact() ? 0 : 1;
        }
    TA_CHECK(cases > 100);
    TA_CHECK_MSG(bad_s == 0, "%s/%s: %zu block scores off", k.port, k.simd_target(), bad_s);
    TA_CHECK_MSG(bad_y == 0, "%s/%s: %zu block weighted sums off", k.port, k.simd_target(), bad_y);
    TA_CHECK_MSG(overrun == 0, "%s/%s: %zu writes outside the block's rows and columns", k.port, k.simd_target(),
                 overrun);
  }
}

// The optional transposed-keys scores, where a port has them: the same
// scaled dot products as scores_block from K^T, for a full block, at every
// count and width; nothing written outside the rows; and every product
// computed (no zero skipping): an inf key element meets a zero query element
// in a NaN score, as in a dot product.
TA_CASE("kernels: scores_block_transposed is scores_block from the keys transposed") {
  Ports pl;
  const size_t sizes[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 33, 48, 64, 100, 131};
  constexpr size_t kRows = tinyattn::kBlockRows;
  size_t ports_with = 0;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    if (!k.scores_block_transposed) continue;
    ++ports_with;
    size_t bad = 0, overrun = 0, nonfinite = 0, cases = 0;
    Rng rng(29);
    for (size_t count : sizes)
      for (size_t width : sizes) {
        Arena::Scope scope;
        const size_t ldq = width + 1, ldkt = count + 3, lds = count + 2;
        float* q = alloc<float>(kRows * ldq);
        float* kt = alloc<float>(width * ldkt);
        auto s = guarded(kRows * lds);
        if (!q || !kt || !s.base) TA_IGNORE("arena too small");
        rng.fill_normal(q, kRows * ldq);
        rng.fill_normal(kt, width * ldkt);
        ++cases;
        k.scores_block_transposed(q, ldq, kt, ldkt, count, width, 0.75f, s.data(), lds);
        for (size_t r = 0; r < kRows; ++r) {
          for (size_t j = 0; j < count; ++j) {
            double terms = 0.0;
            const double want = dot_terms_strided(q + r * ldq, kt + j, ldkt, width, &terms);
            if (!near(s.data()[r * lds + j], 0.75 * want, 0.75 * terms * static_cast<double>(width))) ++bad;
          }
          for (size_t j = count; j < lds; ++j) overrun += s.data()[r * lds + j] != kGuardValue;
        }
        overrun += s.intact() ? 0 : 1;
        // Key j = count - 1 gets +inf at element c = width - 1; row 0's query
        // element there is 0: NaN for row 0, +-inf for the others.
        const size_t jl = count - 1, cl = width - 1;
        kt[cl * ldkt + jl] = std::numeric_limits<float>::infinity();
        q[cl] = 0.0f;
        for (size_t r = 1; r < kRows; ++r)
          if (q[r * ldq + cl] == 0.0f) q[r * ldq + cl] = 1.0f;
        k.scores_block_transposed(q, ldq, kt, ldkt, count, width, 0.75f, s.data(), lds);
        nonfinite += !std::isnan(s.data()[jl]);
        for (size_t r = 1; r < kRows; ++r) nonfinite += !std::isinf(s.data()[r * lds + jl]);
      }
    TA_CHECK(cases > 100);
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu transposed-keys scores off", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(overrun == 0, "%s/%s: %zu writes outside the block's rows", k.port, k.simd_target(), overrun);
    TA_CHECK_MSG(nonfinite == 0, "%s/%s: %zu scores with an inf key element are not inf/NaN as a dot product's",
                 k.port, k.simd_target(), nonfinite);
  }
  if (ports_with == 0) TA_IGNORE("no port in this build has scores_block_transposed");
}

namespace {

// Softmax attention of one block row in double, over keys [lo, hi) of s:
// the spec attend_block is held to (tinyattn/kernels.h, AttendBlock).
struct RowWant {
  double max = 0.0, sum = 0.0;
};
RowWant want_row(const double* s, size_t lo, size_t hi) {
  RowWant w{-INFINITY, 0.0};
  for (size_t j = lo; j < hi; ++j) w.max = std::fmax(w.max, s[j]);
  for (size_t j = lo; j < hi; ++j) w.sum += std::exp(s[j] - w.max);
  return w;
}

struct BlockCase {
  size_t rows, count, dk, dv;
  size_t ldq, ldk, ldv, lds, ldy;
  float* q;
  float* k;
  float* v;
  Guarded<float> s, y;
  size_t own[2 * tinyattn::kFixedRowsAtOnce];  // rows: up to a block, or a fixed-extent call's
  float max[tinyattn::kFixedRowsAtOnce], sum[tinyattn::kFixedRowsAtOnce];

  // packed: Q, K, V and Y rows without gaps (ld = Dk or Dv), as the driver
  // passes them (a port may have a faster path for that layout).
  static BlockCase make(size_t rows, size_t count, size_t dk, size_t dv, bool packed = false) {
    const size_t ldq = packed ? dk : dk + 1, ldk = packed ? dk : dk + 3, ldv = packed ? dv : dv + 5,
                 ldy = packed ? dv : dv + 2;
    BlockCase c{rows, count, dk, dv, ldq, ldk, ldv, count + 2, ldy, nullptr, nullptr, nullptr,
                guarded(rows * (count + 2)), guarded(rows * ldy), {}, {}, {}};
    c.q = tatest::alloc<float>(rows * c.ldq);
    c.k = tatest::alloc<float>(count * c.ldk);
    c.v = tatest::alloc<float>(count * c.ldv);
    return c;
  }
  bool ok() const { return q && k && v && s.base && y.base; }
  bool run(const KernelsF32& kern, bool ranges) {
    const tinyattn::AttendBlock b{q,     ldq,   rows, k,        ldk,      v,        ldv, count, dk, dv, 0.75f,
                                  ranges ? own : nullptr, s.data(), lds, y.data(), ldy, max, sum, nullptr, 0};
    return kern.attend_block(b);
  }
  // Row r's scores in double (scale 0.75) and their sum of |terms|.
  void scores(size_t r, double* out, double* terms) const {
    for (size_t j = 0; j < count; ++j) {
      out[j] = 0.75 * dot_terms(q + r * ldq, k + j * ldk, dk, &terms[j]);
      terms[j] *= 0.75;
    }
  }
};

// An accepted block's outputs, row maxima and sums against double precision
// (counts of the entries off), and writes outside y's and s's rows.
void check_block(BlockCase& c, size_t& bad_y, size_t& bad_stats, size_t& overrun) {
  double s[70], terms[70];
  for (size_t r = 0; r < c.rows; ++r) {
    c.scores(r, s, terms);
    const size_t lo = c.own[2 * r], hi = c.own[2 * r + 1];
    const RowWant w = want_row(s, lo, hi);
    double max_terms = 0.0;
    for (size_t j = lo; j < hi; ++j) max_terms = std::fmax(max_terms, terms[j]);
    const double s_tol = 4e-7 * max_terms * static_cast<double>(c.dk) + 1e-30;
    if (std::fabs(c.max[r] - w.max) > s_tol) ++bad_stats;
    // The scores' rounding moves every weight by up to exp(2 * s_tol).
    const double rel = 2.0 * s_tol + 1e-5;
    if (std::fabs(c.sum[r] - w.sum) > rel * w.sum) ++bad_stats;
    for (size_t col = 0; col < c.dv; ++col) {
      double want = 0.0, mag = 0.0;
      for (size_t j = lo; j < hi; ++j) {
        const double pj = std::exp(s[j] - w.max) / w.sum;
        want += pj * c.v[j * c.ldv + col];
        mag += pj * std::fabs(c.v[j * c.ldv + col]);
      }
      if (std::fabs(c.y.data()[r * c.ldy + col] - want) > 2.0 * rel * mag + 1e-30) ++bad_y;
    }
    for (size_t col = c.dv; col < c.ldy; ++col) overrun += c.y.data()[r * c.ldy + col] != kGuardValue;
    for (size_t j = c.count; j < c.lds; ++j) overrun += c.s.data()[r * c.lds + j] != kGuardValue;
  }
  overrun += c.s.intact() ? 0 : 1;
  overrun += c.y.intact() ? 0 : 1;
}

}  // namespace

// The optional fused block, where a port has it: outputs, row max and sum
// against double precision for every row count, odd counts and widths and
// per-row key ranges, rows with gaps and packed; nothing written outside y's
// rows and s's rows; and the cases it must decline (returning false) rather
// than answer wrongly.
TA_CASE("kernels: attend_block is softmax attention over each row's keys, and declines non-finite rows") {
  Ports pl;
  const size_t counts[] = {1, 2, 3, 7, 8, 9, 16, 17, 33, 70};
  const size_t widths[] = {1, 3, 8, 16, 17, 33, 64};
  size_t ports_with = 0;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    if (!k.attend_block) continue;
    ++ports_with;
    size_t bad_y = 0, bad_stats = 0, overrun = 0, declined = 0, cases = 0;
    Rng rng(31);
    for (size_t rows = 1; rows <= tinyattn::kBlockRows; ++rows)
      for (size_t count : counts)
        for (size_t dk : widths)
          for (size_t dv : widths) {
            if (count * (dk + dv) > 2500 && dk != 17) continue;  // keep the run short
            for (int layout = 0; layout < 3; ++layout) {  // ranges; packed rows without ranges
              const int ranges = layout == 1;
              if (layout == 2 && (dk % 4 != 0 || dv % 4 != 0)) continue;
              Arena::Scope scope;
              BlockCase c = BlockCase::make(rows, count, dk, dv, layout == 2);
              if (!c.ok()) TA_IGNORE("arena too small");
              rng.fill_normal(c.q, rows * c.ldq, 2.0f);
              rng.fill_normal(c.k, count * c.ldk);
              rng.fill_normal(c.v, count * c.ldv);
              for (size_t r = 0; r < rows; ++r) {  // a non-empty range per row, a different one for each
                const size_t lo = ranges ? (r * 5) % count : 0;
                const size_t hi = ranges ? lo + 1 + (r * 7 + count / 2) % (count - lo) : count;
                c.own[2 * r] = lo;
                c.own[2 * r + 1] = hi;
              }
              ++cases;
              if (!c.run(k, ranges != 0)) {
                ++declined;
                continue;
              }
              check_block(c, bad_y, bad_stats, overrun);
            }
          }
    TA_CHECK(cases > 500);
    TA_CHECK_MSG(declined == 0, "%s/%s: %zu finite blocks declined", k.port, k.simd_target(), declined);
    TA_CHECK_MSG(bad_y == 0, "%s/%s: %zu fused outputs off", k.port, k.simd_target(), bad_y);
    TA_CHECK_MSG(bad_stats == 0, "%s/%s: %zu row max or sum off", k.port, k.simd_target(), bad_stats);
    TA_CHECK_MSG(overrun == 0, "%s/%s: %zu writes outside the block's rows and columns", k.port, k.simd_target(),
                 overrun);

    // What it must decline: each in every row position of a full block, with
    // gaps between the rows and packed.
    const float kHuge = 3e38f, kInf = std::numeric_limits<float>::infinity();
    enum What { kNaNQuery, kNaNKey, kInfScore, kAllMinusInf, kInfValue, kWhatCount };
    const char* const names[] = {"a NaN query", "a NaN score beside finite ones", "a +inf score",
                                 "a row of -inf scores", "an inf value row"};
    for (int what = 0; what < kWhatCount; ++what)
      for (size_t at = 0; at < 2 * tinyattn::kBlockRows; ++at) {  // each row, then each row packed
        Arena::Scope scope;
        const bool packed = at >= tinyattn::kBlockRows;
        const size_t bad_row = at % tinyattn::kBlockRows;
        BlockCase c = packed ? BlockCase::make(tinyattn::kBlockRows, 9, 8, 12, true)
                             : BlockCase::make(tinyattn::kBlockRows, 9, 5, 11);
        if (!c.ok()) TA_IGNORE("arena too small");
        rng.fill_normal(c.q, c.rows * c.ldq);
        rng.fill_normal(c.k, c.count * c.ldk);
        rng.fill_normal(c.v, c.count * c.ldv);
        float* qr = c.q + bad_row * c.ldq;
        switch (what) {
          case kNaNQuery: qr[2] = std::numeric_limits<float>::quiet_NaN(); break;
          case kNaNKey: c.k[(bad_row + 2) * c.ldk + 1] = std::numeric_limits<float>::quiet_NaN(); break;
          case kInfScore: qr[0] = kHuge; c.k[3 * c.ldk] = kHuge; break;
          case kAllMinusInf:
            for (size_t d = 0; d < c.dk; ++d) qr[d] = d == 0 ? kHuge : 0.0f;
            for (size_t j = 0; j < c.count; ++j) c.k[j * c.ldk] = -kHuge;
            break;
          default: c.v[(bad_row + 4) * c.ldv + 7] = kInf; break;  // a key every row sees, weight > 0
        }
        TA_CHECK_MSG(!c.run(k, false), "%s/%s: accepted a block with %s in row %zu", k.port, k.simd_target(),
                     names[what], bad_row);
      }
  }
  if (ports_with == 0) TA_IGNORE("no port in this build has attend_block");
}

// The fixed-extent kernels (KernelsF32::attend_fixed) are attend_block
// compiled for one Dk and Dv: on the same block they return the same answer
// (accepted or declined) and, when accepted, outputs, row maxima and sums
// within attend_block's bounds against double precision, for every row count,
// key counts around the vector widths, per-row key ranges, and blocks holding
// a NaN query, an inf score, a row of -inf scores or an inf value (which both
// must decline), with gaps between the rows and packed.
TA_CASE("kernels: each attend_fixed entry equals attend_block on blocks of its Dk and Dv, declines included") {
  Ports pl;
  const size_t widths[] = {8, 16, 32, 64};
  const size_t counts[] = {1, 3, 8, 9, 16, 17, 33};
  size_t ports_with = 0;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    if (!k.attend_fixed) continue;
    TA_CHECK_MSG(k.attend_block != nullptr, "%s: attend_fixed without attend_block", k.port);
    if (!k.attend_block) continue;
    ++ports_with;
    size_t entries = 0, cases = 0, finite = 0, accepted = 0, answer_differs = 0, bad_y = 0, bad_stats = 0, overrun = 0;
    Rng rng(57);
    for (size_t dk : widths)
      for (size_t dv : widths) {
        const int e = tinyattn::detail::fixed_extent(dk, dv);
        TA_CHECK((e >= 0 && static_cast<size_t>(e) < tinyattn::detail::kFixedExtents));
        bool (*const fixed)(const tinyattn::AttendBlock&) = k.attend_fixed[e];
        if (!fixed) continue;
        ++entries;
        for (size_t rows = 1; rows <= tinyattn::kBlockRows; ++rows)
          for (size_t count : counts)
            for (int kind = 0; kind < 12; ++kind) {  // what = kind % 6; kind >= 6: packed rows
              // what: 0 finite, 1 ranges, 2..5 a non-finite input
              const int what = kind % 6;
              if (kind >= 6 && rows != tinyattn::kBlockRows) continue;  // packed: full blocks
              Arena::Scope scope;
              BlockCase c = BlockCase::make(rows, count, dk, dv, kind >= 6);
              if (!c.ok()) TA_IGNORE("arena too small");
              rng.fill_normal(c.q, rows * c.ldq, 2.0f);
              rng.fill_normal(c.k, count * c.ldk);
              rng.fill_normal(c.v, count * c.ldv);
              for (size_t r = 0; r < rows; ++r) {
                const size_t lo = what == 1 ? (r * 5) % count : 0;
                c.own[2 * r] = lo;
                c.own[2 * r + 1] = what == 1 ? lo + 1 + (r * 7 + count / 2) % (count - lo) : count;
              }
              const size_t bad = rng.next_u64() % rows;
              float* qr = c.q + bad * c.ldq;
              const float kHuge = 3e38f;
              if (what == 2) qr[dk / 2] = std::numeric_limits<float>::quiet_NaN();
              if (what == 3) qr[0] = kHuge, c.k[(count - 1) * c.ldk] = kHuge;
              if (what == 4) {
                for (size_t x = 0; x < dk; ++x) qr[x] = x == 0 ? kHuge : 0.0f;
                for (size_t j = 0; j < count; ++j) c.k[j * c.ldk] = -kHuge;
              }
              if (what == 5) c.v[(count / 2) * c.ldv + dv - 1] = std::numeric_limits<float>::infinity();
              const tinyattn::AttendBlock b{c.q,   c.ldq, rows,  c.k, c.ldk, c.v, c.ldv, count, dk, dv, 0.75f,
                                            what == 1 ? c.own : nullptr, c.s.data(), c.lds, c.y.data(), c.ldy,
                                            c.max, c.sum, nullptr, 0};
              const bool want_ok = k.attend_block(b);
              const bool got_ok = fixed(b);
              ++cases;
              finite += what < 2;
              if (got_ok != want_ok) {
                ++answer_differs;
                continue;
              }
              if (!got_ok) continue;
              ++accepted;
              check_block(c, bad_y, bad_stats, overrun);
            }
      }
    TA_CHECK_MSG(entries > 0, "%s: attend_fixed has no entry", k.port);
    TA_CHECK_MSG(accepted == finite && cases == 3 * finite, "%s: %zu of %zu finite blocks accepted, %zu cases",
                 k.port, accepted, finite, cases);  // and every non-finite one declined
    TA_CHECK_MSG(answer_differs == 0, "%s/%s: %zu blocks accepted by one kernel and declined by the other", k.port,
                 k.simd_target(), answer_differs);
    TA_CHECK_MSG(bad_y == 0, "%s/%s: %zu fixed-extent outputs off", k.port, k.simd_target(), bad_y);
    TA_CHECK_MSG(bad_stats == 0, "%s/%s: %zu row max or sum off", k.port, k.simd_target(), bad_stats);
    TA_CHECK_MSG(overrun == 0, "%s/%s: %zu writes outside the block's rows and columns", k.port, k.simd_target(),
                 overrun);
  }
  if (ports_with == 0) TA_IGNORE("no port in this build has attend_fixed");
}

// A call of several blocks (KernelsF32::fixed_multi_block_keys) answers as
// its blocks' calls do: it declines exactly when one of them would and
// otherwise gives every row's output, max and sum within attend_block's
// bounds against double precision (its sums may run in another order than a
// call per block's), writing nothing outside its rows; for every entry, key
// counts up to the port's limit and past it, an inf or NaN in one block, and
// tensors packed or with gaps between their rows.
TA_CASE("kernels: an attend_fixed call of several blocks answers as its blocks do, within their bounds") {
  Ports pl;
  constexpr size_t kRows = tinyattn::kFixedRowsAtOnce;
  static_assert(kRows % tinyattn::kBlockRows == 0 && kRows > tinyattn::kBlockRows, "several whole blocks");
  const size_t widths[] = {8, 16, 32, 64};
  size_t ports_with = 0;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    if (!k.attend_fixed || k.fixed_multi_block_keys == 0) continue;
    ++ports_with;
    size_t finite = 0, accepted = 0, declined = 0, answer_differs = 0, bad_y = 0, bad_stats = 0, overrun = 0;
    Rng rng(61);
    for (size_t dk : widths)
      for (size_t dv : widths) {
        bool (*const fixed)(const tinyattn::AttendBlock&) = k.attend_fixed[tinyattn::detail::fixed_extent(dk, dv)];
        if (!fixed) continue;
        const size_t limit = k.fixed_multi_block_keys;
        for (size_t count : {size_t{1}, size_t{3}, limit / 2 + 1, limit, limit + 1, 2 * limit})
          for (int kind = 0; kind < 8; ++kind) {  // what = kind % 4: 0 finite, 1 NaN query, 2 inf score, 3 inf value
            const int what = kind % 4;
            Arena::Scope scope;
            BlockCase c = BlockCase::make(kRows, count, dk, dv, kind < 4);  // kind >= 4: gaps between rows
            float* y_blocks = alloc<float>(kRows * c.ldy);
            float* s_blocks = alloc<float>(tinyattn::kBlockRows * c.lds);
            if (!c.ok() || !y_blocks || !s_blocks) TA_IGNORE("arena too small");
            rng.fill_normal(c.q, kRows * c.ldq, 2.0f);
            rng.fill_normal(c.k, count * c.ldk);
            rng.fill_normal(c.v, count * c.ldv);
            for (size_t r = 0; r < kRows; ++r) c.own[2 * r] = 0, c.own[2 * r + 1] = count;
            const size_t row = tinyattn::kBlockRows + rng.next_u64() % (kRows - tinyattn::kBlockRows);
            if (what == 1) c.q[row * c.ldq + dk / 2] = std::numeric_limits<float>::quiet_NaN();
            if (what == 2) c.q[row * c.ldq] = 3e38f, c.k[(count - 1) * c.ldk] = 3e38f;
            if (what == 3) c.v[(count / 2) * c.ldv + dv - 1] = std::numeric_limits<float>::infinity();
            const tinyattn::AttendBlock call{c.q,   c.ldq, kRows, c.k,   c.ldk,   c.v,        c.ldv,
                                             count, dk,    dv,    0.75f, nullptr, c.s.data(), c.lds,
                                             c.y.data(), c.ldy, c.max, c.sum, nullptr, 0};
            const bool got = fixed(call);
            bool want = true;
            for (size_t r0 = 0; r0 < kRows; r0 += tinyattn::kBlockRows) {
              float max[tinyattn::kBlockRows], sum[tinyattn::kBlockRows];
              tinyattn::AttendBlock block = call;
              block.rows = tinyattn::kBlockRows;
              block.q = c.q + r0 * c.ldq;
              block.s = s_blocks;
              block.y = y_blocks + r0 * c.ldy;
              block.max = max;
              block.sum = sum;
              want = fixed(block) && want;
            }
            finite += what == 0;
            if (got != want) {
              ++answer_differs;
              continue;
            }
            if (!got) {
              ++declined;
              continue;
            }
            ++accepted;
            check_block(c, bad_y, bad_stats, overrun);
          }
      }
    TA_CHECK_MSG(accepted == finite && declined == 3 * finite, "%s/%s: %zu of %zu finite calls accepted, %zu declined",
                 k.port, k.simd_target(), accepted, finite, declined);
    TA_CHECK_MSG(answer_differs == 0, "%s/%s: %zu calls answered unlike their blocks", k.port, k.simd_target(),
                 answer_differs);
    TA_CHECK_MSG(bad_y == 0, "%s/%s: %zu outputs of calls of several blocks off", k.port, k.simd_target(), bad_y);
    TA_CHECK_MSG(bad_stats == 0, "%s/%s: %zu row max or sum off", k.port, k.simd_target(), bad_stats);
    TA_CHECK_MSG(overrun == 0, "%s/%s: %zu writes outside the call's rows and columns", k.port, k.simd_target(),
                 overrun);
  }
  if (ports_with == 0) TA_IGNORE("no port in this build takes several blocks per attend_fixed call");
}

namespace {

// How the planted dot product overflows fp32 (plant_overflow).
enum class Overflow { kMinusInf, kPlusInf, kNaN };
const char* overflow_name(Overflow o) {
  return o == Overflow::kMinusInf ? "-inf" : o == Overflow::kPlusInf ? "+inf" : "NaN";
}

// Makes row `row`'s dot product with key `key` overflow while every input
// stays finite: q[row][0..1] = 4 (the other rows' are 0, so their products
// with the key are 0) against k[key][0] = -FLT_MAX (-inf), +FLT_MAX (+inf),
// or k[key][0..1] = FLT_MAX, -FLT_MAX (+inf and -inf products: NaN), in any
// order of the sums. kt: K transposed (ldkt apart) or nullptr, kept equal.
// Returns what unplant_overflow puts back.
struct Planted {
  float k0, k1;
};
Planted plant_overflow(BlockCase& c, float* kt, size_t ldkt, size_t row, size_t key, Overflow what) {
  float* qr = c.q + row * c.ldq;
  float* kj = c.k + key * c.ldk;
  const Planted was{kj[0], kj[1]};
  qr[0] = 4.0f;
  qr[1] = what == Overflow::kNaN ? 4.0f : 0.0f;
  kj[0] = what == Overflow::kMinusInf ? -FLT_MAX : FLT_MAX;
  if (what == Overflow::kNaN) kj[1] = -FLT_MAX;
  if (kt) kt[key] = kj[0], kt[ldkt + key] = kj[1];
  return was;
}
void unplant_overflow(BlockCase& c, float* kt, size_t ldkt, size_t row, size_t key, Planted was) {
  c.q[row * c.ldq] = c.q[row * c.ldq + 1] = 0.0f;
  c.k[key * c.ldk] = was.k0;
  c.k[key * c.ldk + 1] = was.k1;
  if (kt) kt[key] = was.k0, kt[ldkt + key] = was.k1;
}

}  // namespace

// A score that is not finite while Q and K are (a dot product past FLT_MAX)
// is recomputed by the driver (docs/hardening.md, the overflow rule), so a
// fused entry must decline its block rather than answer: a -inf score taken
// for a masked key drops a key whose logit may be ordinary. Every entry of
// every port (attend_block and each attend_fixed entry, packed and with gaps
// between rows), calls of one block (each row count, the bad row at each
// position; all keys, per-row key ranges holding the key, and K^T for full
// blocks) and of several (fixed_multi_block_keys, the bad row in each
// block), the key at every position of counts around every vector width
// (around each 8-key boundary of 33 keys).
TA_CASE("kernels: every fused entry declines a block where one own key's dot product overflows (-inf, +inf, NaN)") {
  Ports pl;
  constexpr size_t kRowsMax = tinyattn::kFixedRowsAtOnce;
  const size_t counts[] = {1, 3, 4, 5, 8, 9, 16, 17, 33};
  const size_t widths[] = {8, 16, 32, 64};
  const Overflow kinds[] = {Overflow::kMinusInf, Overflow::kPlusInf, Overflow::kNaN};
  size_t ports_with = 0;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsF32& k = *tinyattn::kernels_f32(pl.ports[pi]);
    if (!k.attend_block) continue;
    ++ports_with;
    struct Entry {
      bool (*attend)(const tinyattn::AttendBlock&);
      size_t dk, dv;
      bool packed, fixed;
    };
    Entry entries[2 + 2 * tinyattn::detail::kFixedExtents];
    size_t ne = 0;
    entries[ne++] = {k.attend_block, 5, 3, false, false};
    entries[ne++] = {k.attend_block, 8, 12, true, false};
    if (k.attend_fixed)
      for (size_t dk : widths)
        for (size_t dv : widths)
          if (bool (*const fixed)(const tinyattn::AttendBlock&) =
                  k.attend_fixed[tinyattn::detail::fixed_extent(dk, dv)])
            for (bool packed : {true, false}) entries[ne++] = {fixed, dk, dv, packed, true};
    size_t calls = 0, accepted = 0;
    for (size_t ei = 0; ei < ne; ++ei) {
      const Entry& e = entries[ei];
      for (size_t count : counts) {
        Arena::Scope scope;
        BlockCase c = BlockCase::make(kRowsMax, count, e.dk, e.dv, e.packed);
        float* kt = alloc<float>(e.dk * count);
        if (!c.ok() || !kt) TA_IGNORE("arena too small");
        Rng rng(67 + count);
        rng.fill_normal(c.q, kRowsMax * c.ldq);
        rng.fill_normal(c.k, count * c.ldk);
        rng.fill_normal(c.v, count * c.ldv);
        for (size_t r = 0; r < kRowsMax; ++r) c.q[r * c.ldq] = c.q[r * c.ldq + 1] = 0.0f;
        for (size_t x = 0; x < e.dk; ++x)
          for (size_t j = 0; j < count; ++j) kt[x * count + j] = c.k[j * c.ldk + x];
        // Calls: rows, the bad row, layout (0 all keys, 1 key ranges, 2 K^T).
        struct Call {
          size_t rows, bad_row;
          int layout;
        };
        Call call_list[3 * tinyattn::kBlockRows + 2 * (tinyattn::kBlockRows - 1) + kRowsMax];
        size_t nc = 0;
        for (size_t rows = 1; rows <= tinyattn::kBlockRows; ++rows)
          for (size_t bad = rows == tinyattn::kBlockRows ? 0 : rows - 1; bad < rows; ++bad)
            for (int layout = 0; layout < (rows == tinyattn::kBlockRows ? 3 : 2); ++layout)
              call_list[nc++] = {rows, bad, layout};
        if (e.fixed && count <= k.fixed_multi_block_keys)
          for (size_t bad = 0; bad < kRowsMax; ++bad) call_list[nc++] = {kRowsMax, bad, 0};
        for (size_t ci = 0; ci < nc; ++ci) {
          const Call& call = call_list[ci];
          for (size_t key = 0; key < count; ++key) {
            // Past 17 keys: the keys at each side of every 8-key boundary (4- and 16-lane ones included).
            if (count > 17 && key % 8 != 0 && key % 8 != 7 && key + 1 != count) continue;
            // Every row's range holds the key, with keys outside it on each side where there are some.
            for (size_t r = 0; r < call.rows; ++r) {
              c.own[2 * r] = key / 2;
              c.own[2 * r + 1] = key + 1 + (count - key - 1) / 2;
            }
            for (Overflow what : kinds) {
              float* const keys_t = call.layout == 2 ? kt : nullptr;
              const Planted was = plant_overflow(c, keys_t, count, call.bad_row, key, what);
              const tinyattn::AttendBlock b{c.q,        c.ldq, call.rows,  c.k,
                                            c.ldk,      c.v,   c.ldv,      count,
                                            e.dk,       e.dv,  0.75f,      call.layout == 1 ? c.own : nullptr,
                                            c.s.data(), c.lds, c.y.data(), c.ldy,
                                            c.max,      c.sum, keys_t,     keys_t ? count : 0};
              ++calls;
              if (e.attend(b)) {
                if (accepted == 0)
                  TA_CHECK_MSG(false,
                               "%s/%s: %s entry Dk %zu Dv %zu%s accepted a %s score: %zu rows, row %zu, key %zu of "
                               "%zu%s",
                               k.port, k.simd_target(), e.fixed ? "attend_fixed" : "attend_block", e.dk, e.dv,
                               e.packed ? " packed" : "", overflow_name(what), call.rows, call.bad_row, key, count,
                               call.layout == 1   ? ", key ranges"
                               : call.layout == 2 ? ", K^T"
                                                  : "");
                ++accepted;
              }
              unplant_overflow(c, keys_t, count, call.bad_row, key, was);
            }
          }
        }
      }
    }
    TA_CHECK_MSG(accepted == 0, "%s/%s: %zu of %zu blocks with an overflowing dot product accepted", k.port,
                 k.simd_target(), accepted, calls);
  }
  if (ports_with == 0) TA_IGNORE("no port in this build has attend_block");
}
