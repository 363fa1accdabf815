// The Helium port's fused block: KernelsF32::attend_block (attend_full for
// the driver's usual full, packed block, attend_rows for any other) and
// attend_fixed (attend_full compiled for Dk = Dv = 8, 16, 32, 64). Included
// by mve.cc after its block kernels, whose helpers and kernels it uses
// (scores_block, weighted_sum_block, four_terms, exp_scalars): one
// translation unit, so the compiler inlines across both files as before.
#ifndef TINYATTN_MVE_FUSED_INL_H_
#define TINYATTN_MVE_FUSED_INL_H_

#include <arm_mve.h>

#include "port.h"
#include "tinyattn/exp.h"
#include "tinyattn/kernels.h"

namespace tinyattn {
namespace mve {
namespace {

// four_terms (mve.cc) is the four-row step of the fused block too, and
// two_terms (few-inl.h) its two-key step.

inline void two_terms_four_rows(float32x4_t x0, float32x4_t x1, const float*& p0, const float*& p1, const float*& p2,
                                const float*& p3, float32x4_t& a0, float32x4_t& a1, float32x4_t& a2, float32x4_t& a3) {
  two_terms(p0, x0, x1, a0);
  two_terms(p1, x0, x1, a1);
  two_terms(p2, x0, x1, a2);
  two_terms(p3, x0, x1, a3);
}

// exp4 for the fused block's x = s - max <= 0 (max finite), or -inf, or
// NaN: no overflow select, and instead of the flush select x is clamped to
// -88 by an unsigned minimum of the bits (a non-positive float's bits grow
// with its magnitude), where n = -127 makes 2^n's bits, and so the result,
// exactly 0. Arguments from -88 to kExpFlushBelow give 0 or at most 2^-126,
// against a row sum >= 1. A NaN x (Helium's default NaN: sign clear) is
// below the clamp's bits and stays NaN, so its row's sum is NaN.
constexpr float kExpClamp = -88.0f;
static_assert(kExpClamp < kExpCoefficients.flush_below && kExpClamp * 1.44269504f < -126.5f,
              "the clamp rounds to n = -127");
inline float32x4_t exp4_nonpositive(float32x4_t x, const ExpScalars& k, uint32x4_t clamp, float32x4_t c6) {
  x = vreinterpretq_f32_u32(vminq_u32(vreinterpretq_u32_f32(x), clamp));
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(k.magic), x, k.log2e);  // n + magic, rounded
  const float32x4_t n = vsubq_n_f32(t, k.magic);
  const float32x4_t s = vreinterpretq_f32_u32(vshlq_n_u32(vreinterpretq_u32_f32(t), 23));  // 2^n
  float32x4_t r = vfmaq_n_f32(x, n, k.minus_ln2_hi);
  r = vfmaq_n_f32(r, n, k.minus_ln2_lo);
  float32x4_t q = vfmasq_n_f32(c6, r, k.c5);
  q = vfmasq_n_f32(q, r, k.c4);
  q = vfmasq_n_f32(q, r, k.c3);
  q = vfmasq_n_f32(q, r, k.c2);
  const float32x4_t u = vfmaq_f32(r, vmulq_f32(r, r), q);  // expm1(r)
  return vfmaq_f32(s, s, u);                               // s * (1 + u), as exp4
}

// The maximum of n >= 1 scores at x, with VMAXNM: a NaN score is passed
// over here and makes its row's sum NaN in exp_row. *least: the least score
// (VMINNM, from the same loads).
inline float max_row(const float* x, size_t n, float* least) {
  constexpr float kNegInf = -__builtin_huge_valf();
  const size_t full = n / kLanes * kLanes;
  float32x4_t m = vdupq_n_f32(kNegInf), l = vdupq_n_f32(-kNegInf);
  for (size_t j = 0; j < full; j += kLanes) {
    const float32x4_t v = vld1q_f32(x + j);
    m = vmaxnmq_f32(m, v);
    l = vminnmq_f32(l, v);
  }
  if (full < n) {
    const mve_pred16_t p = tail(n, full);
    const float32x4_t v = vld1q_z_f32(x + full, p);
    m = vmaxnmq_m_f32(m, m, v, p);
    l = vminnmq_m_f32(l, l, v, p);
  }
  *least = vminnmvq_f32(-kNegInf, l);
  return vmaxnmvq_f32(kNegInf, m);
}

// x[j] = exp(x[j] - max) for j < n; returns their sum. max: finite.
inline float exp_row(float* x, size_t n, float max) {
  const ExpScalars k = exp_scalars();
  const uint32x4_t clamp = vdupq_n_u32(__builtin_bit_cast(uint32_t, kExpClamp));
  const float32x4_t c6 = vdupq_n_f32(kExpCoefficients.c6);
  const size_t full = n / kLanes * kLanes;
  float32x4_t a = vdupq_n_f32(0.0f);
  for (size_t j = 0; j < full; j += kLanes) {
    const float32x4_t e = exp4_nonpositive(vsubq_n_f32(vld1q_f32(x + j), max), k, clamp, c6);
    vst1q_f32(x + j, e);
    a = vaddq_f32(a, e);
  }
  if (full < n) {
    const mve_pred16_t p = tail(n, full);
    const float32x4_t e = exp4_nonpositive(vsubq_n_f32(vld1q_z_f32(x + full, p), max), k, clamp, c6);
    vst1q_p_f32(x + full, e, p);
    a = vaddq_m_f32(a, a, e, p);
  }
  return sum_lanes(a);
}

// The softmax statistics of `rows` rows of n scores, row r at s + r*lds,
// and each score replaced by exp(score - max): false (a declined block) for
// a row with a -inf score (a dot product that overflowed, which the driver
// recomputes; keys outside a row's range are -FLT_MAX, see attend_rows),
// whose max is not finite or not above -FLT_MAX, or whose sum is not >= 1 (a
// finite max has a term exp(0) = 1; the compare fails for a NaN sum).
// inv[r] = 1 / sum.
inline bool softmax_rows(float* s, size_t lds, size_t rows, size_t n, float* max, float* sum, float* inv) {
  constexpr float kInf = __builtin_huge_valf(), kMax = __FLT_MAX__;
  for (size_t r = 0; r < rows; ++r) {
    float least;
    max[r] = max_row(s + r * lds, n, &least);
    if (!(max[r] > -kMax && max[r] < kInf && least > -kInf)) return false;
  }
  bool ok = true;
  for (size_t r = 0; r < rows; ++r) {
    sum[r] = exp_row(s + r * lds, n, max[r]);
    ok &= sum[r] >= 1.0f;
    inv[r] = 1.0f / sum[r];
  }
  return ok;
}

// A full block (kBlockRows rows, every row all `count` keys) with Dk and Dv
// multiples of four, Q, K, V and Y packed (ld = Dk or Dv): the driver's
// usual block. kDk, kDv: the extents as constants (0: b.dk, b.dv), so the
// fixed-extent entries run loops of fixed trip counts. Scores four keys at a
// time as in score_keys (K by column with gathers, two columns at a time:
// with the address vector and four accumulators that fills seven of the
// eight vector registers), the softmax row by row, then P.V four columns at
// a time (each row's four weights in one LDM per four keys).
// A frame of its own (not inlined into the entries that fall back to
// attend_block): the deepest kernel bounds every driver's stack
// (docs/hardening.md).
template <size_t kDk, size_t kDv>
__attribute__((noinline)) bool attend_full(const AttendBlock& b) {
  const size_t dk = kDk ? kDk : b.dk, dv = kDv ? kDv : b.dv, count = b.count, lds = b.lds;
  const float* q = b.q;
  float* s = b.s;
  const uint32x4_t key_step = vmulq_n_u32(vidupq_n_u32(0u, 1), static_cast<uint32_t>(dk * sizeof(float)));
  const size_t full = count / kLanes * kLanes;
  for (size_t j = 0; j < count; j += kLanes) {
    // Keys past count (the last group): their lanes predicated off, never read.
    const mve_pred16_t lanes = tail(count, j);
    uint32x4_t addr = vaddq_n_u32(key_step, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(b.k + j * dk)));
    const float *q0 = q, *q1 = q + dk, *q2 = q + 2 * dk, *q3 = q + 3 * dk;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    if (j < full) {
      for (size_t c = dk / 4; c > 0; --c) {
        two_terms_four_rows(vldrwq_gather_base_f32(addr, 0), vldrwq_gather_base_f32(addr, 4), q0, q1, q2, q3, a0, a1,
                            a2, a3);
        two_terms_four_rows(vldrwq_gather_base_f32(addr, 8), vldrwq_gather_base_f32(addr, 12), q0, q1, q2, q3, a0, a1,
                            a2, a3);
        addr = vaddq_n_u32(addr, 4 * sizeof(float));
      }
    } else {
      for (size_t c = dk / 4; c > 0; --c) {
        two_terms_four_rows(vldrwq_gather_base_z_f32(addr, 0, lanes), vldrwq_gather_base_z_f32(addr, 4, lanes), q0, q1,
                            q2, q3, a0, a1, a2, a3);
        two_terms_four_rows(vldrwq_gather_base_z_f32(addr, 8, lanes), vldrwq_gather_base_z_f32(addr, 12, lanes), q0, q1,
                            q2, q3, a0, a1, a2, a3);
        addr = vaddq_n_u32(addr, 4 * sizeof(float));
      }
    }
    float* sj = s + j;
    vst1q_p_f32(sj, vmulq_n_f32(a0, b.scale), lanes);
    vst1q_p_f32(sj + lds, vmulq_n_f32(a1, b.scale), lanes);
    vst1q_p_f32(sj + 2 * lds, vmulq_n_f32(a2, b.scale), lanes);
    vst1q_p_f32(sj + 3 * lds, vmulq_n_f32(a3, b.scale), lanes);
  }
  float inv[kBlockRows];
  if (!softmax_rows(s, lds, kBlockRows, count, b.max, b.sum, inv)) return false;
  float32x4_t z = vdupq_n_f32(0.0f);
  const size_t keys4 = count / 4, rest = count % 4;
  for (size_t c = 0; c < dv; c += kLanes) {
    const float *p0 = s, *p1 = s + lds, *p2 = s + 2 * lds, *p3 = s + 3 * lds;
    const float* vc = b.v + c;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (size_t j = keys4; j > 0; --j) {
      const float32x4_t x0 = vld1q_f32(vc), x1 = vld1q_f32(vc + dv), x2 = vld1q_f32(vc + 2 * dv),
                        x3 = vld1q_f32(vc + 3 * dv);
      vc += 4 * dv;
      four_terms(p0, x0, x1, x2, x3, a0);
      four_terms(p1, x0, x1, x2, x3, a1);
      four_terms(p2, x0, x1, x2, x3, a2);
      four_terms(p3, x0, x1, x2, x3, a3);
    }
    for (size_t j = rest; j > 0; --j, vc += dv) {
      const float32x4_t x0 = vld1q_f32(vc);
      a0 = vfmaq_n_f32(a0, x0, *p0++);
      a1 = vfmaq_n_f32(a1, x0, *p1++);
      a2 = vfmaq_n_f32(a2, x0, *p2++);
      a3 = vfmaq_n_f32(a3, x0, *p3++);
    }
    float* yc = b.y + c;
    const float32x4_t y0 = vmulq_n_f32(a0, inv[0]), y1 = vmulq_n_f32(a1, inv[1]), y2 = vmulq_n_f32(a2, inv[2]),
                      y3 = vmulq_n_f32(a3, inv[3]);
    vst1q_f32(yc, y0);
    vst1q_f32(yc + dv, y1);
    vst1q_f32(yc + 2 * dv, y2);
    vst1q_f32(yc + 3 * dv, y3);
    z = note_finite(note_finite(note_finite(note_finite(z, y0), y1), y2), y3);
  }
  return noted_finite(z);
}

// Whether attend_full may take the block.
inline bool full_block(const AttendBlock& b) {
  return b.rows == kBlockRows && b.own == nullptr && b.dk % kLanes == 0 && b.dv % kLanes == 0 && b.ldq == b.dk &&
         b.ldk == b.dk && b.ldv == b.dv && b.ldy == b.dv;
}

// attend_block for any other block: the block primitives, each row's key
// range and softmax. Its parts out of line: this path's frames then nest
// no deeper than attend_full's (the stack bound, docs/hardening.md).
__attribute__((noinline)) bool softmax_rows_apart(float* s, size_t lds, size_t rows, size_t n, float* max, float* sum,
                                                  float* inv) {
  return softmax_rows(s, lds, rows, n, max, sum, inv);
}
__attribute__((noinline)) bool attend_rows(const AttendBlock& b) {
  // Keys outside a row's range: -FLT_MAX, finite (a -inf score declines),
  // with weights exactly 0 below any max above it (softmax_rows).
  constexpr float kOutside = -__FLT_MAX__;
  const size_t rows = b.rows, count = b.count, lds = b.lds;
  scores_block(b.q, b.ldq, rows, b.k, b.ldk, count, b.dk, b.scale, b.s, lds);
  if (b.own) {
    for (size_t r = 0; r < rows; ++r) {
      float* sr = b.s + r * lds;
      for (size_t j = 0; j < b.own[2 * r]; ++j) sr[j] = kOutside;
      for (size_t j = b.own[2 * r + 1]; j < count; ++j) sr[j] = kOutside;
    }
  }
  float inv[kBlockRows] = {};
  if (!softmax_rows_apart(b.s, lds, rows, count, b.max, b.sum, inv)) return false;
  weighted_sum_block(b.s, lds, rows, b.v, b.ldv, count, b.dv, inv, b.y, b.ldy);
  float32x4_t z = vdupq_n_f32(0.0f);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < b.dv; c += kLanes) z = note_finite(z, vld1q_z_f32(b.y + r * b.ldy + c, tail(b.dv, c)));
  return noted_finite(z);
}

