// The kernels and reductions of Highway's x86 targets with 256-bit vectors
// or wider (AVX2, AVX3, AVX3_DL), where TINYATTN_HWY_SUM8 is 1: Sum8 (eight
// horizontal sums in one vector), the fused kernels with a block's scores in
// registers (AttendFew; on AVX2 also its pipelined pairs, AttendFewBlocks)
// and the one with the rows as the lanes (AttendColumns). Included once per
// target by highway_kernels.cc.

// Per-target include guard: foreach_target.h includes highway_kernels.cc,
// and with it this file, once per target (HWY_TARGET_TOGGLE flips each time).
#if defined(TINYATTN_HIGHWAY_X86_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TINYATTN_HIGHWAY_X86_INL_H_
#undef TINYATTN_HIGHWAY_X86_INL_H_
#else
#define TINYATTN_HIGHWAY_X86_INL_H_
#endif

#include <hwy/highway.h>

#include <limits>
#include <type_traits>

#include "rows-inl.h"
#include "tinyattn/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tinyattn {
namespace highway {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL)
#define TINYATTN_HWY_SUM8 1
using D8 = hn::Full256<float>;

// Keeps a query vector in a register: GCC otherwise folds its load into each
// of its three FMAs as a memory operand (15 loads per 12 FMAs, more than two
// load ports issue while two FMA pipes run).
template <class VX>
HWY_INLINE VX InRegister(VX v) {
#if defined(__GNUC__)
  asm("" : "+v"(v.raw));
#endif
  return v;
}

