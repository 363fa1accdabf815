// The call plan (lib/src/plan.h) as a table: shape, mask, outputs and
// workspace against the route, rows per call and key tile it must choose,
// for every port under test as built and with its optional kernels taken
// away (a port with no fixed-extent kernel, no fused block, or row
// primitives only), under this build's switches. fused_dispatch.cc checks
// that the kernels the plan names are the ones that run; `tinyattn explain`
// prints the same plan (tests/tool).
#include "plan.h"
#include "support.h"
#include "tatest.h"

using namespace tatest;
namespace td = tinyattn::detail;
using td::Route;
using td::Why;

namespace {

enum class MaskKind { kNone, kCausal, kWindow, kPadding, kPaddingAll, kBias };

// What a port's table offers, strongest first; the table test takes each
// port under test down to each kind it can be.
enum class Kind { kFixed, kFused, kBlocks, kRows };
constexpr Kind kKinds[] = {Kind::kFixed, Kind::kFused, Kind::kBlocks, Kind::kRows};
const char* kind_name(Kind k) {
  return k == Kind::kFixed ? "fixed" : k == Kind::kFused ? "fused" : k == Kind::kBlocks ? "blocks" : "rows";
}

struct PlanCase {
  const char* name;
  tinyattn::Dims d;
  MaskKind mask;
  bool weights;
  bool softcap;
  tinyattn::Scratch scratch;
  // The first route for a table of each kind (Kind's order), and for a
  // fixed-extent table where the workspace holds K^T (kTransposedKeys).
  Route expect[4];
  Route fixed_with_transposed_keys;
};

constexpr tinyattn::Scratch kMin = tinyattn::Scratch::kMinimal;
constexpr tinyattn::Scratch kKt = tinyattn::Scratch::kTransposedKeys;
constexpr Route kF = Route::kFixedExtent, kU = Route::kFusedBlocks, kB = Route::kBlocks, kTB = Route::kTiledBlocks,
                kR = Route::kRows, kTR = Route::kTiledRows;

// clang-format off
const PlanCase kCases[] = {
  // name                          dims                   mask                  weights softcap scratch  fixed fused blocks rows  fixed+K^T
  {"small plain",                  {8, 8, 16, 16},        MaskKind::kNone,       false, false, kMin, {kF, kU, kB, kR},  kF},
  {"small, default workspace",     {8, 8, 16, 16},        MaskKind::kNone,       false, false, kKt,  {kF, kU, kB, kR},  kF},
  {"fixed extents Dk != Dv",       {16, 16, 32, 64},      MaskKind::kNone,       false, false, kMin, {kF, kU, kB, kR},  kF},
  {"odd head dim",                 {16, 16, 26, 26},      MaskKind::kNone,       false, false, kMin, {kU, kU, kB, kR},  kU},
  {"key padding",                  {16, 16, 32, 32},      MaskKind::kPadding,    false, false, kMin, {kF, kU, kB, kR},  kF},
  {"key padding to no key",        {16, 16, 32, 32},      MaskKind::kPaddingAll, false, false, kMin, {kU, kU, kB, kR},  kU},
  {"causal",                       {16, 16, 32, 32},      MaskKind::kCausal,     false, false, kMin, {kU, kU, kB, kR},  kU},
  {"sliding window",               {16, 16, 32, 32},      MaskKind::kWindow,     false, false, kMin, {kU, kU, kB, kR},  kU},
  {"additive bias",                {16, 16, 32, 32},      MaskKind::kBias,       false, false, kMin, {kB, kB, kB, kR},  kB},
  {"weights requested",            {16, 16, 32, 32},      MaskKind::kNone,       true,  false, kMin, {kB, kB, kB, kR},  kB},
  {"softcap",                      {16, 16, 32, 32},      MaskKind::kNone,       false, true,  kMin, {kB, kB, kB, kR},  kB},
  {"one query row",                {1, 64, 16, 16},       MaskKind::kNone,       false, false, kMin, {kF, kU, kR, kR},  kF},
  {"one query row with weights",   {1, 64, 16, 16},       MaskKind::kNone,       true,  false, kMin, {kR, kR, kR, kR},  kR},
  {"rows enough for K^T",          {32, 40, 16, 16},      MaskKind::kNone,       false, false, kKt,  {kF, kU, kB, kR},  kU},
  {"K^T without its room",         {32, 40, 16, 16},      MaskKind::kNone,       false, false, kMin, {kF, kU, kB, kR},  kF},
  {"decode past one key tile",     {1, 300, 64, 64},      MaskKind::kNone,       false, false, kMin, {kTR, kTR, kTR, kTR}, kTR},
  {"long keys",                    {8, 600, 32, 32},      MaskKind::kNone,       false, false, kMin, {kTB, kTB, kTB, kTR}, kTB},
  {"long keys, causal",            {8, 600, 32, 32},      MaskKind::kCausal,     false, false, kMin, {kTB, kTB, kTB, kTR}, kTB},
  {"long keys with weights",       {8, 600, 32, 32},      MaskKind::kNone,       true,  false, kMin, {kB, kB, kB, kR},  kB},
  {"grouped heads",                {9, 40, 8, 64, 4, 2},  MaskKind::kNone,       false, false, kMin, {kF, kU, kB, kR},  kF},
};
// clang-format on

tinyattn::Mask mask_of(MaskKind k, const tinyattn::Dims& d, const float* bias) {
  switch (k) {
    case MaskKind::kCausal: return tinyattn::Mask::causal_top_left();
    case MaskKind::kWindow: return tinyattn::Mask::sliding_window(2, 2, tinyattn::Align::kTopLeft);
    case MaskKind::kPadding: return tinyattn::Mask::key_padding(static_cast<uint32_t>(d.m - 3));
    case MaskKind::kPaddingAll: return tinyattn::Mask::key_padding(0);
    case MaskKind::kBias: return tinyattn::Mask::additive(bias);
    case MaskKind::kNone: break;
  }
  return tinyattn::Mask::none();
}

// The port's table taken down to `kind`; false if the port has not that much.
bool as_kind(const tinyattn::KernelsF32& port, Kind kind, const tinyattn::Dims& d, tinyattn::KernelsF32* out) {
  *out = port;
  const int e = td::fixed_extent(d.dk, d.dv);
  const bool has_fixed = port.attend_fixed != nullptr && (e < 0 || port.attend_fixed[e] != nullptr);
  switch (kind) {
    case Kind::kFixed: return has_fixed && port.attend_block != nullptr;
    case Kind::kFused:
      out->attend_fixed = nullptr;
      return port.attend_block != nullptr;
    case Kind::kBlocks:
      out->attend_fixed = nullptr;
      out->attend_block = nullptr;
      return port.scores_block != nullptr && port.weighted_sum_block != nullptr;
    case Kind::kRows:
      out->attend_fixed = nullptr;
      out->attend_block = nullptr;
      out->scores_block_transposed = nullptr;
      out->scores_block = nullptr;
      out->weighted_sum_block = nullptr;
      return true;
  }
  return false;
}

}  // namespace

