// The fp32 forward per port, as GFLOP/s and as a ratio to the scalar port,
// with the SIMD target each port actually executes. Built by every hosted
// preset; bench/run.sh runs the Arm builds under qemu-user, where the times
// are emulation times: a check that the NEON/SVE code paths are the ones that
// run and do less work than scalar code, not a performance measurement.
//
//   port_ratio [--reps N]
//
// Prints a markdown table, with each port's largest difference from the
// scalar port's output (a sanity check that the SIMD path computes the same). FLOPs count as 2*N*M*Dk + 2*N*M*Dv; each time is
// the median of N repetitions (default 5) of a loop of at least 50 ms of
// thread CPU time (the machine is shared; under qemu-user that is the time
// of the thread emulating the program).
// Nothing asserts a time; the exit status is nonzero only if a forward fails.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tinyattn/attention.h"
#include "tinyattn/kernels.h"

namespace {

struct Case {
  size_t n, m, d;
};
constexpr Case kCases[] = {{16, 16, 32}, {64, 64, 64}, {128, 128, 64}};
constexpr size_t kMaxElems = 128 * 64;
constexpr int kMaxReps = 31;

alignas(64) float g_q[kMaxElems], g_k[kMaxElems], g_v[kMaxElems], g_y[kMaxElems], g_y_scalar[kMaxElems];
alignas(64) unsigned char g_ws[tinyattn::forward_workspace_bytes(tinyattn::Dims{128, 128, 64, 64})];

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Median seconds per forward; < 0 if the forward fails.
double time_forward(const tinyattn::Dims& dims, tinyattn::Port port, int reps) {
  const tinyattn::ForwardIo io{g_q, g_k, g_v, g_y, nullptr, nullptr};
  const tinyattn::Workspace ws{g_ws, sizeof g_ws};
  tinyattn::Options opt;
  opt.port = port;
  if (tinyattn::forward(dims, io, ws, {}, opt) != tinyattn::Status::kOk) return -1.0;
  size_t iters = 1;
  for (;;) {  // calibrate: one sample lasts at least 50 ms
    const double t0 = now_seconds();
    for (size_t i = 0; i < iters; ++i) (void)tinyattn::forward(dims, io, ws, {}, opt);
    const double s = now_seconds() - t0;
    if (s >= 0.05) break;
    iters *= 2;
  }
  double samples[kMaxReps];
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds();
    for (size_t i = 0; i < iters; ++i) (void)tinyattn::forward(dims, io, ws, {}, opt);
    samples[r] = (now_seconds() - t0) / static_cast<double>(iters);
  }
  std::nth_element(samples, samples + reps / 2, samples + reps);
  return samples[reps / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--reps") == 0 && a + 1 < argc) {
      reps = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > kMaxReps) {
    std::fprintf(stderr, "port_ratio: --reps must be in [1, %d]\n", kMaxReps);
    return 2;
  }
  uint32_t state = 12345;  // the same generator as bench/peers: values in [-1, 1)
  for (float* t : {g_q, g_k, g_v})
    for (size_t i = 0; i < kMaxElems; ++i) {
      state = state * 1664525u + 1013904223u;
      t[i] = static_cast<float>(static_cast<int32_t>(state >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
    }

  std::printf(
      "| shape (N,M,Dk,Dv) | port (SIMD target) | GFLOP/s | ratio to scalar | max abs diff vs scalar |\n"
      "|---|---|---:|---:|---:|\n");
  int rc = 0;
  for (const Case& c : kCases) {
    const tinyattn::Dims dims{c.n, c.m, c.d, c.d};
    const double flops = 2.0 * static_cast<double>(c.n * c.m * c.d) * 2.0;
    double scalar = 0.0;
    for (tinyattn::Port p : tinyattn::kAllPorts) {
      const tinyattn::KernelsF32* k = tinyattn::kernels_f32(p);
      if (!k) continue;
      const double t = time_forward(dims, p, reps);
      if (t < 0) {
        std::fprintf(stderr, "port_ratio: forward failed on port %s\n", k->port);
        rc = 1;
        continue;
      }
      const size_t ny = c.n * c.d;
      if (p == tinyattn::Port::kScalar) {
        scalar = t;
        std::copy(g_y, g_y + ny, g_y_scalar);
      }
      double diff = 0.0;
      for (size_t i = 0; i < ny; ++i)
        diff = std::fmax(diff, std::fabs(static_cast<double>(g_y[i]) - static_cast<double>(g_y_scalar[i])));
      std::printf("| (%zu,%zu,%zu,%zu) | %s (%s) | %.3f | %.2fx | %.1e |\n", c.n, c.m, c.d, c.d, k->port,
                  k->simd_target(), flops / t * 1e-9, scalar > 0 ? scalar / t : 0.0, diff);
    }
  }
  return rc;
}
