// The KernelsI8 contract (tinyattn/kernels_i8.h), primitive by primitive, for
// every port at every length from 1 to 70 (and rows of several vectors) and
// at the extremes of the int8 range: each result must equal, integer for
// integer, the formula of quant.h evaluated here in int64 with the library's
// public building blocks (exp2_q30, apply). No write may leave the given
// range.
#include <climits>
#include <cstring>

#include "format.h"
#include "support.h"
#include "tatest.h"
#include "test_env.h"
#include "tinyattn/kernels_i8.h"

using namespace tinyattn;
using namespace tatest;

namespace {

constexpr size_t kMaxLen = 70;
constexpr int32_t kGuardValue = -777777;

struct Ports {
  Port ports[tatest::kMaxPorts];
  size_t n;
  Ports() : n(ports_under_test(ports)) {}
};

Guarded<int32_t> guarded(size_t n) { return Guarded<int32_t>::make(n, kGuardValue); }

int8_t random_i8(Rng& rng) { return static_cast<int8_t>(static_cast<int32_t>(rng.next_u64() & 0xff) - 128); }
int32_t random_zero(Rng& rng) { return static_cast<int32_t>(rng.next_u64() % 256) - 128; }
int64_t random_below(Rng& rng, int64_t n) { return static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(n)); }

// A random but valid logit multiplier: scales as plan_int8 makes them.
FixedMultiplier random_logit(Rng& rng) {
  FixedMultiplier m;
  const double real = static_cast<double>(rng.uniform(1e-6f, 1.0f)) * 1.4426950408889634 * 67108864.0 *
                      (rng.next_u64() % 2 ? 1e-3 : 1.0);
  if (make_multiplier(real, &m) != Status::kOk || m.shift < 2) make_multiplier(1.0, &m);
  return m;
}

void fill_i8(Rng& rng, int8_t* x, size_t n, bool extreme) {
  for (size_t i = 0; i < n; ++i) x[i] = extreme ? static_cast<int8_t>(rng.next_u64() % 2 ? 127 : -128) : random_i8(rng);
}

}  // namespace

TA_CASE("int8 kernels: the tables in use") {
  // Printed always: the aarch64 CPU-variant runs (tests/kernels/suite.cmake)
  // match it to check which scores run (SDOT or not).
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8* k = kernels_i8(pl.ports[pi]);
    TA_CHECK_MSG(k != nullptr, "%s: no int8 kernels", port_name(pl.ports[pi]));
    if (!k) continue;
    char line[96];
    format(line, sizeof line, "int8 kernels: %s/%s end\n", k->port, k->simd_target());
    out(line);
  }
}

TA_CASE("int8 kernels: scores are exact dot products, and the largest is returned") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad = 0, bad_max = 0, overrun = 0;
    Rng rng(11);
    for (int extreme = 0; extreme < 2; ++extreme)
      for (size_t dk = 1; dk <= 300; dk += (dk < 70 ? 1 : 37))
        for (size_t count = 1; count <= 13; count += (dk < 40 ? 1 : 4)) {
          Arena::Scope scope;
          const size_t ldk = dk + 5;  // rows apart, as for a key matrix slice
          int8_t* q = alloc<int8_t>(dk);
          int8_t* kk = alloc<int8_t>(count * ldk);
          auto s = guarded(count);
          if (!q || !kk || !s.base) TA_IGNORE("arena too small");
          fill_i8(rng, q, dk, extreme);
          fill_i8(rng, kk, count * ldk, extreme);
          // Extreme: zero points at the far end, so every factor reaches +-255.
          const int32_t qz = extreme ? (q[0] < 0 ? 127 : -128) : random_zero(rng);
          const int32_t kz = extreme ? (rng.next_u64() % 2 ? 127 : -128) : random_zero(rng);
          const int32_t got_max = k.scores(q, kk, ldk, count, dk, qz, kz, s.data());
          int64_t want_max = INT64_MIN;
          for (size_t j = 0; j < count; ++j) {
            int64_t want = 0;
            for (size_t c = 0; c < dk; ++c) want += (int64_t{q[c]} - qz) * (int64_t{kk[j * ldk + c]} - kz);
            bad += s.data()[j] != want;
            if (want > want_max) want_max = want;
          }
          bad_max += got_max != want_max;
          overrun += !s.intact();
        }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu scores differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(bad_max == 0, "%s/%s: %zu wrong maxima", k.port, k.simd_target(), bad_max);
    TA_CHECK_MSG(overrun == 0, "%s/%s: scores wrote outside s[0, count) %zu times", k.port, k.simd_target(), overrun);
  }
}

