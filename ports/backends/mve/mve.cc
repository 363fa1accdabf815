// The Helium (MVE) port for Cortex-M55: four fp32 lanes per 128-bit vector.
// Tails use tail predication (vctp32q with zeroing loads and predicated
// stores) instead of scalar loops, so no element outside the given ranges is
// touched; the hot loops run unpredicated over whole vectors and finish with
// one predicated step, which GCC 12 compiles to fewer instructions than a
// predicated loop. The exp is exp_poly
// (tinyattn/exp.h) step by step with the same coefficients, fused
// multiply-adds where the algorithm multiplies and adds. The fused block
// (attend_block, attend_fixed) is in fused-inl.h and the kernels for one to
// three rows in few-inl.h, both part of this file's translation unit.
#include "mve.h"
#include "port.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)

#include <arm_mve.h>

#include "backends/scalar/scalar.h"

#include "tinyattn/exp.h"

namespace tinyattn {
namespace mve {

namespace {

constexpr size_t kLanes = 4;

const char* simd_target() { return "MVE"; }

// Helium has no floating-point add across lanes; pairwise keeps the rounding
// close to the scalar port's four partial sums.
inline float sum_lanes(float32x4_t v) {
  return (vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 1)) + (vgetq_lane_f32(v, 2) + vgetq_lane_f32(v, 3));
}

inline mve_pred16_t tail(size_t n, size_t i) { return vctp32q(static_cast<uint32_t>(n - i)); }

// The coefficients exp4_core multiplies by, as scalar operands (VFMA Qd, Qn,
// Rm takes them from core registers).
struct ExpScalars {
  float magic, log2e, minus_ln2_hi, minus_ln2_lo, c5, c4, c3, c2;
};

// Pins the coefficients in core registers for a loop: GCC 12 would otherwise
// reload each from the literal pool in every iteration (eight loads per four
// elements).
inline ExpScalars exp_scalars() {
  constexpr ExpCoefficients c = kExpCoefficients;
  ExpScalars k{c.magic, c.log2e, c.minus_ln2_hi, c.minus_ln2_lo, c.c5, c.c4, c.c3, c.c2};
  asm("" : "+r"(k.magic), "+r"(k.log2e), "+r"(k.minus_ln2_hi), "+r"(k.minus_ln2_lo));
  asm("" : "+r"(k.c5), "+r"(k.c4), "+r"(k.c3), "+r"(k.c2));
  return k;
}

// exp_poly on four lanes without its two range selects (exp4 adds them):
// equal to exp_poly for x in [flush_below, overflow_above] and for NaN, which
// propagates like the scalar form: a NaN t shifts to s = 0, and NaN * 0 stays
// NaN.
// t: n + magic, whose bits tell n (may_leave_range).
inline float32x4_t exp4_core(float32x4_t x, const ExpScalars& k, float32x4_t c6, float32x4_t& t) {
  t = vfmaq_n_f32(vdupq_n_f32(k.magic), x, k.log2e);  // n + magic, rounded
  const float32x4_t n = vsubq_n_f32(t, k.magic);
  const float32x4_t s = vreinterpretq_f32_u32(vshlq_n_u32(vreinterpretq_u32_f32(t), 23));  // 2^n
  float32x4_t r = vfmaq_n_f32(x, n, k.minus_ln2_hi);
  r = vfmaq_n_f32(r, n, k.minus_ln2_lo);
  float32x4_t q = vfmasq_n_f32(c6, r, k.c5);  // q * r + c5
  q = vfmasq_n_f32(q, r, k.c4);
  q = vfmasq_n_f32(q, r, k.c3);
  q = vfmasq_n_f32(q, r, k.c2);
  const float32x4_t u = vfmaq_f32(r, vmulq_f32(r, r), q);  // expm1(r)
  // Helium arithmetic runs with the standard FPSCR value (flush-to-zero); the
  // fused s + s * u never rounds s * u on its own, so it cannot be flushed.
  return vfmaq_f32(s, s, u);  // s * (1 + u)
}

// exp_poly's range: 0 below flush_below, +inf above overflow_above.
inline float32x4_t exp4_range(float32x4_t x, float32x4_t e) {
  constexpr ExpCoefficients c = kExpCoefficients;
  // Helium's "lt" compare is "less than or unordered" (Arm condition LT), so
  // the flush test is written as flush_below > x, which is false for NaN.
  e = vpselq_f32(vdupq_n_f32(0.0f), e, vcmpgtq_f32(vdupq_n_f32(c.flush_below), x));
  return vpselq_f32(vdupq_n_f32(__builtin_huge_valf()), e, vcmpgtq_n_f32(x, c.overflow_above));
}

// exp_poly on four lanes.
inline float32x4_t exp4(float32x4_t x) {
  float32x4_t t;
  return exp4_range(x, exp4_core(x, exp_scalars(), vdupq_n_f32(kExpCoefficients.c6), t));
}

// Whether some lane of exp4_core's x may lie outside [flush_below,
// overflow_above], from its t = n + magic: while |n| < 2^22, t's bits are
// those of magic plus n, and every x outside the range has n <= -126 or
// n >= 128 (x log2e below -126 or above 128). So a lane with n in [-125, 126]
// is inside; any other (n at the edges, a t out of magic's binade from a huge
// x, inf or NaN) is flagged and takes exp4_range, which leaves a lane inside
// the range, or NaN, as it is. Integer lanes: no predicates, no float compare.
constexpr uint32_t kExpNLow = 0x4b400000u + 127u - 125u;  // bits of magic + (-125); magic = 1.5 * 2^23 + 127
constexpr uint32_t kExpNSpan = 126u + 125u;
static_assert(kExpCoefficients.magic == 12582912.0f + 127.0f, "kExpNLow assumes magic = 1.5 * 2^23 + 127");
inline bool may_leave_range(float32x4_t t) {
  return vmaxvq_u32(0u, vsubq_n_u32(vreinterpretq_u32_f32(t), kExpNLow)) > kExpNSpan;
}

// x = p[0], y = p[1], p += 2, in one LDRD: GCC 12 emits two LDRs and an add
// for the same C++, which makes these loops a third longer.
// The "m" operand tells the compiler which memory the instruction reads.
inline void load_pair(const float*& p, float& x, float& y) {
  asm("ldrd %0, %1, [%2], #8" : "=r"(x), "=r"(y), "+r"(p) : "m"(*reinterpret_cast<const float(*)[2]>(p)));
}

// a += x0 * p[0] + x1 * p[1] + x2 * p[2] + x3 * p[3] (in that order), p += 4:
// the four weights in one LDM, then four VFMA. LDM fills its registers in
// ascending number order, so they are fixed (r4, r5, r6, r8: r7 is the Thumb
// frame pointer of unoptimized builds and r9 a platform register in some
// ABIs), and the VFMAs sit in the same asm: GCC 12 otherwise schedules them
// after the next row's LDM and spills the weights.
inline void four_terms(const float*& p, float32x4_t x0, float32x4_t x1, float32x4_t x2, float32x4_t x3,
                       float32x4_t& a) {
  asm("ldm %[p]!, {r4, r5, r6, r8}\n\t"
      "vfma.f32 %q[a], %q[x0], r4\n\t"
      "vfma.f32 %q[a], %q[x1], r5\n\t"
      "vfma.f32 %q[a], %q[x2], r6\n\t"
      "vfma.f32 %q[a], %q[x3], r8"
      : [a] "+w"(a), [p] "+r"(p)
      : [x0] "w"(x0), [x1] "w"(x1), [x2] "w"(x2), [x3] "w"(x3), "m"(*reinterpret_cast<const float(*)[4]>(p))
      : "r4", "r5", "r6", "r8");
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

// The kernels for one to three rows (few_dots, few_values_all), on load_pair
// and four_terms above.
#include "few-inl.h"

namespace tinyattn {
namespace mve {
namespace {

// s_r[j] = scale * dot(q[r], k + j*ldk) for the R rows (row r's scores at s +
// r*lds), four keys at a time with the keys in the lanes (few_dots): each
// key's sum builds up in its own lane by the same operations wherever it
// sits, so a key's score is the same bits at every position of every call
// (KernelsF32::scores), and no sum across lanes is needed.
template <int R>
__attribute__((always_inline)) inline void few_scores(const float* const* q, const float* k, size_t ldk, size_t count,
                                                      size_t dk, float scale, float* s, size_t lds) {
  const uint32x4_t key_step = vmulq_n_u32(vidupq_n_u32(0u, 1), static_cast<uint32_t>(ldk * sizeof(float)));
  const size_t full = count / kLanes * kLanes;
  const float* kj = k;
  for (size_t j = 0; j < full; j += kLanes, kj += kLanes * ldk) {
    float32x4_t a[R];
    few_dots<R, false>(vaddq_n_u32(key_step, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(kj))), 0, q, dk, a);
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) vst1q_f32(s + r * lds + j, vmulq_n_f32(a[r], scale));
  }
  if (full < count) {  // the last keys: the other lanes' gathers predicated off
    const mve_pred16_t lanes = tail(count, full);
    float32x4_t a[R];
    few_dots<R, true>(vaddq_n_u32(key_step, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(kj))), lanes, q, dk, a);
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) vst1q_p_f32(s + r * lds + full, vmulq_n_f32(a[r], scale), lanes);
  }
}

void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  few_scores<1>(&q, k, ldk, count, dk, scale, s, 0);
}

float row_max(const float* x, size_t n) {
  // VMAXNM ignores NaN, so a NaN, which wins, is looked for apart: z += v * 0
  // stays 0 unless some v is NaN or infinite (inf * 0 is NaN), one VFMA per
  // vector (a compare per vector costs three more: GCC 12 moves each
  // predicate through a core register); only then a scan for the NaN.
  float32x4_t m = vdupq_n_f32(x[0]);
  float32x4_t z = vdupq_n_f32(0.0f);
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const float32x4_t v = vld1q_f32(x + j);
    m = vmaxnmq_f32(m, v);
    z = vfmaq_n_f32(z, v, 0.0f);
  }
  if (j < n) {
    const mve_pred16_t p = tail(n, j);
    const float32x4_t v = vld1q_z_f32(x + j, p);  // inactive lanes 0: z unchanged there
    m = vmaxnmq_m_f32(m, m, v, p);
    z = vfmaq_n_f32(z, v, 0.0f);
  }
  const float any = sum_lanes(z);
  if (any != any)
    for (j = 0; j < n; ++j)
      if (x[j] != x[j]) return x[j];
  return vmaxnmvq_f32(x[0], m);
}

