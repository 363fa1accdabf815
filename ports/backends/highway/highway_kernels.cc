// KernelsF32 written once with Highway. Under TINYATTN_HWY_DYNAMIC this file is
// compiled once per target by foreach_target.h (HWY_TARGET_INCLUDE is found
// through this folder on the include path); otherwise only the static target.
// Each target builds its own table, so dispatch happens once per kernels_f32()
// call, not once per kernel call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "highway_kernels.cc"
#if TINYATTN_HWY_DYNAMIC
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#endif
#include <hwy/highway.h>

#include <limits>

#include "highway.h"
#include "port.h"
#include "tinyattn/exp.h"

HWY_BEFORE_NAMESPACE();
namespace tinyattn {
namespace highway {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Partial vectors for tails. Where a masked load or store may touch memory
// beyond the mask (the 128-bit targets emulate it with a full access), go
// through a buffer on the stack so no byte outside the range is accessed.
#if !HWY_MEM_OPS_MIGHT_FAULT || HWY_TARGET == HWY_AVX2  // AVX2 has vmaskmovps for 32-bit lanes
#define TINYATTN_HWY_MASKED_MEM 1
#else
#define TINYATTN_HWY_MASKED_MEM 0
#endif

// Lanes [0, n) from p, the others 0; n < Lanes(d).
HWY_INLINE V LoadTail(D d, const float* HWY_RESTRICT p, size_t n) {
#if TINYATTN_HWY_MASKED_MEM
  return hn::MaskedLoad(hn::FirstN(d, n), d, p);
#else
  HWY_ALIGN float buf[hn::MaxLanes(D())] = {};
  for (size_t i = 0; i < n; ++i) buf[i] = p[i];
  return hn::Load(d, buf);
#endif
}

// Stores lanes [0, n) of v to p; n < Lanes(d).
HWY_INLINE void StoreTail(D d, V v, float* HWY_RESTRICT p, size_t n) {
#if TINYATTN_HWY_MASKED_MEM
  hn::BlendedStore(v, hn::FirstN(d, n), d, p);
#else
  HWY_ALIGN float buf[hn::MaxLanes(D())];
  hn::Store(v, d, buf);
  for (size_t i = 0; i < n; ++i) p[i] = buf[i];
#endif
}

template <class DX>
HWY_INLINE float ReduceSum(DX d, hn::Vec<DX> v) {
  return hn::GetLane(hn::SumOfLanes(d, v));
}

// tinyattn::exp_poly (tinyattn/exp.h) step by step, with fused multiply-adds
// where the target has them (the stated ULP bound covers both roundings),
// without the range selects: exact for x in [flush_below, overflow_above] and
// for NaN; ExpFixRange gives the other lanes their values. Any vector width
// (the short-row kernels run half vectors on AVX-512).
template <class DX, class VX = hn::Vec<DX>>
HWY_INLINE VX ExpCore(DX d, VX x) {
  const ExpCoefficients& c = kExpCoefficients;
  const hn::RebindToSigned<DX> di;
  const VX t = hn::MulAdd(x, hn::Set(d, c.log2e), hn::Set(d, c.magic));  // n + magic
  const VX n = hn::Sub(t, hn::Set(d, c.magic));
  const VX s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));     // 2^n
  VX r = hn::MulAdd(n, hn::Set(d, c.minus_ln2_hi), x);
  r = hn::MulAdd(n, hn::Set(d, c.minus_ln2_lo), r);
  VX q = hn::MulAdd(hn::Set(d, c.c6), r, hn::Set(d, c.c5));
  q = hn::MulAdd(q, r, hn::Set(d, c.c4));
  q = hn::MulAdd(q, r, hn::Set(d, c.c3));
  q = hn::MulAdd(q, r, hn::Set(d, c.c2));
  const VX u = hn::MulAdd(hn::Mul(r, r), q, r);  // expm1(r)
#if HWY_ARCH_ARM_V7 && HWY_TARGET == HWY_NEON
  // ARMv7 NEON flushes subnormals: near the flush point s * u can be
  // subnormal and would become 0. (1 + u) * s keeps every intermediate
  // normal and rounds identically (s is a power of two).
  return hn::Mul(hn::Add(u, hn::Set(d, 1.0f)), s);
#else
  return hn::MulAdd(s, u, s);  // s * (1 + u); s * u is exact
#endif
}

// Lanes outside [flush_below, overflow_above]: 0 below, +inf above.
// Comparisons with NaN are false, so NaN stays NaN through both selects.
HWY_INLINE V ExpFixRange(D d, V x, V e) {
  const ExpCoefficients& c = kExpCoefficients;
  e = hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, c.flush_below)), e);
  return hn::IfThenElse(hn::Gt(x, hn::Set(d, c.overflow_above)), hn::Inf(d), e);
}

HWY_INLINE V ExpPoly(D d, V x) { return ExpFixRange(d, x, ExpCore(d, x)); }

// Whether a lane of x0 or x1 lies outside [flush_below, overflow_above] (a
// lane just inside may also say so): |x - mid| > half, compared as integer
// bits (sign cleared, so ordered; NaN compares above inf, which is harmless:
// ExpFixRange keeps NaN) and reduced with an integer max before the one
// compare. Cheaper than ExpFixRange's two compares and two selects, which
// rows in range (softmax's usual case) then skip.
HWY_INLINE bool ExpMayNeedFix(D d, V x0, V x1) {
  const ExpCoefficients& c = kExpCoefficients;
  const hn::RebindToSigned<D> di;
  constexpr float kMid = 0.5f * (c.flush_below + c.overflow_above);
  constexpr float kHalf = 0.5f * (c.overflow_above - c.flush_below) - 1.0f;  // margin >> rounding of x - kMid
  const V mid = hn::Set(d, kMid);
  const auto a0 = hn::BitCast(di, hn::Abs(hn::Sub(x0, mid)));
  const auto a1 = hn::BitCast(di, hn::Abs(hn::Sub(x1, mid)));
  return !hn::AllFalse(di, hn::Gt(hn::Max(a0, a1), hn::BitCast(di, hn::Set(d, kHalf))));
}

