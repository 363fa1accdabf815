// KernelsF32 written once with Highway. Under TINYATTN_HWY_DYNAMIC this file is
// compiled once per target by foreach_target.h (HWY_TARGET_INCLUDE is found
// through this folder on the include path); otherwise only the static target.
// Each target builds its own table, so dispatch happens once per kernels_f32()
// call, not once per kernel call.
// The kernels live in one -inl.h per family, laid out as Highway lays out its
// own code (per-target include guards, so each is compiled once per target
// with this file):
//   rows-inl.h           the row primitives, the exp polynomial, the short rows
//   x86-inl.h            Sum8 and the fused kernels of AVX2, AVX3 and AVX3_DL
//   blocks-inl.h         the four-row register tiles and the generic fused block
//   fixed_extents-inl.h  attend_fixed: the fused block for Dk = Dv = 8 ... 64
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "highway_kernels.cc"
#if TINYATTN_HWY_DYNAMIC
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#endif
#include <hwy/highway.h>

#include "blocks-inl.h"
#include "fixed_extents-inl.h"
#include "highway.h"
#include "port.h"
#include "rows-inl.h"
#include "x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tinyattn {
namespace highway {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr KernelsF32 MakeTable() {
  KernelsF32 t{};
  t.port = "highway";
  t.simd_target = SimdTarget;
  t.scores = Scores;
  t.row_max = RowMax;
  t.exp_shift_sum = ExpShiftSum;
  t.weighted_sum = WeightedSum;
  t.axpy = Axpy;
  t.scale = Scale;
  t.exp = Exp;
#if HWY_TARGET != HWY_SCALAR  // one lane: a register tile gains nothing over the row kernels
  t.scores_block = ScoresBlock;
  t.weighted_sum_block = WeightedSumBlock;
  t.attend_block = AttendBlockKernel;
  t.scores_block_transposed = ScoresBlockTransposed;
  t.attend_fixed = kAttendFixed.entry;
#if !HWY_HAVE_SCALABLE
  t.softmax_short_rows = SoftmaxShortRows;
  t.short_rows_max = 2 * hn::MaxLanes(D());
#endif
#if TINYATTN_HWY_SUM8
  t.fixed_multi_block_keys = kMultiBlockKeys;
#endif
#endif  // HWY_TARGET != HWY_SCALAR
  return t;
}

const KernelsF32* Table() {
  static constexpr KernelsF32 kTable = MakeTable();
  return &kTable;
}

// Defined per target by the -inl.h files; the next target defines them anew.
#undef TINYATTN_HWY_SUM4
#undef TINYATTN_HWY_SUM8

}  // namespace HWY_NAMESPACE
}  // namespace highway
}  // namespace tinyattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tinyattn {
namespace highway {

#if TINYATTN_HWY_DYNAMIC
HWY_EXPORT(Table);
// HWY_DYNAMIC_DISPATCH(Table) with hwy::GetChosenTarget()'s object, which
// lives as long as the process, asked for once: a call into libhwy on every
// lookup cost a 16-float softmax() about 2 ns of its 15. The chosen target
// is still read on every call, so one chosen again (DisableTargets,
// SetSupportedTargetsForTest) is seen.
const KernelsF32& kernels_f32() {
  // NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): Highway's own dispatch state, only read here
  static hwy::ChosenTarget& chosen = hwy::GetChosenTarget();
  return *HWY_DISPATCH_TABLE(Table)[chosen.GetIndex()]();
}
#else
const KernelsF32& kernels_f32() { return *HWY_STATIC_DISPATCH(Table)(); }
#endif

}  // namespace highway

template <>
const KernelsF32* port_kernels_f32<Port::kHighway>() {
  return &highway::kernels_f32();
}
// Attention<S>'s plain calls run on the whole table: host images are not
// short of flash.
TINYATTN_PORT_EXTENT_TABLES_ARE_THE_TABLE(kHighway)
}  // namespace tinyattn
#endif  // HWY_ONCE