float exp_shift_sum(float* x, size_t n, float shift) {
  float32x4_t sum = vdupq_n_f32(0.0f);
  const ExpScalars k = exp_scalars();
  const float32x4_t c6 = vdupq_n_f32(kExpCoefficients.c6);
  size_t j = 0;
  // The range selects (two compares and two predicated selects) only for
  // vectors with a lane that may need them: a softmax row's x - max rarely does.
  for (; j + kLanes <= n; j += kLanes) {
    const float32x4_t xv = vsubq_n_f32(vld1q_f32(x + j), shift);
    float32x4_t t;
    float32x4_t e = exp4_core(xv, k, c6, t);
    if (may_leave_range(t)) e = exp4_range(xv, e);
    vst1q_f32(x + j, e);
    sum = vaddq_f32(sum, e);
  }
  if (j < n) {
    const mve_pred16_t p = tail(n, j);
    const float32x4_t e = exp4(vsubq_n_f32(vld1q_z_f32(x + j, p), shift));
    vst1q_p_f32(x + j, e, p);
    sum = vaddq_m_f32(sum, sum, e, p);
  }
  return sum_lanes(sum);
}

// weighted_sum with each zero weight's term left out (a NaN or inf value row
// at weight 0 adds nothing): the path for outputs that came out not finite.
__attribute__((noinline)) void weighted_sum_skipping(const float* p, const float* v, size_t ldv, size_t count,
                                                     size_t dv, float a, float* y) {
  size_t c = 0;
  // Sixteen outputs per pass held in four accumulators (of Helium's eight
  // vector registers), each value row loaded once per pass.
  for (; c + 4 * kLanes <= dv; c += 4 * kLanes) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    const float* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) {
      const float pj = p[j];
      if (pj == 0.0f) continue;  // masked keys contribute nothing, even a NaN/inf value (KernelsF32)
      a0 = vfmaq_n_f32(a0, vld1q_f32(vc), pj);
      a1 = vfmaq_n_f32(a1, vld1q_f32(vc + 4), pj);
      a2 = vfmaq_n_f32(a2, vld1q_f32(vc + 8), pj);
      a3 = vfmaq_n_f32(a3, vld1q_f32(vc + 12), pj);
    }
    vst1q_f32(y + c, vmulq_n_f32(a0, a));
    vst1q_f32(y + c + 4, vmulq_n_f32(a1, a));
    vst1q_f32(y + c + 8, vmulq_n_f32(a2, a));
    vst1q_f32(y + c + 12, vmulq_n_f32(a3, a));
  }
  for (; c < dv; c += kLanes) {
    const mve_pred16_t pr = tail(dv, c);
    float32x4_t acc = vdupq_n_f32(0.0f);
    const float* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv)
      if (p[j] != 0.0f) acc = vfmaq_n_f32(acc, vld1q_z_f32(vc, pr), p[j]);
    vst1q_p_f32(y + c, vmulq_n_f32(acc, a), pr);
  }
}