#if !HWY_HAVE_SCALABLE && HWY_TARGET != HWY_SCALAR
#define TINYATTN_HWY_SUM4 1
// Adds the halves of a fixed-width vector down to its lowest 128-bit block.
template <class DV>
HWY_INLINE auto Fold128(DV dv, hn::Vec<DV> v) {
  if constexpr (hn::MaxLanes(DV()) <= 4) {
    (void)dv;
    return v;
  } else {
    const hn::Half<DV> dh;
    return Fold128(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
}

// The four horizontal sums of a0..a3 in one 128-bit vector (a transpose-add:
// cheaper than four separate reductions).
HWY_INLINE hn::Vec<hn::Full128<float>> Sum4(D d, V a0, V a1, V a2, V a3) {
  const hn::Full128<float> d4;
  const auto b0 = Fold128(d, a0), b1 = Fold128(d, a1), b2 = Fold128(d, a2), b3 = Fold128(d, a3);
  // u01 = (b0[0]+b0[2], b1[0]+b1[2], b0[1]+b0[3], b1[1]+b1[3]), u23 alike.
  const auto u01 = hn::Add(hn::InterleaveLower(d4, b0, b1), hn::InterleaveUpper(d4, b0, b1));
  const auto u23 = hn::Add(hn::InterleaveLower(d4, b2, b3), hn::InterleaveUpper(d4, b2, b3));
  return hn::Add(hn::ConcatLowerLower(d4, u23, u01), hn::ConcatUpperUpper(d4, u23, u01));
}
#else
#define TINYATTN_HWY_SUM4 0
#endif

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
#else
#define TINYATTN_HWY_SUM8 0
#endif

#if TINYATTN_HWY_SUM8
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
#endif

const char* SimdTarget() { return hwy::TargetName(HWY_TARGET); }

// kKeys (1 to 4) keys at once, one accumulator each: independent FMA chains
// and each query vector loaded once for all of them. Every kKeys runs the
// same chain and the same lane of Sum4 (or ReduceSum) for a key, so a key's
// score is the same bits wherever it sits in a call (KernelsF32::scores): a
// KV-cache ring, whose keys sit in other slots than in one forward over the
// sequence, gets the same logits.
template <size_t kKeys>
HWY_INLINE void ScoreKeys(const float* HWY_RESTRICT q, const float* HWY_RESTRICT k, size_t ldk, size_t dk,
                          float scale, float* HWY_RESTRICT s) {
  const D d;
  const size_t N = hn::Lanes(d);
  const size_t full = dk - dk % N;
  const size_t rest = dk - full;
  const float* k0 = k;
  const float* k1 = kKeys > 1 ? k0 + ldk : k0;
  const float* k2 = kKeys > 2 ? k1 + ldk : k1;
  const float* k3 = kKeys > 3 ? k2 + ldk : k2;
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  for (size_t c = 0; c < full; c += N) {
    const V qv = hn::LoadU(d, q + c);
    a0 = hn::MulAdd(qv, hn::LoadU(d, k0 + c), a0);
    if constexpr (kKeys > 1) a1 = hn::MulAdd(qv, hn::LoadU(d, k1 + c), a1);
    if constexpr (kKeys > 2) a2 = hn::MulAdd(qv, hn::LoadU(d, k2 + c), a2);
    if constexpr (kKeys > 3) a3 = hn::MulAdd(qv, hn::LoadU(d, k3 + c), a3);
  }
  if (rest) {
    const V qv = LoadTail(d, q + full, rest);
    a0 = hn::MulAdd(qv, LoadTail(d, k0 + full, rest), a0);
    if constexpr (kKeys > 1) a1 = hn::MulAdd(qv, LoadTail(d, k1 + full, rest), a1);
    if constexpr (kKeys > 2) a2 = hn::MulAdd(qv, LoadTail(d, k2 + full, rest), a2);
    if constexpr (kKeys > 3) a3 = hn::MulAdd(qv, LoadTail(d, k3 + full, rest), a3);
  }
#if TINYATTN_HWY_SUM4
  const hn::Full128<float> d4;
  const auto sums = hn::Mul(Sum4(d, a0, a1, a2, a3), hn::Set(d4, scale));
  if constexpr (kKeys == 4) {
    hn::StoreU(sums, d4, s);
  } else {
    HWY_ALIGN float lanes[4];
    hn::Store(sums, d4, lanes);
    for (size_t i = 0; i < kKeys; ++i) s[i] = lanes[i];
  }
#else
  s[0] = scale * ReduceSum(d, a0);
  if constexpr (kKeys > 1) s[1] = scale * ReduceSum(d, a1);
  if constexpr (kKeys > 2) s[2] = scale * ReduceSum(d, a2);
  if constexpr (kKeys > 3) s[3] = scale * ReduceSum(d, a3);
#endif
}

void Scores(const float* HWY_RESTRICT q, const float* HWY_RESTRICT k, size_t ldk, size_t count, size_t dk,
            float scale, float* HWY_RESTRICT s) {
#if HWY_TARGET == HWY_SCALAR
  // One key at a time: with four scalar chains, GCC vectorizes them across
  // the keys where the core has vectors of its own (Helium on the M55), and
  // the last one to three keys, left scalar, then round differently.
  for (size_t j = 0; j < count; ++j) ScoreKeys<1>(q, k + j * ldk, ldk, dk, scale, s + j);
#else
  size_t j = 0;
  for (; j + 4 <= count; j += 4) ScoreKeys<4>(q, k + j * ldk, ldk, dk, scale, s + j);
  if (count - j == 3) ScoreKeys<3>(q, k + j * ldk, ldk, dk, scale, s + j);
  if (count - j == 2) ScoreKeys<2>(q, k + j * ldk, ldk, dk, scale, s + j);
  if (count - j == 1) ScoreKeys<1>(q, k + j * ldk, ldk, dk, scale, s + j);
#endif
}

// Every lane: the largest lane of m. Not MaxOfLanes on EMU128, which starts
// from -FLT_MAX: all -inf would come back finite.
template <class DX, class VX = hn::Vec<DX>>
HWY_INLINE VX BroadcastMax(DX d, VX m) {
#if HWY_TARGET == HWY_EMU128
  HWY_ALIGN float lanes[hn::MaxLanes(DX())];
  hn::Store(m, d, lanes);
  float r = lanes[0];
  for (size_t i = 1; i < hn::Lanes(d); ++i) r = lanes[i] > r ? lanes[i] : r;
  return hn::Set(d, r);
#else
  return hn::MaxOfLanes(d, m);
#endif
}

float RowMax(const float* HWY_RESTRICT x, size_t n) {
  const D d;
  const size_t N = hn::Lanes(d);
  const V minus_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
  // Four accumulators: four independent max chains per iteration.
  V m0 = minus_inf, m1 = minus_inf, m2 = minus_inf, m3 = minus_inf;
  // Max does not propagate NaN on every target (x86 maxps returns an operand),
  // so NaNs are tracked separately.
  auto nan = hn::IsNaN(m0);  // all false
  size_t j = 0;
  for (; j + 4 * N <= n; j += 4 * N) {
    const V v0 = hn::LoadU(d, x + j), v1 = hn::LoadU(d, x + j + N);
    const V v2 = hn::LoadU(d, x + j + 2 * N), v3 = hn::LoadU(d, x + j + 3 * N);
    nan = hn::Or(nan, hn::Or(hn::Or(hn::IsNaN(v0), hn::IsNaN(v1)), hn::Or(hn::IsNaN(v2), hn::IsNaN(v3))));
    m0 = hn::Max(m0, v0);
    m1 = hn::Max(m1, v1);
    m2 = hn::Max(m2, v2);
    m3 = hn::Max(m3, v3);
  }
  for (; j + N <= n; j += N) {
    const V v = hn::LoadU(d, x + j);
    nan = hn::Or(nan, hn::IsNaN(v));
    m0 = hn::Max(m0, v);
  }
  if (j < n) {
    const V v = hn::IfThenElse(hn::FirstN(d, n - j), LoadTail(d, x + j, n - j), minus_inf);
    nan = hn::Or(nan, hn::IsNaN(v));
    m1 = hn::Max(m1, v);
  }
  if (!hn::AllFalse(d, nan)) return std::numeric_limits<float>::quiet_NaN();
  return hn::GetLane(BroadcastMax(d, hn::Max(hn::Max(m0, m1), hn::Max(m2, m3))));
}

float ExpShiftSum(float* HWY_RESTRICT x, size_t n, float shift) {
  const D d;
  const size_t N = hn::Lanes(d);
  const V sh = hn::Set(d, shift);
  V s0 = hn::Zero(d), s1 = hn::Zero(d);
  size_t j = 0;
  for (; j + 2 * N <= n; j += 2 * N) {
    const V x0 = hn::Sub(hn::LoadU(d, x + j), sh), x1 = hn::Sub(hn::LoadU(d, x + j + N), sh);
    V e0 = ExpCore(d, x0), e1 = ExpCore(d, x1);
    if (HWY_UNLIKELY(ExpMayNeedFix(d, x0, x1))) {
      e0 = ExpFixRange(d, x0, e0);
      e1 = ExpFixRange(d, x1, e1);
    }
    hn::StoreU(e0, d, x + j);
    hn::StoreU(e1, d, x + j + N);
    s0 = hn::Add(s0, e0);
    s1 = hn::Add(s1, e1);
  }
  if (j + N <= n) {
    const V e = ExpPoly(d, hn::Sub(hn::LoadU(d, x + j), sh));
    hn::StoreU(e, d, x + j);
    s0 = hn::Add(s0, e);
    j += N;
  }
  if (j < n) {
    const V e = hn::IfThenElseZero(hn::FirstN(d, n - j), ExpPoly(d, hn::Sub(LoadTail(d, x + j, n - j), sh)));
    StoreTail(d, e, x + j, n - j);
    s1 = hn::Add(s1, e);
  }
  return ReduceSum(d, hn::Add(s0, s1));
}

// Columns in blocks of four vectors held in registers across all keys; each
// value row is streamed once per block.
void WeightedSum(const float* HWY_RESTRICT p, const float* HWY_RESTRICT v, size_t ldv, size_t count, size_t dv,
                 float a, float* HWY_RESTRICT y) {
  const D d;
  const size_t N = hn::Lanes(d);
  const V av = hn::Set(d, a);
  size_t c = 0;
  for (; c + 4 * N <= dv; c += 4 * N) {
    V y0 = hn::Zero(d), y1 = hn::Zero(d), y2 = hn::Zero(d), y3 = hn::Zero(d);
    const float* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) {
      if (p[j] == 0.0f) continue;  // zero weight: a masked key, whose value row may hold NaN/inf (KernelsF32)
      const V pj = hn::Set(d, p[j]);
      y0 = hn::MulAdd(pj, hn::LoadU(d, vc), y0);
      y1 = hn::MulAdd(pj, hn::LoadU(d, vc + N), y1);
      y2 = hn::MulAdd(pj, hn::LoadU(d, vc + 2 * N), y2);
      y3 = hn::MulAdd(pj, hn::LoadU(d, vc + 3 * N), y3);
    }
    hn::StoreU(hn::Mul(y0, av), d, y + c);
    hn::StoreU(hn::Mul(y1, av), d, y + c + N);
    hn::StoreU(hn::Mul(y2, av), d, y + c + 2 * N);
    hn::StoreU(hn::Mul(y3, av), d, y + c + 3 * N);
  }
  // Fewer than four vectors left: two chains over even and odd keys.
  for (; c + N <= dv; c += N) {
    V y0 = hn::Zero(d), y1 = hn::Zero(d);
    const float* vc = v + c;
    size_t j = 0;
    for (; j + 2 <= count; j += 2, vc += 2 * ldv) {
      if (p[j] != 0.0f) y0 = hn::MulAdd(hn::Set(d, p[j]), hn::LoadU(d, vc), y0);
      if (p[j + 1] != 0.0f) y1 = hn::MulAdd(hn::Set(d, p[j + 1]), hn::LoadU(d, vc + ldv), y1);
    }
    if (j < count && p[j] != 0.0f) y0 = hn::MulAdd(hn::Set(d, p[j]), hn::LoadU(d, vc), y0);
    hn::StoreU(hn::Mul(hn::Add(y0, y1), av), d, y + c);
  }
  if (c < dv) {
    const size_t rest = dv - c;
    V y0 = hn::Zero(d), y1 = hn::Zero(d);
    const float* vc = v + c;
    size_t j = 0;
    for (; j + 2 <= count; j += 2, vc += 2 * ldv) {
      if (p[j] != 0.0f) y0 = hn::MulAdd(hn::Set(d, p[j]), LoadTail(d, vc, rest), y0);
      if (p[j + 1] != 0.0f) y1 = hn::MulAdd(hn::Set(d, p[j + 1]), LoadTail(d, vc + ldv, rest), y1);
    }
    if (j < count && p[j] != 0.0f) y0 = hn::MulAdd(hn::Set(d, p[j]), LoadTail(d, vc, rest), y0);
    StoreTail(d, hn::Mul(hn::Add(y0, y1), av), y + c, rest);
  }
}

void Axpy(float a, const float* HWY_RESTRICT x, float* HWY_RESTRICT y, size_t n) {
  const D d;
  const size_t N = hn::Lanes(d);
  const V av = hn::Set(d, a);
  size_t c = 0;
  for (; c + N <= n; c += N) hn::StoreU(hn::MulAdd(av, hn::LoadU(d, x + c), hn::LoadU(d, y + c)), d, y + c);
  if (c < n) {
    const size_t rest = n - c;
    StoreTail(d, hn::MulAdd(av, LoadTail(d, x + c, rest), LoadTail(d, y + c, rest)), y + c, rest);
  }
}

void Scale(float* HWY_RESTRICT x, size_t n, float a) {
  const D d;
  const size_t N = hn::Lanes(d);
  const V av = hn::Set(d, a);
  size_t c = 0;
  for (; c + N <= n; c += N) hn::StoreU(hn::Mul(hn::LoadU(d, x + c), av), d, x + c);
  if (c < n) StoreTail(d, hn::Mul(LoadTail(d, x + c, n - c), av), x + c, n - c);
}

void Exp(const float* HWY_RESTRICT x, float* HWY_RESTRICT out, size_t n) {
  const D d;
  const size_t N = hn::Lanes(d);
  size_t j = 0;
  for (; j + N <= n; j += N) hn::StoreU(ExpPoly(d, hn::LoadU(d, x + j)), d, out + j);
  if (j < n) StoreTail(d, ExpPoly(d, LoadTail(d, x + j, n - j)), out + j, n - j);
}

#if HWY_TARGET != HWY_SCALAR
#if !TINYATTN_HWY_SUM8
template <class VX>
HWY_INLINE VX InRegister(VX v) {
  return v;
}
#endif

// One query row's vector qv against the tile's key vectors: its kKeys
// accumulators. The three-key tile keeps qv in a register (InRegister).
template <int kKeys>
HWY_INLINE void RowFma(V qv, V ka, V kb, V kc, V& a, V& b, V& e) {
  if (kKeys == 3) qv = InRegister(qv);
  a = hn::MulAdd(qv, ka, a);
  if (kKeys >= 2) b = hn::MulAdd(qv, kb, b);
  if (kKeys == 3) e = hn::MulAdd(qv, kc, e);
}

// A full vector of Dk at offset c, or (kTail) the first `rest` lanes.
template <bool kTail>
HWY_INLINE V LoadDk(D d, const float* HWY_RESTRICT p, size_t rest) {
  if (kTail) return LoadTail(d, p, rest);
  (void)rest;
  return hn::LoadU(d, p);
}

// The scores of four rows (s0 + j .. s3 + j) for one key each, from their
// accumulators a0..a3 (scaled).
HWY_INLINE void StoreKey(D d, V a0, V a1, V a2, V a3, float scale, float* s0, float* s1, float* s2, float* s3,
                         size_t j) {
#if TINYATTN_HWY_SUM4
  const hn::Full128<float> d4;
  HWY_ALIGN float sums[4];
  hn::Store(hn::Mul(Sum4(d, a0, a1, a2, a3), hn::Set(d4, scale)), d4, sums);
  s0[j] = sums[0];
  s1[j] = sums[1];
  s2[j] = sums[2];
  s3[j] = sums[3];
#else
  s0[j] = scale * ReduceSum(d, a0);
  s1[j] = scale * ReduceSum(d, a1);
  s2[j] = scale * ReduceSum(d, a2);
  s3[j] = scale * ReduceSum(d, a3);
#endif
}

// The same for two keys, j and j + 1 (accumulators a_r and b_r of row r).
HWY_INLINE void StoreKeyPair(D d, V a0, V b0, V a1, V b1, V a2, V b2, V a3, V b3, float scale, float* s0, float* s1,
                             float* s2, float* s3, size_t j) {
#if TINYATTN_HWY_SUM8 || TINYATTN_HWY_SUM4
  const hn::Full128<float> d4;
  const hn::Half<hn::Full128<float>> d2;
#if TINYATTN_HWY_SUM8
  // Lanes 2r, 2r + 1: row r's scores of keys j, j + 1.
  const D8 d8;
  const auto sum = hn::Mul(Sum8(d, a0, b0, a1, b1, a2, b2, a3, b3), hn::Set(d8, scale));
  const auto r01 = hn::LowerHalf(d4, sum), r23 = hn::UpperHalf(d4, sum);
#else
  const auto sc = hn::Set(d4, scale);
  const auto r01 = hn::Mul(Sum4(d, a0, b0, a1, b1), sc);  // rows 0, 1
  const auto r23 = hn::Mul(Sum4(d, a2, b2, a3, b3), sc);
#endif
  hn::StoreU(hn::LowerHalf(d2, r01), d2, s0 + j);
  hn::StoreU(hn::UpperHalf(d2, r01), d2, s1 + j);
  hn::StoreU(hn::LowerHalf(d2, r23), d2, s2 + j);
  hn::StoreU(hn::UpperHalf(d2, r23), d2, s3 + j);
#else
  StoreKey(d, a0, a1, a2, a3, scale, s0, s1, s2, s3, j);
  StoreKey(d, b0, b1, b2, b3, scale, s0, s1, s2, s3, j + 1);
#endif
}

// One step of Dk for the tile: kKeys key loads and four query loads feed
// 4*kKeys FMAs, one query vector live at a time.
template <int kKeys, bool kTail>
HWY_INLINE void ScoresStep(D d, const float* const* q, const float* const* k, size_t c, size_t rest, V& a0, V& a1,
                           V& a2, V& a3, V& b0, V& b1, V& b2, V& b3, V& e0, V& e1, V& e2, V& e3) {
  const V ka = LoadDk<kTail>(d, k[0] + c, rest);
  const V kb = kKeys >= 2 ? LoadDk<kTail>(d, k[1] + c, rest) : ka;
  const V kc = kKeys == 3 ? LoadDk<kTail>(d, k[2] + c, rest) : ka;
  RowFma<kKeys>(LoadDk<kTail>(d, q[0] + c, rest), ka, kb, kc, a0, b0, e0);
  RowFma<kKeys>(LoadDk<kTail>(d, q[1] + c, rest), ka, kb, kc, a1, b1, e1);
  RowFma<kKeys>(LoadDk<kTail>(d, q[2] + c, rest), ka, kb, kc, a2, b2, e2);
  RowFma<kKeys>(LoadDk<kTail>(d, q[3] + c, rest), ka, kb, kc, a3, b3, e3);
}

// Four query rows by kKeys (1 to 3) keys j.. of the block: 4*kKeys FMA
// chains. Three keys (AVX2/AVX-512): twelve chains (eight do not cover the
// FMA latency on two pipes), whose 12 accumulators, 3 key vectors and one
// query vector fill the 16 AVX2 registers; AVX2 at Dk 128: 78 GFLOP/s, 65
// with two keys; Dk 32 and 64 about equal. The horizontal sums run once per
// (row, key), four or eight at a time.
template <int kKeys>
HWY_INLINE void ScoresTile(const float* const* q, const float* HWY_RESTRICT k, size_t ldk, size_t dk, float scale,
                           float* const* s, size_t j) {
  const D d;
  const size_t N = hn::Lanes(d);
  const size_t full = dk - dk % N, rest = dk - full;
  const float* keys[3] = {k, k + (kKeys >= 2 ? ldk : 0), k + (kKeys == 3 ? 2 * ldk : 0)};
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);  // key j, rows 0..3
  V b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);  // key j + 1
  V e0 = hn::Zero(d), e1 = hn::Zero(d), e2 = hn::Zero(d), e3 = hn::Zero(d);  // key j + 2
  for (size_t c = 0; c < full; c += N)
    ScoresStep<kKeys, false>(d, q, keys, c, 0, a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3);
  if (rest) ScoresStep<kKeys, true>(d, q, keys, full, rest, a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3);
  if (kKeys == 1) return StoreKey(d, a0, a1, a2, a3, scale, s[0], s[1], s[2], s[3], j);
  StoreKeyPair(d, a0, b0, a1, b1, a2, b2, a3, b3, scale, s[0], s[1], s[2], s[3], j);
  if (kKeys == 3) StoreKey(d, e0, e1, e2, e3, scale, s[0], s[1], s[2], s[3], j + 2);
}

