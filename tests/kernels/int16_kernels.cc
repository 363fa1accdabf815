// The KernelsI16 contract (tinyattn/kernels_i16.h): every port's int16 table
// returns, integer for integer, what the scalar table returns (the spec of
// quant_i16.h as plain loops), primitive by primitive, at every length from
// 1 to 70, at the extremes of the int16 range, on rows that start at any
// halfword and lie any distance apart, and at every logit and output shift.
// No write may leave the given range.
#include <climits>
#include <cstring>
#include <initializer_list>

#include "format.h"
#include "port.h"
#include "support.h"
#include "tatest.h"
#include "test_env.h"
#include "tflite16_ops.h"
#include "tinyattn/kernels_i16.h"

using namespace tinyattn;
using namespace tatest;

namespace {

constexpr size_t kMaxLen = 70;
constexpr int32_t kGuard32 = -777777;
constexpr int64_t kGuard64 = -7777777777777;

struct Ports {
  Port ports[tatest::kMaxPorts];
  size_t n;
  Ports() : n(ports_under_test(ports)) {}
};

const KernelsI16& scalar_table() { return *kernels_i16(Port::kScalar); }

int64_t random_below(Rng& rng, int64_t n) { return static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(n)); }

// Random int16 (kind 0), all -32768 (1), all 32767 (2), or the two extremes mixed (3).
void fill_i16(Rng& rng, int16_t* x, size_t n, int kind) {
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 1: x[i] = -32768; break;
      case 2: x[i] = 32767; break;
      case 3: x[i] = rng.next_u64() % 2 ? int16_t{32767} : int16_t{-32768}; break;
      default: x[i] = static_cast<int16_t>(static_cast<int32_t>(rng.next_u64() & 0xffff) - 32768); break;
    }
  }
}

}  // namespace

TA_CASE("int16 kernels: the tables in use") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const Port port = pl.ports[pi];
    const KernelsI16* k = kernels_i16(port);
    TA_CHECK_MSG(k != nullptr, "%s: no int16 kernels", port_name(port));
    if (!k) continue;
    // A port with int16 kernels of its own names itself; the others run the scalar table.
    if (port_has_i16(port))
      TA_CHECK_MSG(std::strcmp(k->port, port_name(port)) == 0, "%s: its int16 table is named %s", port_name(port),
                   k->port);
    else
      TA_CHECK_MSG(k == &scalar_table(), "%s: an int16 table (%s) it does not declare", port_name(port), k->port);
    TA_CHECK_MSG(k->simd_target && k->scores && k->exp_row && k->probabilities && k->weighted_sum && k->requantize,
                 "%s: a null entry", port_name(port));
    char line[96];
    format(line, sizeof line, "int16 kernels: %s/%s end\n", k->port, k->simd_target());
    out(line);
  }
  TA_CHECK(kernels_i16(Port::kDefault) == kernels_i16(default_port()));
  TA_CHECK(default_kernels_i16() == kernels_i16(default_port()));
}

TA_CASE("int16 kernels: scores and their maximum, any alignment and row distance") {
  Ports pl;
  const KernelsI16& ref = scalar_table();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0, bad_max = 0, overrun = 0, calls = 0;
    Rng rng(21);
    static const size_t counts[] = {1, 2, 3, 4, 5, 8, 13};
    for (size_t dk = 1; dk <= kMaxLen + 60; dk += (dk < kMaxLen ? 1 : 29))
      for (size_t count : counts)
        for (int layout = 0; layout < 8; ++layout) {
          // q and k each at an even or odd halfword; rows dk, dk + 1 or dk + 2 apart.
          const size_t q_off = layout & 1, k_off = (layout >> 1) & 1, pad = layout < 4 ? 0 : (layout < 6 ? 1 : 2);
          const int kind = static_cast<int>(calls % 6 < 4 ? calls % 6 : 0);  // half of them random
          Arena::Scope scope;
          const size_t ldk = dk + pad;
          int16_t* q = alloc<int16_t>(dk + 1);
          int16_t* kk = alloc<int16_t>(count * ldk + 1);
          auto s = Guarded<int64_t>::make(count, kGuard64);
          int64_t* want = alloc<int64_t>(count);
          if (!q || !kk || !s.base || !want) TA_IGNORE("arena too small");
          fill_i16(rng, q + q_off, dk, kind);
          // Every seventh: -32768 against 32767, the most negative scores.
          fill_i16(rng, kk + k_off, count * ldk, calls % 7 == 6 && kind == 1 ? 2 : kind);
          const int64_t want_max = ref.scores(q + q_off, kk + k_off, ldk, count, dk, want);
          const int64_t got_max = k.scores(q + q_off, kk + k_off, ldk, count, dk, s.data());
          for (size_t j = 0; j < count; ++j) bad += s.data()[j] != want[j];
          bad_max += got_max != want_max;
          overrun += !s.intact();
          ++calls;
        }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu scores differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(bad_max == 0, "%s/%s: %zu wrong maxima", k.port, k.simd_target(), bad_max);
    TA_CHECK_MSG(overrun == 0, "%s/%s: scores wrote outside s[0, count) %zu times", k.port, k.simd_target(), overrun);
  }
}