// P.V for R rows (few_values_all), out of line: one copy for weighted_sum
// and weighted_sum_block. Each pass a call of its own: with the passes
// inlined, this frame and the widest pass's nested deeper than any kernel
// before them (the board stack bound, docs/hardening.md).
template <int R>
__attribute__((noinline)) void values_rows(const float* p, size_t ldp, const float* v, size_t ldv, size_t count,
                                           size_t dv, const float* a, float* y, size_t ldy) {
  const float* pr[R] = {p};
  float* yr[R] = {y};
#pragma GCC unroll 3
  for (int r = 1; r < R; ++r) {
    pr[r] = p + r * ldp;
    yr[r] = y + r * ldy;
  }
  few_values_all<R, true>(pr, v, ldv, count, dv, a, yr);
}

// The keys outer and up to six vectors of outputs in registers, every term
// taken: a zero weight's term adds exactly 0 where its value row is finite,
// and an output that is not finite (an inf or NaN in V, or an overflow) has
// the call run again term by term, leaving the zero weights out
// (KernelsF32::weighted_sum).
void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  values_rows<1>(p, 0, v, ldv, count, dv, &a, y, 0);
  float32x4_t z = vdupq_n_f32(0.0f);
  for (size_t c = 0; c < dv; c += kLanes) z = note_finite(z, vld1q_z_f32(y + c, tail(dv, c)));
  if (!noted_finite(z)) weighted_sum_skipping(p, v, ldv, count, dv, a, y);
}

