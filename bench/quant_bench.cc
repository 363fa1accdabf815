// fp32, fp16 and int8 forward timings side by side, for every compiled port
// (int8 on each port's KernelsI8 table; a port without one runs the scalar
// table, so its int8 row is left out).
// Reports the fp32-equivalent GFLOP rate (Dims::flops()) and the bytes of
// Q, K, V, Y and workspace each format needs. Measures only; the tests judge
// correctness.
//
//   ./quant_bench --benchmark_filter=64x64 --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "tinyattn/kernels_i8.h"
#include "tinyattn/tinyattn.h"

namespace {

using tinyattn::Dims;

const Dims kShapes[] = {{16, 16, 32, 32}, {64, 64, 64, 64}, {256, 256, 64, 64}, {1, 1024, 64, 64, 8, 8}};

std::vector<float> inputs(size_t count, unsigned seed) {
  std::vector<float> x(count);
  unsigned s = seed;
  for (float& f : x) {
    s = s * 1664525u + 1013904223u;
    f = static_cast<float>(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return x;
}

std::vector<int8_t> quantize(const std::vector<float>& x, float scale) {
  std::vector<int8_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float r = x[i] / scale;
    q[i] = static_cast<int8_t>(r < -128.0f ? -128 : (r > 127.0f ? 127 : static_cast<int>(r + (r < 0 ? -0.5f : 0.5f))));
  }
  return q;
}

void finish(benchmark::State& state, const Dims& d, size_t bytes) {
  state.counters["GFLOP"] = benchmark::Counter(d.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = static_cast<double>(bytes);
}

size_t tensor_elems(const Dims& d) { return d.q_elems() + d.k_elems() + d.v_elems() + d.y_elems(); }

void bm_fp32(benchmark::State& state, tinyattn::Port port, Dims d) {
  std::vector<float> q = inputs(d.q_elems(), 1), k = inputs(d.k_elems(), 2), v = inputs(d.v_elems(), 3);
  std::vector<float> y(d.y_elems());
  std::vector<unsigned char> ws(tinyattn::forward_workspace_bytes(d, false));
  tinyattn::Options opt;
  opt.port = port;
  const tinyattn::ForwardIo io{q.data(), k.data(), v.data(), y.data(), nullptr, nullptr};
  for (auto _ : state) {
    const tinyattn::Status s = tinyattn::forward(d, io, {ws.data(), ws.size()}, {}, opt);
    if (s != tinyattn::Status::kOk) {
      state.SkipWithError(tinyattn::to_string(s));
      break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  finish(state, d, 4 * tensor_elems(d) + ws.size());
}

void bm_fp16(benchmark::State& state, tinyattn::Port port, Dims d) {
  auto halves = [](const std::vector<float>& x) {
    std::vector<tinyattn::half> h(x.size());
    tinyattn::to_half(x.data(), h.data(), x.size());
    return h;
  };
  const std::vector<tinyattn::half> q = halves(inputs(d.q_elems(), 1)), k = halves(inputs(d.k_elems(), 2)),
                                    v = halves(inputs(d.v_elems(), 3));
  std::vector<tinyattn::half> y(d.y_elems());
  std::vector<unsigned char> ws(tinyattn::forward_f16_workspace_bytes(d, false));
  tinyattn::Options opt;
  opt.port = port;
  const tinyattn::ForwardIoF16 io{q.data(), k.data(), v.data(), y.data(), nullptr, nullptr};
  for (auto _ : state) {
    const tinyattn::Status s = tinyattn::forward_f16(d, io, {ws.data(), ws.size()}, {}, opt);
    if (s != tinyattn::Status::kOk) {
      state.SkipWithError(tinyattn::to_string(s));
      break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  finish(state, d, 2 * tensor_elems(d) + ws.size());
}

void bm_int8(benchmark::State& state, tinyattn::Port port, Dims d) {
  const float sx = 1.0f / 127.0f, sy = 1.0f / 127.0f;
  const std::vector<int8_t> q = quantize(inputs(d.q_elems(), 1), sx), k = quantize(inputs(d.k_elems(), 2), sx),
                            v = quantize(inputs(d.v_elems(), 3), sx);
  std::vector<int8_t> y(d.y_elems());
  std::vector<unsigned char> ws(tinyattn::forward_i8_workspace_bytes(d));
  tinyattn::Int8Scheme scheme;
  scheme.q = {&sx, nullptr, 1};
  scheme.k = {&sx, nullptr, 1};
  scheme.v = {&sx, nullptr, 1};
  scheme.y = {&sy, nullptr, 1};
  std::vector<tinyattn::Int8HeadPlan> plans(d.hq);
  if (tinyattn::plan_int8(d, scheme, plans.data(), plans.size()) != tinyattn::Status::kOk) {
    state.SkipWithError("plan_int8 failed");
    return;
  }
  const tinyattn::ForwardIoI8 io{q.data(), k.data(), v.data(), y.data(), nullptr, nullptr};
  for (auto _ : state) {
    const tinyattn::Status s =
        tinyattn::forward_i8(d, io, {plans.data(), plans.size()}, {ws.data(), ws.size()}, {}, tinyattn::Options{{}, port});
    if (s != tinyattn::Status::kOk) {
      state.SkipWithError(tinyattn::to_string(s));
      break;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  finish(state, d, tensor_elems(d) + ws.size() + plans.size() * sizeof(tinyattn::Int8HeadPlan));
}

std::string shape_name(const Dims& d) {
  std::string s = std::to_string(d.n) + "x" + std::to_string(d.m) + "x" + std::to_string(d.dk);
  if (d.hq > 1) s += "x" + std::to_string(d.hq) + "h";
  return s;
}

void register_all() {
  for (const Dims& d : kShapes) {
    const std::string shape = shape_name(d);
    for (tinyattn::Port port : tinyattn::kAllPorts) {
      if (!tinyattn::kernels_f32(port)) continue;
      const std::string pn = tinyattn::port_name(port);
      benchmark::RegisterBenchmark(("fp32/" + pn + "/" + shape).c_str(), bm_fp32, port, d);
      benchmark::RegisterBenchmark(("fp16/" + pn + "/" + shape).c_str(), bm_fp16, port, d);
      const tinyattn::KernelsI8* k8 = tinyattn::kernels_i8(port);
      if (port == tinyattn::Port::kScalar || (k8 && k8 != tinyattn::kernels_i8(tinyattn::Port::kScalar)))
        benchmark::RegisterBenchmark(("int8/" + pn + "/" + shape).c_str(), bm_int8, port, d);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
