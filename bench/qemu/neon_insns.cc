// fp32 forwards at one shape on a named port, or with Eigen, for instruction
// counting under qemu-aarch64 with the TCG plugin (bench/qemu/neon_count.sh).
// The program always prepares the same inputs, runs `calls` forwards and
// checks the last output against a double-precision reference, so
// insns(calls=2) - insns(calls=1) is one warm forward alone.
//
//   neon_insns scalar|highway|xsimd|eigen N M DK DV CALLS
//
// Eigen runs the forward as bench/peers/peers.cc does on the host: Q*K^T
// scaled, a row softmax, P*V.
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tinyattn/tinyattn.h"

namespace {

constexpr size_t kMaxRows = 256, kMaxWidth = 64;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

float q[kMaxRows * kMaxWidth], k[kMaxRows * kMaxWidth], v[kMaxRows * kMaxWidth], y[kMaxRows * kMaxWidth];
alignas(tinyattn::kWorkspaceAlign) unsigned char workspace[tinyattn::forward_workspace_bytes(tinyattn::Dims{
    kMaxRows, kMaxRows, kMaxWidth, kMaxWidth, 1, 1})];

uint32_t next(uint32_t& seed) { return seed = seed * 1664525u + 1013904223u; }

// The largest |y - reference| over the output, the reference in double.
double max_error(const tinyattn::Dims& d, float scale) {
  double worst = 0.0;
  double s[kMaxRows];
  for (size_t i = 0; i < d.n; ++i) {
    double mx = -INFINITY, sum = 0.0;
    for (size_t j = 0; j < d.m; ++j) {
      double acc = 0.0;
      for (size_t c = 0; c < d.dk; ++c) acc += static_cast<double>(q[i * d.dk + c]) * k[j * d.dk + c];
      s[j] = acc * scale;
      mx = s[j] > mx ? s[j] : mx;
    }
    for (size_t j = 0; j < d.m; ++j) sum += s[j] = std::exp(s[j] - mx);
    for (size_t c = 0; c < d.dv; ++c) {
      double acc = 0.0;
      for (size_t j = 0; j < d.m; ++j) acc += s[j] * v[j * d.dv + c];
      worst = std::fmax(worst, std::fabs(acc / sum - y[i * d.dv + c]));
    }
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: neon_insns scalar|highway|xsimd|eigen N M DK DV CALLS\n");
    return 2;
  }
  const tinyattn::Dims dims{std::strtoul(argv[2], nullptr, 10),
                            std::strtoul(argv[3], nullptr, 10),
                            std::strtoul(argv[4], nullptr, 10),
                            std::strtoul(argv[5], nullptr, 10),
                            1,
                            1};
  const int calls = std::atoi(argv[6]);
  if (dims.n == 0 || dims.m == 0 || dims.n > kMaxRows || dims.m > kMaxRows || dims.dk == 0 || dims.dv == 0 ||
      dims.dk > kMaxWidth || dims.dv > kMaxWidth) {
    std::fprintf(stderr, "shape beyond (%zu, %zu, %zu, %zu)\n", kMaxRows, kMaxRows, kMaxWidth, kMaxWidth);
    return 2;
  }
  uint32_t seed = 1;
  for (size_t i = 0; i < kMaxRows * kMaxWidth; ++i) {
    q[i] = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 16384.0f;
    k[i] = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 16384.0f;
    v[i] = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 16384.0f;
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(dims.dk));
  const char* target = "none";
  if (std::strcmp(argv[1], "eigen") == 0) {
#ifdef EIGEN_VECTORIZE_NEON
    target = "NEON";
#endif
    // Allocated before the calls, as the host peer's members are.
    RowMat s(dims.n, dims.m);
    Eigen::VectorXf mx(dims.n), sum(dims.n);
    for (int c = 0; c < calls; ++c) {
      Eigen::Map<const RowMat> qm(q, dims.n, dims.dk), km(k, dims.m, dims.dk), vm(v, dims.m, dims.dv);
      Eigen::Map<RowMat> ym(y, dims.n, dims.dv);
      s.noalias() = qm * km.transpose();
      s *= scale;
      mx = s.rowwise().maxCoeff();
      s.colwise() -= mx;
      s.array() = s.array().exp();
      sum = s.rowwise().sum();
      ym.noalias() = s * vm;
      ym.array().colwise() /= sum.array();
    }
  } else {
    tinyattn::Port port = tinyattn::Port::kDefault;
    for (tinyattn::Port p : tinyattn::kAllPorts)
      if (std::strcmp(tinyattn::port_name(p), argv[1]) == 0) port = p;
    if (!tinyattn::port_compiled(port) || std::strcmp(tinyattn::port_name(port), argv[1]) != 0) {
      std::fprintf(stderr, "port %s is not compiled in\n", argv[1]);
      return 2;
    }
    target = tinyattn::port_simd_target(port);
    // The default scratch (Attention<S>'s): with the transposed keys where they apply.
    const tinyattn::Workspace ws{workspace, tinyattn::forward_workspace_bytes(dims, false)};
    tinyattn::Status status = tinyattn::Status::kOk;
    for (int c = 0; c < calls && status == tinyattn::Status::kOk; ++c)
      status = tinyattn::forward(dims, tinyattn::ForwardIo{q, k, v, y, nullptr, nullptr}, ws, {},
                                 tinyattn::Options{{}, port});
    if (status != tinyattn::Status::kOk) {
      std::fprintf(stderr, "forward: status %d\n", static_cast<int>(status));
      return 1;
    }
  }
  std::printf("%s %s max_error %.3g\n", argv[1], target, calls > 0 ? max_error(dims, scale) : 0.0);
  return 0;
}