void axpy(float a, const float* x, float* y, size_t n) {
  for (size_t c = 0; c < n; c += kLanes) {
    const mve_pred16_t p = tail(n, c);
    vst1q_p_f32(y + c, vfmaq_n_f32(vld1q_z_f32(y + c, p), vld1q_z_f32(x + c, p), a), p);
  }
}

void scale(float* x, size_t n, float a) {
  for (size_t c = 0; c < n; c += kLanes) {
    const mve_pred16_t p = tail(n, c);
    vst1q_p_f32(x + c, vmulq_n_f32(vld1q_z_f32(x + c, p), a), p);
  }
}

void exp_array(const float* x, float* out, size_t n) {
  for (size_t j = 0; j < n; j += kLanes) {
    const mve_pred16_t p = tail(n, j);
    vst1q_p_f32(out + j, exp4(vld1q_z_f32(x + j, p)), p);
  }
}

// ---- Blocks of up to kBlockRows query rows ----
//
// Helium multiplies a vector by a scalar register (VFMA Qd, Qn, Rm) but has
// no by-lane form, so a register tile puts what the rows share in the vector
// and each row's own number in a scalar: four accumulators (one per row) of
// four lanes, and at most three more vectors live (of eight). Blocks of one
// to three rows take the kernels of few-inl.h instead, which repeat no row.