// Adds the halves of a vector down to its lowest 256 bits (AVX-512: once).
template <class DV>
HWY_INLINE hn::Vec<D8> Fold256(DV dv, hn::Vec<DV> v) {
  if constexpr (hn::MaxLanes(DV()) <= 8) {
    (void)dv;
    return v;
  } else {
    const hn::Half<DV> dh;
    return Fold256(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
}

// Per 128-bit block: (a0, a1, a2, a3)'s sums over that block's four lanes.
HWY_INLINE hn::Vec<D8> BlockSum4(hn::Vec<D8> a0, hn::Vec<D8> a1, hn::Vec<D8> a2, hn::Vec<D8> a3) {
  const D8 d8;
  const hn::Repartition<double, D8> dd;
  // u01 = per block (a0[0]+a0[2], a1[0]+a1[2], a0[1]+a0[3], a1[1]+a1[3]).
  const auto u01 = hn::BitCast(dd, hn::Add(hn::InterleaveLower(d8, a0, a1), hn::InterleaveUpper(d8, a0, a1)));
  const auto u23 = hn::BitCast(dd, hn::Add(hn::InterleaveLower(d8, a2, a3), hn::InterleaveUpper(d8, a2, a3)));
  return hn::Add(hn::BitCast(d8, hn::InterleaveLower(dd, u01, u23)),
                 hn::BitCast(d8, hn::InterleaveUpper(dd, u01, u23)));
}

// The eight horizontal sums of a0..a7 in one 8-lane vector: one transpose-add
// tree over all eight (in-block unpacks, one cross-block step at the end)
// rather than two Sum4, which fold every accumulator to 128 bits on its own.
template <class DX, class VX = hn::Vec<DX>>
HWY_INLINE hn::Vec<D8> Sum8(DX d, VX a0, VX a1, VX a2, VX a3, VX a4, VX a5, VX a6, VX a7) {
  const D8 d8;
  const auto w0 = BlockSum4(Fold256(d, a0), Fold256(d, a1), Fold256(d, a2), Fold256(d, a3));
  const auto w1 = BlockSum4(Fold256(d, a4), Fold256(d, a5), Fold256(d, a6), Fold256(d, a7));
  return hn::Add(hn::ConcatLowerLower(d8, w1, w0), hn::ConcatUpperUpper(d8, w1, w0));
}

// The most keys of a fixed-extent call of two blocks
// (KernelsF32::fixed_multi_block_keys), which AttendColumns takes.
// AVX-512's 32 registers hold its 16 score vectors and 8 transposed query
// columns; AVX2's 16 hold 8 score vectors, and only up to Dk = 16 without
// spilling: from Dk = 32 AVX2's calls of two blocks go to the pipelined
// AttendFew pairs (AttendFewBlocks; 165-185 ns against 195-232 at
// (8,8,32,32)). A call of one block keeps AttendFew: the rows as lanes cost
// a call of 8 rows whatever its rows (N = 4, M = 16, Dk = 32 on AVX-512:
// 224-233 ns against 171).
constexpr size_t kMultiBlockKeys = HWY_TARGET == HWY_AVX2 ? 8 : 16;

// y[r*ldy + c] = a[r] * sum_j p[r*ldp + j*ldj] * v[j*ldv + c] for r < R, c < kDv
// (a multiple of 8): the fused kernels' P.V, with the finiteness check on
// the outputs while they are in registers (storing and reloading the output
// rows was 8-13% of a short block's time). Vectors of at most kDv lanes (8
// on AVX-512 at Dv = 8), at most kColsAtOnce of them per row at once.
// Returns whether every output is finite.
template <size_t R, size_t kDv>
HWY_INLINE bool FewWeightedSum(const float* HWY_RESTRICT p, size_t ldp, size_t ldj, const float* HWY_RESTRICT v,
                               size_t ldv, size_t count, const float* a, float* HWY_RESTRICT y, size_t ldy) {
  using DV = std::conditional_t<(hn::MaxLanes(D()) > kDv), D8, D>;
  using VV = hn::Vec<DV>;
  const DV d;
  constexpr size_t N = hn::MaxLanes(DV());
  constexpr size_t kCols = kDv / N;
  constexpr size_t kAccumulators = HWY_TARGET == HWY_AVX2 ? 8 : 16;  // half the registers
  constexpr size_t kColsAtOnceMax = kAccumulators / R < 4 ? kAccumulators / R : 4;
  constexpr size_t kColsAtOnce = kCols < kColsAtOnceMax ? kCols : kColsAtOnceMax;
  static_assert(kDv % N == 0 && kCols % kColsAtOnce == 0, "whole vectors, whole tiles");
  VV probe = hn::Zero(d);  // sum of y - y: 0 if every y is finite, else NaN
  for (size_t c0 = 0; c0 < kDv; c0 += kColsAtOnce * N) {
    VV acc[R][kColsAtOnce];
    for (size_t r = 0; r < R; ++r)
      for (size_t c = 0; c < kColsAtOnce; ++c) acc[r][c] = hn::Zero(d);
    for (size_t j = 0; j < count; ++j) {
      VV vj[kColsAtOnce];
      for (size_t c = 0; c < kColsAtOnce; ++c) vj[c] = hn::LoadU(d, v + j * ldv + c0 + c * N);
      for (size_t r = 0; r < R; ++r) {
        const VV w = hn::Set(d, p[r * ldp + j * ldj]);
        for (size_t c = 0; c < kColsAtOnce; ++c) acc[r][c] = hn::MulAdd(w, vj[c], acc[r][c]);
      }
    }
    for (size_t r = 0; r < R; ++r) {
      const VV ar = hn::Set(d, a[r]);
      for (size_t c = 0; c < kColsAtOnce; ++c) {
        const VV out = hn::Mul(acc[r][c], ar);
        probe = hn::Add(probe, hn::Sub(out, out));
        hn::StoreU(out, d, y + r * ldy + c0 + c * N);
      }
    }
  }
  return hn::AllTrue(d, hn::Eq(probe, probe));
}

// One block's scores: sc[r][g] holds row r's keys 8g..8g+7 (scaled; keys
// past count -FLT_MAX: finite, so only a real score is -inf in FewSoftmax's
// check, and 0 after the exp).
template <size_t R, size_t kGroups, size_t kDk>
HWY_INLINE void FewScores(const AttendBlock& b, const float* HWY_RESTRICT q_rows, hn::Vec<D8> (&sc)[R][kGroups]) {
  constexpr size_t N = 8;
  constexpr float kMax = std::numeric_limits<float>::max();
  // Two rows per key load where 32 registers hold their 16 accumulators: half
  // the key loads, which split cache lines when K is not 32-byte aligned
  // (16 bytes off: 7-9% faster at (16,16,32,32) on AVX-512; the same aligned).
  constexpr size_t kRows = (HWY_TARGET == HWY_AVX2 || R % 2 != 0) ? 1 : 2;
  using V8 = hn::Vec<D8>;
  const D8 d;
  const size_t count = b.count;
  for (size_t r0 = 0; r0 < R; r0 += kRows) {
    // Opaque per pass: GCC otherwise hoists the keys' loads out of the row
    // loop and keeps the tile (64 vectors at Dk = 32) on the stack.
    const float* keys = b.k;
    asm("" : "+r"(keys));
    for (size_t g = 0; g < kGroups; ++g) {
      V8 acc[kRows][N];
      const float* kj[N];
      for (size_t j = 0; j < N; ++j) {  // keys past count: the last key's row, masked below
        const size_t key = g * N + j < count ? g * N + j : count - 1;
        kj[j] = keys + key * b.ldk;
        for (size_t i = 0; i < kRows; ++i) acc[i][j] = hn::Zero(d);
      }
      for (size_t c = 0; c < kDk; c += N) {
        V8 qv[kRows];
        for (size_t i = 0; i < kRows; ++i) qv[i] = InRegister(hn::LoadU(d, q_rows + (r0 + i) * b.ldq + c));
        for (size_t j = 0; j < N; ++j) {
          const V8 kv = hn::LoadU(d, kj[j] + c);
          for (size_t i = 0; i < kRows; ++i) acc[i][j] = hn::MulAdd(qv[i], kv, acc[i][j]);
        }
      }
      for (size_t i = 0; i < kRows; ++i) {
        V8 x = hn::Mul(Sum8(d, acc[i][0], acc[i][1], acc[i][2], acc[i][3], acc[i][4], acc[i][5], acc[i][6], acc[i][7]),
                       hn::Set(d, b.scale));
        if (g * N + N > count) x = hn::IfThenElse(hn::FirstN(d, count - g * N), x, hn::Set(d, -kMax));
        sc[r0 + i][g] = x;
      }
    }
  }
}

// One block's softmax numerators: p[r] = exp(sc[r] - max), with each row's
// max, sum and 1 / sum. Whether every score is above -inf (a -inf one is a
// dot product that overflowed, which the driver recomputes), every row's max
// finite and above the padding's -FLT_MAX, and its sum >= 1.
template <size_t R, size_t kGroups>
HWY_INLINE bool FewSoftmax(const hn::Vec<D8> (&sc)[R][kGroups], float (*p)[kGroups * 8], float* max, float* sum,
                           float* inv) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  using V8 = hn::Vec<D8>;
  const D8 d;
  V8 least = sc[0][0];
  for (size_t r = 0; r < R; ++r)
    for (size_t g = 0; g < kGroups; ++g) least = hn::Min(least, sc[r][g]);
  bool ok = hn::AllTrue(d, hn::Gt(least, hn::Set(d, -kInf)));
  for (size_t r = 0; r < R; ++r) {
    V8 m = sc[r][0];
    for (size_t g = 1; g < kGroups; ++g) m = hn::Max(m, sc[r][g]);
    m = BroadcastMax(d, m);
    V8 a = hn::Zero(d);
    for (size_t g = 0; g < kGroups; ++g) {
      const V8 e = ExpNonPositive(d, hn::Sub(sc[r][g], m));
      hn::Store(e, d, p[r] + g * 8);
      a = hn::Add(a, e);
    }
    const float mx = hn::GetLane(m), total = ReduceSum(d, a);
    ok &= mx > -kMax && mx < kInf && total >= 1.0f;
    max[r] = mx;
    sum[r] = total;
    inv[r] = 1.0f / total;
  }
  return ok;
}

// x[r] lane i becomes x[i] lane r: unpacks within 128-bit blocks, then one
// exchange of blocks (24 shuffles).
HWY_INLINE void Transpose8x8(hn::Vec<D8> (&x)[8]) {
  const D8 d;
  const hn::Repartition<double, D8> dd;
  hn::Vec<D8> t[8], u[8];
  for (size_t i = 0; i < 8; i += 2) {
    t[i] = hn::InterleaveLower(d, x[i], x[i + 1]);
    t[i + 1] = hn::InterleaveUpper(d, x[i], x[i + 1]);
  }
  for (size_t i = 0; i < 8; i += 4)
    for (size_t h = 0; h < 2; ++h) {
      const auto lo = hn::BitCast(dd, t[i + h]), hi = hn::BitCast(dd, t[i + h + 2]);
      u[i + 2 * h] = hn::BitCast(d, hn::InterleaveLower(dd, lo, hi));
      u[i + 2 * h + 1] = hn::BitCast(d, hn::InterleaveUpper(dd, lo, hi));
    }
  for (size_t i = 0; i < 4; ++i) {
    x[i] = hn::ConcatLowerLower(d, u[i + 4], u[i]);
    x[i + 4] = hn::ConcatUpperUpper(d, u[i + 4], u[i]);
  }
}

// The scores and softmax of a call of two blocks (8 rows) whose keys fit
// kKeys, Dk a constant, with the rows as the lanes: the query tile
// transposed eight columns at a time, each key's elements broadcast against
// it, gives one vector of every row's score per key, so the max, exp and sum
// over the keys are lane-wise (no transpose-add, no horizontal reduction).
// p[j] gets key j's numerators (lane r: row r), inv the rows' 1 / sum, b.max
// and b.sum the rows' own; false when a row's max or sum fails AttendRows'
// checks or a score is -inf (keys past count are -FLT_MAX, which the max
// check accounts for). kDense: all kKeys keys and b.ldk == kDk, so every
// key element sits at a constant offset from b.k; its loops are unrolled (a
// pointer per key otherwise spilled: 13% of the call at (16,16,32,32)).
template <size_t kKeys, size_t kDk, bool kDense>
HWY_INLINE bool ColumnsSoftmax(const AttendBlock& b, float (*p)[8], float* inv) {
  static_assert(kDk % 8 == 0, "whole column groups");
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  using V8 = hn::Vec<D8>;
  const D8 d;
  const size_t count = b.count;
  const float* kj[kKeys];
  V8 s[kKeys];
  for (size_t j = 0; j < kKeys; ++j) {  // keys past count: the last key's row, -FLT_MAX below
    kj[j] = b.k + (j < count ? j : count - 1) * b.ldk;
    s[j] = hn::Zero(d);
  }
  const auto columns = [&](size_t c) {
    V8 qt[8];
    for (size_t r = 0; r < 8; ++r) qt[r] = hn::LoadU(d, b.q + r * b.ldq + c);
    Transpose8x8(qt);
    HWY_UNROLL(8)
    for (size_t i = 0; i < 8; ++i)
      for (size_t j = 0; j < kKeys; ++j) {
        const float* key = kDense ? b.k + j * kDk + c + i : kj[j] + c + i;
        s[j] = hn::MulAdd(hn::Set(d, *key), qt[i], s[j]);
      }
  };
  if (kDense) {
    HWY_UNROLL(8)
    for (size_t c = 0; c < kDk; c += 8) columns(c);
  } else {
    for (size_t c = 0; c < kDk; c += 8) columns(c);
  }
  const V8 scale = hn::Set(d, b.scale);
  V8 m = hn::Set(d, -kInf), least = hn::Set(d, kInf);
  for (size_t j = 0; j < kKeys; ++j) {
    s[j] = kDense || j < count ? hn::Mul(s[j], scale) : hn::Set(d, -kMax);
    m = hn::Max(m, s[j]);
    least = hn::Min(least, s[j]);
  }
  // Reduced here, so `least` holds no register through the exp: live to the
  // end, it made AVX2's 16 spill (Attention<Shape> at (8,8,16,16) 76 -> 107 ns).
  const bool above_minus_inf = hn::AllTrue(d, hn::Gt(least, hn::Set(d, -kInf)));
  V8 sum = hn::Zero(d);
  for (size_t j = 0; j < kKeys; ++j) {
    const V8 e = ExpNonPositive(d, hn::Sub(s[j], m));
    hn::Store(e, d, p[j]);
    sum = hn::Add(sum, e);
  }
  // A row with a finite max has a term exp(0) = 1, so its sum is >= 1; the
  // compare also fails for a NaN sum.
  const auto ok = hn::And(hn::And(hn::Gt(m, hn::Set(d, -kMax)), hn::Lt(m, hn::Set(d, kInf))),
                          hn::Ge(sum, hn::Set(d, 1.0f)));
  hn::StoreU(m, d, b.max);
  hn::StoreU(sum, d, b.sum);
  hn::Store(hn::Div(hn::Set(d, 1.0f), sum), d, inv);
  return above_minus_inf && hn::AllTrue(d, ok);
}

// A block of R rows whose keys fit kGroups vectors (count <= 8 * kGroups),
// Dk and Dv constants: each row's scores stay in registers, one lane per key
// (eight dot products, then one transpose-add, Sum8), through the max, exp
// and sum; only the exponentials go to the stack for the P.V tile. The
// composed kernel writes scores as 1 to 3 keys' pieces and loads them back
// as vectors, a store-to-load forwarding stall per piece on the path of
// every short row. The same semantics as AttendRows (declines included);
// its sums may round differently (a key's score is one Sum8 lane here).
// Calls of two blocks mostly take AttendColumns instead.
template <size_t R, size_t kGroups, size_t kDk, size_t kDv>
HWY_INLINE bool AttendFew(const AttendBlock& b) {
  hn::Vec<D8> sc[R][kGroups];
  FewScores<R, kGroups, kDk>(b, b.q, sc);
  HWY_ALIGN float p[R][kGroups * 8];
  float inv[R];
  if (!FewSoftmax<R, kGroups>(sc, p, b.max, b.sum, inv)) return false;
  return FewWeightedSum<R, kDv>(&p[0][0], kGroups * 8, 1, b.v, b.ldv, b.count, inv, b.y, b.ldy);
}

#if HWY_TARGET == HWY_AVX2
// AttendFew<kBlockRows, 1> over `blocks` consecutive blocks, software-
// pipelined: a block's softmax (max, exp and sum, a chain of latencies) is
// issued before the next block's scores, whose independent FMAs fill it,
// and its P.V after them. The same floats as block by block. Measured at
// (8,8,16,16) on an AVX-512 CPU (before AttendColumns took these calls
// there): 94 ns against 104 for two calls. Not for more
// keys: at 16 keys a block's own FMAs already fill its softmax (the
// pipelined blocks ran 4-6% slower there).
static_assert(kMultiBlockKeys == 8, "AVX2's pipelined pairs take one vector of keys");
template <size_t kDk, size_t kDv>
HWY_INLINE bool AttendFewBlocks(const AttendBlock& b, size_t blocks) {
  constexpr size_t R = kBlockRows;
  hn::Vec<D8> sc[R][1], next[R][1];
  FewScores<R, 1, kDk>(b, b.q, sc);
  bool ok = true;
  for (size_t i = 0; i < blocks; ++i) {
    HWY_ALIGN float p[R][8];
    float inv[R];
    const bool more = i + 1 < blocks;
    ok &= FewSoftmax<R, 1>(sc, p, b.max + i * R, b.sum + i * R, inv);
    if (more) FewScores<R, 1, kDk>(b, b.q + (i + 1) * R * b.ldq, next);
    ok &= FewWeightedSum<R, kDv>(&p[0][0], 8, 1, b.v, b.ldv, b.count, inv, b.y + i * R * b.ldy, b.ldy);
    if (more)
      for (size_t r = 0; r < R; ++r) sc[r][0] = next[r][0];
  }
  return ok;
}
#endif  // HWY_TARGET == HWY_AVX2

// A call of two blocks with at most kMultiBlockKeys keys: ColumnsSoftmax,
// then the P.V of its 8 rows.
template <size_t kD>
HWY_NOINLINE bool AttendColumns(const AttendBlock& b) {
  static_assert(kFixedRowsAtOnce == 8, "a call's rows fill the 8 lanes");
  HWY_ALIGN float p[kMultiBlockKeys][8];
  HWY_ALIGN float inv[8];
  const bool dense = b.ldk == kD;
  bool ok;
  if (kMultiBlockKeys == 8 || b.count <= 8)
    ok = dense && b.count == 8 ? ColumnsSoftmax<8, kD, true>(b, p, inv) : ColumnsSoftmax<8, kD, false>(b, p, inv);
  else
    ok = dense && b.count == 16 ? ColumnsSoftmax<kMultiBlockKeys, kD, true>(b, p, inv)
                                : ColumnsSoftmax<kMultiBlockKeys, kD, false>(b, p, inv);
  if (!ok) return false;
  return FewWeightedSum<kFixedRowsAtOnce, kD>(&p[0][0], 1, 8, b.v, b.ldv, b.count, inv, b.y, b.ldy);
}

#else
#define TINYATTN_HWY_SUM8 0

// Elsewhere the compiler's own register allocation (blocks-inl.h's RowFma).
template <class VX>
HWY_INLINE VX InRegister(VX v) {
  return v;
}
#endif  // HWY_ARCH_X86 && (AVX2 || AVX3 || AVX3_DL)

}  // namespace HWY_NAMESPACE
}  // namespace highway
}  // namespace tinyattn
HWY_AFTER_NAMESPACE();

#endif  // TINYATTN_HIGHWAY_X86_INL_H_
