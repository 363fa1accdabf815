// KernelsF32::attend_fixed: the fused block compiled for Dk = Dv = 8, 16,
// 32, 64 (AttendFixed<kD>), calls of several blocks (EachBlock,
// fixed_multi_block_keys) and the table of entries, on every target but
// SCALAR. The x86 kernels it picks from are in x86-inl.h. Included once per
// target by highway_kernels.cc.

// Per-target include guard: foreach_target.h includes highway_kernels.cc,
// and with it this file, once per target (HWY_TARGET_TOGGLE flips each time).
#if defined(TINYATTN_HIGHWAY_FIXED_EXTENTS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TINYATTN_HIGHWAY_FIXED_EXTENTS_INL_H_
#undef TINYATTN_HIGHWAY_FIXED_EXTENTS_INL_H_
#else
#define TINYATTN_HIGHWAY_FIXED_EXTENTS_INL_H_
#endif

#include <hwy/highway.h>

#include "blocks-inl.h"
#include "port.h"
#include "tinyattn/kernels.h"
#include "x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tinyattn {
namespace highway {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// f(block) for each block of a call of several (KernelsF32::fixed_multi_block_keys),
// up to the first that declines.
template <class F>
HWY_INLINE bool EachBlock(const AttendBlock& b, const F& f) {
  AttendBlock block = b;
  block.rows = kBlockRows;
  for (size_t r0 = 0; r0 < b.rows; r0 += kBlockRows) {
    if (!f(block)) return false;
    block.q += kBlockRows * b.ldq;
    block.y += kBlockRows * b.ldy;
    block.max += kBlockRows;
    block.sum += kBlockRows;
    if (block.own) block.own += 2 * kBlockRows;
  }
  return true;
}

// The entries of the other extents: the generic block, block by block.
bool AttendOtherExtent(const AttendBlock& b) {
  return b.rows <= kBlockRows ? AttendBlockKernel(b) : EachBlock(b, AttendBlockKernel);
}

template <size_t kD>
bool AttendFixed(const AttendBlock& b);

// A call of several blocks at Dk = Dv = kD that AttendColumns does not
// take: pipelined where the keys fit one vector (AVX2), else block by block.
template <size_t kD>
HWY_NOINLINE bool AttendFixedBlocks(const AttendBlock& b) {
#if TINYATTN_HWY_SUM8 && HWY_TARGET == HWY_AVX2
  if (b.count <= kMultiBlockKeys && b.own == nullptr && b.kt == nullptr)
    return AttendFewBlocks<kD, kD>(b, b.rows / kBlockRows);
#endif
  return EachBlock(b, AttendFixed<kD>);
}

// Full blocks (kBlockRows rows, where the time of a call goes) at Dk = Dv =
// kD. A short last block (N % 4 rows) and blocks with key ranges or K^T take
// the generic fused block: an entry per row count and per (Dk, Dv) pair
// multiplied the code of every target by 16 for shapes that spend little
// time there (its compile under ASan was most of the sanitizer build).
template <size_t kD>
bool AttendFixed(const AttendBlock& b) {
#if TINYATTN_HWY_SUM8
  if ((HWY_TARGET != HWY_AVX2 || kD <= 16) && b.rows == kFixedRowsAtOnce && b.count <= kMultiBlockKeys &&
      b.own == nullptr && b.kt == nullptr)
    return AttendColumns<kD>(b);
#endif
  if (b.rows > kBlockRows) return AttendFixedBlocks<kD>(b);
  if (b.rows != kBlockRows || b.own != nullptr || b.kt != nullptr) return AttendBlockKernel(b);
#if TINYATTN_HWY_SUM8
  if (b.count <= 8) return AttendFew<kBlockRows, 1, kD, kD>(b);
  if (b.count <= 16) return AttendFew<kBlockRows, 2, kD, kD>(b);
#endif
  return AttendRows<kBlockRows, true>(b, kD, kD);
}

constexpr SquareFixedExtents kAttendFixed =
    square_fixed_extents(AttendOtherExtent, AttendFixed<8>, AttendFixed<16>, AttendFixed<32>, AttendFixed<64>);

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace highway
}  // namespace tinyattn
HWY_AFTER_NAMESPACE();

#endif  // TINYATTN_HIGHWAY_FIXED_EXTENTS_INL_H_