// a_r += v0 * p_r[0] + v1 * p_r[1] for the four rows of a tile, each p_r
// advanced by two (one LDRD per row): the two-term step of both block kernels.
inline void four_rows_two_terms(float32x4_t v0, float32x4_t v1, const float*& p0, const float*& p1, const float*& p2,
                                const float*& p3, float32x4_t& a0, float32x4_t& a1, float32x4_t& a2, float32x4_t& a3) {
  float x0, y0, x1, y1, x2, y2, x3, y3;
  load_pair(p0, x0, y0);
  load_pair(p1, x1, y1);
  load_pair(p2, x2, y2);
  load_pair(p3, x3, y3);
  a0 = vfmaq_n_f32(vfmaq_n_f32(a0, v0, x0), v1, y0);
  a1 = vfmaq_n_f32(vfmaq_n_f32(a1, v0, x1), v1, y1);
  a2 = vfmaq_n_f32(vfmaq_n_f32(a2, v0, x2), v1, y2);
  a3 = vfmaq_n_f32(vfmaq_n_f32(a3, v0, x3), v1, y3);
}

// Row r of a tile to out + r*ld, for r < rows: all four lanes, or (kPartial)
// the lanes of `lanes`.
template <bool kPartial>
inline void store_row(float* out, float32x4_t y, mve_pred16_t lanes) {
  if (kPartial)
    vst1q_p_f32(out, y, lanes);
  else
    vst1q_f32(out, y);
}

template <bool kPartial>
inline void store_rows(float* out, size_t ld, size_t rows, mve_pred16_t lanes, float32x4_t y0, float32x4_t y1,
                       float32x4_t y2, float32x4_t y3) {
  store_row<kPartial>(out, y0, lanes);
  if (rows > 1) store_row<kPartial>(out + ld, y1, lanes);
  if (rows > 2) store_row<kPartial>(out + 2 * ld, y2, lanes);
  if (rows > 3) store_row<kPartial>(out + 3 * ld, y3, lanes);
}

// Columns c and c+1 (bytes kOffset and kOffset + 4 past the addresses) of
// score_keys' four rows: one LDRD per row.
template <bool kPartial, int kOffset>
inline void two_columns(uint32x4_t addr, mve_pred16_t lanes, const float*& q0, const float*& q1, const float*& q2,
                        const float*& q3, float32x4_t& a0, float32x4_t& a1, float32x4_t& a2, float32x4_t& a3) {
  const float32x4_t k0 =
      kPartial ? vldrwq_gather_base_z_f32(addr, kOffset, lanes) : vldrwq_gather_base_f32(addr, kOffset);
  const float32x4_t k1 =
      kPartial ? vldrwq_gather_base_z_f32(addr, kOffset + 4, lanes) : vldrwq_gather_base_f32(addr, kOffset + 4);
  four_rows_two_terms(k0, k1, q0, q1, q2, q3, a0, a1, a2, a3);
}