// Inlined into the fixed-extent kernels (AttendFixed), where dk is a
// constant: the Dk loops then have fixed trip counts and no tail.
HWY_INLINE void ScoresBlockImpl(const float* HWY_RESTRICT q, size_t ldq, size_t rows, const float* HWY_RESTRICT k,
                                size_t ldk, size_t count, size_t dk, float scale, float* HWY_RESTRICT s, size_t lds) {
  if (rows != kBlockRows) {
    for (size_t r = 0; r < rows; ++r) Scores(q + r * ldq, k, ldk, count, dk, scale, s + r * lds);
    return;
  }
  const float* const qr[kBlockRows] = {q, q + ldq, q + 2 * ldq, q + 3 * ldq};
  float* const sr[kBlockRows] = {s, s + lds, s + 2 * lds, s + 3 * lds};
  size_t j = 0;
  if (TINYATTN_HWY_SUM8)
    for (; j + 3 <= count; j += 3) ScoresTile<3>(qr, k + j * ldk, ldk, dk, scale, sr, j);
  for (; j + 2 <= count; j += 2) ScoresTile<2>(qr, k + j * ldk, ldk, dk, scale, sr, j);
  if (j < count) ScoresTile<1>(qr, k + j * ldk, ldk, dk, scale, sr, j);
}