TA_CASE("int8 kernels: scores stay exact at the largest Dk") {
  Ports pl;
  Arena::Scope scope;
  const size_t dk = kMaxDkInt8;
  int8_t* q = alloc<int8_t>(dk);
  int8_t* kk = alloc<int8_t>(2 * dk);
  if (!q || !kk) TA_IGNORE("arena too small for Dk = kMaxDkInt8");
  // (-128 - 127)^2 * 32768 = 2,130,739,200: the largest score there is; the
  // second key gives the most negative one.
  std::memset(q, 0x80, dk);
  std::memset(kk, 0x80, dk);
  std::memset(kk + dk, 0x7f, dk);
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    int32_t s[2] = {0, 0};
    const int32_t max = k.scores(q, kk, dk, 2, dk, 127, 127, s);
    TA_CHECK_MSG(s[0] == 2130739200 && max == 2130739200, "%s/%s: largest score %ld", k.port, k.simd_target(),
                 static_cast<long>(s[0]));
    TA_CHECK_MSG(s[1] == 0, "%s/%s: k = zero point gives %ld", k.port, k.simd_target(), static_cast<long>(s[1]));
    const int32_t min_max = k.scores(q, kk + dk, dk, 1, dk, 127, -128, s);
    TA_CHECK_MSG(s[0] == -2130739200 && min_max == s[0], "%s/%s: most negative score %ld", k.port,
                 k.simd_target(), static_cast<long>(s[0]));
  }
}

// Every logit shift with the multipliers 2^30 and 2^31 - 1, at scores where
// the rounding of apply() ties (away from zero): with 2^30, every odd s at
// shift 31 and s = 2 mod 4 at shift 32, and for larger shifts s m has a zero
// low word for every s divisible by 4; rows with and without masked keys (a port may take different
// paths for them) and scores from a few units to the full int32 range.
TA_CASE("int8 kernels: exp_row at every logit shift, ties included") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad = 0;
    Rng rng(31);
    constexpr size_t n = 11;
    int32_t s[n], e[n];
    for (int32_t shift = 2; shift <= 62; ++shift)
      for (int variant = 0; variant < 4; ++variant) {
        const FixedMultiplier logit{variant % 2 ? INT32_MAX : int32_t{1} << 30, shift};
        const int64_t span = int64_t{1} << (variant < 2 ? 12 : 30);
        int32_t smax = INT32_MIN;
        for (size_t j = 0; j < n; ++j) {
          s[j] = static_cast<int32_t>(random_below(rng, 2 * span) - span);
          if (variant == 2) s[j] &= ~3;  // multiples of 4
          // With m = 2^31 - 1 (odd), s m + 2^(shift-1) is a multiple of 2^shift for the odd
          // multiples s of 2^(shift-1): ties at the smaller shifts too.
          if (variant % 2 && shift <= 29 && j % 2) {
            const int64_t r = int64_t{1} << (29 - shift);
            s[j] = static_cast<int32_t>(((random_below(rng, 2 * r) - r) | 1) * (int64_t{1} << (shift - 1)));
          }
          if (j == 3 && variant == 2) s[j] = INT32_MIN;                             // a masked key
          if (s[j] != INT32_MIN && s[j] > smax) smax = s[j];
        }
        const int64_t max_logit = apply(logit, smax);
        int64_t want_sum = 0;
        for (size_t j = 0; j < n; ++j)
          want_sum += s[j] == INT32_MIN ? 0 : exp2_q30(apply(logit, s[j]) - max_logit);
        int32_t want[n];
        for (size_t j = 0; j < n; ++j) want[j] = s[j] == INT32_MIN ? 0 : exp2_q30(apply(logit, s[j]) - max_logit);
        const int64_t sum = k.exp_row(s, n, logit, max_logit, e);
        bad += sum != want_sum || std::memcmp(e, want, sizeof e) != 0;
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu rows differ", k.port, k.simd_target(), bad);
  }
}

