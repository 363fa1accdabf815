// Which code runs an fp32 forward call: its plan, decided once per call by
// plan_forward() from the dims, what the mask and options ask, the port's
// kernel table and the workspace, under the build's switches
// (build_switches.h). forward(), Attention<S> (forward_compile_time.cc), the
// C API (through forward()) and the self-test run the plan; nothing else
// chooses. `tinyattn explain` prints it (tools/tool/explain.cc), and
// tests/kernels/plan_table.cc holds it to a table of shapes, ports and builds.
//
// The routes, fastest first where more than one applies:
//   kFixedExtent  the port's attend_fixed kernel of (Dk, Dv) (tinyattn/tiling.h),
//                 rows_per_call rows a call; every row sees the same keys
//   kFusedBlocks  the port's attend_block, a block of kBlockRows rows a call
//   kBlocks       scores_block (or scores_block_transposed from K^T in the
//                 workspace), the row softmax, weighted_sum_block
//   kTiledBlocks  blocks through key tiles of kKeyTile together, online softmax
//   kRows         the row core (row_core.h), a row at a time, whole rows
//   kTiledRows    the row core's online softmax, a row at a time
// Inputs decide the route; values decide only the fallbacks below (a kernel
// declines a block whose logits or outputs are not finite, a V with inf or
// NaN cannot go through a block product, a row may see no key).
#pragma once

#include <cstddef>
#include <cstdint>

#include "build_switches.h"
#include "tinyattn/attention.h"
#include "tinyattn/kernels.h"

namespace tinyattn {
namespace detail {

enum class Route : uint8_t { kFixedExtent, kFusedBlocks, kBlocks, kTiledBlocks, kRows, kTiledRows };

// Why the plan did not take a faster route: the first rule that ruled it out.
enum class Why : uint8_t {
  kTaken,               // the fastest route that applies
  kNoFusedPortBuilt,    // no port of this build has fused kernels (their code is left out)
  kExtentNotFixed,      // Dk or Dv is not one of 8, 16, 32, 64
  kPortHasNoKernel,     // the port's table has no kernel for it
  kWeightsRequested,    // ForwardIo::weights: the fused kernels keep the weights in registers
  kMaskPerRow,          // causal or window masks, element masks or a softcap
  kNoVisibleKey,        // the mask leaves no key (key padding 0)
  kKeysBeyondOneTile,   // M > kKeyTile
  kTransposedKeysFaster,  // the workspace holds K^T and N >= kTransposedKeysMinRows
  kTiled,               // the key-tiled online softmax (M > kKeyTile, no weights)
  kElementMasks,        // keep or bias arrays: applied between the products
  kSoftcap,             // Options::softcap: applied between the products
  kOneRow,              // N = 1: nothing to share between rows
};

// What a call asks for that decides its route, beyond its dims, port and workspace.
struct RouteTraits {
  bool weights = false;        // ForwardIo::weights
  bool element_masks = false;  // Mask::keep, keep_bits or bias
  bool softcap = false;        // Options::softcap
};
inline RouteTraits route_traits(const Mask& mask, bool softcap, bool weights) {
  RouteTraits r;
  r.weights = weights;
  r.element_masks = mask.keep != nullptr || mask.keep_bits != nullptr || mask.bias != nullptr;
  r.softcap = softcap;
  return r;
}
// ... and what decides whether a fixed-extent kernel can take the whole call.
struct CallTraits : RouteTraits {
  bool rows_share_keys = true;  // no causal or window mask: every row sees `keys`
  KeyRange keys{0, 0};          // the keys every row sees, where they share them
};

inline CallTraits call_traits(const Dims& d, const Mask& mask, const Options& o, bool weights) {
  CallTraits c;
  static_cast<RouteTraits&>(c) = route_traits(mask, static_cast<bool>(o.softcap), weights);
  c.rows_share_keys = mask.causal == Causal::kNone && !mask.window.active();
  // key_range() of such a mask, without its call: key padding at most.
  c.keys = !c.rows_share_keys ? KeyRange{0, 0} : mask.kv_len < d.m ? KeyRange{0, mask.kv_len} : KeyRange{0, d.m};
  return c;
}
// A plain call's (Mask{}, no softcap, no weights): every row sees every key.
inline CallTraits plain_call_traits(const Dims& d) {
  CallTraits c;
  c.keys = KeyRange{0, d.m};
  return c;
}

struct ForwardPlan {
  // First choice: a fixed-extent kernel for the whole call (null: none).
  // When a call of it declines, the whole call runs `route` from the start.
  bool (*fixed_kernel)(const AttendBlock&) = nullptr;
  int extent = -1;              // its index in KernelsF32::attend_fixed
  size_t fixed_rows = 0;        // rows per call of it
  KeyRange keys{0, 0};          // the keys every row sees
  Why fixed_why = Why::kTaken;  // why no fixed-extent kernel, when null
  // The driver's route, and the one a block (a head, for kTiledBlocks) takes
  // where route's kernel declines or cannot run it.
  Route route = Route::kRows;
  Route fallback = Route::kRows;
  Why route_why = Why::kTaken;  // why not a faster route
  bool transposed_keys = false;  // full blocks' scores from K^T in the workspace
  size_t key_tile = 0;           // keys per softmax pass: M, or kKeyTile when tiled

