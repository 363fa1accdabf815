// The row primitives of KernelsF32 (scores, row_max, exp_shift_sum,
// weighted_sum, axpy, scale, exp, softmax_short_rows) and what every kernel
// of the port builds on: the tail loads and stores, the horizontal sums and
// exp_poly (tinyattn/exp.h) step by step. Included once per target by
// highway_kernels.cc (and by the other -inl.h files), never compiled alone.

// Per-target include guard: foreach_target.h includes highway_kernels.cc,
// and with it this file, once per target (HWY_TARGET_TOGGLE flips each time).
#if defined(TINYATTN_HIGHWAY_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TINYATTN_HIGHWAY_ROWS_INL_H_
#undef TINYATTN_HIGHWAY_ROWS_INL_H_
#else
#define TINYATTN_HIGHWAY_ROWS_INL_H_
#endif

#include <hwy/highway.h>

#include <limits>

#include "tinyattn/exp.h"
#include "tinyattn/kernels.h"

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
#undef TINYATTN_HWY_MASKED_MEM

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

// exp(x) for x <= 0 or NaN (scores minus their row's max): only the flush
// select of ExpFixRange can apply.
template <class DX, class VX = hn::Vec<DX>>
HWY_INLINE VX ExpNonPositive(DX d, VX x) {
  return hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, kExpCoefficients.flush_below)), ExpCore(d, x));
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

// KernelsF32::simd_target.
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

#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
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

// One row of at most two vectors: ShortRows<1>'s floats, with fewer
// operations waiting on the row's chain of latencies (one call is one row's
// chain; what overlaps it is the next call's): a row of one vector computes
// no second one, the maximum and the sum stay broadcast vectors, and the exp
// takes the range fix only where a lane needs it, as ExpShiftSum does.
// Lanes past the row are -inf for the maximum and 0 for the exp, then
// dropped.
template <bool kTwo>
HWY_INLINE void ShortRow(float* HWY_RESTRICT x, size_t n, float* max, float* sum) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const D d;
  const size_t N = hn::Lanes(d);
  const size_t first = kTwo ? N : n, second = kTwo ? n - N : 0;
  const V minus_inf = hn::Set(d, -kInf);
  const auto in_first = hn::FirstN(d, first), in_second = hn::FirstN(d, second);
  const V a = first == N ? hn::LoadU(d, x) : hn::IfThenElse(in_first, LoadTail(d, x, first), minus_inf);
  const V b = !kTwo ? minus_inf
              : second == N ? hn::LoadU(d, x + N)
                            : hn::IfThenElse(in_second, LoadTail(d, x + N, second), minus_inf);
  const V mv = BroadcastMax(d, kTwo ? hn::Max(a, b) : a);
  if (HWY_UNLIKELY(!hn::AllFalse(d, kTwo ? hn::Or(hn::IsNaN(a), hn::IsNaN(b)) : hn::IsNaN(a)))) {
    *max = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float m = hn::GetLane(mv);
  *max = m;
  if (!(m > -kInf && m < kInf)) return;
  const V x0 = first == N ? hn::Sub(a, mv) : hn::IfThenElseZero(in_first, hn::Sub(a, mv));
  const V x1 = !kTwo || second == N ? hn::Sub(b, mv) : hn::IfThenElseZero(in_second, hn::Sub(b, mv));
  V e0 = ExpCore(d, x0), e1 = kTwo ? ExpCore(d, x1) : hn::Zero(d);
  if (HWY_UNLIKELY(ExpMayNeedFix(d, x0, kTwo ? x1 : x0))) {
    e0 = ExpFixRange(d, x0, e0);
    if (kTwo) e1 = ExpFixRange(d, x1, e1);
  }
  if (first != N) e0 = hn::IfThenElseZero(in_first, e0);
  if (kTwo && second != N) e1 = hn::IfThenElseZero(in_second, e1);
  const V total = hn::SumOfLanes(d, kTwo ? hn::Add(e0, e1) : e0);
  *sum = hn::GetLane(total);
#if HWY_ARCH_ARM_V7
  // ARMv7 NEON has no vector division (Highway's Div refines an estimate):
  // the scalar quotient, as the other passes take it.
  const V inv = hn::Set(d, 1.0f / *sum);
#else
  const V inv = hn::Div(hn::Set(d, 1.0f), total);
#endif
  if (first == N)
    hn::StoreU(hn::Mul(e0, inv), d, x);
  else
    StoreTail(d, hn::Mul(e0, inv), x, first);
  if (!kTwo) return;
  if (second == N)
    hn::StoreU(hn::Mul(e1, inv), d, x + N);
  else
    StoreTail(d, hn::Mul(e1, inv), x + N, second);
}

// Groups of rows, in a frame of their own: their arrays of vectors spill
// to an aligned stack frame the one-row call need not set up.
HWY_NOINLINE void ShortRowGroups(float* HWY_RESTRICT s, size_t ld, size_t count, size_t n, float* max,
                                 float* sum) {
  const size_t N = hn::Lanes(D());
  const size_t first = n > N ? N : n, second = n > N ? n - N : 0;
  size_t r = 0;
  for (; r + 4 <= count; r += 4) ShortRows<4>(s + r * ld, ld, first, second, max + r, sum + r);
  switch (count - r) {
    case 3: ShortRows<3>(s + r * ld, ld, first, second, max + r, sum + r); break;
    case 2: ShortRows<2>(s + r * ld, ld, first, second, max + r, sum + r); break;
    case 1: ShortRows<1>(s + r * ld, ld, first, second, max + r, sum + r); break;
    default: break;
  }
}

bool SoftmaxShortRows(float* HWY_RESTRICT s, size_t ld, size_t count, size_t n, float* max, float* sum) {
  const size_t N = hn::Lanes(D());
  if (n == 0 || n > 2 * N || count == 0 || count > kShortRowsAtOnce) return false;
  if (count > 1)
    ShortRowGroups(s, ld, count, n, max, sum);
  else if (n > N)
    ShortRow<true>(s, n, max, sum);
  else
    ShortRow<false>(s, n, max, sum);
  return true;
}
#endif  // HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE

}  // namespace HWY_NAMESPACE
}  // namespace highway
}  // namespace tinyattn
HWY_AFTER_NAMESPACE();

#endif  // TINYATTN_HIGHWAY_ROWS_INL_H_