TA_CASE("int8 kernels: exp_row is exp2_q30 of the logits, masked keys give 0") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad = 0, bad_sum = 0, overrun = 0;
    Rng rng(12);
    for (int trial = 0; trial < 6; ++trial)
      for (size_t n = 1; n <= kMaxLen; ++n) {
        Arena::Scope scope;
        auto s = guarded(n);
        auto e = guarded(n);
        if (!s.base || !e.base) TA_IGNORE("arena too small");
        const FixedMultiplier logit = random_logit(rng);
        // Magnitudes from a few units to the full int32 range.
        const int64_t span = int64_t{1} << (4 + 5 * trial + (trial == 5 ? 2 : 0));
        int32_t smax = INT32_MIN;
        for (size_t j = 0; j < n; ++j) {
          const int64_t v = random_below(rng, 2 * span) - span;
          s.data()[j] = static_cast<int32_t>(v <= INT32_MIN ? INT32_MIN + 1 : (v > INT32_MAX ? INT32_MAX : v));
          if (rng.next_u64() % 5 == 0 && j != n / 2) s.data()[j] = INT32_MIN;  // masked
          if (s.data()[j] != INT32_MIN && s.data()[j] > smax) smax = s.data()[j];
        }
        if (smax == INT32_MIN) smax = s.data()[n / 2];
        // Mostly the row's own maximum; sometimes a larger one (a bias row's).
        const int64_t max_logit = apply(logit, smax) + (trial % 2 ? random_below(rng, int64_t{1} << 30) : 0);
        const int64_t sum = k.exp_row(s.data(), n, logit, max_logit, e.data());
        int64_t want_sum = 0;
        for (size_t j = 0; j < n; ++j) {
          const int32_t want = s.data()[j] == INT32_MIN ? 0 : exp2_q30(apply(logit, s.data()[j]) - max_logit);
          bad += e.data()[j] != want;
          want_sum += want;
        }
        bad_sum += sum != want_sum;
        overrun += !e.intact() || !s.intact();
        // In place (e == s), as the driver calls it.
        int32_t* copy = alloc<int32_t>(n);
        if (!copy) TA_IGNORE("arena too small");
        std::memcpy(copy, s.data(), n * sizeof(int32_t));
        k.exp_row(copy, n, logit, max_logit, copy);
        bad += std::memcmp(copy, e.data(), n * sizeof(int32_t)) != 0;
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu exp values differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(bad_sum == 0, "%s/%s: %zu sums differ", k.port, k.simd_target(), bad_sum);
    TA_CHECK_MSG(overrun == 0, "%s/%s: exp_row wrote outside its range %zu times", k.port, k.simd_target(), overrun);
  }
}

TA_CASE("int8 kernels: probabilities are the rounded quotients, exactly") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad = 0, overrun = 0;
    Rng rng(13);
    // Trials 0-4: one 2^30 (the row maximum), the rest anywhere below, from
    // tiny to equal. Trial 5: every e below 2^12, so the sum is below 2^23,
    // where the ports divide instead of using the reciprocal. Trial 6: the
    // contract's sums up to n 2^30 that are not the row's own sum, every bit
    // length of the reciprocal's range that n allows.
    for (int trial = 0; trial < 7; ++trial)
      for (size_t n = 1; n <= kMaxLen; ++n) {
        Arena::Scope scope;
        auto e = guarded(n);
        auto p = guarded(n);
        if (!e.base || !p.base) TA_IGNORE("arena too small");
        int64_t sum = 0;
        for (size_t j = 0; j < n; ++j) {
          const int64_t top = trial == 0   ? 4
                              : trial == 1 ? (int64_t{1} << 30)
                              : trial == 5 ? (int64_t{1} << 12)
                                           : (int64_t{1} << (10 + 5 * (trial % 5)));
          e.data()[j] = j == n / 2 && trial != 5 ? (1 << 30) : static_cast<int32_t>(random_below(rng, top + 1));
          if (trial == 4 && j % 3 == 0) e.data()[j] = 1 << 30;  // ties: quotients at .5
          sum += e.data()[j];
        }
        if (sum == 0) sum = 1;  // 0 < sum (all e were 0: every p is 0)
        if (trial == 6) {
          const int64_t most = static_cast<int64_t>(n) << 30;
          sum += random_below(rng, most - sum + 1);
        }
        k.probabilities(e.data(), n, sum, p.data());
        for (size_t j = 0; j < n; ++j)
          bad += p.data()[j] != static_cast<int32_t>((int64_t{e.data()[j]} * kProbOne + sum / 2) / sum);
        overrun += !p.intact() || !e.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu probabilities differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(overrun == 0, "%s/%s: probabilities wrote outside p[0, n) %zu times", k.port, k.simd_target(),
                 overrun);
  }
}

