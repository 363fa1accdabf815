// Which optional primitives forward() uses for which blocks: the fused block
// (KernelsF32::attend_block) and the transposed-keys scores
// (scores_block_transposed). White box, through the driver's entry point on
// an explicit table (lib/src/detail.h): the port's own table with those two
// wrapped to count their calls. Both paths are switched by the build and the
// workspace, so a build or driver change that loses one fails here instead of
// silently running the slower composed path.
#include <cmath>

#include "detail.h"
#include "support.h"
#include "tatest.h"

using namespace tatest;

namespace {

const tinyattn::KernelsF32* g_port = nullptr;
size_t g_attend_calls = 0, g_transposed_calls = 0;

bool counting_attend_block(const tinyattn::AttendBlock& b) {
  ++g_attend_calls;
  g_transposed_calls += b.kt != nullptr && b.rows == tinyattn::kBlockRows;
  return g_port->attend_block(b);
}

void counting_scores_block_transposed(const float* q, size_t ldq, const float* kt, size_t ldkt, size_t count,
                                      size_t dk, float scale, float* s, size_t lds) {
  ++g_transposed_calls;
  g_port->scores_block_transposed(q, ldq, kt, ldkt, count, dk, scale, s, lds);
}

struct Calls {
  size_t attend, transposed;  // blocks given K^T, through attend_block or scores_block_transposed
};

// forward() on `table` through the driver, in a workspace of the given kind
// (the problems below are valid, so it skips validation).
Calls calls(const tinyattn::KernelsF32& table, Problem& p, const tinyattn::Mask& mask, bool with_weights,
            tinyattn::Scratch scratch = tinyattn::Scratch::kMinimal) {
  tinyattn::KernelsF32 counted = table;
  if (table.attend_block) counted.attend_block = counting_attend_block;
  if (table.scores_block_transposed) counted.scores_block_transposed = counting_scores_block_transposed;
  g_port = &table;
  g_attend_calls = g_transposed_calls = 0;
  const size_t bytes = tinyattn::forward_workspace_bytes(p.d, with_weights, scratch);
  void* ws = scratch == tinyattn::Scratch::kMinimal ? p.workspace : Arena::allocate(bytes);
  if (!ws) return {~size_t{0}, ~size_t{0}};
  const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, with_weights ? p.weights : nullptr, p.lse};
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.d.dk));
  tinyattn::detail::forward_validated(counted, p.d, io, {ws, bytes}, mask, scale, 0.0f);
  return {g_attend_calls, g_transposed_calls};
}

size_t blocks_of(const tinyattn::Dims& d) {
  return d.hq * ((d.n + tinyattn::kBlockRows - 1) / tinyattn::kBlockRows);
}
size_t full_blocks_of(const tinyattn::Dims& d) { return d.hq * (d.n / tinyattn::kBlockRows); }

// f(port, index, table) for every port under test whose table has `member`;
// returns how many ports that was.
template <class Member, class F>
size_t for_ports_with(Member tinyattn::KernelsF32::*member, F f) {
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t n = ports_under_test(ports);
  size_t with = 0;
  for (size_t pi = 0; pi < n; ++pi) {
    const tinyattn::KernelsF32& k = *tinyattn::kernels_f32(ports[pi]);
    if (!(k.*member)) continue;
    ++with;
    Arena::Scope scope;
    f(ports[pi], pi, k);
  }
  return with;
}

}  // namespace