// Four keys of scores_block: lane i of row r's accumulator is the dot product
// with key j+i. K is read by column (element c of key j+i in lane i) with
// gathers from a vector of addresses, so each sum builds up in its own lane
// and needs no reduction across lanes. The gathers take immediate offsets
// (four columns, then one vector add moves the addresses on; GCC 12 rejects
// the write-back gather intrinsics). kPartial: fewer than four keys; the
// gathers of the missing lanes are predicated off, so no key outside
// [0, count) is read.
template <bool kPartial>
inline void score_keys(const float* const* q, size_t rows, const float* kj, size_t ldk, size_t keys, size_t dk,
                       float scale, float* s, size_t lds) {
  const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(keys));
  const uint32_t base = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(kj));
  uint32x4_t addr = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0u, 1), static_cast<uint32_t>(ldk * sizeof(float))), base);
  const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  size_t c = dk;
  // Eight columns per step: the gathers' immediate offsets reach 28 bytes, so
  // one address add and one loop branch serve 32 VFMA.
  for (; c >= 8; c -= 8) {
    two_columns<kPartial, 0>(addr, lanes, q0, q1, q2, q3, a0, a1, a2, a3);
    two_columns<kPartial, 8>(addr, lanes, q0, q1, q2, q3, a0, a1, a2, a3);
    two_columns<kPartial, 16>(addr, lanes, q0, q1, q2, q3, a0, a1, a2, a3);
    two_columns<kPartial, 24>(addr, lanes, q0, q1, q2, q3, a0, a1, a2, a3);
    addr = vaddq_n_u32(addr, 8 * sizeof(float));
  }
  if (c >= 4) {
    two_columns<kPartial, 0>(addr, lanes, q0, q1, q2, q3, a0, a1, a2, a3);
    two_columns<kPartial, 8>(addr, lanes, q0, q1, q2, q3, a0, a1, a2, a3);
    addr = vaddq_n_u32(addr, 4 * sizeof(float));
    c -= 4;
  }
  for (; c > 0; --c, ++q0, ++q1, ++q2, ++q3) {
    const float32x4_t k0 = kPartial ? vldrwq_gather_base_z_f32(addr, 0, lanes) : vldrwq_gather_base_f32(addr, 0);
    a0 = vfmaq_n_f32(a0, k0, *q0);
    a1 = vfmaq_n_f32(a1, k0, *q1);
    a2 = vfmaq_n_f32(a2, k0, *q2);
    a3 = vfmaq_n_f32(a3, k0, *q3);
    addr = vaddq_n_u32(addr, sizeof(float));
  }
  store_rows<kPartial>(s, lds, rows, lanes, vmulq_n_f32(a0, scale), vmulq_n_f32(a1, scale), vmulq_n_f32(a2, scale),
                       vmulq_n_f32(a3, scale));
}

// scores_block for two or three rows (decode's grouped query rows): no
// repeated row.
template <int R>
__attribute__((noinline)) void scores_few(const float* q, size_t ldq, const float* k, size_t ldk, size_t count,
                                          size_t dk, float scale, float* s, size_t lds) {
  const float* qr[R] = {q, q + ldq};
  if (R > 2) qr[R - 1] = q + (R - 1) * ldq;
  few_scores<R>(qr, k, ldk, count, dk, scale, s, lds);
}

// scores_block for four rows.
__attribute__((noinline)) void scores_four(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk,
                                           size_t count, size_t dk, float scale, float* s, size_t lds) {
  const float* qr[kBlockRows] = {q, q + ldq, q + 2 * ldq, q + 3 * ldq};
  size_t j = 0;
  for (; j + kLanes <= count; j += kLanes) score_keys<false>(qr, rows, k + j * ldk, ldk, kLanes, dk, scale, s + j, lds);
  if (j < count) score_keys<true>(qr, rows, k + j * ldk, ldk, count - j, dk, scale, s + j, lds);
}