void ScoresBlock(const float* HWY_RESTRICT q, size_t ldq, size_t rows, const float* HWY_RESTRICT k, size_t ldk,
                 size_t count, size_t dk, float scale, float* HWY_RESTRICT s, size_t lds) {
  ScoresBlockImpl(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
}

// Four rows by `kCols` (1 to 3) vectors of columns: per key, kCols value
// loads and four weight broadcasts feed 4*kCols FMAs (3: twelve independent
// chains, enough to cover the FMA latency on two pipes). `rest` < N: the one
// vector is a partial one of that many lanes.
template <int kCols>
HWY_INLINE void WeightedSumTile(const float* HWY_RESTRICT p, size_t ldp, const float* HWY_RESTRICT v, size_t ldv,
                                size_t count, const float* a, float* HWY_RESTRICT y, size_t ldy, size_t rest) {
  const D d;
  const size_t N = hn::Lanes(d);
  const float *p0 = p, *p1 = p + ldp, *p2 = p + 2 * ldp, *p3 = p + 3 * ldp;
  V y0 = hn::Zero(d), y1 = hn::Zero(d), y2 = hn::Zero(d), y3 = hn::Zero(d);  // column vector 0, rows 0..3
  V z0 = hn::Zero(d), z1 = hn::Zero(d), z2 = hn::Zero(d), z3 = hn::Zero(d);  // column vector 1
  V x0 = hn::Zero(d), x1 = hn::Zero(d), x2 = hn::Zero(d), x3 = hn::Zero(d);  // column vector 2
  const float* vj = v;
  for (size_t j = 0; j < count; ++j, vj += ldv) {
    // V is finite here (KernelsF32::weighted_sum_block): zero weights add nothing.
    const V va = rest ? LoadTail(d, vj, rest) : hn::LoadU(d, vj);
    if (kCols == 1) {
      y0 = hn::MulAdd(hn::Set(d, p0[j]), va, y0);
      y1 = hn::MulAdd(hn::Set(d, p1[j]), va, y1);
      y2 = hn::MulAdd(hn::Set(d, p2[j]), va, y2);
      y3 = hn::MulAdd(hn::Set(d, p3[j]), va, y3);
    } else {
      const V vb = hn::LoadU(d, vj + N);
      const V vc = kCols == 3 ? hn::LoadU(d, vj + 2 * N) : vb;
      V w = hn::Set(d, p0[j]);
      y0 = hn::MulAdd(w, va, y0);
      z0 = hn::MulAdd(w, vb, z0);
      if (kCols == 3) x0 = hn::MulAdd(w, vc, x0);
      w = hn::Set(d, p1[j]);
      y1 = hn::MulAdd(w, va, y1);
      z1 = hn::MulAdd(w, vb, z1);
      if (kCols == 3) x1 = hn::MulAdd(w, vc, x1);
      w = hn::Set(d, p2[j]);
      y2 = hn::MulAdd(w, va, y2);
      z2 = hn::MulAdd(w, vb, z2);
      if (kCols == 3) x2 = hn::MulAdd(w, vc, x2);
      w = hn::Set(d, p3[j]);
      y3 = hn::MulAdd(w, va, y3);
      z3 = hn::MulAdd(w, vb, z3);
      if (kCols == 3) x3 = hn::MulAdd(w, vc, x3);
    }
  }
  const V a0 = hn::Set(d, a[0]), a1 = hn::Set(d, a[1]), a2 = hn::Set(d, a[2]), a3 = hn::Set(d, a[3]);
  if (rest) {
    StoreTail(d, hn::Mul(y0, a0), y, rest);
    StoreTail(d, hn::Mul(y1, a1), y + ldy, rest);
    StoreTail(d, hn::Mul(y2, a2), y + 2 * ldy, rest);
    StoreTail(d, hn::Mul(y3, a3), y + 3 * ldy, rest);
    return;
  }
  hn::StoreU(hn::Mul(y0, a0), d, y);
  hn::StoreU(hn::Mul(y1, a1), d, y + ldy);
  hn::StoreU(hn::Mul(y2, a2), d, y + 2 * ldy);
  hn::StoreU(hn::Mul(y3, a3), d, y + 3 * ldy);
  if (kCols >= 2) {
    hn::StoreU(hn::Mul(z0, a0), d, y + N);
    hn::StoreU(hn::Mul(z1, a1), d, y + ldy + N);
    hn::StoreU(hn::Mul(z2, a2), d, y + 2 * ldy + N);
    hn::StoreU(hn::Mul(z3, a3), d, y + 3 * ldy + N);
  }
  if (kCols == 3) {
    hn::StoreU(hn::Mul(x0, a0), d, y + 2 * N);
    hn::StoreU(hn::Mul(x1, a1), d, y + ldy + 2 * N);
    hn::StoreU(hn::Mul(x2, a2), d, y + 2 * ldy + 2 * N);
    hn::StoreU(hn::Mul(x3, a3), d, y + 3 * ldy + 2 * N);
  }
}

// Inlined, as ScoresBlockImpl, where dv is a constant.
HWY_INLINE void WeightedSumBlockImpl(const float* HWY_RESTRICT p, size_t ldp, size_t rows,
                                     const float* HWY_RESTRICT v, size_t ldv, size_t count, size_t dv, const float* a,
                                     float* HWY_RESTRICT y, size_t ldy) {
  if (rows != kBlockRows) {
    for (size_t r = 0; r < rows; ++r) WeightedSum(p + r * ldp, v, ldv, count, dv, a[r], y + r * ldy);
    return;
  }
  const D d;
  const size_t N = hn::Lanes(d);
  size_t c = 0;
  // Three vectors at a time, but not 3 + 1 where 2 + 2 fits (two equal tiles).
  for (; c + 3 * N <= dv && dv - c != 4 * N; c += 3 * N)
    WeightedSumTile<3>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
  for (; c + 2 * N <= dv; c += 2 * N) WeightedSumTile<2>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
  if (c + N <= dv) {
    WeightedSumTile<1>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
    c += N;
  }
  if (c < dv) WeightedSumTile<1>(p, ldp, v + c, ldv, count, a, y + c, ldy, dv - c);
}

void WeightedSumBlock(const float* HWY_RESTRICT p, size_t ldp, size_t rows, const float* HWY_RESTRICT v, size_t ldv,
                      size_t count, size_t dv, const float* a, float* HWY_RESTRICT y, size_t ldy) {
  WeightedSumBlockImpl(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
}

// Scores of a full block from the keys transposed: the weighted-sum tile with
// the query rows as weights and K^T's rows as value rows (each query element
// broadcast against a vector of keys, no horizontal sums). Every product is
// computed, so an inf or NaN in K reaches its scores as in a dot product.
void ScoresBlockTransposed(const float* HWY_RESTRICT q, size_t ldq, const float* HWY_RESTRICT kt, size_t ldkt,
                           size_t count, size_t dk, float scale, float* HWY_RESTRICT s, size_t lds) {
  const float a[kBlockRows] = {scale, scale, scale, scale};
  static_assert(kBlockRows == 4, "a lists kBlockRows scales");
  WeightedSumBlock(q, ldq, kBlockRows, kt, ldkt, dk, count, a, s, lds);
}

// exp(x) for x <= 0 or NaN (scores minus their row's max): only the flush
// select of ExpFixRange can apply.
template <class DX, class VX = hn::Vec<DX>>
HWY_INLINE VX ExpNonPositive(DX d, VX x) {
  return hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, kExpCoefficients.flush_below)), ExpCore(d, x));
}

