// The seed notebook's softmax saturation study, on tinyattn's softmax.
//
// For dk in {4, 8, ..., 512}: 200 trials of one Gaussian query against 10
// Gaussian keys; the logits q.k_j either scaled by 1/sqrt(dk) or not go
// through tinyattn::softmax, and the mean of p(1 - p) (the diagonal of the
// softmax Jacobian diag(p) - p p^T) measures how much gradient survives.
// Unscaled logits have standard deviation sqrt(dk), so softmax saturates
// towards one-hot and p(1 - p) vanishes; scaled ones keep unit variance.
//
//   saturation [--port scalar|highway|xsimd|mve] [--trials N] [--seed S]
//
// Prints the notebook's columns: dk, scaled, unscaled, ratio, regime, where
// regime is "Stable Gradient Flow" if unscaled > 0.03, else "Severe Softmax
// Saturation" (the notebook's rule). A study, not a timing: nothing asserts.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "tinyattn/kernels.h"
#include "tinyattn/softmax.h"

namespace {

constexpr size_t kKeys = 10;
constexpr size_t kDims[] = {4, 8, 16, 32, 64, 128, 256, 512};
constexpr size_t kMaxDk = 512;

bool parse_port(const char* name, tinyattn::Port* port) {
  if (std::strcmp(name, tinyattn::port_name(tinyattn::Port::kDefault)) == 0) {
    *port = tinyattn::Port::kDefault;
    return true;
  }
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (std::strcmp(name, tinyattn::port_name(p)) == 0) {
      *port = p;
      return true;
    }
  return false;
}

double mean_p_one_minus_p(const float* p, size_t n) {
  double sum = 0.0;
  for (size_t j = 0; j < n; ++j) sum += static_cast<double>(p[j]) * (1.0 - static_cast<double>(p[j]));
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  tinyattn::Port port = tinyattn::Port::kDefault;
  unsigned long trials = 200;
  unsigned long long seed = 1337;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--port") == 0 && a + 1 < argc && parse_port(argv[a + 1], &port)) {
      ++a;
    } else if (std::strcmp(argv[a], "--trials") == 0 && a + 1 < argc) {
      trials = std::strtoul(argv[++a], nullptr, 10);
    } else if (std::strcmp(argv[a], "--seed") == 0 && a + 1 < argc) {
      seed = std::strtoull(argv[++a], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--port scalar|highway|xsimd|mve] [--trials N] [--seed S]\n", argv[0]);
      return 2;
    }
  }
  if (trials == 0 || !tinyattn::kernels_f32(port)) {
    std::fprintf(stderr, "saturation: need --trials >= 1 and a port compiled into this build\n");
    return 2;
  }

  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::printf("# softmax saturation: %lu trials of %zu keys, port %s, seed %llu\n", trials, kKeys,
              tinyattn::port_name(port), seed);
  std::printf("%5s %9s %9s %8s  %s\n", "dk", "scaled", "unscaled", "ratio", "regime");
  static double q[kMaxDk], k[kKeys * kMaxDk];
  float scaled[kKeys], unscaled[kKeys];
  for (size_t dk : kDims) {
    const double inv_sqrt_dk = 1.0 / std::sqrt(static_cast<double>(dk));
    double sum_scaled = 0.0, sum_unscaled = 0.0;
    for (unsigned long t = 0; t < trials; ++t) {
      for (size_t c = 0; c < dk; ++c) q[c] = normal(rng);
      for (size_t c = 0; c < kKeys * dk; ++c) k[c] = normal(rng);
      for (size_t j = 0; j < kKeys; ++j) {
        double z = 0.0;
        for (size_t c = 0; c < dk; ++c) z += q[c] * k[j * dk + c];
        unscaled[j] = static_cast<float>(z);
        scaled[j] = static_cast<float>(z * inv_sqrt_dk);
      }
      if (tinyattn::softmax(scaled, scaled, kKeys, port) != tinyattn::Status::kOk ||
          tinyattn::softmax(unscaled, unscaled, kKeys, port) != tinyattn::Status::kOk) {
        std::fprintf(stderr, "saturation: softmax failed\n");
        return 1;
      }
      sum_scaled += mean_p_one_minus_p(scaled, kKeys);
      sum_unscaled += mean_p_one_minus_p(unscaled, kKeys);
    }
    const double n = static_cast<double>(trials * kKeys);
    const double mean_scaled = sum_scaled / n, mean_unscaled = sum_unscaled / n;
    const double ratio = mean_scaled / (mean_unscaled > 1e-12 ? mean_unscaled : 1e-12);
    std::printf("%5zu %9.5f %9.5f %7.1fx  %s\n", dk, mean_scaled, mean_unscaled, ratio,
                mean_unscaled > 0.03 ? "Stable Gradient Flow" : "Severe Softmax Saturation");
  }
  return 0;
}
