// Timing for the host bench: one pinned core, medians over repetitions.
// Benchmarks report; they never assert times.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace bench {

// Pins the process to one CPU (the last one the process may use, away from
// CPU 0's interrupts). Returns the CPU, or -1 if pinning failed.
int pin_to_one_core();

struct TimingConfig {
  int repetitions = 11;           // samples per measurement; the median is reported
  double min_sample_s = 2e-3;     // each sample loops the work at least this long
};

// CPU time of the calling thread: on a machine shared with other jobs, time
// spent descheduled is not the code's. Every peer runs on this one thread.
inline double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Median seconds per call of f() over cfg.repetitions samples, after one
// warm-up call and a calibration of the iterations per sample.
template <class F>
double median_seconds(F&& f, const TimingConfig& cfg) {
  f();
  size_t iters = 1;
  for (;;) {
    const double t0 = thread_seconds();
    for (size_t i = 0; i < iters; ++i) f();
    const double s = thread_seconds() - t0;
    if (s >= cfg.min_sample_s || iters >= (size_t{1} << 30)) break;
    iters = s <= 0 ? iters * 16 : std::max(iters * 2, static_cast<size_t>(iters * cfg.min_sample_s / s * 1.2));
  }
  std::vector<double> samples;
  for (int r = 0; r < cfg.repetitions; ++r) {
    const double t0 = thread_seconds();
    for (size_t i = 0; i < iters; ++i) f();
    samples.push_back((thread_seconds() - t0) / static_cast<double>(iters));
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

// A sampler runs its work `iters` times and returns the thread seconds taken;
// the work itself stays inlined in the loop.
using Sampler = std::function<double(size_t)>;
template <class F>
Sampler make_sampler(F f) {
  return [f](size_t iters) mutable {
    const double t0 = thread_seconds();
    for (size_t i = 0; i < iters; ++i) f();
    return thread_seconds() - t0;
  };
}

// Median seconds per call of each sampler, measured in rounds of one sample
// of each in turn (after a warm-up and a calibration of each), so that every
// implementation sees the same load on a shared machine and their ratio holds
// even when the absolute times drift.
inline std::vector<double> interleaved_median_seconds(std::vector<Sampler>& samplers, const TimingConfig& cfg) {
  const size_t k = samplers.size();
  std::vector<size_t> iters(k, 1);
  for (size_t i = 0; i < k; ++i) {
    samplers[i](1);
    for (;;) {
      const double s = samplers[i](iters[i]);
      if (s >= cfg.min_sample_s || iters[i] >= (size_t{1} << 30)) break;
      iters[i] = s <= 0 ? iters[i] * 16
                        : std::max(iters[i] * 2, static_cast<size_t>(iters[i] * cfg.min_sample_s / s * 1.2));
    }
  }
  std::vector<std::vector<double>> samples(k);
  for (int r = 0; r < cfg.repetitions; ++r)
    for (size_t i = 0; i < k; ++i) samples[i].push_back(samplers[i](iters[i]) / static_cast<double>(iters[i]));
  std::vector<double> medians(k);
  for (size_t i = 0; i < k; ++i) {
    std::vector<double>& v = samples[i];
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    medians[i] = v[v.size() / 2];
  }
  return medians;
}

// Keeps a value alive so the compiler cannot drop the work that made it.
template <class T>
inline void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

}  // namespace bench