TA_CASE("int16 kernels: scores stay exact at the largest Dk") {
  Ports pl;
  Arena::Scope scope;
  const size_t dk = kMaxDkInt16;
  int16_t* q = alloc<int16_t>(dk);
  int16_t* kk = alloc<int16_t>(2 * dk);
  if (!q || !kk) TA_IGNORE("arena too small for Dk = kMaxDkInt16");
  for (size_t c = 0; c < dk; ++c) {
    q[c] = -32768;
    kk[c] = -32768;      // 2^30 per column: 2^45, the largest score there is
    kk[dk + c] = 32767;  // the most negative one
  }
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    int64_t s[2] = {0, 0};
    const int64_t max = k.scores(q, kk, dk, 2, dk, s);
    const int64_t top = int64_t{1} << 45, bottom = -int64_t{32767} * 32768 * static_cast<int64_t>(dk);
    TA_CHECK_MSG(s[0] == top && s[1] == bottom && max == top, "%s/%s: largest scores %lld, %lld", k.port,
                 k.simd_target(), static_cast<long long>(s[0]), static_cast<long long>(s[1]));
  }
}

namespace {

// A row of scores for exp_row within its contract: max_score >= every kept
// s_j and max_score - s_j <= 2^47; differences of every size, near the
// points where the rounded logit reaches 31 2^26 and 2^31 (where 2^u rounds
// to 0), ties of the rounding (multiplier 2^30), and dropped keys.
void exp_row_scores(Rng& rng, size_t n, FixedMultiplier logit, int64_t* s, int64_t* max_score) {
  const int64_t top = random_below(rng, int64_t{1} << 46) - (int64_t{1} << 45);
  const int64_t extra = rng.next_u64() % 4 == 0 ? random_below(rng, int64_t{1} << 20) : 0;  // max above the row
  // d with d m / 2^shift close to t: d ~ t 2^shift / m.
  auto near = [&](double t) {
    const double d = t * static_cast<double>(uint64_t{1} << logit.shift) / static_cast<double>(logit.multiplier);
    const int64_t cap = (int64_t{1} << 47) - extra;
    int64_t di = d >= static_cast<double>(cap) ? cap : static_cast<int64_t>(d);
    di += random_below(rng, 9) - 4;
    return di < 0 ? int64_t{0} : (di > cap ? cap : di);
  };
  for (size_t j = 0; j < n; ++j) {
    int64_t d;
    switch (rng.next_u64() % 8) {
      case 0: d = 0; break;
      case 1: d = near(31.0 * 67108864.0); break;
      case 2: d = near(2147483648.0); break;
      case 3: d = near(static_cast<double>(random_below(rng, int64_t{1} << 31))); break;
      case 4:  // ties with m = 2^30: d 2^30 + 2^(shift-1) a multiple of 2^shift
        d = logit.shift >= 31 ? (2 * random_below(rng, 1 << 10) + 1) << (logit.shift - 31) : random_below(rng, 1000);
        break;
      case 5: d = (int64_t{1} << 47) - extra; break;
      default: d = random_below(rng, int64_t{1} << (1 + rng.next_u64() % 47)); break;
    }
    if (d > (int64_t{1} << 47) - extra) d = (int64_t{1} << 47) - extra;
    s[j] = top - d;
    if (rng.next_u64() % 9 == 0) s[j] = INT64_MIN;  // dropped
  }
  *max_score = top + extra;
}

}  // namespace

TA_CASE("int16 kernels: exp_row at every logit shift, saturation and ties included") {
  Ports pl;
  const KernelsI16& ref = scalar_table();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0, bad_sum = 0, overrun = 0, zeros = 0, inside = 0;
    Rng rng(22);
    for (int32_t shift = 0; shift <= 62; ++shift)
      for (int variant = 0; variant < 6; ++variant) {
        const int32_t m = variant % 3 == 0   ? int32_t{1} << 30
                          : variant % 3 == 1 ? INT32_MAX
                                             : (int32_t{1} << 30) + static_cast<int32_t>(random_below(rng, 1 << 30));
        const FixedMultiplier logit{m, shift};
        const size_t n = variant < 3 ? 1 + static_cast<size_t>(random_below(rng, 11))
                                     : 1 + static_cast<size_t>(random_below(rng, kMaxLen));
        Arena::Scope scope;
        int64_t* s = alloc<int64_t>(n);
        int32_t* want = alloc<int32_t>(n);
        auto e = Guarded<int32_t>::make(n, kGuard32);
        if (!s || !want || !e.base) TA_IGNORE("arena too small");
        int64_t max_score;
        exp_row_scores(rng, n, logit, s, &max_score);
        const int64_t want_sum = ref.exp_row(s, n, logit, max_score, want);
        const int64_t sum = k.exp_row(s, n, logit, max_score, e.data());
        for (size_t j = 0; j < n; ++j) {
          bad += e.data()[j] != want[j];
          zeros += want[j] == 0;
          inside += want[j] > 0 && want[j] < (1 << 30);
        }
        bad_sum += sum != want_sum;
        overrun += !e.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu exp values differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(bad_sum == 0, "%s/%s: %zu sums differ", k.port, k.simd_target(), bad_sum);
    TA_CHECK_MSG(overrun == 0, "%s/%s: exp_row wrote outside e[0, n) %zu times", k.port, k.simd_target(), overrun);
    TA_CHECK_MSG(zeros > 0 && inside > 0, "%s/%s: %zu zeros, %zu values inside", k.port, k.simd_target(), zeros,
                 inside);
  }
}