TA_CASE("plan: each shape, mask, output and workspace takes its route on every kind of port") {
  tinyattn::Port ports[kMaxPorts];
  const size_t n_ports = ports_under_test(ports);
  size_t checked = 0;
  static float bias[8 * 600];  // zeros: the plan reads only that there is a bias
  for (size_t pi = 0; pi < n_ports; ++pi) {
    const tinyattn::KernelsF32& port = *tinyattn::kernels_f32(ports[pi]);
    for (const PlanCase& c : kCases) {
      const tinyattn::Mask mask = mask_of(c.mask, c.d, bias);
      tinyattn::Options o;
      if (c.softcap) o.softcap = 30.0f;
      const td::CallTraits traits = td::call_traits(c.d, mask, o, c.weights);
      const size_t ws = tinyattn::forward_workspace_bytes(c.d, c.weights, c.scratch);
      for (size_t ki = 0; ki < 4; ++ki) {
        tinyattn::KernelsF32 table;
        if (!as_kind(port, kKinds[ki], c.d, &table)) continue;
        const td::ForwardPlan p = td::plan_forward(table, c.d, traits, ws, td::fixed_extent(c.d.dk, c.d.dv));
        // Without a fused port in the build, its routes are compiled out.
        const size_t kind = !td::kFusedBlocksBuilt && ki < 2 ? 2 : ki;
        Route want = c.expect[kind];
        if (kind == 0 && td::transposes_keys(table, c.d, c.weights, ws)) want = c.fixed_with_transposed_keys;
        TA_CHECK_MSG(p.first() == want, "%s, %s table of %s: route %s, want %s", c.name, kind_name(kKinds[ki]),
                     tinyattn::port_name(ports[pi]), td::route_name(p.first()), td::route_name(want));
        // Rows per call and key tile follow from the route.
        const size_t block = c.d.n < tinyattn::kBlockRows ? c.d.n : tinyattn::kBlockRows;
        const size_t fixed_rows =
            traits.keys.size() <= table.fixed_multi_block_keys ? td::kFixedExtentCallRows : tinyattn::kBlockRows;
        const size_t rows = want == kF                  ? (fixed_rows < c.d.n ? fixed_rows : c.d.n)
                            : want == kR || want == kTR ? 1
                                                        : block;
        const bool tiled = want == kTB || want == kTR;
        TA_CHECK_MSG(p.rows_per_call(c.d) == rows && p.key_tile == (tiled ? tinyattn::kKeyTile : c.d.m),
                     "%s, %s table of %s: %zu rows per call, key tile %zu", c.name, kind_name(kKinds[ki]),
                     tinyattn::port_name(ports[pi]), p.rows_per_call(c.d), p.key_tile);
        // A route other than the fixed extent says why not that one.
        if (want != kF) TA_CHECK_MSG(p.fixed_why != Why::kTaken, "%s: no reason given", c.name);
        ++checked;
      }
    }
  }
  TA_CHECK(checked >= sizeof kCases / sizeof kCases[0]);
}