TA_CASE("int8 kernels: weighted_sum is the exact P V sum") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad = 0, overrun = 0;
    Rng rng(14);
    for (int extreme = 0; extreme < 2; ++extreme)
      for (size_t dv = 1; dv <= kMaxLen; dv += (dv < 40 ? 1 : 5))
        // Counts past 64 and 128: ports stage the weights in chunks of keys.
        for (size_t count = 1; count <= 140; count += (count < 9 ? 1 : (count < 40 ? 10 : 45))) {
          Arena::Scope scope;
          const size_t ldv = dv + 3;
          int32_t* p = alloc<int32_t>(count);
          int8_t* v = alloc<int8_t>(count * ldv);
          auto acc = guarded(dv);
          if (!p || !v || !acc.base) TA_IGNORE("arena too small");
          fill_i8(rng, v, count * ldv, extreme);
          // Weights that sum to about one (the contract's limit), many zeros.
          int64_t left = kProbOne + static_cast<int64_t>(count / 2);
          for (size_t j = 0; j < count; ++j) {
            int64_t w = (j + 1 == count || extreme) ? left : random_below(rng, left + 1);
            if (w > int64_t{kProbOne}) w = kProbOne;  // the contract's per-key limit
            p[j] = rng.next_u64() % 4 == 0 ? 0 : static_cast<int32_t>(w);
            left -= p[j];
          }
          const int32_t vz = extreme ? (rng.next_u64() % 2 ? 127 : -128) : random_zero(rng);
          k.weighted_sum(p, v, ldv, count, dv, vz, acc.data());
          for (size_t c = 0; c < dv; ++c) {
            int64_t want = 0;
            for (size_t j = 0; j < count; ++j) want += int64_t{p[j]} * (int64_t{v[j * ldv + c]} - vz);
            bad += acc.data()[c] != want;
          }
          overrun += !acc.intact();
        }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu sums differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(overrun == 0, "%s/%s: weighted_sum wrote outside acc[0, dv) %zu times", k.port, k.simd_target(),
                 overrun);
  }
}

TA_CASE("int8 kernels: requantize rounds, adds the zero point and saturates") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad = 0, overrun = 0, saturated = 0;
    Rng rng(15);
    for (size_t n = 1; n <= kMaxLen; ++n)
      for (int trial = 0; trial < 4; ++trial) {
        Arena::Scope scope;
        int32_t* acc = alloc<int32_t>(n);
        auto y = Guarded<int8_t>::make(n, int8_t{0x5a});
        if (!acc || !y.base) TA_IGNORE("arena too small");
        FixedMultiplier out;
        make_multiplier(static_cast<double>(rng.uniform(0.05f, 4.0f)) / 32768.0, &out);
        const int32_t yz = random_zero(rng);
        const int64_t span = int64_t{1} << (10 + 5 * trial);  // up to 2^25: past the int8 range either way
        for (size_t c = 0; c < n; ++c) acc[c] = static_cast<int32_t>(random_below(rng, 2 * span) - span);
        if (n > 2) {
          acc[0] = (1 << 24) + 65536;  // the contract's extremes
          acc[1] = -acc[0];
        }
        k.requantize(acc, n, out, yz, y.data());
        for (size_t c = 0; c < n; ++c) {
          int64_t want = yz + apply(out, acc[c]);
          saturated += want < -128 || want > 127;
          want = want < -128 ? -128 : (want > 127 ? 127 : want);
          bad += y.data()[c] != want;
        }
        overrun += !y.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu outputs differ", k.port, k.simd_target(), bad);
    TA_CHECK_MSG(saturated > 0, "%s/%s: the test never reached saturation", k.port, k.simd_target());
    TA_CHECK_MSG(overrun == 0, "%s/%s: requantize wrote outside y[0, n) %zu times", k.port, k.simd_target(), overrun);
  }
}

TA_CASE("int8 kernels: requantize rounds exact ties away from zero") {
  // multiplier 2^30: acc * m has a zero low word for every acc divisible by 4,
  // so the halfway cases of the rounding shift come up for both signs.
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad = 0, ties = 0;
    for (int32_t shift = 33; shift <= 40; ++shift) {
      const FixedMultiplier out{1 << 30, shift};
      int32_t acc[64];
      int8_t y[64];
      // Around +-2^(shift-31) * (n + 1/2): exact halves of the output step.
      const int64_t step = int64_t{1} << (shift - 30);
      for (int i = 0; i < 64; ++i) {
        const int64_t n = (i % 16) - 8;
        acc[i] = static_cast<int32_t>(n * step + step / 2 + (i / 16 - 2) * 4);
      }
      k.requantize(acc, 64, out, 3, y);
      for (int i = 0; i < 64; ++i) {
        int64_t want = 3 + apply(out, acc[i]);
        want = want < -128 ? -128 : (want > 127 ? 127 : want);
        bad += y[i] != want;
        ties += (static_cast<int64_t>(acc[i]) * (1 << 30)) % (int64_t{1} << shift) == (int64_t{1} << (shift - 1)) ||
                (static_cast<int64_t>(acc[i]) * (1 << 30)) % (int64_t{1} << shift) == -(int64_t{1} << (shift - 1));
      }
    }
    TA_CHECK_MSG(ties > 0, "%s/%s: no tie reached", k.port, k.simd_target());
    TA_CHECK_MSG(bad == 0, "%s/%s: %zu tie outputs differ", k.port, k.simd_target(), bad);
  }
}