TA_CASE("int16 kernels: exp_row gives dropped keys 0 whatever the maximum") {
  // The contract bounds max_score - s_j for kept keys only: a row of dropped
  // keys may come with any maximum, kept scores may lie near INT64_MIN.
  Ports pl;
  const KernelsI16& ref = scalar_table();
  static const int64_t maxima[] = {INT64_MIN, INT64_MIN + 1, INT64_MIN + 1000, -(int64_t{1} << 62), 0, INT64_MAX};
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0;
    for (int32_t shift = 0; shift <= 62; shift += 1)
      for (int64_t top : maxima)
        for (size_t n = 1; n <= 9; n += 4) {
          int64_t s[9];
          int32_t want[9], got[9];
          for (size_t j = 0; j < n; ++j) {
            // Dropped keys, and kept ones at most 2^47 below the maximum where it allows.
            const bool kept = j % 2 == 1 && top <= INT64_MIN + 1000;
            s[j] = kept ? INT64_MIN + 1 + static_cast<int64_t>(j) : INT64_MIN;
          }
          const int64_t max = top > INT64_MIN + 1000 || n == 1 ? top : INT64_MIN + 1 + static_cast<int64_t>(n);
          const FixedMultiplier logit{(int32_t{1} << 30) + shift, shift};
          const int64_t want_sum = ref.exp_row(s, n, logit, max, want);
          bad += k.exp_row(s, n, logit, max, got) != want_sum;
          bad += std::memcmp(got, want, n * sizeof(int32_t)) != 0;
        }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu rows differ", k.port, k.simd_target(), bad);
  }
}

TA_CASE("int16 kernels: exp_row on scores from the scores kernel, every length") {
  Ports pl;
  const KernelsI16& ref = scalar_table();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0, overrun = 0;
    Rng rng(23);
    for (size_t n = 1; n <= kMaxLen; ++n)
      for (int trial = 0; trial < 3; ++trial) {
        Arena::Scope scope;
        const size_t dk = 8 + 8 * static_cast<size_t>(trial);
        int16_t* q = alloc<int16_t>(dk);
        int16_t* kk = alloc<int16_t>(n * dk);
        int64_t* s = alloc<int64_t>(n);
        int32_t* want = alloc<int32_t>(n);
        auto e = Guarded<int32_t>::make(n, kGuard32);
        if (!q || !kk || !s || !want || !e.base) TA_IGNORE("arena too small");
        fill_i16(rng, q, dk, 0);
        fill_i16(rng, kk, n * dk, 0);
        int64_t max = ref.scores(q, kk, dk, n, dk, s);
        if (trial == 2 && n > 1) {
          s[0] = INT64_MIN;  // a dropped key, and the maximum of the others
          max = s[1];
          for (size_t j = 2; j < n; ++j) max = s[j] > max ? s[j] : max;
        }
        // plan_int16's logit multipliers for inputs at scales 2^-14, 2^-10, 2^-6.
        FixedMultiplier logit;
        const double scale = 1.0 / static_cast<double>(int64_t{1} << (14 - 4 * trial));
        if (make_multiplier(scale * scale * 1.4426950408889634 * 67108864.0 / 4.0, &logit) != Status::kOk)
          TA_IGNORE("no multiplier");
        const int64_t want_sum = ref.exp_row(s, n, logit, max, want);
        bad += k.exp_row(s, n, logit, max, e.data()) != want_sum;
        bad += std::memcmp(e.data(), want, n * sizeof(int32_t)) != 0;
        overrun += !e.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu rows differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(overrun == 0, "%s/%s: exp_row wrote outside e[0, n) %zu times", k.port, k.simd_target(), overrun);
  }
}

TA_CASE("int16 kernels: probabilities are the scalar table's") {
  Ports pl;
  const KernelsI16& ref = scalar_table();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0, overrun = 0;
    Rng rng(24);
    for (int trial = 0; trial < 6; ++trial)
      for (size_t n = 1; n <= kMaxLen; ++n) {
        Arena::Scope scope;
        int32_t* e = alloc<int32_t>(n);
        int32_t* want = alloc<int32_t>(n);
        auto p = Guarded<int32_t>::make(n, kGuard32);
        if (!e || !want || !p.base) TA_IGNORE("arena too small");
        int64_t sum = 0;
        for (size_t j = 0; j < n; ++j) {
          const int64_t top = trial == 0 ? 4 : (trial == 5 ? (int64_t{1} << 12) : (int64_t{1} << (10 + 5 * trial)));
          e[j] = j == n / 2 && trial != 5 ? (1 << 30) : static_cast<int32_t>(random_below(rng, top + 1));
          sum += e[j];
        }
        if (sum == 0) sum = 1;
        ref.probabilities(e, n, sum, want);
        k.probabilities(e, n, sum, p.data());
        bad += std::memcmp(p.data(), want, n * sizeof(int32_t)) != 0;
        overrun += !p.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu rows differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(overrun == 0, "%s/%s: probabilities wrote outside p[0, n) %zu times", k.port, k.simd_target(),
                 overrun);
  }
}

