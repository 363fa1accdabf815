// RoPE on the host: ns per row of one 64-wide head (Google Benchmark),
// computed (apply_rope: angles and cos/sin per row) and from a RopeTable
// (RAM instead of trigonometry), both styles; docs/rope.md quotes them.
//   build/bench/rope_bench
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>

#include "tinyattn/rope.h"

namespace {

constexpr size_t kDim = 64, kRows = 32, kFirst = 4000;
tinyattn::RopeTable<kDim, kFirst + kRows> table;
float x[kRows * kDim];

tinyattn::Rope rope_of(const benchmark::State& state) {
  tinyattn::Rope rope;
  rope.style = state.range(0) ? tinyattn::RopeStyle::kInterleaved : tinyattn::RopeStyle::kHalfSplit;
  return rope;
}

void fill() {
  uint32_t seed = 1;
  for (float& f : x) {
    seed = seed * 1664525u + 1013904223u;
    f = static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
  }
}

void BM_rope_computed(benchmark::State& state) {
  const tinyattn::Rope rope = rope_of(state);
  fill();
  for (auto _ : state) {
    tinyattn::Status s = tinyattn::apply_rope(rope, x, 1, kRows, kDim, kFirst);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kRows);
  state.counters["ns_per_row"] = benchmark::Counter(static_cast<double>(state.iterations()) * kRows,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_rope_table(benchmark::State& state) {
  if (table.init(rope_of(state)) != tinyattn::Status::kOk) state.SkipWithError("init");
  fill();
  for (auto _ : state) {
    tinyattn::Status s = table.apply(x, 1, kRows, kDim, kFirst);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kRows);
  state.counters["ns_per_row"] = benchmark::Counter(static_cast<double>(state.iterations()) * kRows,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_rope_computed)->Arg(0)->Arg(1)->ArgName("interleaved");
BENCHMARK(BM_rope_table)->Arg(0)->Arg(1)->ArgName("interleaved");
BENCHMARK_MAIN();