// Rows of several vectors on the widest vector units too (at VLEN 1024 an
// LMUL-8 vector holds 256 int32 lanes): whole vectors, then a tail, and
// exp_row's sum carried across them, with masked keys among the scores.
TA_CASE("int8 kernels: the softmax steps and requantize on rows of several vectors") {
  constexpr size_t kLengths[] = {255, 256, 257, 600};
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8& k = *kernels_i8(pl.ports[pi]);
    size_t bad_e = 0, bad_sum = 0, bad_p = 0, bad_y = 0, overrun = 0;
    Rng rng(16);
    for (size_t n : kLengths)
      for (int trial = 0; trial < 3; ++trial) {
        Arena::Scope scope;
        auto s = guarded(n);
        auto e = guarded(n);
        auto y = Guarded<int8_t>::make(n, int8_t{0x5a});
        if (!s.base || !e.base || !y.base) TA_IGNORE("arena too small");
        const FixedMultiplier logit = random_logit(rng);
        const int64_t span = int64_t{1} << (10 + 10 * trial);
        int32_t smax = INT32_MIN;
        for (size_t j = 0; j < n; ++j) {
          s.data()[j] = static_cast<int32_t>(random_below(rng, 2 * span) - span);
          if (rng.next_u64() % 4 == 0 && j != n / 2) s.data()[j] = INT32_MIN;  // masked
          if (s.data()[j] != INT32_MIN && s.data()[j] > smax) smax = s.data()[j];
        }
        const int64_t max_logit = apply(logit, smax);
        const int64_t sum = k.exp_row(s.data(), n, logit, max_logit, e.data());
        int64_t want_sum = 0;
        for (size_t j = 0; j < n; ++j) {
          const int32_t want = s.data()[j] == INT32_MIN ? 0 : exp2_q30(apply(logit, s.data()[j]) - max_logit);
          bad_e += e.data()[j] != want;
          want_sum += want;
        }
        bad_sum += sum != want_sum;
        // The probabilities of that row (into s), then e reused for P V sums.
        k.probabilities(e.data(), n, want_sum, s.data());
        for (size_t j = 0; j < n; ++j)
          bad_p += s.data()[j] != static_cast<int32_t>((int64_t{e.data()[j]} * kProbOne + want_sum / 2) / want_sum);
        FixedMultiplier out;
        make_multiplier(static_cast<double>(rng.uniform(0.05f, 4.0f)) / 32768.0, &out);
        const int32_t yz = random_zero(rng);
        const int64_t acc_span = int64_t{1} << (15 + 5 * trial);
        for (size_t j = 0; j < n; ++j) e.data()[j] = static_cast<int32_t>(random_below(rng, 2 * acc_span) - acc_span);
        k.requantize(e.data(), n, out, yz, y.data());
        for (size_t j = 0; j < n; ++j) {
          int64_t want = yz + apply(out, e.data()[j]);
          want = want < -128 ? -128 : (want > 127 ? 127 : want);
          bad_y += y.data()[j] != want;
        }
        overrun += !s.intact() || !e.intact() || !y.intact();
      }
    TA_CHECK_MSG(bad_e == 0, "%s/%s: %zu exp values differ", k.port, k.simd_target(), bad_e);
    TA_CHECK_MSG(bad_sum == 0, "%s/%s: %zu exp sums differ", k.port, k.simd_target(), bad_sum);
    TA_CHECK_MSG(bad_p == 0, "%s/%s: %zu probabilities differ", k.port, k.simd_target(), bad_p);
    TA_CHECK_MSG(bad_y == 0, "%s/%s: %zu outputs differ", k.port, k.simd_target(), bad_y);
    TA_CHECK_MSG(overrun == 0, "%s/%s: a write outside its range %zu times", k.port, k.simd_target(), overrun);
  }
}

// ---------------------------------------------------------------- TFLite mode
//
// The optional entries of Int8Mode::kTflite, on the tables that have them
// (tflite_kernels_i8), against gemmlowp's and TFLite's definitions written
// out here in int64: SaturatingRoundingDoublingHighMul's nudge and truncating
// division, RoundingDivideByPOT's mask and threshold.

namespace {

int32_t ref_srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  const int64_t ab = int64_t{a} * b;
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : 1 - (int64_t{1} << 30);
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));  // C++ division truncates, as gemmlowp's
}