namespace {

// Weights within weighted_sum's contract: 0 <= p_j <= 2^15 and
// sum p_j <= 2^15 + count / 2. kind 0: spread; 1: all on one key (2^15);
// 2: 2^15 on one key and rounding leftovers (0 or 1) on others; 3: a few
// large ones.
void fill_weights(Rng& rng, int32_t* p, size_t count, int kind) {
  for (size_t j = 0; j < count; ++j) p[j] = 0;
  const size_t hot = static_cast<size_t>(random_below(rng, static_cast<int64_t>(count)));
  switch (kind) {
    case 1: p[hot] = static_cast<int32_t>(kProbOne); break;
    case 2:  // at most count / 2 leftovers
      for (size_t j = 1; j < count; j += 2) p[j] = static_cast<int32_t>(rng.next_u64() % 2);
      p[hot] = static_cast<int32_t>(kProbOne);
      break;
    default: {
      int64_t left = kProbOne + static_cast<int64_t>(count / 2);
      for (size_t j = 0; j < count && left > 0; ++j) {
        const int64_t most = left < static_cast<int64_t>(kProbOne) ? left : static_cast<int64_t>(kProbOne) - 1;
        const int64_t v = kind == 3 ? (rng.next_u64() % 3 == 0 ? random_below(rng, most + 1) : 0)
                                    : random_below(rng, most / static_cast<int64_t>(count - j) * 2 + 1);
        p[j] = static_cast<int32_t>(v > most ? most : v);
        left -= p[j];
      }
      break;
    }
  }
}

}  // namespace

TA_CASE("int16 kernels: weighted_sum, weights of 2^15 included, any alignment and row distance") {
  Ports pl;
  const KernelsI16& ref = scalar_table();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0, overrun = 0, calls = 0;
    Rng rng(25);
    for (size_t dv = 1; dv <= kMaxLen; dv += (dv < 40 ? 1 : 5))
      // Counts past 64 and 128: ports stage the weights in chunks of keys.
      for (size_t count = 1; count <= 140; count += (count < 9 ? 1 : (count < 40 ? 10 : 45)))
        for (int layout = 0; layout < 4; ++layout) {
          const size_t v_off = layout & 1, pad = layout < 2 ? 0 : 1 + static_cast<size_t>(calls % 3);
          const size_t ldv = dv + pad;
          Arena::Scope scope;
          int32_t* p = alloc<int32_t>(count);
          int16_t* v = alloc<int16_t>(count * ldv + 1);
          int32_t* want = alloc<int32_t>(dv);
          auto acc = Guarded<int32_t>::make(dv, kGuard32);
          if (!p || !v || !want || !acc.base) TA_IGNORE("arena too small");
          fill_weights(rng, p, count, static_cast<int>(calls % 4));
          fill_i16(rng, v + v_off, count * ldv, static_cast<int>((calls / 4) % 4));
          ref.weighted_sum(p, v + v_off, ldv, count, dv, want);
          k.weighted_sum(p, v + v_off, ldv, count, dv, acc.data());
          bad += std::memcmp(acc.data(), want, dv * sizeof(int32_t)) != 0;
          overrun += !acc.intact();
          ++calls;
        }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu of %zu sums differ", k.port, k.simd_target(), bad, calls);
    TA_CHECK_MSG(overrun == 0, "%s/%s: weighted_sum wrote outside acc[0, dv) %zu times", k.port, k.simd_target(),
                 overrun);
  }
}