  // The route the call takes when no value makes it fall back.
  Route first() const { return fixed_kernel ? Route::kFixedExtent : route; }
  // Rows a kernel call takes (the first call's: the last may take fewer).
  size_t rows_per_call(const Dims& d) const;
};

// Whether forward() keeps a tile of the keys transposed (Scratch::kTransposedKeys):
// the dims allow it, the port can use it, and the caller gave room for it.
inline bool transposes_keys(const KernelsF32& kern, const Dims& d, bool with_weights, size_t ws_bytes) {
  return kTransposedKeysUsed && forward_transposes_keys(d, with_weights) && kern.scores_block_transposed != nullptr &&
         kern.scores_block != nullptr && kern.weighted_sum_block != nullptr &&
         ws_bytes >= forward_workspace_bytes(d, with_weights, Scratch::kTransposedKeys);
}

// The fixed-extent part of a plan: the kernel (null: none), rows per call,
// and why none. Returned whole, every field set on every path, so a caller
// that runs it at once keeps it in registers (the boards count every store).
struct FixedExtentPlan {
  bool (*kernel)(const AttendBlock&);
  size_t rows;
  Why why;
};
// extent: fixed_extent(Dk, Dv), a constant where the caller knows the shape
// at compile time.
TINYATTN_ALWAYS_INLINE FixedExtentPlan plan_fixed_extent(const KernelsF32& kern, const Dims& d, const CallTraits& c, size_t ws_bytes,
                                         int extent) {
  if (!kFusedBlocksBuilt) return {nullptr, 0, Why::kNoFusedPortBuilt};
  if (extent < 0) return {nullptr, 0, Why::kExtentNotFixed};
  bool (*const kernel)(const AttendBlock&) = kern.attend_fixed != nullptr ? kern.attend_fixed[extent] : nullptr;
  if (kernel == nullptr) return {nullptr, 0, Why::kPortHasNoKernel};
  if (c.weights) return {nullptr, 0, Why::kWeightsRequested};
  if (!c.rows_share_keys || c.element_masks || c.softcap) return {nullptr, 0, Why::kMaskPerRow};
  if (c.keys.empty()) return {nullptr, 0, Why::kNoVisibleKey};
  if (d.m > kKeyTile) return {nullptr, 0, Why::kKeysBeyondOneTile};
  // The generic blocks' broadcast products beat the fixed kernels' dot
  // products from N = 32 (14-15% at (128,128,64,64) and (256,256,64,64) on AVX-512).
  if (transposes_keys(kern, d, false, ws_bytes)) return {nullptr, 0, Why::kTransposedKeysFaster};
  // Several blocks a call where the port asks for them, else one.
  const size_t rows = kFixedExtentCallRows > kBlockRows && c.keys.size() <= kern.fixed_multi_block_keys
                          ? kFixedExtentCallRows
                          : kBlockRows;
  return {kernel, rows, Why::kTaken};
}

// The driver's route. kKeyTiles = false: the build of this call has no
// key-tiled code (an Attention<S> whose M fits one tile).
template <bool kKeyTiles = true>
inline void plan_route(const KernelsF32& kern, const Dims& d, const RouteTraits& c, size_t ws_bytes, ForwardPlan& p) {
  const bool tiled = kKeyTiles && forward_uses_tiles(d, c.weights);
  const bool blocks = kern.scores_block != nullptr && kern.weighted_sum_block != nullptr && d.n > 1;
  p.transposed_keys = transposes_keys(kern, d, c.weights, ws_bytes);
  p.key_tile = tiled ? kKeyTile : d.m;
  p.fallback = tiled ? Route::kTiledRows : Route::kRows;
  p.route_why = Why::kTaken;
  if (tiled) {
    p.route = blocks ? Route::kTiledBlocks : Route::kTiledRows;
    p.route_why = blocks ? Why::kTiled : d.n > 1 ? Why::kPortHasNoKernel : Why::kOneRow;
    return;
  }
  const bool fused_port = kFusedBlocksBuilt && kern.attend_block != nullptr;
  if (fused_port && !c.element_masks && !c.weights && !c.softcap) {
    p.route = Route::kFusedBlocks;
    p.fallback = blocks ? Route::kBlocks : Route::kRows;
    return;
  }
  p.route_why = !kFusedBlocksBuilt   ? Why::kNoFusedPortBuilt
                : !fused_port        ? Why::kPortHasNoKernel
                : c.element_masks    ? Why::kElementMasks
                : c.weights          ? Why::kWeightsRequested
                                     : Why::kSoftcap;
  if (blocks) {
    p.route = Route::kBlocks;
    return;
  }
  p.route = Route::kRows;
  if (d.n == 1) p.route_why = Why::kOneRow;
}

// The whole plan of a validated call.
template <bool kKeyTiles = true>
inline ForwardPlan plan_forward(const KernelsF32& kern, const Dims& d, const CallTraits& c, size_t ws_bytes,
                                int extent) {
  ForwardPlan p;
  const FixedExtentPlan f = plan_fixed_extent(kern, d, c, ws_bytes, extent);
  p.fixed_kernel = f.kernel;
  p.fixed_rows = f.rows;
  p.fixed_why = f.why;
  p.extent = extent;
  p.keys = c.keys;
  plan_route<kKeyTiles>(kern, d, c, ws_bytes, p);
  return p;
}

inline size_t ForwardPlan::rows_per_call(const Dims& d) const {
  if (fixed_kernel) return fixed_rows < d.n ? fixed_rows : d.n;
  if (route == Route::kRows || route == Route::kTiledRows) return 1;
  return d.n < kBlockRows ? d.n : kBlockRows;
}

// Names for the host tool's `explain` and the tests' messages (plan.cc).
const char* route_name(Route r);
const char* why_text(Why w);

}  // namespace detail
}  // namespace tinyattn
