// The names of the call plan's routes and reasons (plan.h).
#include "plan.h"

namespace tinyattn {
namespace detail {

const char* route_name(Route r) {
  switch (r) {
    case Route::kFixedExtent: return "fixed-extent";
    case Route::kFusedBlocks: return "fused-blocks";
    case Route::kBlocks: return "blocks";
    case Route::kTiledBlocks: return "tiled-blocks";
    case Route::kRows: return "rows";
    case Route::kTiledRows: return "tiled-rows";
  }
  return "?";
}

const char* why_text(Why w) {
  switch (w) {
    case Why::kTaken: return "the fastest route that applies";
    case Why::kNoFusedPortBuilt: return "no port of this build has fused kernels";
    case Why::kExtentNotFixed: return "Dk or Dv is not one of 8, 16, 32, 64";
    case Why::kPortHasNoKernel: return "the port has no kernel for it";
    case Why::kWeightsRequested: return "the weights are requested";
    case Why::kMaskPerRow: return "a causal, window or element mask, or a softcap";
    case Why::kNoVisibleKey: return "the mask leaves no key";
    case Why::kKeysBeyondOneTile: return "M is over one key tile (256)";
    case Why::kTransposedKeysFaster: return "the workspace holds K^T and N >= 32: the blocks' broadcast products are faster";
    case Why::kTiled: return "M is over one key tile and no weights are requested: the online softmax";
    case Why::kElementMasks: return "keep or bias arrays, applied between the products";
    case Why::kSoftcap: return "a softcap, applied between the products";
    case Why::kOneRow: return "N = 1: no rows to share keys with";
  }
  return "?";
}

}  // namespace detail
}  // namespace tinyattn