TA_CASE("int16 kernels: weighted_sum of one key of weight 2^15, of the extremes, of rows far apart") {
  Ports pl;
  const KernelsI16& ref = scalar_table();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0;
    for (size_t dv = 1; dv <= kMaxLen; ++dv)
      for (int16_t x : {int16_t{-32768}, int16_t{32767}, int16_t{-1}}) {
        Arena::Scope scope;
        int16_t* v = alloc<int16_t>(2 * dv);
        int32_t* p = alloc<int32_t>(2);
        int32_t* want = alloc<int32_t>(dv);
        int32_t* got = alloc<int32_t>(dv);
        if (!v || !p || !want || !got) TA_IGNORE("arena too small");
        for (size_t c = 0; c < 2 * dv; ++c) v[c] = x;
        p[0] = static_cast<int32_t>(kProbOne);  // count 1, the whole row on it
        ref.weighted_sum(p, v, dv, 1, dv, want);
        k.weighted_sum(p, v, dv, 1, dv, got);
        bad += std::memcmp(got, want, dv * sizeof(int32_t)) != 0;
        p[1] = 1;  // 2^15 + 1: the contract's most (count 2)
        ref.weighted_sum(p, v, dv, 2, dv, want);
        k.weighted_sum(p, v, dv, 2, dv, got);
        bad += std::memcmp(got, want, dv * sizeof(int32_t)) != 0;
        bad += want[0] != static_cast<int32_t>(kProbOne + 1) * x;
      }
    // Rows far apart (15 ldv past 16 bits: no halfword gather offsets).
    Rng rng(27);
    for (size_t count : {size_t{9}, size_t{33}}) {
      Arena::Scope scope;
      const size_t dv = 6, ldv = 4400;
      int16_t* v = alloc<int16_t>(count * ldv);
      int32_t* p = alloc<int32_t>(count);
      int32_t* want = alloc<int32_t>(dv);
      int32_t* got = alloc<int32_t>(dv);
      if (!v || !p || !want || !got) TA_IGNORE("arena too small");
      fill_i16(rng, v, count * ldv, 0);
      fill_weights(rng, p, count, 0);
      ref.weighted_sum(p, v, ldv, count, dv, want);
      k.weighted_sum(p, v, ldv, count, dv, got);
      bad += std::memcmp(got, want, dv * sizeof(int32_t)) != 0;
    }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu rows differ", k.port, k.simd_target(), bad);
  }
}

TA_CASE("int16 kernels: requantize at every output shift, ties and saturation included") {
  Ports pl;
  const KernelsI16& ref = scalar_table();
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16& k = *kernels_i16(pl.ports[pi]);
    size_t bad = 0, overrun = 0, saturated = 0, inside = 0;
    Rng rng(26);
    for (int32_t shift = 0; shift <= 62; ++shift)
      for (int variant = 0; variant < 4; ++variant) {
        const int32_t m = variant == 0   ? int32_t{1} << 30
                          : variant == 1 ? INT32_MAX
                                         : (int32_t{1} << 30) + static_cast<int32_t>(random_below(rng, 1 << 30));
        const FixedMultiplier output{m, shift};
        const size_t n = 1 + static_cast<size_t>(random_below(rng, kMaxLen));
        Arena::Scope scope;
        int32_t* acc = alloc<int32_t>(n);
        int16_t* want = alloc<int16_t>(n);
        auto y = Guarded<int16_t>::make(n, int16_t{0x5a5a});
        if (!acc || !want || !y.base) TA_IGNORE("arena too small");
        // Values around the output's step at this shift (2^(shift-30)), its
        // halves (ties with m = 2^30), and the int32 extremes.
        const int64_t step = shift >= 30 ? int64_t{1} << (shift - 30) : 1;
        for (size_t c = 0; c < n; ++c) {
          int64_t a;
          switch (rng.next_u64() % 5) {
            case 0: a = (random_below(rng, 1 << 17) - (1 << 16)) * step + step / 2; break;
            case 1: a = c % 2 ? INT32_MAX : INT32_MIN; break;
            case 2: a = random_below(rng, 2 * step * 40000 + 1) - step * 40000; break;
            default: a = static_cast<int32_t>(static_cast<uint32_t>(rng.next_u64())); break;
          }
          acc[c] = static_cast<int32_t>(a < INT32_MIN ? INT32_MIN : (a > INT32_MAX ? INT32_MAX : a));
        }
        ref.requantize(acc, n, output, want);
        k.requantize(acc, n, output, y.data());
        for (size_t c = 0; c < n; ++c) {
          bad += y.data()[c] != want[c];
          saturated += want[c] == -32768 || want[c] == 32767;
          inside += want[c] > -32768 && want[c] < 32767;
        }
        overrun += !y.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu outputs differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(saturated > 0 && inside > 0, "%s/%s: %zu saturated, %zu inside", k.port, k.simd_target(),
                 saturated, inside);
    TA_CHECK_MSG(overrun == 0, "%s/%s: requantize wrote outside y[0, n) %zu times", k.port, k.simd_target(), overrun);
  }
}

// ---------------------------------------------------------------- TFLite mode
//
// The optional entries of Int16Mode::kTflite, on the tables that have them
// (tflite_kernels_i16), against lib/src/tflite16_ops.h (the golden vectors
// hold that to TFLite's definitions).