// Each row count in a frame of its own, this one nearly none: the kernels
// nest no deeper than before (the board stack bound, docs/hardening.md).
void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                  float scale, float* s, size_t lds) {
  if (rows == 1) return scores(q, k, ldk, count, dk, scale, s);
  if (rows == 2) return scores_few<2>(q, ldq, k, ldk, count, dk, scale, s, lds);
  if (rows == 3) return scores_few<3>(q, ldq, k, ldk, count, dk, scale, s, lds);
  scores_four(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
}

// Four columns of weighted_sum_block: value row j (one vector) times each
// row's weight p[r][j] (a scalar). Zero weights are not skipped: the driver
// calls the block form only for finite value rows (KernelsF32). kPartial:
// fewer than four columns; zeroing loads and predicated stores keep to them.
template <bool kPartial>
inline void weigh_columns(const float* const* p, size_t rows, const float* vc, size_t ldv, size_t count, size_t cols,
                          const float* a, float* y, size_t ldy) {
  const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(cols));
  const float *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  size_t j = count;
  for (; j >= 4; j -= 4) {  // four keys: one LDM per row
    const float32x4_t x0 = kPartial ? vld1q_z_f32(vc, lanes) : vld1q_f32(vc);
    vc += ldv;
    const float32x4_t x1 = kPartial ? vld1q_z_f32(vc, lanes) : vld1q_f32(vc);
    vc += ldv;
    const float32x4_t x2 = kPartial ? vld1q_z_f32(vc, lanes) : vld1q_f32(vc);
    vc += ldv;
    const float32x4_t x3 = kPartial ? vld1q_z_f32(vc, lanes) : vld1q_f32(vc);
    vc += ldv;
    four_terms(p0, x0, x1, x2, x3, a0);
    four_terms(p1, x0, x1, x2, x3, a1);
    four_terms(p2, x0, x1, x2, x3, a2);
    four_terms(p3, x0, x1, x2, x3, a3);
  }
  for (; j >= 2; j -= 2, vc += 2 * ldv) {  // two keys: one LDRD per row
    const float32x4_t x0 = kPartial ? vld1q_z_f32(vc, lanes) : vld1q_f32(vc);
    const float32x4_t x1 = kPartial ? vld1q_z_f32(vc + ldv, lanes) : vld1q_f32(vc + ldv);
    four_rows_two_terms(x0, x1, p0, p1, p2, p3, a0, a1, a2, a3);
  }
  if (j) {
    const float32x4_t x0 = kPartial ? vld1q_z_f32(vc, lanes) : vld1q_f32(vc);
    a0 = vfmaq_n_f32(a0, x0, *p0);
    a1 = vfmaq_n_f32(a1, x0, *p1);
    a2 = vfmaq_n_f32(a2, x0, *p2);
    a3 = vfmaq_n_f32(a3, x0, *p3);
  }
  // Rows beyond `rows` are not stored, so their a[r] is never read.
  store_rows<kPartial>(y, ldy, rows, lanes, vmulq_n_f32(a0, a[0]), vmulq_n_f32(a1, rows > 1 ? a[1] : 0.0f),
                       vmulq_n_f32(a2, rows > 2 ? a[2] : 0.0f), vmulq_n_f32(a3, rows > 3 ? a[3] : 0.0f));
}

// weighted_sum_block for four rows, a key count that four divides and whole
// vectors of columns (the driver's usual call): the same sums in the same
// order as weigh_columns, with no row or remainder tests per tile (about 50
// instructions a tile less).
__attribute__((noinline)) void weighted_sum_block_full(const float* p, size_t ldp, const float* v, size_t ldv,
                                                       size_t count, size_t dv, const float* a, float* y, size_t ldy) {
  for (size_t c = 0; c < dv; c += kLanes) {
    const float *p0 = p, *p1 = p + ldp, *p2 = p + 2 * ldp, *p3 = p + 3 * ldp;
    const float* vc = v + c;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (size_t j = count / 4; j > 0; --j) {
      const float32x4_t x0 = vld1q_f32(vc);
      vc += ldv;
      const float32x4_t x1 = vld1q_f32(vc);
      vc += ldv;
      const float32x4_t x2 = vld1q_f32(vc);
      vc += ldv;
      const float32x4_t x3 = vld1q_f32(vc);
      vc += ldv;
      four_terms(p0, x0, x1, x2, x3, a0);
      four_terms(p1, x0, x1, x2, x3, a1);
      four_terms(p2, x0, x1, x2, x3, a2);
      four_terms(p3, x0, x1, x2, x3, a3);
    }
    float* yc = y + c;
    vst1q_f32(yc, vmulq_n_f32(a0, a[0]));
    vst1q_f32(yc + ldy, vmulq_n_f32(a1, a[1]));
    vst1q_f32(yc + 2 * ldy, vmulq_n_f32(a2, a[2]));
    vst1q_f32(yc + 3 * ldy, vmulq_n_f32(a3, a[3]));
  }
}