// f(r, x_r, y_r) for rows r < R <= 4: the rows' vectors are named variables,
// not array elements, which SVE's sizeless vectors cannot be. The lambdas
// below capture no vector for the same reason.
template <size_t R, class F>
HWY_INLINE void ForRows(const F& f, V& x0, V& x1, V& x2, V& x3, V& y0, V& y1, V& y2, V& y3) {
  f(0, x0, y0);
  if (R > 1) f(1, x1, y1);
  if (R > 2) f(2, x2, y2);
  if (R > 3) f(3, x3, y3);
}

// Whether y[r*ldy + c] is finite for every r < R, c < dv.
template <size_t R>
HWY_INLINE bool OutputsFinite(D d, const float* HWY_RESTRICT y, size_t ldy, size_t dv) {
  const size_t N = hn::Lanes(d);
  const size_t full = dv - dv % N;
  auto ok = hn::IsFinite(hn::Zero(d));  // all true
  for (size_t r = 0; r < R; ++r) {
    for (size_t c = 0; c < full; c += N) ok = hn::And(ok, hn::IsFinite(hn::LoadU(d, y + r * ldy + c)));
    if (full < dv) ok = hn::And(ok, hn::IsFinite(LoadTail(d, y + r * ldy + full, dv - full)));  // zeros past dv
  }
  return hn::AllTrue(d, ok);
}

