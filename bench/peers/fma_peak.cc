// The core's fp32 FMA peak: twelve independent chains of FMAs (more chains
// than FMA latency x issue width on current cores), so the loop is bound by
// FMA throughput alone; at the widest vectors the CPU has (16-lane AVX-512
// where it has it, whatever the build's flags) and at 8-lane AVX2.
#include <immintrin.h>

#include "peers.h"

namespace bench {

namespace {
constexpr int kChains = 12;

// Named accumulators, not an array: they must all live in registers.
__attribute__((noinline)) float fma_chains(size_t iters) {
  const __m256 a = _mm256_set1_ps(0.999999f);
  const __m256 b = _mm256_set1_ps(1e-7f);
  __m256 c0 = _mm256_set1_ps(0.1f), c1 = _mm256_set1_ps(0.2f), c2 = _mm256_set1_ps(0.3f),
         c3 = _mm256_set1_ps(0.4f), c4 = _mm256_set1_ps(0.5f), c5 = _mm256_set1_ps(0.6f),
         c6 = _mm256_set1_ps(0.7f), c7 = _mm256_set1_ps(0.8f), c8 = _mm256_set1_ps(0.9f),
         c9 = _mm256_set1_ps(1.0f), c10 = _mm256_set1_ps(1.1f), c11 = _mm256_set1_ps(1.2f);
  for (size_t i = 0; i < iters; ++i) {
    c0 = _mm256_fmadd_ps(c0, a, b);
    c1 = _mm256_fmadd_ps(c1, a, b);
    c2 = _mm256_fmadd_ps(c2, a, b);
    c3 = _mm256_fmadd_ps(c3, a, b);
    c4 = _mm256_fmadd_ps(c4, a, b);
    c5 = _mm256_fmadd_ps(c5, a, b);
    c6 = _mm256_fmadd_ps(c6, a, b);
    c7 = _mm256_fmadd_ps(c7, a, b);
    c8 = _mm256_fmadd_ps(c8, a, b);
    c9 = _mm256_fmadd_ps(c9, a, b);
    c10 = _mm256_fmadd_ps(c10, a, b);
    c11 = _mm256_fmadd_ps(c11, a, b);
    // Opaque to the optimizer (no folding of the chains), free at run time.
    asm volatile("" : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5), "+x"(c6), "+x"(c7),
                 "+x"(c8), "+x"(c9), "+x"(c10), "+x"(c11));
  }
  const __m256 sum = _mm256_add_ps(
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                    _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7))),
      _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
  alignas(32) float out[8];
  _mm256_store_ps(out, sum);
  return out[0];
}

// The same with 16-lane AVX-512 FMAs, built for AVX-512 whatever the file's
// flags and called only where the CPU has it.
__attribute__((noinline, target("avx512f"))) float fma_chains_512(size_t iters) {
  const __m512 a = _mm512_set1_ps(0.999999f);
  const __m512 b = _mm512_set1_ps(1e-7f);
  __m512 c0 = _mm512_set1_ps(0.1f), c1 = _mm512_set1_ps(0.2f), c2 = _mm512_set1_ps(0.3f),
         c3 = _mm512_set1_ps(0.4f), c4 = _mm512_set1_ps(0.5f), c5 = _mm512_set1_ps(0.6f),
         c6 = _mm512_set1_ps(0.7f), c7 = _mm512_set1_ps(0.8f), c8 = _mm512_set1_ps(0.9f),
         c9 = _mm512_set1_ps(1.0f), c10 = _mm512_set1_ps(1.1f), c11 = _mm512_set1_ps(1.2f);
  for (size_t i = 0; i < iters; ++i) {
    c0 = _mm512_fmadd_ps(c0, a, b);
    c1 = _mm512_fmadd_ps(c1, a, b);
    c2 = _mm512_fmadd_ps(c2, a, b);
    c3 = _mm512_fmadd_ps(c3, a, b);
    c4 = _mm512_fmadd_ps(c4, a, b);
    c5 = _mm512_fmadd_ps(c5, a, b);
    c6 = _mm512_fmadd_ps(c6, a, b);
    c7 = _mm512_fmadd_ps(c7, a, b);
    c8 = _mm512_fmadd_ps(c8, a, b);
    c9 = _mm512_fmadd_ps(c9, a, b);
    c10 = _mm512_fmadd_ps(c10, a, b);
    c11 = _mm512_fmadd_ps(c11, a, b);
    asm volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7),
                 "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
  }
  const __m512 sum = _mm512_add_ps(
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                    _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
      _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
  alignas(64) float out[16];
  _mm512_store_ps(out, sum);
  return out[0];
}

bool g_limited_to_avx2 = false;
}  // namespace

void limit_fma_peak_to_avx2() { g_limited_to_avx2 = true; }

bool avx512_in_use() {
  static const bool cpu_has = __builtin_cpu_supports("avx512f");
  return cpu_has && !g_limited_to_avx2;
}

constexpr size_t kIters = 1 << 16;

void fma_peak_loop_256() { keep(fma_chains(kIters)); }

double fma_peak_loop_256_flops() { return 2.0 * 8.0 * kChains * static_cast<double>(kIters); }

void fma_peak_loop() {
  if (avx512_in_use())
    keep(fma_chains_512(kIters));
  else
    fma_peak_loop_256();
}

double fma_peak_loop_flops() { return 2.0 * fma_peak_lanes() * kChains * static_cast<double>(kIters); }

int fma_peak_lanes() { return avx512_in_use() ? 16 : 8; }

double fma_peak_gflops(const TimingConfig& cfg) {
  // Three times the usual repetitions: on a shared machine the peak is the
  // figure every percentage depends on.
  TimingConfig more = cfg;
  more.repetitions = 3 * cfg.repetitions;
  const double s = median_seconds(fma_peak_loop, more);
  return fma_peak_loop_flops() / s * 1e-9;
}

double fma_peak_256_gflops(const TimingConfig& cfg) {
  TimingConfig more = cfg;
  more.repetitions = 3 * cfg.repetitions;
  return fma_peak_loop_256_flops() / median_seconds(fma_peak_loop_256, more) * 1e-9;
}

}  // namespace bench