int64_t ref_rdbpot(int64_t x, int e) {
  if (e == 0) return x;
  const int64_t mask = (int64_t{1} << e) - 1;
  const int64_t remainder = x & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

int32_t ref_requantize(int32_t x, TfliteMultiplier m, int32_t zero) {
  const int left = m.shift > 0 ? m.shift : 0;
  const int right = m.shift > 0 ? 0 : -m.shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left);  // wraps, as on hardware
  const int64_t y = ref_rdbpot(ref_srdhm(shifted, m.multiplier), right) + zero;
  return static_cast<int32_t>(y < -128 ? -128 : (y > 127 ? 127 : y));
}

// gemmlowp's exp_on_negative_values (5 integer bits) of TFLite's scaled diff.
int32_t ref_softmax_exp(int32_t diff, const TfliteParams& p) {
  if (diff < p.diff_min) return 0;
  const int32_t a = ref_srdhm(static_cast<int32_t>(static_cast<uint32_t>(diff) << p.beta.shift), p.beta.multiplier);
  const int32_t quarter = 1 << 24;
  const int32_t r = (a & (quarter - 1)) - quarter;
  // exp_on_interval_between_negative_one_quarter_and_0_excl(r * 32)
  const int32_t x = r * 32 + (1 << 28);
  const int32_t x2 = ref_srdhm(x, x), x3 = ref_srdhm(x2, x), x4 = ref_srdhm(x2, x2);
  const int32_t x4_over_4 = static_cast<int32_t>(ref_rdbpot(x4, 2));
  const int32_t poly = static_cast<int32_t>(ref_rdbpot(ref_srdhm(x4_over_4 + x3, 715827883) + x2, 1));
  int32_t result = 1895147668 + ref_srdhm(1895147668, x + poly);
  const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int k = 0; k < 7; ++k)
    if ((r - a) & (1 << (24 + k))) result = ref_srdhm(result, barrel[k]);
  return a == 0 ? INT32_MAX : result;
}

int32_t random_i32(Rng& rng) { return static_cast<int32_t>(static_cast<uint32_t>(rng.next_u64())); }

// A valid multiplier (>= 2^30) with the extremes often.
int32_t random_tflite_multiplier(Rng& rng) {
  switch (rng.next_u64() % 5) {
    case 0: return 1 << 30;
    case 1: return INT32_MAX;
    case 2: return (1 << 30) + static_cast<int32_t>(rng.next_u64() % 16);
    default: return (1 << 30) + static_cast<int32_t>(rng.next_u64() % (uint64_t{1} << 30));
  }
}

// The compiled ports' TFLite-mode tables, where they have one.
struct TflitePorts {
  const KernelsI8Tflite* tables[tatest::kMaxPorts];
  const char* names[tatest::kMaxPorts];
  size_t n = 0;
  TflitePorts() {
    Ports pl;
    for (size_t i = 0; i < pl.n; ++i) {
      if (const KernelsI8Tflite* t = tflite_kernels_i8(pl.ports[i])) {
        tables[n] = t;
        names[n++] = port_name(pl.ports[i]);
      }
    }
  }
};

}  // namespace

TA_CASE("int8 kernels: the TFLite-mode tables and the default port's route") {
  Ports pl;
  for (size_t pi = 0; pi < pl.n; ++pi) {
    const KernelsI8Tflite* t = tflite_kernels_i8(pl.ports[pi]);
    if (t) TA_CHECK_MSG(t->requantize && t->exps && t->outputs, "%s: a null entry", port_name(pl.ports[pi]));
    // The products a TFLite-only image reaches through this table are the
    // port's own, the ones the golden suites hold to the model.
    const KernelsI8* k = kernels_i8(pl.ports[pi]);
    if (t)
      TA_CHECK_MSG(t->scores == k->scores && t->weighted_sum == k->weighted_sum,
                   "%s: the TFLite table's products are not the port's", port_name(pl.ports[pi]));
    char line[96];
    format(line, sizeof line, "int8 kernels: %s TFLite-mode kernels: %s\n", port_name(pl.ports[pi]),
           t ? "own" : "portable");
    out(line);
  }
  TA_CHECK(tflite_kernels_i8(Port::kDefault) == tflite_kernels_i8(default_port()));
  TA_CHECK(default_tflite_kernels_i8() == tflite_kernels_i8(default_port()));
  const TfliteRouteI8 route = default_tflite_route_i8();
  TA_CHECK(route.steps == default_tflite_kernels_i8());
  TA_CHECK(bool{route.scores == default_kernels_i8()->scores});
  TA_CHECK(bool{route.weighted_sum == default_kernels_i8()->weighted_sum});
}