// The least lane of the first R of l0..l3 (lane-wise: one vector).
template <size_t R>
HWY_INLINE V MinOfRows(V l0, V l1, V l2, V l3) {
  if (R > 1) l0 = hn::Min(l0, l1);
  if (R > 2) l0 = hn::Min(l0, l2);
  if (R > 3) l0 = hn::Min(l0, l3);
  return l0;
}

// The fused block for R rows. The rows' max, exp and sum chains run
// interleaved (j outer, rows inner), which short rows (the small shapes'
// case) need: a row at a time is bound by the latency of its reductions. No
// NaN bookkeeping in the max (x86 max returns an operand): a NaN score makes
// its row's sum NaN instead, which the check below catches. The max pass
// also keeps each row's least score, so a -inf one (a dot product that
// overflowed: the driver recomputes it) declines; keys outside a row's
// range get -FLT_MAX instead, whose numerator is exactly 0 below any max
// above -FLT_MAX (a row at -FLT_MAX declines). kFixed: dk and dv are the
// constants of a fixed-extent kernel, and the block products are inlined for
// them (the same operations in the same order as the generic kernel, so the
// same floats).
template <size_t R, bool kFixed>
HWY_INLINE bool AttendRows(const AttendBlock& b, size_t dk, size_t dv) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  const D d;
  const size_t N = hn::Lanes(d);
  float* HWY_RESTRICT s = b.s;
  const size_t lds = b.lds, count = b.count, full = count - count % N, rest = count - full;
  if (R == kBlockRows && b.kt) ScoresBlockTransposed(b.q, b.ldq, b.kt, b.ldkt, count, dk, b.scale, s, lds);
  else if (kFixed) ScoresBlockImpl(b.q, b.ldq, R, b.k, b.ldk, count, dk, b.scale, s, lds);
  else ScoresBlock(b.q, b.ldq, R, b.k, b.ldk, count, dk, b.scale, s, lds);
  if (b.own) {  // keys outside a row's range: -FLT_MAX, finite, with numerators exactly 0
    for (size_t r = 0; r < R; ++r) {
      float* sr = s + r * lds;
      for (size_t j = 0; j < b.own[2 * r]; ++j) sr[j] = -kMax;
      for (size_t j = b.own[2 * r + 1]; j < count; ++j) sr[j] = -kMax;
    }
  }
  V m0 = hn::Set(d, -kInf), m1 = m0, m2 = m0, m3 = m0;  // each row's max
  V l0 = hn::Set(d, kInf), l1 = l0, l2 = l0, l3 = l0;   // each row's least score
  for (size_t j = 0; j < full; j += N)
    ForRows<R>(
        [&](size_t r, V& m, V& l) {
          const V x = hn::LoadU(d, s + r * lds + j);
          m = hn::Max(m, x);
          l = hn::Min(l, x);
        },
        m0, m1, m2, m3, l0, l1, l2, l3);
  if (rest)
    ForRows<R>(
        [&](size_t r, V& m, V& l) {
          const V x = LoadTail(d, s + r * lds + full, rest);  // lanes past count 0: finite
          m = hn::Max(m, hn::IfThenElse(hn::FirstN(d, rest), x, hn::Set(d, -kInf)));
          l = hn::Min(l, x);
        },
        m0, m1, m2, m3, l0, l1, l2, l3);
  ForRows<R>([&](size_t, V& m, V&) { m = BroadcastMax(d, m); }, m0, m1, m2, m3, l0, l1, l2, l3);
  bool ok = hn::AllTrue(d, hn::Gt(MinOfRows<R>(l0, l1, l2, l3), hn::Set(d, -kInf)));
  V a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;  // each row's sum
  for (size_t j = 0; j < full; j += N)
    ForRows<R>(
        [&](size_t r, V& m, V& a) {
          const V e = ExpNonPositive(d, hn::Sub(hn::LoadU(d, s + r * lds + j), m));
          hn::StoreU(e, d, s + r * lds + j);
          a = hn::Add(a, e);
        },
        m0, m1, m2, m3, a0, a1, a2, a3);
  if (rest)
    ForRows<R>(
        [&](size_t r, V& m, V& a) {
          float* x = s + r * lds + full;
          const V e = hn::IfThenElseZero(hn::FirstN(d, rest), ExpNonPositive(d, hn::Sub(LoadTail(d, x, rest), m)));
          StoreTail(d, e, x, rest);
          a = hn::Add(a, e);
        },
        m0, m1, m2, m3, a0, a1, a2, a3);
  // A row with a finite max has a term exp(0) = 1, so its sum is >= 1; the
  // compare also fails for a NaN sum.
  float inv[kBlockRows];
  ForRows<R>(
      [&](size_t r, V& m, V& a) {
        const float mx = hn::GetLane(m), sum = ReduceSum(d, a);
        ok &= mx > -kMax && mx < kInf && sum >= 1.0f;
        b.max[r] = mx;
        b.sum[r] = sum;
        inv[r] = 1.0f / sum;
      },
      m0, m1, m2, m3, a0, a1, a2, a3);
  if (!ok) return false;
  if (kFixed) WeightedSumBlockImpl(s, lds, R, b.v, b.ldv, count, dv, inv, b.y, b.ldy);
  else WeightedSumBlock(s, lds, R, b.v, b.ldv, count, dv, inv, b.y, b.ldy);
  // An inf or NaN in V (a zero weight times inf is NaN): declined, the
  // driver's row kernels skip zero weights.
  return OutputsFinite<R>(d, b.y, b.ldy, dv);
}

