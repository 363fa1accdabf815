// Forward attention timings: every compiled port beside two peers, a plain
// triple loop and Eigen 3.4, at the shapes of issue 2. Reports GFLOP/s (the "GFLOP=x/s" rate) as a
// counter (FLOPs = 2*N*M*Dk + 2*N*M*Dv per head, Dims::flops()). No asserts on
// time: this program measures, the tests judge correctness.
//
//   ./forward_bench --benchmark_filter=64x64 --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tinyattn/kernels.h"
#include "tinyattn/tinyattn.h"

#if TINYATTN_BENCH_EIGEN
#include <Eigen/Dense>
#endif

namespace {

struct Case {
  size_t n, m, dk;
};
const Case kCases[] = {{8, 8, 16}, {16, 16, 32}, {64, 64, 64}, {128, 128, 64}};

// Deterministic inputs in [-1, 1) (a linear congruential generator is enough
// for timing; the values only need to be ordinary floats).
std::vector<float> inputs(size_t count, unsigned seed) {
  std::vector<float> x(count);
  unsigned s = seed;
  for (float& f : x) {
    s = s * 1664525u + 1013904223u;
    f = static_cast<float>(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return x;
}

struct Data {
  tinyattn::Dims d;
  std::vector<float> q, k, v, y, scores;
  explicit Data(const Case& c)
      : d{c.n, c.m, c.dk, c.dk, 1, 1},
        q(inputs(c.n * c.dk, 1)),
        k(inputs(c.m * c.dk, 2)),
        v(inputs(c.m * c.dk, 3)),
        y(c.n * c.dk),
        scores(c.m) {}
};

void set_counters(benchmark::State& state, const tinyattn::Dims& d) {
  state.counters["GFLOP"] =
      benchmark::Counter(d.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bm_port(benchmark::State& state, tinyattn::Port port, Case c) {
  Data x(c);
  std::vector<unsigned char> ws(tinyattn::forward_workspace_bytes(x.d));
  tinyattn::Options opt;
  opt.port = port;
  const tinyattn::ForwardIo io{x.q.data(), x.k.data(), x.v.data(), x.y.data(), nullptr, nullptr};
  for (auto _ : state) {
    const tinyattn::Status s = tinyattn::forward(x.d, io, {ws.data(), ws.size()}, {}, opt);
    if (s != tinyattn::Status::kOk) {
      state.SkipWithError(tinyattn::to_string(s));
      break;
    }
    benchmark::DoNotOptimize(x.y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, x.d);
}

// The compile-time API, Attention<Shape<N, M, Dk, Dk>>, on the default port:
// beside bm_port's run-time forward(), what checking the dims at compile
// time saves per call.
template <size_t N, size_t M, size_t Dk>
void bm_compile_time(benchmark::State& state) {
  using A = tinyattn::Attention<tinyattn::Shape<N, M, Dk, Dk>>;
  static A attn;
  static typename A::Q q;
  static typename A::K k;
  static typename A::V v;
  static typename A::Y y;
  Data x(Case{N, M, Dk});
  std::copy(x.q.begin(), x.q.end(), q.begin());
  std::copy(x.k.begin(), x.k.end(), k.begin());
  std::copy(x.v.begin(), x.v.end(), v.begin());
  for (auto _ : state) {
    const tinyattn::Status s = attn(q, k, v, y);
    if (s != tinyattn::Status::kOk) {
      state.SkipWithError(tinyattn::to_string(s));
      break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, x.d);
}

// The textbook loops with std::exp: what the library is measured against.
void bm_triple_loop(benchmark::State& state, Case c) {
  Data x(c);
  const size_t n = c.n, m = c.m, dk = c.dk, dv = c.dk;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) {
      float mx = -INFINITY;
      for (size_t j = 0; j < m; ++j) {
        float s = 0.0f;
        for (size_t t = 0; t < dk; ++t) s += x.q[i * dk + t] * x.k[j * dk + t];
        x.scores[j] = s * scale;
        mx = std::fmax(mx, x.scores[j]);
      }
      float sum = 0.0f;
      for (size_t j = 0; j < m; ++j) sum += (x.scores[j] = std::exp(x.scores[j] - mx));
      for (size_t t = 0; t < dv; ++t) x.y[i * dv + t] = 0.0f;
      for (size_t j = 0; j < m; ++j)
        for (size_t t = 0; t < dv; ++t) x.y[i * dv + t] += x.scores[j] / sum * x.v[j * dv + t];
    }
    benchmark::DoNotOptimize(x.y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, x.d);
}

#if TINYATTN_BENCH_EIGEN
// Eigen: two matrix products and a row-wise stable softmax, buffers sized once.
void bm_eigen(benchmark::State& state, Case c) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Data x(c);
  const Eigen::Map<const Mat> q(x.q.data(), c.n, c.dk), k(x.k.data(), c.m, c.dk), v(x.v.data(), c.m, c.dk);
  Mat s(c.n, c.m), y(c.n, c.dk);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.dk));
  for (auto _ : state) {
    s.noalias() = (q * k.transpose()) * scale;
    s = (s.colwise() - s.rowwise().maxCoeff()).array().exp().matrix();
    s.array().colwise() /= s.rowwise().sum().array();
    y.noalias() = s * v;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, x.d);
}
#endif

std::string label(const char* what, const Case& c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "forward/%s/%zux%zux%zu", what, c.n, c.m, c.dk);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  for (const Case& c : kCases) {
    for (tinyattn::Port p : tinyattn::kAllPorts) {
      const tinyattn::KernelsF32* k = tinyattn::kernels_f32(p);
      if (!k) continue;
      const std::string name = std::string(k->port) + "(" + k->simd_target() + ")";
      benchmark::RegisterBenchmark(label(name.c_str(), c).c_str(), bm_port, p, c);
    }
    benchmark::RegisterBenchmark(label("default_runtime_api", c).c_str(), bm_port, tinyattn::Port::kDefault, c);
    if (c.n == 8 && c.m == 8 && c.dk == 16)
      benchmark::RegisterBenchmark(label("default_compile_time_api", c).c_str(), bm_compile_time<8, 8, 16>);
    if (c.n == 16 && c.m == 16 && c.dk == 32)
      benchmark::RegisterBenchmark(label("default_compile_time_api", c).c_str(), bm_compile_time<16, 16, 32>);
    benchmark::RegisterBenchmark(label("triple_loop", c).c_str(), bm_triple_loop, c);
#if TINYATTN_BENCH_EIGEN
    benchmark::RegisterBenchmark(label("eigen", c).c_str(), bm_eigen, c);
#endif
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