// ---- Blocks of one to three rows (decode), with the helpers of few-inl.h ----

// attend_block for 1 <= R < kBlockRows rows that all see every key (own ==
// nullptr), any extents and strides; the declines of attend_full.
template <int R>
__attribute__((noinline)) bool attend_few(const AttendBlock& b) {
  constexpr float kInf = __builtin_huge_valf(), kMax = __FLT_MAX__;
  const size_t dk = b.dk, dv = b.dv, count = b.count, lds = b.lds;
  const float* q[R];
  float* s[R];
  // Each row's largest and least score, reduced across lanes as they come
  // (in core registers: the vector registers hold the products).
  float max[R], least[R];
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r) {
    q[r] = b.q + r * b.ldq;
    s[r] = b.s + r * lds;
    max[r] = -kInf;
    least[r] = kInf;
  }
  const uint32x4_t key_step = vmulq_n_u32(vidupq_n_u32(0u, 1), static_cast<uint32_t>(b.ldk * sizeof(float)));
  const size_t full = count / kLanes * kLanes;
  const float* kj = b.k;
  for (size_t j = 0; j < full; j += kLanes, kj += kLanes * b.ldk) {
    float32x4_t a[R];
    few_dots<R, false>(vaddq_n_u32(key_step, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(kj))), 0, q, dk, a);
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) {
      const float32x4_t sv = vmulq_n_f32(a[r], b.scale);
      vst1q_f32(s[r] + j, sv);
      max[r] = vmaxnmvq_f32(max[r], sv);
      least[r] = vminnmvq_f32(least[r], sv);
    }
  }
  if (full < count) {  // the last keys: the other lanes' gathers predicated off
    const mve_pred16_t lanes = tail(count, full);
    float32x4_t a[R];
    few_dots<R, true>(vaddq_n_u32(key_step, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(kj))), lanes, q, dk, a);
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) {
      const float32x4_t sv = vmulq_n_f32(a[r], b.scale);
      vst1q_p_f32(s[r] + full, sv, lanes);
      max[r] = vmaxnmvq_p_f32(max[r], sv, lanes);
      least[r] = vminnmvq_p_f32(least[r], sv, lanes);
    }
  }
  float inv[R];
  bool ok = true;
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r) {
    // As softmax_rows: a NaN score (passed over here) makes the sum NaN.
    if (!(max[r] > -kMax && max[r] < kInf && least[r] > -kInf)) return false;
    b.max[r] = max[r];
    b.sum[r] = exp_row(s[r], count, max[r]);
    ok &= b.sum[r] >= 1.0f;
    inv[r] = 1.0f / b.sum[r];
  }
  if (!ok) return false;
  // Columns in passes of at most kFewMaxVectors[R] vectors, as even as they go.
  constexpr int kMaxW = kFewMaxVectors[R];
  constexpr int kW3 = kMaxW < 3 ? kMaxW : 3, kW4 = kMaxW < 4 ? kMaxW : 4, kW5 = kMaxW < 5 ? kMaxW : 5,
                kW6 = kMaxW < 6 ? kMaxW : 6;
  const size_t vectors = (dv + kLanes - 1) / kLanes;
  const size_t passes = (vectors + kMaxW - 1) / kMaxW;
  const mve_pred16_t last = tail(dv, (vectors - 1) * kLanes);
  for (size_t i = 0, c = 0; i < passes; ++i) {
    const size_t w = (vectors - c / kLanes) / (passes - i) + ((vectors - c / kLanes) % (passes - i) != 0);
    const bool tail_pass = c / kLanes + w == vectors && dv % kLanes != 0;
    float* y[R];
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) y[r] = b.y + r * b.ldy + c;
    const float* const* p = s;
    const float* vc = b.v + c;
    switch (w) {
      case 1:
        few_values_pass<R, 1, false>(p, vc, b.ldv, count, tail_pass, last, inv, y);
        break;
      case 2:
        few_values_pass<R, 2, false>(p, vc, b.ldv, count, tail_pass, last, inv, y);
        break;
      case 3:
        few_values_pass<R, kW3, false>(p, vc, b.ldv, count, tail_pass, last, inv, y);
        break;
      case 4:
        few_values_pass<R, kW4, false>(p, vc, b.ldv, count, tail_pass, last, inv, y);
        break;
      case 5:
        few_values_pass<R, kW5, false>(p, vc, b.ldv, count, tail_pass, last, inv, y);
        break;
      default:
        few_values_pass<R, kW6, false>(p, vc, b.ldv, count, tail_pass, last, inv, y);
        break;
    }
    c += w * kLanes;
  }
  // The outputs, read back: whether every one is finite (an inf or NaN in V).
  float32x4_t zy = vdupq_n_f32(0.0f);
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r)
    for (size_t c = 0; c < dv; c += kLanes) zy = note_finite(zy, vld1q_z_f32(b.y + r * b.ldy + c, tail(dv, c)));
  return noted_finite(zy);
}

// KernelsF32::attend_block.
bool attend_block(const AttendBlock& b) {
  if (full_block(b)) return attend_full<0, 0>(b);
  if (b.own == nullptr && b.rows < kBlockRows)
    return b.rows == 1 ? attend_few<1>(b) : b.rows == 2 ? attend_few<2>(b) : attend_few<3>(b);
  return attend_rows(b);
}

// attend_block for Dk = Dv = kD (KernelsF32::attend_fixed): attend_full with
// fixed trip counts. Only the square extents: each entry is about 850 bytes
// of code (-Os, bench/board/size.sh) that every image with the table links;
// the others are attend_block itself, still with the whole-call driver.
template <size_t kD>
bool attend_fixed(const AttendBlock& b) {
  return full_block(b) ? attend_full<kD, kD>(b) : attend_block(b);
}

constexpr SquareFixedExtents kAttendFixed =
    square_fixed_extents(attend_block, attend_fixed<8>, attend_fixed<16>, attend_fixed<32>, attend_fixed<64>);

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_FUSED_INL_H_
