// Which optional primitives forward() uses for which blocks: the fused block
// (KernelsF32::attend_block) and the transposed-keys scores
// (scores_block_transposed). White box, through the driver's entry point on
// an explicit table (lib/src/plan.h): the port's own table with those two
// wrapped to count their calls. Both paths are switched by the build and the
// workspace, so a build or driver change that loses one fails here instead of
// silently running the slower composed path.
#include <cmath>
#include <cstring>
#include <limits>

#include "detail.h"
#include "forward_core.h"
#include "plan.h"
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

size_t g_fixed_calls = 0;

template <size_t kEntry>
bool counting_attend_fixed(const tinyattn::AttendBlock& b) {
  ++g_fixed_calls;
  return g_port->attend_fixed[kEntry](b);
}

// The port's first kCount attend_fixed entries wrapped to count their calls
// (null where the port's are). Recursive rather than std::index_sequence:
// the freestanding subset of RV32 builds has no <utility>.
template <size_t kCount>
void count_fixed(const tinyattn::KernelsF32& table, bool (**out)(const tinyattn::AttendBlock&)) {
  if constexpr (kCount > 0) {
    count_fixed<kCount - 1>(table, out);
    out[kCount - 1] = table.attend_fixed[kCount - 1] ? counting_attend_fixed<kCount - 1> : nullptr;
  } else {
    (void)table;
    (void)out;
  }
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
  tinyattn::detail::run_route(counted, p.d, io, {ws, bytes}, mask, scale, 0.0f);
  return {g_attend_calls, g_transposed_calls};
}

size_t blocks_of(const tinyattn::Dims& d) {
  return d.hq * ((d.n + tinyattn::kBlockRows - 1) / tinyattn::kBlockRows);
}

// The fixed-extent driver's calls for rows that see `keys` keys: several
// blocks per call where the port takes them (KernelsF32::fixed_multi_block_keys),
// then a block per call, the last one short.
size_t fixed_calls_of(const tinyattn::Dims& d, const tinyattn::KernelsF32& k, size_t keys) {
  const size_t step = keys <= k.fixed_multi_block_keys ? tinyattn::detail::kFixedExtentCallRows : tinyattn::kBlockRows;
  size_t calls = 0;
  for (size_t i = 0; i < d.n; ++calls) {
    const size_t left = d.n - i;
    i += left >= step ? step : left >= tinyattn::kBlockRows ? tinyattn::kBlockRows : left;
  }
  return d.hq * calls;
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

namespace {

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

// The fixed-extent part of the call's plan, run on the port's table with its
// attend_fixed entries counted: whether it took the call, and how many
// blocks it gave the entry.
struct Whole {
  bool taken;
  size_t calls;
};
Whole whole(const tinyattn::KernelsF32& table, Problem& p, const tinyattn::Mask& mask, bool with_weights,
            float softcap = 0.0f, tinyattn::Scratch scratch = tinyattn::Scratch::kMinimal) {
  bool (*entries[tinyattn::detail::kFixedExtents])(const tinyattn::AttendBlock&) = {};
  count_fixed<tinyattn::detail::kFixedExtents>(table, entries);
  tinyattn::KernelsF32 counted = table;
  counted.attend_fixed = entries;
  g_port = &table;
  g_fixed_calls = 0;
  const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, with_weights ? p.weights : nullptr, p.lse};
  const tinyattn::Workspace ws{p.workspace, tinyattn::forward_workspace_bytes(p.d, true, scratch)};
  tinyattn::Options o;
  if (softcap != 0.0f) o.softcap = softcap;
  namespace td = tinyattn::detail;
  const td::ForwardPlan plan = td::plan_forward(counted, p.d, td::call_traits(p.d, mask, o, with_weights), ws.bytes,
                                                td::fixed_extent(p.d.dk, p.d.dv));
  const bool taken = plan.fixed_kernel != nullptr &&
                     td::run_fixed_extent(plan.fixed_kernel, plan.fixed_rows, plan.keys.lo, plan.keys.size(), p.d, io, ws,
                                          tinyattn::effective_scale(p.d, o));
  return {taken, g_fixed_calls};
}

}  // namespace

