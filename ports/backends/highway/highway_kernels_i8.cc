// KernelsI8 (tinyattn/kernels_i8.h) written once with Highway, compiled per
// target like highway_kernels.cc. Every kernel returns exactly the integers
// of the scalar table: sums are exact (order-free), and the fixed-point steps
// (apply, exp2_q30) are done operation for operation in 64-bit lanes, every
// 32x32-bit product by MulEven. Scores and weighted sums take any width with
// a partial last vector (LoadTailI8); in the other kernels lanes past the
// last full vector go through the scalar formula (quant.h's building
// blocks), which is the specification.
// HWY_SCALAR and EMU128 (riscv64, Cortex-M builds) use the scalar table.
// Scores use SDOT where there is one: SVE's svdot on the SVE targets, and on
// aarch64 NEON the +dotprod file sdot_a64.cc when the CPU has it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "highway_kernels_i8.cc"
#if TINYATTN_HWY_DYNAMIC
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#endif
#include <hwy/highway.h>

#include <climits>
#include <cstring>

#include "backends/scalar/scalar.h"
#include "highway.h"
#include "port.h"
#include "sdot_a64.h"

HWY_BEFORE_NAMESPACE();
namespace tinyattn {
namespace highway {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128

const KernelsI8* TableI8() { return &scalar::kernels_i8(); }

#else

// SVE targets take the scores from SVE's own SDOT (ScoresSveDot).
#if HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128
#define TINYATTN_HWY_SVE_DOT 1
#else
#define TINYATTN_HWY_SVE_DOT 0
#endif

namespace {
namespace hn = hwy::HWY_NAMESPACE;

using D64 = hn::ScalableTag<int64_t>;
using V64 = hn::Vec<D64>;
using DU64 = hn::RebindToUnsigned<D64>;
using VU64 = hn::Vec<DU64>;
using D32H = hn::Rebind<int32_t, D64>;  // as many int32 lanes as D64 has lanes

const char* SimdTargetI8() { return hwy::TargetName(HWY_TARGET); }

// The low 32 bits of a and b (signed) multiplied into 64 bits.
HWY_INLINE V64 Mul32(V64 a, V64 b) {
  const hn::Repartition<int32_t, D64> d32;
  return hn::MulEven(hn::BitCast(d32, a), hn::BitCast(d32, b));
}
// The same for unsigned operands below 2^32.
HWY_INLINE VU64 MulU32(VU64 a, VU64 b) {
  const hn::Repartition<uint32_t, DU64> du32;
  return hn::MulEven(hn::BitCast(du32, a), hn::BitCast(du32, b));
}

// rounding_rshift (forward_i8.cc) for |x| < 2^63 - 2^61: the magnitude is
// rounded (halves away from zero) and the sign put back.
HWY_INLINE V64 RoundingShift(V64 x, int s) {
  if (s <= 0) return x;
  const D64 d;
  const DU64 du;
  const V64 sign = hn::BroadcastSignBit(x);  // 0 or -1
  const VU64 mag = hn::BitCast(du, hn::Sub(hn::Xor(x, sign), sign));
  const VU64 r = hn::ShiftRightSame(hn::Add(mag, hn::Set(du, uint64_t{1} << (s - 1))), s);
  return hn::Sub(hn::Xor(hn::BitCast(d, r), sign), sign);
}

// (x + 2^(s-1)) >> s for 0 <= x < 2^64 - 2^(s-1).
template <int kShift>
HWY_INLINE VU64 RoundShr(VU64 x) {
  const DU64 du;
  return hn::ShiftRight<kShift>(hn::Add(x, hn::Set(du, uint64_t{1} << (kShift - 1))));
}

// forward_i8.cc's 2^(i/32) table, Q1.30 (tests/kernels/int8_kernels.cc
// compares every exp value with exp2_q30).
alignas(64) constexpr int64_t kExp2Table[32] = {
    1073741824, 1097253708, 1121280436, 1145833280, 1170923762, 1196563654, 1222764986, 1249540052,
    1276901417, 1304861917, 1333434672, 1362633090, 1392470869, 1422962010, 1454120821, 1485961921,
    1518500250, 1551751076, 1585730000, 1620452965, 1655936265, 1692196547, 1729250827, 1767116489,
    1805811301, 1845353420, 1885761398, 1927054196, 1969251188, 2012372174, 2056437387, 2101467502};
constexpr uint64_t kLn2Q30 = 744261118;
constexpr uint64_t kThirdQ30 = 357913941;
constexpr uint64_t kOneQ30 = uint64_t{1} << 30;

// exp2_q30(u) for u <= 0, lane by lane, as forward_i8.cc computes it.
HWY_INLINE VU64 Exp2Q30(V64 u) {
  const D64 d;
  const DU64 du;
  const VU64 nu = hn::BitCast(du, hn::Sub(hn::Zero(d), u));  // -u >= 0
  // u = -n + f / 2^26, n = ceil(-u / 2^26), 0 <= f < 2^26.
  const VU64 n_raw = hn::ShiftRight<kLogitFracBits>(hn::Add(nu, hn::Set(du, (uint64_t{1} << kLogitFracBits) - 1)));
  const auto gone = hn::Gt(hn::BitCast(d, n_raw), hn::Set(d, 62));  // 2^-63 and below round to 0
  const VU64 n = hn::IfThenZeroElse(hn::RebindMask(du, gone), n_raw);
  const VU64 f = hn::Sub(hn::ShiftLeft<kLogitFracBits>(n), nu);
  // The mask keeps the index in the table for lanes that are discarded.
  const VU64 i = hn::And(hn::ShiftRight<21>(f), hn::Set(du, 31));
  const VU64 r = hn::And(f, hn::Set(du, (uint64_t{1} << 21) - 1));
  const VU64 one = hn::Set(du, kOneQ30);
  const VU64 z = RoundShr<kLogitFracBits>(MulU32(r, hn::Set(du, kLn2Q30)));
  VU64 t = hn::Add(one, RoundShr<30>(MulU32(z, hn::Set(du, kThirdQ30))));
  t = hn::Add(one, RoundShr<31>(MulU32(z, t)));
  t = hn::Add(one, RoundShr<30>(MulU32(z, t)));
  const VU64 table = hn::BitCast(du, hn::GatherIndex(d, kExp2Table, hn::BitCast(d, i)));
  const VU64 val = RoundShr<30>(MulU32(table, t));
  // rounding_rshift(val, n): half = 2^n / 2 is 0 for n = 0 (u = 0).
  const VU64 half = hn::ShiftRight<1>(hn::Shl(hn::Set(du, 1), n));
  return hn::IfThenZeroElse(hn::RebindMask(du, gone), hn::Shr(hn::Add(val, half), n));
}

HWY_INLINE int64_t ReduceSum64(V64 v) { return hn::GetLane(hn::SumOfLanes(D64(), v)); }

// Bytes p[0, n) in the low bytes of the result (little-endian lanes), the
// others 0, reading no byte past p + n; n <= 8. Two overlapping words where
// n >= 4 (the bytes they share are equal, so OR keeps them).
HWY_INLINE uint64_t LoadBytes(const int8_t* HWY_RESTRICT p, size_t n) {
  if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    return uint64_t{a} | (uint64_t{b} << (8 * (n - 4)));
  }
  if (n == 0) return 0;
  const auto byte = [&](size_t i) { return uint64_t{static_cast<uint8_t>(p[i])} << (8 * i); };
  return byte(0) | byte(n / 2) | byte(n - 1);
}

// Lanes [0, n) from p, the others 0, n < Lanes(d8), reading nothing past
// p + n (a row's tail may end its buffer): a masked load where it reads
// only the lanes of its mask (AVX-512, SVE); elsewhere (AVX2 has no masked
// byte loads) the vector is built from at most two 64-bit words, n being
// the same for every key of a call.
template <class D8>
HWY_INLINE hn::Vec<D8> LoadTailI8(D8 d8, const int8_t* HWY_RESTRICT p, size_t n) {
#if !HWY_MEM_OPS_MIGHT_FAULT
  return hn::MaskedLoad(hn::FirstN(d8, n), d8, p);
#else
  if constexpr (!HWY_HAVE_SCALABLE && hn::MaxLanes(D8()) <= 4) {
    const hn::Repartition<uint32_t, D8> du;
    return hn::BitCast(d8, hn::Set(du, static_cast<uint32_t>(LoadBytes(p, n))));
  } else if constexpr (!HWY_HAVE_SCALABLE && hn::MaxLanes(D8()) <= 8) {
    const hn::Repartition<uint64_t, D8> du;
    return hn::BitCast(d8, hn::Set(du, LoadBytes(p, n)));
  } else if constexpr (!HWY_HAVE_SCALABLE && hn::MaxLanes(D8()) <= 16) {
    const hn::Repartition<uint64_t, D8> du;
    const uint64_t lo = LoadBytes(p, n < 8 ? n : 8), hi = n > 8 ? LoadBytes(p + 8, n - 8) : 0;
    return hn::BitCast(d8, hn::InterleaveLower(du, hn::Set(du, lo), hn::Set(du, hi)));
  } else {
    HWY_ALIGN int8_t buf[hn::MaxLanes(D8())] = {};
    for (size_t i = 0; i < n; ++i) buf[i] = p[i];
    return hn::Load(d8, buf);
  }
#endif
}

// Stores lanes [0, n) of v to p, n < Lanes(d), writing nothing else: masked
// stores of 32-bit lanes where they cannot touch other bytes (AVX2's
// vpmaskmovd, AVX-512, SVE), else through a buffer.
template <class D32>
HWY_INLINE void StoreTailI32(D32 d, hn::Vec<D32> v, int32_t* HWY_RESTRICT p, size_t n) {
#if !HWY_MEM_OPS_MIGHT_FAULT || HWY_TARGET == HWY_AVX2
  hn::BlendedStore(v, hn::FirstN(d, n), d, p);
#else
  HWY_ALIGN int32_t buf[hn::MaxLanes(D32())];
  hn::Store(v, d, buf);
  for (size_t i = 0; i < n; ++i) p[i] = buf[i];
#endif
}

#if !TINYATTN_HWY_SVE_DOT
// Scores: int8 widened to int16, q's zero point subtracted (9 bits), then
// pairs of int16 products added into int32 lanes (x86 pmaddwd, NEON smlal,
// SVE mla). k's zero point is applied once per key by algebra:
// sum (q - zq)(k - zk) = sum (q - zq) k - zk sum (q - zq). Exact:
// |(q - zq) k| <= 255 * 128, so a pair fits int32 and the sum over Dk stays
// below 2^30; the correction is formed in int64.
using D16 = hn::ScalableTag<int16_t>;

template <class D16>
HWY_INLINE int32_t ReduceSum32(D16, hn::Vec<hn::Repartition<int32_t, D16>> a,
                               hn::Vec<hn::Repartition<int32_t, D16>> b) {
  const hn::Repartition<int32_t, D16> d32;
  return hn::GetLane(hn::SumOfLanes(d32, hn::Add(a, b)));
}

// The scores with int16 vectors of d16's width. The last vector of a row
// is a partial one: k's lanes past dk are 0, so q's (-zq there) add nothing.
template <class D16>
HWY_INLINE int32_t ScoresWith(D16 d16, const int8_t* HWY_RESTRICT q, const int8_t* HWY_RESTRICT k, size_t ldk,
                              size_t count, size_t dk, int32_t q_zero, int32_t k_zero, int32_t* HWY_RESTRICT s) {
  using V16 = hn::Vec<D16>;
  const hn::Rebind<int8_t, D16> d8;
  const hn::Repartition<int32_t, D16> d32;
  const size_t N = hn::Lanes(d16);
  const size_t full = dk - dk % N, rest = dk - full;
  const V16 qz = hn::Set(d16, static_cast<int16_t>(q_zero));
  const auto wide = [&](const int8_t* HWY_RESTRICT p) { return hn::PromoteTo(d16, hn::LoadU(d8, p)); };
  const auto wide_tail = [&](const int8_t* HWY_RESTRICT p) { return hn::PromoteTo(d16, LoadTailI8(d8, p, rest)); };
  int64_t qsum = 0;  // sum of q - zq
  for (size_t c = 0; c < dk; ++c) qsum += int32_t{q[c]} - q_zero;
  const int64_t correction = -int64_t{k_zero} * qsum;
  const V16 qt = rest ? hn::Sub(wide_tail(q + full), qz) : hn::Zero(d16);
  int32_t max = INT32_MIN;
  const auto finish = [&](size_t j, int32_t dot) {
    const int32_t r = static_cast<int32_t>(dot + correction);
    s[j] = r;
    max = r > max ? r : max;
  };
  size_t j = 0;
  // Four keys share each widened q vector; each has two accumulators (the
  // second is where NEON/SVE put half of the products).
  for (; j + 4 <= count; j += 4) {
    const int8_t* k0 = k + j * ldk;
    const int8_t* k1 = k0 + ldk;
    const int8_t* k2 = k1 + ldk;
    const int8_t* k3 = k2 + ldk;
    auto a0 = hn::Zero(d32), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (size_t c = 0; c < full; c += N) {
      const V16 qv = hn::Sub(wide(q + c), qz);
      a0 = hn::ReorderWidenMulAccumulate(d32, qv, wide(k0 + c), a0, b0);
      a1 = hn::ReorderWidenMulAccumulate(d32, qv, wide(k1 + c), a1, b1);
      a2 = hn::ReorderWidenMulAccumulate(d32, qv, wide(k2 + c), a2, b2);
      a3 = hn::ReorderWidenMulAccumulate(d32, qv, wide(k3 + c), a3, b3);
    }
    if (rest) {
      a0 = hn::ReorderWidenMulAccumulate(d32, qt, wide_tail(k0 + full), a0, b0);
      a1 = hn::ReorderWidenMulAccumulate(d32, qt, wide_tail(k1 + full), a1, b1);
      a2 = hn::ReorderWidenMulAccumulate(d32, qt, wide_tail(k2 + full), a2, b2);
      a3 = hn::ReorderWidenMulAccumulate(d32, qt, wide_tail(k3 + full), a3, b3);
    }
    finish(j, ReduceSum32(d16, a0, b0));
    finish(j + 1, ReduceSum32(d16, a1, b1));
    finish(j + 2, ReduceSum32(d16, a2, b2));
    finish(j + 3, ReduceSum32(d16, a3, b3));
  }
  for (; j < count; ++j) {
    const int8_t* kj = k + j * ldk;
    auto a0 = hn::Zero(d32), b0 = a0;
    for (size_t c = 0; c < full; c += N)
      a0 = hn::ReorderWidenMulAccumulate(d32, hn::Sub(wide(q + c), qz), wide(kj + c), a0, b0);
    if (rest) a0 = hn::ReorderWidenMulAccumulate(d32, qt, wide_tail(kj + full), a0, b0);
    finish(j, ReduceSum32(d16, a0, b0));
  }
  return max;
}

// Short rows take narrower vectors (the head widths of small models: 8,
// 16, 20, 24 on AVX-512): less padding and cheaper horizontal sums.
int32_t ScoresI8(const int8_t* HWY_RESTRICT q, const int8_t* HWY_RESTRICT k, size_t ldk, size_t count, size_t dk,
                 int32_t q_zero, int32_t k_zero, int32_t* HWY_RESTRICT s) {
#if !HWY_HAVE_SCALABLE
  if constexpr (hn::MaxLanes(D16()) > 8)
    if (dk <= 8) return ScoresWith(hn::CappedTag<int16_t, 8>(), q, k, ldk, count, dk, q_zero, k_zero, s);
  if constexpr (hn::MaxLanes(D16()) > 16)
    if (dk <= 24) return ScoresWith(hn::CappedTag<int16_t, 16>(), q, k, ldk, count, dk, q_zero, k_zero, s);
#endif
  return ScoresWith(D16(), q, k, ldk, count, dk, q_zero, k_zero, s);
}

#endif  // !TINYATTN_HWY_SVE_DOT

#if TINYATTN_HWY_SVE_DOT
// SVE has SDOT in its base set (svdot_s32: four int8 products per int32
// lane), which Highway 1.0.3 does not expose. Raw int8 operands, the zero
// points by algebra as in sdot_a64.cc; predicated loads read nothing past
// dk and give 0 in the inactive lanes, so there is no scalar tail.
int32_t ScoresSveDot(const int8_t* HWY_RESTRICT q, const int8_t* HWY_RESTRICT k, size_t ldk, size_t count, size_t dk,
                     int32_t q_zero, int32_t k_zero, int32_t* HWY_RESTRICT s) {
  const size_t N = svcntb();
  int64_t qsum = 0;
  for (size_t c = 0; c < dk; ++c) qsum += q[c];
  const int64_t base = -int64_t{k_zero} * qsum + static_cast<int64_t>(dk) * q_zero * k_zero;
  const svbool_t all32 = svptrue_b32();
  const svint8_t ones = svdup_n_s8(1);
  const bool ksums = q_zero != 0;  // sum k is needed only then
  int32_t max = INT32_MIN;
  const auto finish = [&](size_t j, svint32_t dot, svint32_t ksum) {
    const int64_t kz = ksums ? svaddv_s32(all32, ksum) : 0;
    const int32_t r = static_cast<int32_t>(svaddv_s32(all32, dot) + base - int64_t{q_zero} * kz);
    s[j] = r;
    max = r > max ? r : max;
  };
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    const int8_t* k0 = k + j * ldk;
    const int8_t* k1 = k0 + ldk;
    const int8_t* k2 = k1 + ldk;
    const int8_t* k3 = k2 + ldk;
    svint32_t a0 = svdup_n_s32(0), a1 = a0, a2 = a0, a3 = a0, s0 = a0, s1 = a0, s2 = a0, s3 = a0;
    for (size_t c = 0; c < dk; c += N) {
      const svbool_t pg = svwhilelt_b8_u64(c, dk);
      const svint8_t qv = svld1_s8(pg, q + c);
      const svint8_t v0 = svld1_s8(pg, k0 + c), v1 = svld1_s8(pg, k1 + c);
      const svint8_t v2 = svld1_s8(pg, k2 + c), v3 = svld1_s8(pg, k3 + c);
      a0 = svdot_s32(a0, qv, v0);
      a1 = svdot_s32(a1, qv, v1);
      a2 = svdot_s32(a2, qv, v2);
      a3 = svdot_s32(a3, qv, v3);
      if (ksums) {
        s0 = svdot_s32(s0, v0, ones);
        s1 = svdot_s32(s1, v1, ones);
        s2 = svdot_s32(s2, v2, ones);
        s3 = svdot_s32(s3, v3, ones);
      }
    }
    finish(j, a0, s0);
    finish(j + 1, a1, s1);
    finish(j + 2, a2, s2);
    finish(j + 3, a3, s3);
  }
  for (; j < count; ++j) {
    const int8_t* kj = k + j * ldk;
    svint32_t a0 = svdup_n_s32(0), s0 = a0;
    for (size_t c = 0; c < dk; c += N) {
      const svbool_t pg = svwhilelt_b8_u64(c, dk);
      const svint8_t v0 = svld1_s8(pg, kj + c);
      a0 = svdot_s32(a0, svld1_s8(pg, q + c), v0);
      if (ksums) s0 = svdot_s32(s0, v0, ones);
    }
    finish(j, a0, s0);
  }
  return max;
}
#endif  // TINYATTN_HWY_SVE_DOT

int64_t ExpRowI8(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  const D64 d;
  const D32H d32;
  const hn::Rebind<uint32_t, D64> du32;
  const DU64 du;
  const size_t N = hn::Lanes(d);
  const V64 mul = hn::Set(d, logit.multiplier);
  const V64 maxv = hn::Set(d, max_logit);
  const V64 masked = hn::Set(d, INT32_MIN);
  V64 sum = hn::Zero(d);
  size_t j = 0;
  for (; j + N <= n; j += N) {
    const V64 sv = hn::PromoteTo(d, hn::LoadU(d32, s + j));
    const V64 u = hn::Sub(RoundingShift(Mul32(sv, mul), logit.shift), maxv);
    const V64 ev = hn::IfThenZeroElse(hn::Eq(sv, masked), hn::BitCast(d, Exp2Q30(u)));
    sum = hn::Add(sum, ev);
    hn::StoreU(hn::BitCast(d32, hn::TruncateTo(du32, hn::BitCast(du, ev))), d32, e + j);
  }
  int64_t total = ReduceSum64(sum);
  for (; j < n; ++j) {
    e[j] = s[j] == INT32_MIN ? 0 : exp2_q30(apply(logit, s[j]) - max_logit);
    total += e[j];
  }
  return total;
}

// p = floor((e 2^15 + floor(sum/2)) / sum) <= 2^15: a float estimate, within
// one of the quotient (relative error a few 2^-24 on a value <= 2^15 + 1),
// then one exact int64 remainder test in each direction.
void ProbabilitiesI8(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  const D64 d;
  const D32H d32;
  const hn::Rebind<float, D64> df;
  const DU64 du;
  const size_t N = hn::Lanes(d);
  const int64_t half = sum / 2;
  const float recip = static_cast<float>(static_cast<double>(kProbOne) / static_cast<double>(sum));
  const VU64 sum_lo = hn::Set(du, static_cast<uint64_t>(sum) & 0xffffffffu);
  const VU64 sum_hi = hn::Set(du, static_cast<uint64_t>(sum) >> 32);  // < 2^22 (sum <= 2^53)
  const V64 sum_minus_1 = hn::Set(d, sum - 1);
  const V64 halfv = hn::Set(d, half);
  size_t j = 0;
  for (; j + N <= n; j += N) {
    const auto e32 = hn::LoadU(d32, e + j);
    const auto est = hn::MulAdd(hn::ConvertTo(df, e32), hn::Set(df, recip), hn::Set(df, 0.5f));
    V64 quot = hn::PromoteTo(d, hn::ConvertTo(d32, est));  // >= 0: truncation is floor
    const VU64 qu = hn::BitCast(du, quot);
    const VU64 prod = hn::Add(MulU32(qu, sum_lo), hn::ShiftLeft<32>(MulU32(qu, sum_hi)));
    const V64 num = hn::Add(hn::ShiftLeft<15>(hn::PromoteTo(d, e32)), halfv);
    const V64 rem = hn::Sub(num, hn::BitCast(d, prod));
    quot = hn::Add(quot, hn::BroadcastSignBit(rem));                    // rem < 0: one less
    quot = hn::Sub(quot, hn::VecFromMask(d, hn::Gt(rem, sum_minus_1)));  // rem >= sum: one more
    hn::StoreU(hn::BitCast(d32, hn::TruncateTo(hn::Rebind<uint32_t, D64>(), hn::BitCast(du, quot))), d32, p + j);
  }
  for (; j < n; ++j) p[j] = static_cast<int32_t>((static_cast<int64_t>(e[j]) * kProbOne + half) / sum);
}

// Columns in int32 lanes, four vectors held across all keys; each key adds
// p[j] (v - vz), exact by the contract's bound on sum p.
using D32 = hn::ScalableTag<int32_t>;

// kFull whole vectors of columns and (kTail) a partial one of `rest` lanes
// from c on, in one pass over the keys.
template <size_t kFull, bool kTail, class DW>
HWY_INLINE void WeightedColumns(DW d, const int32_t* HWY_RESTRICT p, const int8_t* HWY_RESTRICT v, size_t ldv,
                                size_t count, size_t rest, int32_t v_zero, int32_t* HWY_RESTRICT acc) {
  using VW = hn::Vec<DW>;
  const hn::Rebind<int8_t, DW> d8;
  const size_t N = hn::Lanes(d);
  const VW vz = hn::Set(d, v_zero);
  VW y0 = hn::Zero(d), y1 = y0, y2 = y0, y3 = y0;
  for (size_t j = 0; j < count; ++j, v += ldv) {
    if (p[j] == 0) continue;  // most keys of a peaked row
    const VW pj = hn::Set(d, p[j]);
    if (kFull > 0) y0 = hn::Add(y0, hn::Mul(pj, hn::Sub(hn::PromoteTo(d, hn::LoadU(d8, v)), vz)));
    if (kFull > 1) y1 = hn::Add(y1, hn::Mul(pj, hn::Sub(hn::PromoteTo(d, hn::LoadU(d8, v + N)), vz)));
    if (kFull > 2) y2 = hn::Add(y2, hn::Mul(pj, hn::Sub(hn::PromoteTo(d, hn::LoadU(d8, v + 2 * N)), vz)));
    if (kFull > 3) y3 = hn::Add(y3, hn::Mul(pj, hn::Sub(hn::PromoteTo(d, hn::LoadU(d8, v + 3 * N)), vz)));
    if (kTail) {
      const VW t = hn::Sub(hn::PromoteTo(d, LoadTailI8(d8, v + kFull * N, rest)), vz);
      // Lanes past rest hold -vz times the weights: never stored.
      if (kFull == 0) y0 = hn::Add(y0, hn::Mul(pj, t));
      if (kFull == 1) y1 = hn::Add(y1, hn::Mul(pj, t));
      if (kFull == 2) y2 = hn::Add(y2, hn::Mul(pj, t));
      if (kFull == 3) y3 = hn::Add(y3, hn::Mul(pj, t));
    }
  }
  if (kFull > 0) hn::StoreU(y0, d, acc);
  if (kFull > 1) hn::StoreU(y1, d, acc + N);
  if (kFull > 2) hn::StoreU(y2, d, acc + 2 * N);
  if (kFull > 3) hn::StoreU(y3, d, acc + 3 * N);
  if (kTail && kFull == 0) StoreTailI32(d, y0, acc, rest);
  if (kTail && kFull == 1) StoreTailI32(d, y1, acc + N, rest);
  if (kTail && kFull == 2) StoreTailI32(d, y2, acc + 2 * N, rest);
  if (kTail && kFull == 3) StoreTailI32(d, y3, acc + 3 * N, rest);
}

template <class DW>
HWY_INLINE void WeightedSumWith(DW d, const int32_t* HWY_RESTRICT p, const int8_t* HWY_RESTRICT v, size_t ldv,
                                size_t count, size_t dv, int32_t v_zero, int32_t* HWY_RESTRICT acc) {
  const size_t N = hn::Lanes(d);
  size_t c = 0;
  for (; c + 4 * N <= dv; c += 4 * N) WeightedColumns<4, false>(d, p, v + c, ldv, count, 0, v_zero, acc + c);
  // The last columns (fewer than four vectors), whole and partial, in one pass.
  const size_t whole = (dv - c) / N, rest = (dv - c) % N;
  v += c;
  acc += c;
  switch (whole * 2 + (rest != 0)) {
    case 1: return WeightedColumns<0, true>(d, p, v, ldv, count, rest, v_zero, acc);
    case 2: return WeightedColumns<1, false>(d, p, v, ldv, count, rest, v_zero, acc);
    case 3: return WeightedColumns<1, true>(d, p, v, ldv, count, rest, v_zero, acc);
    case 4: return WeightedColumns<2, false>(d, p, v, ldv, count, rest, v_zero, acc);
    case 5: return WeightedColumns<2, true>(d, p, v, ldv, count, rest, v_zero, acc);
    case 6: return WeightedColumns<3, false>(d, p, v, ldv, count, rest, v_zero, acc);
    case 7: return WeightedColumns<3, true>(d, p, v, ldv, count, rest, v_zero, acc);
    default: return;
  }
}

// Short rows take narrower vectors, as the scores do.
void WeightedSumI8(const int32_t* HWY_RESTRICT p, const int8_t* HWY_RESTRICT v, size_t ldv, size_t count, size_t dv,
                   int32_t v_zero, int32_t* HWY_RESTRICT acc) {
#if !HWY_HAVE_SCALABLE
  if constexpr (hn::MaxLanes(D32()) > 8)
    if (dv <= 8) return WeightedSumWith(hn::CappedTag<int32_t, 8>(), p, v, ldv, count, dv, v_zero, acc);
#endif
  WeightedSumWith(D32(), p, v, ldv, count, dv, v_zero, acc);
}

void RequantizeI8(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  const D64 d;
  const D32H d32;
  const hn::Rebind<int8_t, D32H> d8;
  const DU64 du;
  const size_t N = hn::Lanes(d);
  const V64 mul = hn::Set(d, output.multiplier);
  const V64 yz = hn::Set(d, y_zero);
  const V64 lo = hn::Set(d, -128), hi = hn::Set(d, 127);
  size_t c = 0;
  for (; c + N <= n; c += N) {
    V64 x = hn::Add(RoundingShift(Mul32(hn::PromoteTo(d, hn::LoadU(d32, acc + c)), mul), output.shift), yz);
    x = hn::IfThenElse(hn::Lt(x, lo), lo, x);
    x = hn::IfThenElse(hn::Gt(x, hi), hi, x);
    const auto x32 = hn::BitCast(d32, hn::TruncateTo(hn::Rebind<uint32_t, D64>(), hn::BitCast(du, x)));
    hn::StoreU(hn::DemoteTo(d8, x32), d8, y + c);
  }
  for (; c < n; ++c) {
    const int64_t x = y_zero + apply(output, acc[c]);
    y[c] = static_cast<int8_t>(x < -128 ? -128 : (x > 127 ? 127 : x));
  }
}

constexpr KernelsI8 MakeTableI8() {
  KernelsI8 t{};
  t.port = "highway";
  t.simd_target = SimdTargetI8;
#if TINYATTN_HWY_SVE_DOT
  t.scores = ScoresSveDot;
#else
  t.scores = ScoresI8;
#endif
  t.exp_row = ExpRowI8;
  t.probabilities = ProbabilitiesI8;
  t.weighted_sum = WeightedSumI8;
  t.requantize = RequantizeI8;
  return t;
}

#if TINYATTN_HWY_SDOT && HWY_TARGET == HWY_NEON
const char* SimdTargetSdot() { return "NEON+SDOT"; }

// The same table with SDOT scores, for CPUs that have them.
constexpr KernelsI8 MakeTableSdot() {
  KernelsI8 t = MakeTableI8();
  t.simd_target = SimdTargetSdot;
  t.scores = scores_sdot;
  return t;
}
#endif

}  // namespace

const KernelsI8* TableI8() {
  static constexpr KernelsI8 kTable = MakeTableI8();
#if TINYATTN_HWY_SDOT && HWY_TARGET == HWY_NEON
  static constexpr KernelsI8 kSdot = MakeTableSdot();
  if (cpu_has_sdot()) return &kSdot;
#endif
  return &kTable;
}

#undef TINYATTN_HWY_SVE_DOT

#endif  // HWY_SCALAR / EMU128

}  // namespace HWY_NAMESPACE
}  // namespace highway
}  // namespace tinyattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tinyattn {
namespace highway {

#if TINYATTN_HWY_DYNAMIC
HWY_EXPORT(TableI8);
const KernelsI8& kernels_i8() { return *HWY_DYNAMIC_DISPATCH(TableI8)(); }
#else
const KernelsI8& kernels_i8() { return *HWY_STATIC_DISPATCH(TableI8)(); }
#endif

}  // namespace highway

template <>
const KernelsI8* port_kernels_i8<Port::kHighway>() {
  return &highway::kernels_i8();
}
}  // namespace tinyattn
#endif  // HWY_ONCE
