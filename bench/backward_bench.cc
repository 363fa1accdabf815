// Backward attention timings beside the forward pass that feeds it, for every
// compiled port: forward (keeping lse), backward with saved weights and with
// recomputed weights, each with and without the forward's Y (the rowsum
// identity). Reports a GFLOP rate counter: 4*(M*Dk + M*Dv) FLOPs per row for
// Abar, dQ, dK and dV, + 2*M*Dk to recompute the logits (the forward counts
// Dims::flops()). Measures only; the tests judge correctness.
//
//   ./backward_bench --benchmark_filter=256x256 --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "tinyattn/kernels.h"
#include "tinyattn/tinyattn.h"

namespace {

using tinyattn::BackwardMode;

const tinyattn::Dims kShapes[] = {{16, 16, 32, 32}, {64, 64, 32, 32}, {256, 256, 64, 64}, {128, 1024, 64, 64}};

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
  std::vector<float> q, k, v, dy, y, a, lse, dq, dk, dv;
  std::vector<unsigned char> ws;
  explicit Data(const tinyattn::Dims& dims)
      : d(dims),
        q(inputs(d.q_elems(), 1)),
        k(inputs(d.k_elems(), 2)),
        v(inputs(d.v_elems(), 3)),
        dy(inputs(d.y_elems(), 4)),
        y(d.y_elems()),
        a(d.weight_elems()),
        lse(d.lse_elems()),
        dq(d.q_elems()),
        dk(d.k_elems()),
        dv(d.v_elems()),
        ws(tinyattn::forward_workspace_bytes(d, true) +
           tinyattn::backward_workspace_bytes(d, BackwardMode::kRecompute)) {}
};

double backward_flops(const tinyattn::Dims& d, BackwardMode mode) {
  const double rows = static_cast<double>(d.hq * d.n), m = static_cast<double>(d.m);
  const double dk = static_cast<double>(d.dk), dv = static_cast<double>(d.dv);
  return rows * (2.0 * (m * dk + m * dv) * 2.0 + (mode == BackwardMode::kRecompute ? 2.0 * m * dk : 0.0));
}

void bm_forward(benchmark::State& state, tinyattn::Port port, tinyattn::Dims d) {
  Data x(d);
  tinyattn::Options opt;
  opt.port = port;
  const tinyattn::ForwardIo io{x.q.data(), x.k.data(), x.v.data(), x.y.data(), nullptr, x.lse.data()};
  for (auto _ : state) {
    const tinyattn::Status s = tinyattn::forward(d, io, {x.ws.data(), x.ws.size()}, {}, opt);
    if (s != tinyattn::Status::kOk) {
      state.SkipWithError(tinyattn::to_string(s));
      break;
    }
    benchmark::DoNotOptimize(x.y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] = benchmark::Counter(d.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bm_backward(benchmark::State& state, tinyattn::Port port, tinyattn::Dims d, BackwardMode mode, bool use_y) {
  Data x(d);
  tinyattn::Options opt;
  opt.port = port;
  const tinyattn::ForwardIo fio{x.q.data(), x.k.data(), x.v.data(), x.y.data(), x.a.data(), x.lse.data()};
  if (tinyattn::forward(d, fio, {x.ws.data(), x.ws.size()}, {}, opt) != tinyattn::Status::kOk) {
    state.SkipWithError("forward failed");
    return;
  }
  tinyattn::BackwardIo io;
  io.q = x.q.data();
  io.k = x.k.data();
  io.v = x.v.data();
  io.dy = x.dy.data();
  io.weights = x.a.data();
  io.lse = x.lse.data();
  io.y = use_y ? x.y.data() : nullptr;
  io.dq = x.dq.data();
  io.dk = x.dk.data();
  io.dv = x.dv.data();
  for (auto _ : state) {
    const tinyattn::Status s = tinyattn::backward(d, mode, io, {x.ws.data(), x.ws.size()}, {}, opt);
    if (s != tinyattn::Status::kOk) {
      state.SkipWithError(tinyattn::to_string(s));
      break;
    }
    benchmark::DoNotOptimize(x.dq.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] =
      benchmark::Counter(backward_flops(d, mode) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (const tinyattn::Dims& d : kShapes)
    for (tinyattn::Port port : tinyattn::kAllPorts) {
      if (!tinyattn::kernels_f32(port)) continue;
      const std::string shape = std::to_string(d.n) + "x" + std::to_string(d.m) + "x" + std::to_string(d.dk);
      const std::string pn = tinyattn::port_name(port);
      benchmark::RegisterBenchmark(("forward_lse/" + pn + "/" + shape).c_str(), bm_forward, port, d);
      for (BackwardMode mode : {BackwardMode::kSavedWeights, BackwardMode::kRecompute})
        for (bool use_y : {false, true}) {
          const std::string name = std::string("backward_") +
                                   (mode == BackwardMode::kRecompute ? "recompute" : "saved") +
                                   (use_y ? "+y/" : "/") + pn + "/" + shape;
          benchmark::RegisterBenchmark(name.c_str(), bm_backward, port, d, mode, use_y);
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