bool AttendBlockKernel(const AttendBlock& b) {
  switch (b.rows) {
    case 1: return AttendRows<1, false>(b, b.dk, b.dv);
    case 2: return AttendRows<2, false>(b, b.dk, b.dv);
    case 3: return AttendRows<3, false>(b, b.dk, b.dv);
    default: return AttendRows<4, false>(b, b.dk, b.dv);
  }
}

#if TINYATTN_HWY_SUM8
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
#endif  // TINYATTN_HWY_SUM8

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

#if TINYATTN_HWY_SUM8
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
#endif

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

#if TINYATTN_HWY_SUM8
#define TINYATTN_HWY_MULTI_BLOCK_KEYS kMultiBlockKeys
#else
#define TINYATTN_HWY_MULTI_BLOCK_KEYS 0
#endif

#if !HWY_HAVE_SCALABLE
// R rows of at most two vectors (first + second lanes), each in registers
// from its load to its store, pass by pass across the rows (R independent
// chains in each): RowMax, ExpShiftSum and Scale's operations on them, in
// their order, so the same floats, without the calls, the store and reload
// between the passes or the scalar round trips. Arrays of vectors: not on
// the sizeless SVE targets, which keep the row-by-row primitives.
template <size_t R>
HWY_INLINE void ShortRows(float* HWY_RESTRICT s, size_t ld, size_t first, size_t second, float* max, float* sum) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const D d;
  const size_t N = hn::Lanes(d);
  const V minus_inf = hn::Set(d, -kInf);
  V a[R], b[R];
  float mx[R];
  // RowMax: whole vectors into one maximum, a partial one into another.
  for (size_t r = 0; r < R; ++r) {
    const float* x = s + r * ld;
    a[r] = first == N ? hn::LoadU(d, x) : hn::IfThenElse(hn::FirstN(d, first), LoadTail(d, x, first), minus_inf);
    b[r] = second == N ? hn::LoadU(d, x + N)
           : second    ? hn::IfThenElse(hn::FirstN(d, second), LoadTail(d, x + N, second), minus_inf)
                       : minus_inf;
  }
  for (size_t r = 0; r < R; ++r) {
    const bool nan = !hn::AllFalse(d, hn::Or(hn::IsNaN(a[r]), hn::IsNaN(b[r])));
    const V whole = first == N ? (second == N ? hn::Max(hn::Max(minus_inf, a[r]), b[r]) : hn::Max(minus_inf, a[r]))
                               : minus_inf;
    const V part = first == N ? (second == N ? minus_inf : b[r]) : a[r];
    mx[r] = nan ? std::numeric_limits<float>::quiet_NaN()
                : hn::GetLane(BroadcastMax(d, hn::Max(hn::Max(whole, part), minus_inf)));
    max[r] = mx[r];
  }
  // ExpShiftSum: a whole first vector, then the partial or second one (lanes
  // past the row are -inf here, so their exp is 0 before the mask).
  for (size_t r = 0; r < R; ++r) {
    const V sh = hn::Set(d, mx[r]);
    const V e0 = first == N ? ExpPoly(d, hn::Sub(a[r], sh)) : hn::Zero(d);
    const V e1 = first == N ? (second == N ? ExpPoly(d, hn::Sub(b[r], sh))
                               : second    ? hn::IfThenElseZero(hn::FirstN(d, second), ExpPoly(d, hn::Sub(b[r], sh)))
                                           : hn::Zero(d))
                            : hn::IfThenElseZero(hn::FirstN(d, first), ExpPoly(d, hn::Sub(a[r], sh)));
    a[r] = e0;
    b[r] = e1;
  }
  // Scale by 1 / sum; rows whose maximum is -inf, +inf or NaN stay as they were.
  for (size_t r = 0; r < R; ++r) {
    if (!(mx[r] > -kInf && mx[r] < kInf)) continue;
    const float total = ReduceSum(d, hn::Add(a[r], b[r]));
    sum[r] = total;
    const V inv = hn::Set(d, 1.0f / total);
    float* x = s + r * ld;
    if (first == N) hn::StoreU(hn::Mul(a[r], inv), d, x);
    else StoreTail(d, hn::Mul(b[r], inv), x, first);
    if (second == N) hn::StoreU(hn::Mul(b[r], inv), d, x + N);
    else if (second) StoreTail(d, hn::Mul(b[r], inv), x + N, second);
  }
}