// weighted_sum_block for four rows, any count and dv.
__attribute__((noinline)) void weighted_sum_four(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv,
                                                 size_t count, size_t dv, const float* a, float* y, size_t ldy) {
  const float* pr[kBlockRows] = {p, p + ldp, p + 2 * ldp, p + 3 * ldp};
  size_t c = 0;
  for (; c + kLanes <= dv; c += kLanes) weigh_columns<false>(pr, rows, v + c, ldv, count, kLanes, a, y + c, ldy);
  if (c < dv) weigh_columns<true>(pr, rows, v + c, ldv, count, dv - c, a, y + c, ldy);
}

// A dispatcher with nearly no frame, as scores_block.
void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count, size_t dv,
                        const float* a, float* y, size_t ldy) {
  if (rows == kBlockRows && count % 4 == 0 && dv % kLanes == 0)
    return weighted_sum_block_full(p, ldp, v, ldv, count, dv, a, y, ldy);
  if (rows == kBlockRows) return weighted_sum_four(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
  // One to three rows: each row's own accumulators, no repeated row.
  if (rows == 1) return values_rows<1>(p, ldp, v, ldv, count, dv, a, y, ldy);
  if (rows == 2) return values_rows<2>(p, ldp, v, ldv, count, dv, a, y, ldy);
  values_rows<3>(p, ldp, v, ldv, count, dv, a, y, ldy);
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

// attend_block and attend_fixed (kAttendFixed), built on the block kernels above.
#include "fused-inl.h"

namespace tinyattn {
namespace mve {
namespace {

constexpr KernelsF32 make_table() {
  KernelsF32 t{};
  t.port = "mve";
  t.simd_target = simd_target;
  t.scores = scores;
  t.row_max = row_max;
  t.exp_shift_sum = exp_shift_sum;
  t.weighted_sum = weighted_sum;
  t.axpy = axpy;
  t.scale = scale;
  t.exp = exp_array;
  t.scores_block = scores_block;
  t.weighted_sum_block = weighted_sum_block;
  t.attend_block = attend_block;
  t.attend_fixed = kAttendFixed.entry;
  return t;
}
constexpr KernelsF32 kKernels = make_table();

}  // namespace

const KernelsF32& kernels_f32() { return kKernels; }

namespace {

// The tables of Attention<S>'s plain call at a square fixed extent
// (port_kernels_f32_extent): calls of full blocks alone, so the kernel is
// attend_full, declining any other block, and the declined calls run the
// scalar kernels. An image of one such shape links about 850 bytes of this
// port instead of all its kernels (the one to three rows of a decode step,
// the generic fused block, the other extents).
template <size_t kD>
bool attend_full_only(const AttendBlock& b) {
  return full_block(b) && attend_full<kD, kD>(b);
}
template <size_t kD>
struct ExtentTable {
  static constexpr SquareFixedExtents kOne = one_fixed_extent(detail::fixed_extent(kD, kD), attend_full_only<kD>);
  static constexpr KernelsF32 make() {
    KernelsF32 t = fixed_extent_table(scalar::table_f32("mve"), kOne, kKernels.fixed_multi_block_keys);
    t.simd_target = simd_target;
    return t;
  }
  static constexpr KernelsF32 kTable = make();
};

}  // namespace
}  // namespace mve

template <>
const KernelsF32* port_kernels_f32<Port::kMve>() {
  return &mve::kernels_f32();
}
template <>
const KernelsF32* port_kernels_f32_extent<Port::kMve, detail::fixed_extent(8, 8)>() {
  return &mve::ExtentTable<8>::kTable;
}
template <>
const KernelsF32* port_kernels_f32_extent<Port::kMve, detail::fixed_extent(16, 16)>() {
  return &mve::ExtentTable<16>::kTable;
}
template <>
const KernelsF32* port_kernels_f32_extent<Port::kMve, detail::fixed_extent(32, 32)>() {
  return &mve::ExtentTable<32>::kTable;
}
template <>
const KernelsF32* port_kernels_f32_extent<Port::kMve, detail::fixed_extent(64, 64)>() {
  return &mve::ExtentTable<64>::kTable;
}
}  // namespace tinyattn

#endif  // __ARM_FEATURE_MVE & 2
