// Every compile-time switch of the drivers, in one place: what a build for
// this target leaves out of the image, and so which routes the call plan
// (plan.h) can choose. The workspace formula's own switch,
// kTransposedKeysBuilt, is public (tinyattn/tiling.h).
#pragma once

#include "tinyattn/kernels.h"
#include "tinyattn/tiling.h"

// Whether any port compiled into this build has the optional fused block
// (KernelsF32::attend_block), fixed-extent kernels and transposed-key scores:
// the build defines it from the port list (ports/CMakeLists.txt). Where none
// has (the boards' scalar and DSP builds) their driver code is left out of
// the image, which the Cortex-M code size needs.
// Every file that includes this one must see the same value (the drivers'
// inline code depends on it): the build puts it on tinyattn::contract.
#ifndef TINYATTN_BUILT_FUSED_BLOCKS
#ifdef __CPPCHECK__  // static analysis reads the sources without a build
#define TINYATTN_BUILT_FUSED_BLOCKS 0
#else
#error "TINYATTN_BUILT_FUSED_BLOCKS is not defined: link the target to tinyattn::contract"
#endif
#endif

// Microcontroller builds (M-profile Arm, bare-metal RISC-V), where frames
// and flash count before nanoseconds.
#if (defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M') || (defined(__riscv) && !defined(__linux__))
#define TINYATTN_MICROCONTROLLER 1
#else
#define TINYATTN_MICROCONTROLLER 0
#endif

// Inlined into its caller whatever the compiler's size estimate: the call
// plan's code on the plain calls' paths (plan.h, forward_core.h), whose
// frames the rest of this file's switches decide.
#if defined(__GNUC__)
#define TINYATTN_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TINYATTN_ALWAYS_INLINE inline
#endif

// The plain calls' fast paths: the block loop inlined where the pointers
// then reach the blocks in registers (the small shapes' blocks are bound by
// a chain of latencies that starts at their first loads), and forward()'s
// quick check of its usual call. Not on microcontrollers: there the loop
// keeps a frame of its own (the board stack bound, docs/hardening.md) and
// the quick check, 480 bytes at -Os on the Cortex-M7, is left out.
// The other calls' plan, run (run_checked, forward_core.h), the other way
// round: a frame of its own on hosted builds, where inlined, its loops'
// registers and saves slowed the quick path beside it (4 ns of 80 at
// (8,8,16,16) on AVX-512); inlined on microcontrollers, which have no quick
// path, for one frame less on the board stack bound.
#if defined(__GNUC__) && !TINYATTN_MICROCONTROLLER
#define TINYATTN_BLOCK_LOOP inline __attribute__((always_inline))
#define TINYATTN_CHECKED_CALL inline TINYATTN_NOINLINE
#else
#define TINYATTN_BLOCK_LOOP inline TINYATTN_NOINLINE
#define TINYATTN_CHECKED_CALL TINYATTN_ALWAYS_INLINE
#endif

namespace tinyattn {
namespace detail {

inline constexpr bool kFusedBlocksBuilt = TINYATTN_BUILT_FUSED_BLOCKS != 0;
// Transposed keys: also not for M-profile cores, where their bookkeeping
// would cost the board stack bound (docs/hardening.md).
inline constexpr bool kTransposedKeysUsed = kFusedBlocksBuilt && kTransposedKeysBuilt;
#if defined(__GNUC__) && !TINYATTN_MICROCONTROLLER
inline constexpr bool kFastPlainPaths = true;
#else
inline constexpr bool kFastPlainPaths = false;
#endif
// Rows per attend_fixed call at most: several blocks where the port takes
// them (KernelsF32::fixed_multi_block_keys) on the builds with the fast plain
// paths; one block on microcontrollers, whose stack holds the max and sum.
inline constexpr size_t kFixedExtentCallRows = kFastPlainPaths ? kFixedRowsAtOnce : kBlockRows;
static_assert(kFixedExtentCallRows % kBlockRows == 0, "whole blocks per call");
// No M-profile port has softmax_short_rows: their builds leave the branch,
// and its arrays, out of softmax_rows' frame (the board stack bound).
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
inline constexpr bool kShortRowsUsed = false;
#else
inline constexpr bool kShortRowsUsed = true;
#endif

}  // namespace detail
}  // namespace tinyattn