// The whole-call path of forward() and Attention<S> at the fixed extents:
// which calls it takes (every block to the port's attend_fixed entry, in as
// many calls as fixed_multi_block_keys makes) and
// which it leaves to the block driver, its outputs against the reference,
// and, where a block holds an inf or NaN (the kernel declines), the block
// driver's outputs to the bit.
TA_CASE("forward: calls at the fixed extents without masks or weights go to attend_fixed, a block or a few at a time") {
  using tinyattn::KernelsF32;
  const size_t ports_with = for_ports_with(&KernelsF32::attend_fixed, [](tinyattn::Port port, size_t pi,
                                                                        const KernelsF32& k) {
    const tinyattn::Dims dims[] = {{8, 8, 16, 16}, {16, 16, 32, 32}, {9, 40, 8, 64, 4, 2}, {5, 7, 64, 8, 2, 2}};
    for (const tinyattn::Dims& d : dims) {
      Arena::Scope scope;
      Problem p = make_problem(d, 900 + pi);
      if (!p.ok) TA_IGNORE("the test arena cannot hold the problem");
      const tinyattn::Mask taken[] = {tinyattn::Mask::none(), tinyattn::Mask::key_padding(static_cast<uint32_t>(d.m - 2))};
      for (const tinyattn::Mask& mask : taken) {
        const Whole w = whole(k, p, mask, false);
        const size_t keys = mask.kv_len < d.m ? mask.kv_len : d.m;
        TA_CHECK_MSG(w.taken && w.calls == fixed_calls_of(d, k, keys),
                     "%s (%zu,%zu,%zu,%zu): taken %d, %zu calls", tinyattn::port_name(port), d.n, d.m, d.dk, d.dv,
                     w.taken, w.calls);
        run_reference(p, mask);
        const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * max_abs(p.v, d.v_elems()), kOutRtol);
        TA_CHECK_MSG(y.ok, "%s: output %zu off by %g (bound %g)", tinyattn::port_name(port), y.index, y.worst,
                     y.bound);
        const Result l = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5, 1e-5);
        TA_CHECK_MSG(l.ok, "%s: lse %zu off by %g", tinyattn::port_name(port), l.index, l.worst);
      }
      // Left to the block driver: masks that differ per row or per element, weights, softcap.
      float* bias = alloc<float>(d.n * d.m);
      if (!bias) TA_IGNORE("the test arena cannot hold the bias");
      for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
      TA_CHECK(!whole(k, p, tinyattn::Mask::causal_top_left(), false).taken);
      TA_CHECK(!whole(k, p, tinyattn::Mask::sliding_window(1, 1, tinyattn::Align::kTopLeft), false).taken);
      TA_CHECK(!whole(k, p, tinyattn::Mask::additive(bias), false).taken);
      TA_CHECK(!whole(k, p, tinyattn::Mask::none(), true).taken);
      TA_CHECK(!whole(k, p, tinyattn::Mask::none(), false, 5.0f).taken);
      TA_CHECK(g_fixed_calls == 0);

      // An inf or NaN in a block: declined, and forward() gives the block
      // driver's outputs (a table without attend_fixed) to the bit.
      float* y_fixed = alloc<float>(d.y_elems());
      float* lse_fixed = alloc<float>(d.lse_elems());
      if (!y_fixed || !lse_fixed) TA_IGNORE("the test arena cannot hold the outputs");
      for (int what = 0; what < 3; ++what) {
        Problem b = make_problem(d, 950 + pi);
        if (!b.ok) TA_IGNORE("the test arena cannot hold the problem");
        if (what == 0) b.v[(d.m / 2) * d.dv] = std::numeric_limits<float>::infinity();
        if (what == 1) b.q[d.dk + 1] = std::numeric_limits<float>::quiet_NaN();
        if (what == 2) b.q[0] = 3e38f, b.k[0] = 3e38f;
        tinyattn::Options o;
        o.port = port;
        const tinyattn::Workspace ws{b.workspace, tinyattn::forward_workspace_bytes(d, true)};
        TA_CHECK(tinyattn::forward(d, {b.q, b.k, b.v, y_fixed, nullptr, lse_fixed}, ws, {}, o) == tinyattn::Status::kOk);
        KernelsF32 generic = k;
        generic.attend_fixed = nullptr;
        tinyattn::detail::run_route(generic, d, {b.q, b.k, b.v, b.y, nullptr, b.lse}, ws, {},
                                    1.0f / std::sqrt(static_cast<float>(d.dk)), 0.0f);
        TA_CHECK_MSG(same_bits(y_fixed, b.y, d.y_elems()) && same_bits(lse_fixed, b.lse, d.lse_elems()),
                     "%s (%zu,%zu,%zu,%zu) non-finite case %d: forward() differs from the block driver",
                     tinyattn::port_name(port), d.n, d.m, d.dk, d.dv, what);
      }
    }
    // With room for the transposed keys (the default workspace) and rows
    // enough, the generic blocks take the call: their broadcast products
    // beat the fixed kernels' dot products there (docs/performance.md).
    {
      const tinyattn::Dims d{tinyattn::kTransposedKeysMinRows, 40, 16, 16};
      Arena::Scope scope;
      Problem p = make_problem(d, 970 + pi);
      if (!p.ok) TA_IGNORE("the test arena cannot hold the problem");
      const bool transposes = tinyattn::kTransposedKeysBuilt && k.scores_block_transposed != nullptr;
      TA_CHECK(whole(k, p, tinyattn::Mask::none(), false).taken);
      TA_CHECK_MSG(whole(k, p, tinyattn::Mask::none(), false, 0.0f, tinyattn::kDefaultScratch).taken != transposes,
                   "%s: the default workspace at N = %zu", tinyattn::port_name(port), d.n);
    }
    // Attention<S> takes its entry from S at compile time: the same bits as forward().
    using S = tinyattn::Shape<9, 12, 16, 32, 4, 2>;
    static tinyattn::Attention<S> attn;
    static typename tinyattn::Attention<S>::Q q;
    static typename tinyattn::Attention<S>::K kk;
    static typename tinyattn::Attention<S>::V v;
    static typename tinyattn::Attention<S>::Y y;
    static typename tinyattn::Attention<S>::Lse lse;
    static typename tinyattn::Attention<S>::Y y_plain;
    Rng rng(960 + pi);
    rng.fill_normal(q.data(), q.size());
    rng.fill_normal(kk.data(), kk.size());
    rng.fill_normal(v.data(), v.size());
    const tinyattn::Dims d = S::dims;
    float* y2 = alloc<float>(d.y_elems());
    float* lse2 = alloc<float>(d.lse_elems());
    unsigned char* ws = alloc<unsigned char>(tinyattn::forward_workspace_bytes(d));
    if (!y2 || !lse2 || !ws) TA_IGNORE("the test arena cannot hold the outputs");
    tinyattn::Options o;
    o.port = port;
    // Finite, then an inf in V and a NaN in Q (the kernel declines a block
    // and both APIs fall back to the block driver).
    for (int what = 0; what < 3; ++what) {
      if (what == 1) v[(S::kM / 2) * S::kDv + 1] = std::numeric_limits<float>::infinity();
      if (what == 2) q[S::kDk + 3] = std::numeric_limits<float>::quiet_NaN();
      TA_CHECK(attn(q, kk, v, y, lse, {}, nullptr, o) == tinyattn::Status::kOk);
      TA_CHECK(tinyattn::forward(d, {q.data(), kk.data(), v.data(), y2, nullptr, lse2},
                                 {ws, tinyattn::forward_workspace_bytes(d)}, {}, o) == tinyattn::Status::kOk);
      TA_CHECK_MSG(same_bits(y.data(), y2, d.y_elems()) && same_bits(lse.data(), lse2, d.lse_elems()),
                   "%s: Attention<S> and forward() differ (case %d)", tinyattn::port_name(port), what);
      // The plain call, attn(q, k, v, y) (its own entry, on the default
      // port): the bits of forward() called without Options.
      TA_CHECK(attn(q, kk, v, y_plain) == tinyattn::Status::kOk);
      TA_CHECK(tinyattn::forward(d, {q.data(), kk.data(), v.data(), y2, nullptr, nullptr},
                                 {ws, tinyattn::forward_workspace_bytes(d)}) == tinyattn::Status::kOk);
      TA_CHECK_MSG(same_bits(y_plain.data(), y2, d.y_elems()),
                   "attn(q, k, v, y) and forward() differ (case %d)", what);
    }
  });
  if (ports_with == 0) TA_IGNORE("no port in this build has attend_fixed");
}