namespace {

int32_t random_i32(Rng& rng) { return static_cast<int32_t>(static_cast<uint32_t>(rng.next_u64())); }

// A valid multiplier (>= 2^30), the extremes and the 16-bit rounding's edge often.
int32_t random_tflite_multiplier(Rng& rng) {
  switch (rng.next_u64() % 7) {
    case 0: return 1 << 30;
    case 1: return INT32_MAX;
    case 2: return 0x7FFF0000 - 1 + static_cast<int32_t>(rng.next_u64() % 2);
    case 3: return (1 << 30) + (1 << 15) * static_cast<int32_t>(rng.next_u64() % (1 << 15)) - 1 +
                   static_cast<int32_t>(rng.next_u64() % 3);  // the rounding's ties
    default: return (1 << 30) + static_cast<int32_t>(rng.next_u64() % (uint64_t{1} << 30));
  }
}

// tflite16_ops.h's multiplier rounded to 16 bits.
int64_t reduced_multiplier(TfliteMultiplier m) {
  return m.multiplier < 0x7FFF0000 ? (int64_t{m.multiplier} + (1 << 15)) >> 16 : 0x7FFF;
}

// An int64 sum (|x| < 2^47) for requantize at m: random magnitudes, the
// extremes, ties of the rounding, and sums whose requantized value lies
// near the int16 clamp, 2^31 and 2^32 (the int32 wrap), either sign.
int64_t tflite16_sum(Rng& rng, TfliteMultiplier m) {
  constexpr int64_t kLimit = (int64_t{1} << 47) - 1;
  const int64_t r = reduced_multiplier(m);
  const int t = 15 - m.shift;
  const int64_t sign = rng.next_u64() % 2 ? 1 : -1;
  int64_t x;
  switch (rng.next_u64() % 8) {
    case 0: x = sign * kLimit; break;
    case 1: x = static_cast<int64_t>(rng.next_u64() % 5) - 2; break;
    case 2: {  // y * 2^t / r for a target y around 32767, 2^31 or 2^32, plus a little
      static const int64_t targets[] = {32767, 32768, int64_t{1} << 31, (int64_t{1} << 31) - 1, int64_t{1} << 32};
      const int64_t y = targets[rng.next_u64() % 5];
      if (t - 1 + 33 >= 62 || y >= (kLimit * r) >> t) {  // out of reach at this shift: a random sum
        x = static_cast<int64_t>(rng.next_u64() >> 17) * sign;
        break;
      }
      x = sign * (((y << t) / r) + static_cast<int64_t>(rng.next_u64() % 5) - 2);
      break;
    }
    case 3: {  // ties: x * r an odd multiple of 2^(t - 1)
      const int64_t k = static_cast<int64_t>(rng.next_u64() % 2000) * 2 + 1;
      int p = 0;  // r = 2^p (multiplier 2^30: p = 14) gives ties at k 2^(t - 1 - p)
      while ((int64_t{1} << p) < r) ++p;
      x = (int64_t{1} << p) == r && t - 1 >= p ? sign * (k << (t - 1 - p))
                                               : static_cast<int64_t>(rng.next_u64() >> 17) * sign;
      break;
    }
    default: {
      const int bits = static_cast<int>(rng.next_u64() % 48);
      x = sign * static_cast<int64_t>(rng.next_u64() >> (64 - bits > 63 ? 63 : 64 - bits));
      break;
    }
  }
  return x > kLimit ? kLimit : (x < -kLimit ? -kLimit : x);
}

// The compiled ports' TFLite-16 tables, where they have one.
struct Tflite16Ports {
  const KernelsI16Tflite* tables[tatest::kMaxPorts];
  const char* names[tatest::kMaxPorts];
  size_t n = 0;
  Tflite16Ports() {
    Ports pl;
    for (size_t i = 0; i < pl.n; ++i) {
      if (const KernelsI16Tflite* t = tflite_kernels_i16(pl.ports[i])) {
        tables[n] = t;
        names[n++] = port_name(pl.ports[i]);
      }
    }
  }
};

}  // namespace

TA_CASE("int16 kernels: the TFLite-16 tables and the default port's route") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI16Tflite* t = tflite_kernels_i16(pl.ports[pi]);
    TA_CHECK_MSG((t != nullptr) == port_has_tflite_i16(pl.ports[pi]), "%s: TFLite-16 table %s", port_name(pl.ports[pi]),
                 t ? "present, not declared" : "declared, missing");
    if (t)
      TA_CHECK_MSG(t->requantize && t->requantize_y && t->exps && t->outputs, "%s: a null entry",
                   port_name(pl.ports[pi]));
    // The products a TFLite-only image reaches through this table are the
    // port's own, the ones the golden suites hold to the model.
    const KernelsI16* k = kernels_i16(pl.ports[pi]);
    if (t)
      TA_CHECK_MSG(t->scores == k->scores && t->weighted_sum == k->weighted_sum,
                   "%s: the TFLite-16 table's products are not the port's", port_name(pl.ports[pi]));
    char line[96];
    format(line, sizeof line, "int16 kernels: %s TFLite-16 kernels: %s\n", port_name(pl.ports[pi]),
           t ? "own" : "portable");
    out(line);
  }
  TA_CHECK(tflite_kernels_i16(Port::kDefault) == tflite_kernels_i16(default_port()));
  TA_CHECK(default_tflite_kernels_i16() == tflite_kernels_i16(default_port()));
  const TfliteRouteI16 route = default_tflite_route_i16();
  TA_CHECK(route.steps == default_tflite_kernels_i16());
  TA_CHECK(bool{route.scores == default_kernels_i16()->scores});
  TA_CHECK(bool{route.weighted_sum == default_kernels_i16()->weighted_sum});
}