TA_CASE("plan: a fused route falls back to blocks where the port has them, rows where not") {
  tinyattn::Port ports[kMaxPorts];
  const size_t n_ports = ports_under_test(ports);
  const tinyattn::Dims d{16, 16, 26, 26};
  const td::CallTraits traits = td::plain_call_traits(d);
  for (size_t pi = 0; pi < n_ports; ++pi) {
    const tinyattn::KernelsF32& port = *tinyattn::kernels_f32(ports[pi]);
    if (!td::kFusedBlocksBuilt || port.attend_block == nullptr) continue;
    const td::ForwardPlan p = td::plan_forward(port, d, traits, tinyattn::forward_workspace_bytes(d, false), -1);
    TA_CHECK((p.route == kU && p.fallback == kB));
    tinyattn::KernelsF32 no_blocks = port;
    no_blocks.scores_block = nullptr;
    const td::ForwardPlan q = td::plan_forward(no_blocks, d, traits, tinyattn::forward_workspace_bytes(d, false), -1);
    TA_CHECK((q.route == kU && q.fallback == kR));
  }
}

TA_CASE("plan: every route and reason has a name") {
  for (int r = 0; r <= static_cast<int>(Route::kTiledRows); ++r)
    TA_CHECK(td::route_name(static_cast<Route>(r))[0] != '?');
  for (int w = 0; w <= static_cast<int>(Why::kOneRow); ++w) TA_CHECK(td::why_text(static_cast<Why>(w))[0] != '?');
}