namespace {

// Attention<S>'s plain call at a square fixed extent on full blocks runs on
// default_kernels_f32_extent<E>(): finite calls give forward()'s bits (the
// port's fixed-extent kernel takes them), calls the kernel declines give
// that table's block driver's bits (its fallback kernels).
template <size_t kD>
void check_extent_entry() {
  using S = tinyattn::Shape<8, 12, kD, kD, 2, 1>;
  using A = tinyattn::Attention<S>;
  constexpr int kExtent = tinyattn::detail::fixed_extent(kD, kD);
  static_assert(tinyattn::kTransposedKeysBuilt ? !tinyattn::forward_transposes_keys(S::dims, false) : true,
                "a shape the extent entry takes");
  const tinyattn::KernelsF32* cut = tinyattn::default_kernels_f32_extent<kExtent>();
  const tinyattn::KernelsF32* whole = tinyattn::default_kernels_f32();
  TA_CHECK((cut != nullptr && whole != nullptr));
  if (!cut || !whole) return;
  // The table is the default port's, or a cut of it: no generic fused block,
  // and that extent's fused kernel alone where the port has fused kernels.
  if (cut != whole) {
    TA_CHECK_MSG(std::strcmp(cut->port, whole->port) == 0 && cut->attend_block == nullptr &&
                     (whole->attend_fixed == nullptr) == (cut->attend_fixed == nullptr) &&
                     (cut->attend_fixed == nullptr || cut->attend_fixed[kExtent] != nullptr),
                 "%s: the extent table of (%zu, %zu)", whole->port, kD, kD);
    for (size_t e = 0; e < tinyattn::detail::kFixedExtents && cut->attend_fixed; ++e)
      TA_CHECK((static_cast<int>(e) == kExtent || cut->attend_fixed[e] == nullptr));
  }
  static A attn;
  static typename A::Q q;
  static typename A::K k;
  static typename A::V v;
  static typename A::Y y;
  const tinyattn::Dims d = S::dims;
  float* y2 = alloc<float>(d.y_elems());
  unsigned char* ws = alloc<unsigned char>(tinyattn::forward_workspace_bytes(d, true));
  if (!y2 || !ws) TA_IGNORE("the test arena cannot hold the outputs");
  Rng rng(990 + kD);
  rng.fill_normal(q.data(), q.size());
  rng.fill_normal(k.data(), k.size());
  rng.fill_normal(v.data(), v.size());
  for (int what = 0; what < 4; ++what) {
    if (what == 1) v[(S::kM / 2) * S::kDv + 1] = std::numeric_limits<float>::infinity();
    if (what == 2) q[S::kDk + 3] = std::numeric_limits<float>::quiet_NaN();
    if (what == 3) q[0] = 3e38f, k[0] = 3e38f;
    TA_CHECK(attn(q, k, v, y) == tinyattn::Status::kOk);
    if (what == 0) {
      TA_CHECK(tinyattn::forward(d, {q.data(), k.data(), v.data(), y2, nullptr, nullptr},
                                 {ws, tinyattn::forward_workspace_bytes(d)}) == tinyattn::Status::kOk);
    } else {
      tinyattn::detail::run_route(*cut, d, {q.data(), k.data(), v.data(), y2, nullptr, nullptr},
                                  {ws, tinyattn::forward_workspace_bytes(d, true)}, {},
                                  tinyattn::detail::default_scale_of(kD), 0.0f);
    }
    TA_CHECK_MSG(same_bits(y.data(), y2, d.y_elems()),
                 "%s (8,12,%zu,%zu): attn(q, k, v, y) differs from %s (case %d)", whole->port, kD, kD,
                 what == 0 ? "forward()" : "its table's block driver", what);
  }
}

}  // namespace

TA_CASE("Attention<S>: the plain call at a square fixed extent runs on the extent's table") {
  Arena::Scope scope;
  check_extent_entry<8>();
  check_extent_entry<16>();
  check_extent_entry<32>();
  check_extent_entry<64>();
}
