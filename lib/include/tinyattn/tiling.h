// How forward() tiles a call: the constants its workspace size is made of
// (forward_workspace_bytes, tinyattn/attention.h) and the extents the ports
// specialise for. One small header, so the public API and the port contract
// (lib/contract) read the same numbers without including each other.
#pragma once

#include <cstddef>

namespace tinyattn {

// Alignment the library gives its scratch arrays (it aligns inside the
// workspace itself, so callers may pass any pointer; the slack is included).
inline constexpr size_t kWorkspaceAlign = 64;

constexpr size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Keys are processed in tiles of this many when the weights are not requested
// and M is larger (online softmax, FlashAttention style): the workspace then
// stays O(kKeyTile + Dv) however long the key sequence. With M <= kKeyTile, or
// when the weights are requested, each row's scores are kept whole (one pass
// over the keys, no rescaling) -- measured faster for short rows.
inline constexpr size_t kKeyTile = 256;

// Query rows forward() carries through the softmax together: the ports' block
// primitives take this many at once, and the workspace holds this many rows.
inline constexpr size_t kBlockRows = 4;

// forward() transposes keys (Scratch::kTransposedKeys) only for N >= this
// many query rows: the transposition moves each key element once, against N
// multiply-adds (at N = 16 and 32 it measured no faster, at 64 to 256 about
// 10%).
inline constexpr size_t kTransposedKeysMinRows = 32;

// Whether builds for this target have the transposed keys at all: not on
// M-profile cores (Cortex-M), where the SIMD port is Helium, the ports with
// scores_block_transposed run emulated vectors, and RAM and stack are scarce.
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
inline constexpr bool kTransposedKeysBuilt = false;
#else
inline constexpr bool kTransposedKeysBuilt = true;
#endif

// The fixed extents: Dk and Dv each one of 8, 16, 32, 64, for which the SIMD
// ports have fused kernels with fixed trip counts and unrolled tiles
// (KernelsF32::attend_fixed). The index of (Dk, Dv) in the ports' tables, or
// -1. The SIMD ports compile Dk = Dv of these; other pairs' entries are
// their generic fused block. Not API: the ports' and the driver's.
namespace detail {
inline constexpr size_t kFixedExtentWidths = 4;
inline constexpr size_t kFixedExtents = kFixedExtentWidths * kFixedExtentWidths;
constexpr int fixed_width_index(size_t w) { return w == 8 ? 0 : w == 16 ? 1 : w == 32 ? 2 : w == 64 ? 3 : -1; }
constexpr int fixed_extent(size_t dk, size_t dv) {
  return fixed_width_index(dk) < 0 || fixed_width_index(dv) < 0
             ? -1
             : fixed_width_index(dk) * static_cast<int>(kFixedExtentWidths) + fixed_width_index(dv);
}
}  // namespace detail

}  // namespace tinyattn