TA_CASE("int8 kernels: tflite_requantize is TFLite's MultiplyByQuantizedMultiplier, zero point and clamp") {
  TflitePorts tp;
  for (size_t pi = 0; pi < tp.n; ++pi) {
    const KernelsI8Tflite& k = *tp.tables[pi];
    size_t bad = 0, overrun = 0, checked = 0, saturated = 0, inside = 0;
    Rng rng(31);
    for (int32_t shift = -31; shift <= 30; ++shift)
      for (int trial = 0; trial < 6; ++trial) {
        const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
        Arena::Scope scope;
        auto in = Guarded<int32_t>::make(n, kGuardValue);
        auto out32 = Guarded<int32_t>::make(n, kGuardValue);
        auto out8 = Guarded<int8_t>::make(n, int8_t{0x5a});
        int32_t* want = alloc<int32_t>(n);
        if (!in.base || !out32.base || !out8.base || !want) TA_IGNORE("arena too small");
        const TfliteMultiplier m{random_tflite_multiplier(rng), shift};
        const int32_t zero = trial == 0 ? -128 : (trial == 1 ? 127 : random_zero(rng));
        // Inputs: full range, extremes, and near the values whose output is a
        // tie of the rounding (in 2^-shift steps around small outputs).
        for (size_t j = 0; j < n; ++j) {
          int32_t x = random_i32(rng);
          switch (rng.next_u64() % 6) {
            case 0: {
              const int sh = shift < 0 ? (-shift < 30 ? -shift : 30) : 0;
              x = static_cast<int32_t>(static_cast<int64_t>(rng.next_u64() % 512) - 256) * (int32_t{1} << sh) +
                  static_cast<int32_t>(rng.next_u64() % 5) - 2;
              break;
            }
            case 1: x = j % 2 ? INT32_MIN : INT32_MAX; break;
            case 2: x = static_cast<int32_t>(rng.next_u64() % 7) - 3; break;
            case 3: x >>= rng.next_u64() % 31; break;
            default: break;
          }
          in.data()[j] = x;
          want[j] = ref_requantize(x, m, zero);
          saturated += want[j] == -128 || want[j] == 127;
          inside += want[j] > -128 && want[j] < 127;
        }
        k.requantize(in.data(), n, m, zero, out32.data(), nullptr);
        k.requantize(in.data(), n, m, zero, nullptr, out8.data());
        for (size_t j = 0; j < n; ++j) bad += (out32.data()[j] != want[j]) + (out8.data()[j] != want[j]);
        // in place
        k.requantize(in.data(), n, m, zero, in.data(), nullptr);
        for (size_t j = 0; j < n; ++j) bad += in.data()[j] != want[j];
        overrun += !in.intact() + !out32.intact() + !out8.intact();
        checked += n;
      }
    TA_CHECK_MSG(bad == 0, "%s: %zu of %zu TFLite requantizations differ", tp.names[pi], bad, checked);
    TA_CHECK_MSG(overrun == 0, "%s: tflite_requantize wrote outside its output %zu times", tp.names[pi], overrun);
    TA_CHECK_MSG(saturated > 0 && inside > 0, "%s: %zu saturated, %zu inside", tp.names[pi], saturated,
                 inside);
  }
}

TA_CASE("int8 kernels: tflite_requantize rounds exact ties away from zero") {
  // multiplier 2^30: SRDHM(a, 2^30) = floor((a + 1) / 2), so a = 2 x gives x
  // exactly, and x = (j + 1/2) 2^e is a tie of RoundingDivideByPOT(x, e).
  TflitePorts tp;
  for (size_t pi = 0; pi < tp.n; ++pi) {
    const KernelsI8Tflite& k = *tp.tables[pi];
    size_t bad = 0;
    for (int e = 1; e <= 26; ++e) {
      int32_t in[32], out[32];
      for (int i = 0; i < 32; ++i) {
        const int64_t j = (i % 16) - 8;
        in[i] = static_cast<int32_t>(2 * (j * (int64_t{1} << e) + (int64_t{1} << (e - 1))) + (i / 16));
      }
      const TfliteMultiplier m{1 << 30, -e};
      k.requantize(in, 32, m, 5, out, nullptr);
      for (int i = 0; i < 32; ++i) bad += out[i] != ref_requantize(in[i], m, 5);
    }
    TA_CHECK_MSG(bad == 0, "%s: %zu tie outputs differ", tp.names[pi], bad);
  }
}