bool SoftmaxShortRows(float* HWY_RESTRICT s, size_t ld, size_t count, size_t n, float* max, float* sum) {
  const size_t N = hn::Lanes(D());
  if (n == 0 || n > 2 * N || count == 0 || count > kShortRowsAtOnce) return false;
  const size_t first = n > N ? N : n, second = n > N ? n - N : 0;
  size_t r = 0;
  for (; r + 4 <= count; r += 4) ShortRows<4>(s + r * ld, ld, first, second, max + r, sum + r);
  switch (count - r) {
    case 3: ShortRows<3>(s + r * ld, ld, first, second, max + r, sum + r); break;
    case 2: ShortRows<2>(s + r * ld, ld, first, second, max + r, sum + r); break;
    case 1: ShortRows<1>(s + r * ld, ld, first, second, max + r, sum + r); break;
    default: break;
  }
  return true;
}
#define TINYATTN_HWY_SHORT_ROWS SoftmaxShortRows, 2 * hn::MaxLanes(D())
#else
#define TINYATTN_HWY_SHORT_ROWS nullptr, 0
#endif  // !HWY_HAVE_SCALABLE
#endif  // HWY_TARGET != HWY_SCALAR

#undef TINYATTN_HWY_MASKED_MEM
#undef TINYATTN_HWY_SUM4
#undef TINYATTN_HWY_SUM8

const KernelsF32* Table() {
#if HWY_TARGET != HWY_SCALAR
  static constexpr KernelsF32 kTable{"highway", SimdTarget, Scores,      RowMax,           ExpShiftSum,
                                     WeightedSum, Axpy,    Scale,       Exp,              ScoresBlock,
                                     WeightedSumBlock, AttendBlockKernel, ScoresBlockTransposed, kAttendFixed.entry,
                                     TINYATTN_HWY_SHORT_ROWS, TINYATTN_HWY_MULTI_BLOCK_KEYS};
#else  // one lane: a register tile gains nothing over the row kernels
  static constexpr KernelsF32 kTable{"highway", SimdTarget, Scores, RowMax, ExpShiftSum,
                                     WeightedSum, Axpy,      Scale,  Exp};
#endif
  return &kTable;
}
#undef TINYATTN_HWY_SHORT_ROWS
#undef TINYATTN_HWY_MULTI_BLOCK_KEYS

}  // namespace HWY_NAMESPACE
}  // namespace highway
}  // namespace tinyattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tinyattn {
namespace highway {

#if TINYATTN_HWY_DYNAMIC
HWY_EXPORT(Table);
const KernelsF32& kernels_f32() { return *HWY_DYNAMIC_DISPATCH(Table)(); }
#else
const KernelsF32& kernels_f32() { return *HWY_STATIC_DISPATCH(Table)(); }
#endif

}  // namespace highway

template <>
const KernelsF32* port_kernels_f32<Port::kHighway>() {
  return &highway::kernels_f32();
}
}  // namespace tinyattn
#endif  // HWY_ONCE