TA_CASE("forward: blocks without element masks or weights output go to the port's attend_block") {
  using tinyattn::KernelsF32;
  const size_t ports_with = for_ports_with(&KernelsF32::attend_block, [](tinyattn::Port port, size_t pi,
                                                                        const KernelsF32& k) {
    const tinyattn::Dims d{9, 40, 16, 8, 2, 1};  // 3 blocks of rows per head (4, 4, 1)
    Problem p = make_problem(d, 4242 + pi);
    if (!p.ok) TA_IGNORE("the test arena cannot hold the problem");

    // Structured masks keep the fused path (each row gets its key range).
    const tinyattn::Mask structured[] = {tinyattn::Mask::none(), tinyattn::Mask::causal_bottom_right(),
                                         tinyattn::Mask::key_padding(29)};
    for (const tinyattn::Mask& mask : structured) {
      TA_CHECK(calls(k, p, mask, false).attend == blocks_of(d));
      run_reference(p, mask);
      const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * max_abs(p.v, d.v_elems()), kOutRtol);
      TA_CHECK_MSG(y.ok, "%s: output %zu off by %g (bound %g)", tinyattn::port_name(port), y.index, y.worst,
                   y.bound);
    }
    // The weights output and element masks take the composed path.
    TA_CHECK(calls(k, p, tinyattn::Mask::none(), true).attend == 0);
    float* bias = alloc<float>(d.n * d.m);
    if (!bias) TA_IGNORE("the test arena cannot hold the bias");
    for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
    TA_CHECK(calls(k, p, tinyattn::Mask::additive(bias), false).attend == 0);
  });
  if (ports_with == 0) TA_IGNORE("no port in this build has attend_block");
}

TA_CASE("forward: with Scratch::kTransposedKeys, every full block's scores come from the transposed keys") {
  using tinyattn::KernelsF32;
  const size_t ports_with = for_ports_with(&KernelsF32::scores_block_transposed, [](tinyattn::Port port, size_t pi,
                                                                                   const KernelsF32& k) {
    constexpr size_t kRows = tinyattn::kTransposedKeysMinRows;
    // Plain path: 8 full blocks and a partial one per head.
    const tinyattn::Dims plain{kRows + 1, 40, 16, 8, 2, 1};
    if (!tinyattn::kTransposedKeysBuilt) TA_IGNORE("no transposed keys on this target (kTransposedKeysBuilt)");
    Problem p = make_problem(plain, 77 + pi);
    if (!p.ok) TA_IGNORE("the test arena cannot hold the problem");
    const tinyattn::Scratch kt = tinyattn::Scratch::kTransposedKeys;
    TA_CHECK(calls(k, p, tinyattn::Mask::none(), false, kt).transposed == full_blocks_of(plain));
    TA_CHECK(calls(k, p, tinyattn::Mask::causal_top_left(), true, kt).transposed == full_blocks_of(plain));
    TA_CHECK(calls(k, p, tinyattn::Mask::none(), false).transposed == 0);  // the minimal workspace
    // Too few rows: the minimal path, whatever the workspace.
    const tinyattn::Dims few{kRows - 1, 40, 16, 8};
    Problem f = make_problem(few, 78 + pi);
    if (!f.ok) TA_IGNORE("the test arena cannot hold the problem");
    TA_CHECK(tinyattn::forward_workspace_bytes(few, false, kt) == tinyattn::forward_workspace_bytes(few, false));
    TA_CHECK(calls(k, f, tinyattn::Mask::none(), false, kt).transposed == 0);
    // Tiled path: every full block, every key tile (two tiles of 256 and one of 37).
    const tinyattn::Dims tiled{kRows, 2 * tinyattn::kKeyTile + 37, 8, 4};
    Problem t = make_problem(tiled, 79 + pi);
    if (!t.ok) TA_IGNORE("the test arena cannot hold the problem");
    TA_CHECK(calls(k, t, tinyattn::Mask::none(), false, kt).transposed == 3 * full_blocks_of(tiled));
    run_reference(t, tinyattn::Mask::none());
    const Result y = close(t.y, t.y_ref, tiled.y_elems(), kOutAtol * max_abs(t.v, tiled.v_elems()), kOutRtol);
    TA_CHECK_MSG(y.ok, "%s tiled: output %zu off by %g (bound %g)", tinyattn::port_name(port), y.index, y.worst,
                 y.bound);
  });
  if (ports_with == 0) TA_IGNORE("no port in this build has scores_block_transposed");
}