TA_CASE("int16 kernels: TFLite-16 requantize of int64 and int32 sums, every shift") {
  Tflite16Ports tp;
  for (size_t pi = 0; pi < tp.n; ++pi) {
    const KernelsI16Tflite& k = *tp.tables[pi];
    size_t bad = 0, bad_max = 0, bad_y = 0, overrun = 0, saturated = 0, inside = 0, wrapped = 0;
    Rng rng(41);
    for (int32_t shift = -31; shift <= 7; ++shift)
      for (int trial = 0; trial < 12; ++trial) {
        const TfliteMultiplier m{trial == 0 ? 1 << 30 : (trial == 1 ? INT32_MAX : random_tflite_multiplier(rng)),
                                 shift};
        const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
        Arena::Scope scope;
        int64_t* s = alloc<int64_t>(n);
        int32_t* acc = alloc<int32_t>(n);
        auto out32 = Guarded<int32_t>::make(n, kGuard32);
        auto y = Guarded<int16_t>::make(n, int16_t{0x5a5a});
        if (!s || !acc || !out32.base || !y.base) TA_IGNORE("arena too small");
        int32_t want_max = -32768;
        for (size_t j = 0; j < n; ++j) {
          s[j] = tflite16_sum(rng, m);
          const int32_t want = tflite_ops::requantize_i16(s[j], m);
          want_max = want > want_max ? want : want_max;
          saturated += want == -32768 || want == 32767;
          inside += want > -32768 && want < 32767;
          const int32_t unclamped = tflite_ops::multiply_by_quantized_multiplier_64(s[j], m);
          wrapped += (s[j] > 0) != (unclamped > 0) && unclamped != 0;
          switch (rng.next_u64() % 3) {
            case 0: acc[j] = j % 2 ? INT32_MAX : INT32_MIN; break;
            case 1: acc[j] = static_cast<int32_t>(rng.next_u64() % 200001) - 100000; break;
            default: acc[j] = random_i32(rng); break;
          }
        }
        const int32_t got_max = k.requantize(s, n, m, out32.data());
        k.requantize_y(acc, n, m, y.data());
        for (size_t j = 0; j < n; ++j) {
          bad += out32.data()[j] != tflite_ops::requantize_i16(s[j], m);
          bad_y += y.data()[j] != tflite_ops::requantize_i16(acc[j], m);
        }
        bad_max += got_max != want_max;
        overrun += !out32.intact() + !y.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s: %zu requantized scores differ", tp.names[pi], bad);
    TA_CHECK_MSG(bad_max == 0, "%s: %zu wrong maxima", tp.names[pi], bad_max);
    TA_CHECK_MSG(bad_y == 0, "%s: %zu requantized outputs differ", tp.names[pi], bad_y);
    TA_CHECK_MSG(saturated > 0 && inside > 0 && wrapped > 0, "%s: %zu saturated, %zu inside, %zu wrapped",
                 tp.names[pi], saturated, inside, wrapped);
    TA_CHECK_MSG(overrun == 0, "%s: requantize wrote outside its range %zu times", tp.names[pi], overrun);
  }
}

TA_CASE("int16 kernels: TFLite-16 exps over every difference, every beta shift") {
  Tflite16Ports tp;
  for (size_t pi = 0; pi < tp.n; ++pi) {
    const KernelsI16Tflite& k = *tp.tables[pi];
    size_t bad = 0, bad_sum = 0, overrun = 0, calls = 0;
    Rng rng(42);
    for (int32_t shift = -31; shift <= 30; ++shift)
      for (int variant = 0; variant < 3; ++variant) {
        const TfliteMultiplier beta{variant == 0 ? 1 << 30 : (variant == 1 ? INT32_MAX : random_tflite_multiplier(rng)),
                                    shift};
        // Every difference 0..-65535 (max 32767, x from -32768 up) at a few
        // shifts, a stride through them at the others; then random rows.
        const bool sweep = shift == -31 || shift == -16 || shift == -8 || shift == 0 || shift == 1 || shift == 30;
        const int32_t stride = sweep && variant < 2 ? 1 : 61;
        int32_t v = -32768 + static_cast<int32_t>(rng.next_u64() % static_cast<uint64_t>(stride));
        while (v <= 32767) {
          const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
          Arena::Scope scope;
          auto x = Guarded<int32_t>::make(n, kGuard32);
          int32_t* want = alloc<int32_t>(n);
          if (!x.base || !want) TA_IGNORE("arena too small");
          int32_t want_sum = 0;
          for (size_t j = 0; j < n; ++j) {
            x.data()[j] = v <= 32767 ? v : 32767;
            v += stride;
            want[j] = tflite_ops::softmax16_exp(x.data()[j] - 32767, beta);
            want_sum += want[j];
          }
          const int32_t got_sum = k.exps(x.data(), n, 32767, beta, tflite_ops::kTflite16ExpLut);
          bad += std::memcmp(x.data(), want, n * sizeof(int32_t)) != 0;
          bad_sum += got_sum != want_sum;
          overrun += !x.intact();
          ++calls;
        }
        for (int trial = 0; trial < 8; ++trial) {
          const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
          Arena::Scope scope;
          auto x = Guarded<int32_t>::make(n, kGuard32);
          int32_t* want = alloc<int32_t>(n);
          if (!x.base || !want) TA_IGNORE("arena too small");
          // A row's scores: random, the maximum alone, or all at the maximum
          // (the largest sum of exps), with the maximum anywhere.
          const int32_t max = trial % 4 == 0 ? 32767 : -32768 + static_cast<int32_t>(rng.next_u64() % 65536);
          for (size_t j = 0; j < n; ++j) {
            const int32_t r = -32768 + static_cast<int32_t>(rng.next_u64() % static_cast<uint64_t>(max + 32769));
            x.data()[j] = trial % 3 == 1 ? max : (trial % 3 == 2 ? -32768 : r);
          }
          int32_t want_sum = 0;
          for (size_t j = 0; j < n; ++j) {
            want[j] = tflite_ops::softmax16_exp(x.data()[j] - max, beta);
            want_sum += want[j];
          }
          const int32_t got_sum = k.exps(x.data(), n, max, beta, tflite_ops::kTflite16ExpLut);
          bad += std::memcmp(x.data(), want, n * sizeof(int32_t)) != 0;
          bad_sum += got_sum != want_sum;
          overrun += !x.intact();
          ++calls;
        }
      }
    TA_CHECK_MSG(bad == 0, "%s: %zu of %zu exp rows differ", tp.names[pi], bad, calls);
    TA_CHECK_MSG(bad_sum == 0, "%s: %zu wrong sums", tp.names[pi], bad_sum);
    TA_CHECK_MSG(overrun == 0, "%s: exps wrote outside x[0, n) %zu times", tp.names[pi], overrun);
  }
}

TA_CASE("int16 kernels: TFLite-16 outputs at every right shift, extremes and sums of exps included") {
  Tflite16Ports tp;
  for (size_t pi = 0; pi < tp.n; ++pi) {
    const KernelsI16Tflite& k = *tp.tables[pi];
    size_t bad = 0, bad_sum = 0, overrun = 0, clamped = 0;
    Rng rng(43);
    for (int rs = 14; rs <= 30; ++rs)
      for (int trial = 0; trial < 20; ++trial) {
        const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
        const int32_t reciprocal = trial == 0 ? 32767 : (trial == 1 ? 0 : static_cast<int32_t>(rng.next_u64() % 32768));
        Arena::Scope scope;
        auto x = Guarded<int32_t>::make(n, kGuard32);
        int32_t* want = alloc<int32_t>(n);
        if (!x.base || !want) TA_IGNORE("arena too small");
        int32_t want_sum = 0;
        for (size_t j = 0; j < n; ++j) {
          const uint64_t kind = rng.next_u64() % 4;
          const int32_t small = static_cast<int32_t>(rng.next_u64() % 4);
          const int32_t any = static_cast<int32_t>(rng.next_u64() % 32768);
          x.data()[j] = kind == 0 ? 32767 : (kind == 1 ? small : any);
          want[j] = tflite_ops::softmax16_output(x.data()[j], reciprocal, rs);
          clamped += want[j] == 32767;
          want_sum += want[j];
        }
        const int32_t got_sum = k.outputs(x.data(), n, reciprocal, rs);
        bad += std::memcmp(x.data(), want, n * sizeof(int32_t)) != 0;
        bad_sum += got_sum != want_sum;
        overrun += !x.intact();
      }
    // Rows as the softmax makes them: exps of random scores, their sum's reciprocal.
    for (int trial = 0; trial < 400; ++trial) {
      const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
      const TfliteMultiplier beta{random_tflite_multiplier(rng), static_cast<int32_t>(rng.next_u64() % 40) - 20};
      Arena::Scope scope;
      auto x = Guarded<int32_t>::make(n, kGuard32);
      int32_t* want = alloc<int32_t>(n);
      if (!x.base || !want) TA_IGNORE("arena too small");
      int32_t sum = 0;
      for (size_t j = 0; j < n; ++j) {
        const int32_t diff = j == 0 ? 0 : -static_cast<int32_t>(rng.next_u64() % (trial % 2 ? 65536 : 64));
        x.data()[j] = tflite_ops::softmax16_exp(diff, beta);
        sum += x.data()[j];
      }
      int rs = 0;
      const int32_t reciprocal = tflite_ops::softmax16_reciprocal(sum, &rs);
      int32_t want_sum = 0;
      for (size_t j = 0; j < n; ++j) {
        want[j] = tflite_ops::softmax16_output(x.data()[j], reciprocal, rs);
        want_sum += want[j];
      }
      const int32_t got_sum = k.outputs(x.data(), n, reciprocal, rs);
      bad += std::memcmp(x.data(), want, n * sizeof(int32_t)) != 0;
      bad_sum += got_sum != want_sum;
      overrun += !x.intact();
    }
    TA_CHECK_MSG(bad == 0, "%s: %zu output rows differ", tp.names[pi], bad);
    TA_CHECK_MSG(bad_sum == 0, "%s: %zu wrong sums", tp.names[pi], bad_sum);
    TA_CHECK_MSG(clamped > 0, "%s: the clamp at 32767 never reached", tp.names[pi]);
    TA_CHECK_MSG(overrun == 0, "%s: outputs wrote outside x[0, n) %zu times", tp.names[pi], overrun);
  }
}