TA_CASE("int8 kernels: tflite_exps reads and fills the exp table, and sums TFLite's Q12.19 terms") {
  TflitePorts tp;
  for (size_t pi = 0; pi < tp.n; ++pi) {
    const KernelsI8Tflite& k = *tp.tables[pi];
    size_t bad = 0, bad_sum = 0, bad_table = 0, overrun = 0;
    Rng rng(33);
    for (int head = 0; head < 48; ++head) {
      TfliteParams p;
      p.beta.shift = 1 + static_cast<int32_t>(rng.next_u64() % 31);
      if (head < 31) p.beta.shift = head + 1;  // every shift
      p.beta.multiplier = random_tflite_multiplier(rng);
      p.diff_min = -static_cast<int32_t>((int64_t{31} << 26) >> p.beta.shift);
      Arena::Scope scope;
      auto exps = Guarded<int32_t>::make(kTfliteExpTableSize, kGuardValue);
      if (!exps.base) TA_IGNORE("arena too small");
      for (size_t i = 0; i < kTfliteExpTableSize; ++i) exps.data()[i] = -1;
      for (int row = 0; row < 6; ++row) {
        const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
        auto s = Guarded<int32_t>::make(n, kGuardValue);
        int32_t* in = alloc<int32_t>(n);
        if (!s.base || !in) TA_IGNORE("arena too small");
        // int8 scores, some rows spanning all 256 differences
        int32_t max = -128;
        for (size_t j = 0; j < n; ++j) {
          in[j] = row % 3 == 0 ? (rng.next_u64() % 2 ? 127 : -128) : random_i8(rng);
          max = in[j] > max ? in[j] : max;
        }
        if (row == 4) max = 127;  // max above every score
        std::memcpy(s.data(), in, n * sizeof(int32_t));
        const int32_t sum = k.exps(s.data(), n, max, p, exps.data());
        int64_t want_sum = 0;
        for (size_t j = 0; j < n; ++j) {
          const int32_t e = ref_softmax_exp(in[j] - max, p);
          bad += s.data()[j] != e;
          want_sum += ref_rdbpot(e, 12);
        }
        bad_sum += sum != want_sum;
        for (size_t i = 0; i < kTfliteExpTableSize; ++i) {
          const int32_t t = exps.data()[i];
          bad_table += t != -1 && t != ref_softmax_exp(-static_cast<int32_t>(i), p);
        }
        overrun += !s.intact() + !exps.intact();
      }
    }
    TA_CHECK_MSG(bad == 0, "%s: %zu exps differ", tp.names[pi], bad);
    TA_CHECK_MSG(bad_sum == 0, "%s: %zu sums differ", tp.names[pi], bad_sum);
    TA_CHECK_MSG(bad_table == 0, "%s: %zu table entries wrong", tp.names[pi], bad_table);
    TA_CHECK_MSG(overrun == 0, "%s: tflite_exps wrote outside s or the table %zu times", tp.names[pi],
                 overrun);
  }
}

TA_CASE("int8 kernels: tflite_outputs is TFLite's softmax output step, clamped to 255") {
  TflitePorts tp;
  for (size_t pi = 0; pi < tp.n; ++pi) {
    const KernelsI8Tflite& k = *tp.tables[pi];
    size_t bad = 0, overrun = 0, clamped = 0;
    Rng rng(35);
    for (int exponent = 23; exponent <= 34; ++exponent)
      for (int trial = 0; trial < 8; ++trial) {
        const size_t n = 1 + static_cast<size_t>(rng.next_u64() % kMaxLen);
        Arena::Scope scope;
        auto e = Guarded<int32_t>::make(n, kGuardValue);
        int32_t* in = alloc<int32_t>(n);
        if (!e.base || !in) TA_IGNORE("arena too small");
        const int32_t scale =
            trial == 0 ? INT32_MAX : (trial == 1 ? 1 : (trial == 2 ? 1 << 30 : random_tflite_multiplier(rng)));
        for (size_t j = 0; j < n; ++j) {
          switch (rng.next_u64() % 4) {
            case 0: in[j] = j % 2 ? INT32_MAX : 0; break;
            case 1:  // around the outputs below 1
              in[j] = static_cast<int32_t>(rng.next_u64() % (uint64_t{1} << (exponent - 8 < 31 ? exponent - 8 : 31)));
              break;
            default: in[j] = static_cast<int32_t>(rng.next_u64() & 0x7fffffffu); break;
          }
        }
        std::memcpy(e.data(), in, n * sizeof(int32_t));
        k.outputs(e.data(), n, scale, exponent);
        for (size_t j = 0; j < n; ++j) {
          int64_t want = ref_rdbpot(ref_srdhm(scale, in[j]), exponent);
          clamped += want > 255;
          want = want > 255 ? 255 : want;
          bad += e.data()[j] != want;
        }
        overrun += !e.intact();
      }
    TA_CHECK_MSG(bad == 0, "%s: %zu outputs differ", tp.names[pi], bad);
    TA_CHECK_MSG(clamped > 0, "%s: the test never reached 256", tp.names[pi]);
    TA_CHECK_MSG(overrun == 0, "%s: tflite_outputs wrote outside e %zu times", tp.names[pi], overrun);
  }
}
