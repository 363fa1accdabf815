// forward() is re-entrant: several threads run it at once, each with its own
// workspace and outputs over shared read-only inputs, and every result is
// bit-identical to the same call made alone. Under ThreadSanitizer
// (scripts/stages/55-sanitizers.sh) any hidden mutable global in lib/ or
// ports/ -- a lazily set dispatch table, a static scratch buffer -- is a
// reported race.
#include <atomic>
#include <cstring>
#include <thread>

#include "support.h"
#include "tatest.h"

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using namespace tatest;

namespace {

constexpr size_t kThreads = 4;
constexpr size_t kIterations = 20;
constexpr size_t kMaxJobs = 16;

struct Outputs {
  float* y;
  float* weights;  // null: the call takes the no-weights path (key tiles when M > kKeyTile)
  float* lse;
  unsigned char* ws;
};

struct Job {
  Dims d;
  Mask mask;
  Port port;
  const float *q, *k, *v;
  bool with_weights;
  Outputs golden;
  Outputs per_thread[kThreads];
};

Outputs make_outputs(const Dims& d, bool with_weights) {
  return {alloc<float>(d.y_elems()), with_weights ? alloc<float>(d.weight_elems()) : nullptr,
          alloc<float>(d.lse_elems()), alloc<unsigned char>(tinyattn::forward_workspace_bytes(d, with_weights))};
}

Status run(const Job& j, const Outputs& o) {
  tinyattn::Options opt;
  opt.port = j.port;
  const tinyattn::ForwardIo io{j.q, j.k, j.v, o.y, o.weights, o.lse};
  return tinyattn::forward(j.d, io, {o.ws, tinyattn::forward_workspace_bytes(j.d, j.with_weights)}, j.mask, opt);
}

bool same(const Job& j, const Outputs& a, const Outputs& b) {
  bool eq = std::memcmp(a.y, b.y, j.d.y_elems() * sizeof(float)) == 0 &&
            std::memcmp(a.lse, b.lse, j.d.lse_elems() * sizeof(float)) == 0;
  if (j.with_weights) eq = eq && std::memcmp(a.weights, b.weights, j.d.weight_elems() * sizeof(float)) == 0;
  return eq;
}

}  // namespace

TA_CASE("threads: concurrent forward() calls give the single-thread results bit for bit") {
  Arena::Scope scope;
  Port ports[tatest::kMaxPorts];
  const size_t nports = ports_under_test(ports);
  // The arena is not thread-safe: everything is allocated here, before the threads start.
  static Job jobs[kMaxJobs];
  size_t njobs = 0;
  const Dims shapes[] = {{7, 13, 8, 5, 2, 1}, {4, 300, 6, 3}};  // whole-row and key-tile paths
  float* bias = alloc<float>(7 * 300);
  uint8_t* keep = alloc<uint8_t>(7 * 300);
  Rng rng(17);
  rng.fill_uniform(bias, 7 * 300, -1.0f, 1.0f);
  for (size_t x = 0; x < 7 * 300; ++x) keep[x] = static_cast<uint8_t>(rng.next_u64() % 4 != 0);
  for (size_t pi = 0; pi < nports; ++pi)
    for (const Dims& d : shapes)
      for (int variant = 0; variant < 2 && njobs < kMaxJobs; ++variant) {
        Job& j = jobs[njobs++];
        Problem p = make_problem(d, 100 + njobs);
        TA_CHECK(p.ok);
        if (!p.ok) return;
        j.d = d;
        j.port = ports[pi];
        j.q = p.q;
        j.k = p.k;
        j.v = p.v;
        j.mask = variant == 0 ? Mask::causal_bottom_right() : Mask::keep_bytes(keep);
        if (variant == 1) j.mask.bias = bias;
        j.with_weights = variant == 0;
        j.golden = make_outputs(d, j.with_weights);
        for (Outputs& o : j.per_thread) o = make_outputs(d, j.with_weights);
        TA_CHECK(run(j, j.golden) == Status::kOk);
      }

  std::atomic<size_t> mismatches{0}, failures{0};
  std::atomic<bool> go{false};
  std::thread threads[kThreads];
  for (size_t t = 0; t < kThreads; ++t)
    threads[t] = std::thread([&, t] {
      while (!go.load()) std::this_thread::yield();  // start together
      for (size_t it = 0; it < kIterations; ++it)
        for (size_t n = 0; n < njobs; ++n) {
          // Threads walk the jobs in different orders, so different ports and
          // paths overlap in time.
          const Job& j = jobs[(n + t * 3) % njobs];
          const Outputs& o = j.per_thread[t];
          if (run(j, o) != Status::kOk) failures.fetch_add(1);
          else if (!same(j, o, j.golden)) mismatches.fetch_add(1);
        }
    });
  go.store(true);
  for (std::thread& th : threads) th.join();
  TA_CHECK_MSG(failures.load() == 0, "%zu concurrent calls failed", failures.load());
  TA_CHECK_MSG(mismatches.load() == 0, "%zu concurrent results differ from the single-thread run",
               mismatches.load());
  TA_LOG("%zu threads x %zu iterations x %zu jobs", kThreads, kIterations, njobs);
}

TA_CASE("threads: one Attention<> object per thread") {
  using A = tinyattn::Attention<tinyattn::Shape<5, 9, 4, 3>>;
  static A attn[kThreads];
  static A::Q q;
  static A::K k;
  static A::V v;
  static A::Y y[kThreads], golden;
  Rng rng(9);
  rng.fill_normal(q.data(), q.size());
  rng.fill_normal(k.data(), k.size());
  rng.fill_normal(v.data(), v.size());
  A solo;
  TA_CHECK(solo(q, k, v, golden, Mask::causal_top_left()) == Status::kOk);
  std::atomic<size_t> bad{0};
  std::thread threads[kThreads];
  for (size_t t = 0; t < kThreads; ++t)
    threads[t] = std::thread([&, t] {
      for (size_t it = 0; it < 200; ++it)
        if (attn[t](q, k, v, y[t], Mask::causal_top_left()) != Status::kOk || y[t] != golden) bad.fetch_add(1);
    });
  for (std::thread& th : threads) th.join();
  TA_CHECK_MSG(bad.load() == 0, "%zu concurrent Attention<> results differ", bad.load());
}
