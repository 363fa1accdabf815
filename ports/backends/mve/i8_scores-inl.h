// The Helium int8 scores: VMLADAVA.S8 dot products of int8 vectors. Included
// by mve_i8.cc (one translation unit), after the helpers it defines (tail8,
// tail32, u32, pack4).
#ifndef TINYATTN_MVE_I8_SCORES_INL_H_
#define TINYATTN_MVE_I8_SCORES_INL_H_

#include <arm_mve.h>

#include <climits>

namespace tinyattn {
namespace mve {
namespace {

// How the zero point of q enters the generic path's dot products.
enum class QZero {
  kNone,    // zq = 0: sum q k alone
  kFolded,  // -zq fits int8: sum q k + sum k (-zq), one more VMLADAVA into the same sum
  kSplit,   // zq = -128: sum k apart (VADDVA), one key at a time
};

// s_j = base + sum_c q_c k_jc (- zq sum_c k_jc) for four keys, modulo 2^32:
// `whole` vectors of 16 bytes, then the rest (dk mod 16 bytes, predicate tail).
// Pointers step with the loop (post-increment loads): fewer live registers
// than base + index.
template <QZero kMode>
inline void dot4(const int8_t* q, const int8_t* k0, size_t ldk, size_t whole, mve_pred16_t tail, bool has_tail,
                 int8x16_t nzq, int32_t base, int32_t* s) {
  const int8_t* k1 = k0 + ldk;
  const int8_t* k2 = k1 + ldk;
  const int8_t* k3 = k2 + ldk;
  int32_t d0 = base, d1 = base, d2 = base, d3 = base;
  for (size_t v = whole; v > 0; --v) {
    const int8x16_t qv = vld1q_s8(q);
    q += 16;
    const int8x16_t a = vld1q_s8(k0), b = vld1q_s8(k1), e = vld1q_s8(k2), f = vld1q_s8(k3);
    k0 += 16;
    k1 += 16;
    k2 += 16;
    k3 += 16;
    d0 = vmladavaq_s8(d0, qv, a);
    d1 = vmladavaq_s8(d1, qv, b);
    d2 = vmladavaq_s8(d2, qv, e);
    d3 = vmladavaq_s8(d3, qv, f);
    if (kMode == QZero::kFolded) {
      d0 = vmladavaq_s8(d0, nzq, a);
      d1 = vmladavaq_s8(d1, nzq, b);
      d2 = vmladavaq_s8(d2, nzq, e);
      d3 = vmladavaq_s8(d3, nzq, f);
    }
  }
  if (has_tail) {  // zeroing loads: the lanes past dk add nothing
    const int8x16_t qv = vld1q_z_s8(q, tail);
    const int8x16_t a = vld1q_z_s8(k0, tail), b = vld1q_z_s8(k1, tail), e = vld1q_z_s8(k2, tail),
                    f = vld1q_z_s8(k3, tail);
    d0 = vmladavaq_s8(d0, qv, a);
    d1 = vmladavaq_s8(d1, qv, b);
    d2 = vmladavaq_s8(d2, qv, e);
    d3 = vmladavaq_s8(d3, qv, f);
    if (kMode == QZero::kFolded) {
      d0 = vmladavaq_s8(d0, nzq, a);
      d1 = vmladavaq_s8(d1, nzq, b);
      d2 = vmladavaq_s8(d2, nzq, e);
      d3 = vmladavaq_s8(d3, nzq, f);
    }
  }
  s[0] = d0;
  s[1] = d1;
  s[2] = d2;
  s[3] = d3;
}

template <QZero kMode>
inline int32_t dot1(const int8_t* q, const int8_t* k0, size_t dk, int8x16_t nzq, int32_t base, int32_t q_zero) {
  int32_t d = base, sk = 0;
  for (size_t c = 0; c < dk; c += 16) {
    const mve_pred16_t p = tail8(dk, c);
    const int8x16_t a = vld1q_z_s8(k0 + c, p);
    d = vmladavaq_s8(d, vld1q_z_s8(q + c, p), a);
    if (kMode == QZero::kFolded) d = vmladavaq_s8(d, nzq, a);
    if (kMode == QZero::kSplit) sk = vaddvaq_s8(sk, a);
  }
  return kMode == QZero::kSplit ? static_cast<int32_t>(u32(d) - u32(q_zero) * u32(sk)) : d;
}

template <QZero kMode>
void score_keys(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t base,
                int32_t* s) {
  // -zq in every lane (kFolded: zq in [-127, 127]).
  const int8x16_t nzq = vdupq_n_s8(static_cast<int8_t>(kMode == QZero::kFolded ? -q_zero : 0));
  size_t j = 0;
  // Four keys per pass: each q vector is loaded once for four dot products.
  if (kMode != QZero::kSplit) {
    const size_t whole = dk / 16;
    const mve_pred16_t tail = tail8(dk, whole * 16);
    const bool has_tail = dk % 16 != 0;
    for (; j + 4 <= count; j += 4, k += 4 * ldk) dot4<kMode>(q, k, ldk, whole, tail, has_tail, nzq, base, s + j);
  }
  for (; j < count; ++j, k += ldk) s[j] = dot1<kMode>(q, k, dk, nzq, base, q_zero);
}

// The largest of s[0, count).
int32_t row_max(const int32_t* s, size_t count) {
  // Whole vectors unpredicated, then one predicated step: GCC 12 wraps every
  // predicate of a predicated loop in extra VMRS/VMSR moves.
  int32_t max = INT32_MIN;
  size_t j = 0;
  for (; j + 4 <= count; j += 4) max = vmaxvq_s32(max, vld1q_s32(s + j));
  if (j < count) {
    const mve_pred16_t p = tail32(count, j);
    max = vmaxvq_p_s32(max, vld1q_z_s32(s + j, p), p);
  }
  return max;
}

// Any layout, any zero points.
__attribute__((noinline)) int32_t scores_generic(const int8_t* q, const int8_t* k, size_t ldk, size_t count,
                                                 size_t dk, int32_t q_zero, int32_t k_zero, int32_t* s) {
  int32_t sum_q = 0;
  for (size_t c = 0; c < dk; c += 16) sum_q = vaddvaq_s8(sum_q, vld1q_z_s8(q + c, tail8(dk, c)));
  // dk zq zk - zk sum q, modulo 2^32: every s_j fits int32, so the wrapped sums are exact.
  const int32_t base =
      static_cast<int32_t>(static_cast<uint32_t>(dk) * u32(q_zero) * u32(k_zero) - u32(k_zero) * u32(sum_q));
  if (q_zero == 0)
    score_keys<QZero::kNone>(q, k, ldk, count, dk, q_zero, base, s);
  else if (q_zero != -128)
    score_keys<QZero::kFolded>(q, k, ldk, count, dk, q_zero, base, s);
  else
    score_keys<QZero::kSplit>(q, k, ldk, count, dk, q_zero, base, s);
  return row_max(s, count);
}

// s[j] += e k[j dk + c] for j < count, and the new maximum: one lane c of q
// whose q_c - zq did not fit int8 (scores_packed), a byte gather of four keys'
// elements c.
inline int32_t correct_lane(const int8_t* kc, size_t dk, size_t count, int32_t e, int32_t* s) {
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(dk));
  int32x4_t maxv = vdupq_n_s32(INT32_MIN);
  size_t j = 0;
  for (; j + 4 <= count; j += 4, kc += 4 * dk) {
    const int32x4_t sv = vmlaq_n_s32(vld1q_s32(s + j), vldrbq_gather_offset_s32(kc, offsets), e);
    vst1q_s32(s + j, sv);
    maxv = vmaxq_s32(maxv, sv);
  }
  int32_t max = vmaxvq_s32(INT32_MIN, maxv);
  if (j < count) {
    const mve_pred16_t p = tail32(count, j);
    const int32x4_t sv = vmlaq_n_s32(vld1q_z_s32(s + j, p), vldrbq_gather_offset_z_s32(kc, offsets, p), e);
    vstrwq_p_s32(s + j, sv, p);
    max = vmaxvq_p_s32(max, sv, p);
  }
  return max;
}

// scores for keys stored back to back (ldk = dk = 16 kWhole + rem, rem in
// [1, 15] only with kTail; the driver's layout). The query enters as
// q' = sat8(q - zq), its vectors kept in registers (lanes past dk zero), so a
// key costs one load and one VMLADAVA per 16 bytes; the lanes where q - zq
// does not fit int8 (few for a small |zq|) are added afterwards, one lane at
// a time (correct_lane), and more of them than `most_lanes` leave the row to
// scores_generic (false, nothing written). With
//   sum (q - zq)(k - zk) = sum q' k + sum_c e_c k_c - zk sum (q - zq),
// e_c = (q_c - zq) - q'_c, the last term is a base added to four sums at a
// time as one vector, which also keeps the running maximum. A key's last
// rem bytes come from a whole 16-byte load that runs into the next key
// (q' is 0 there), 16 kWhole + 2 rem >= 16 bytes; the last four keys take
// zeroing loads, so nothing past the last key is read.
template <int kWhole, bool kTail>
inline bool scores_packed_body(const int8_t* q, const int8_t* k, size_t count, size_t dk, int32_t q_zero,
                               int32_t k_zero, int32_t* s, int32_t* max_out) {
  constexpr int kVecs = kWhole + (kTail ? 1 : 0);
  const mve_pred16_t tail_p = kTail ? vctp8q(static_cast<uint32_t>(dk - 16 * kWhole)) : 0;
  int8x16_t qv[kVecs];
  uint32_t lanes[kVecs];
  int32_t sum_q = 0;
  int n_lanes = 0;
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) {
    const bool part = kTail && v == kWhole;
    const int8x16_t x = part ? vld1q_z_s8(q + 16 * v, tail_p) : vld1q_s8(q + 16 * v);
    qv[v] = part ? vqsubq_m_n_s8(vdupq_n_s8(0), x, static_cast<int8_t>(q_zero), tail_p)
                 : vqsubq_n_s8(x, static_cast<int8_t>(q_zero));
    sum_q = vaddvaq_s8(sum_q, x);
    lanes[v] = vcmpneq_s8(qv[v], vsubq_n_s8(x, static_cast<int8_t>(q_zero)));
    if (part) lanes[v] &= tail_p;
    for (uint32_t bits = lanes[v]; bits != 0; bits &= bits - 1) ++n_lanes;  // mostly none
  }
  constexpr int most_lanes = kTail ? kVecs : kWhole / 2;
  if (n_lanes > most_lanes) return false;
  // -zk sum (q - zq), modulo 2^32
  const int32_t base = static_cast<int32_t>((static_cast<uint32_t>(dk) * u32(q_zero) - u32(sum_q)) * u32(k_zero));
  const int8_t* kp = k;
  auto dot = [&](bool last) {
    int32_t d = 0;
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      const bool part = kTail && v == kWhole;
      const int8x16_t a = part && last ? vld1q_z_s8(kp + 16 * v, tail_p) : vld1q_s8(kp + 16 * v);
      d = v == 0 ? vmladavq_s8(qv[0], a) : vmladavaq_s8(d, qv[v], a);
    }
    kp += kTail ? dk : 16 * kWhole;
    return d;
  };
  int32x4_t maxv = vdupq_n_s32(INT32_MIN);
  size_t j = 0;
  // kTail: the last four keys take the scalar loop (zeroing loads).
  for (; j + (kTail ? 5 : 4) <= count; j += 4) {
    const int32_t d0 = dot(false), d1 = dot(false), d2 = dot(false), d3 = dot(false);
    const int32x4_t sv = vaddq_n_s32(pack4(d0, d1, d2, d3), base);
    vst1q_s32(s + j, sv);
    maxv = vmaxq_s32(maxv, sv);
  }
  int32_t max = vmaxvq_s32(INT32_MIN, maxv);
  for (; j < count; ++j) {
    const int32_t sj = static_cast<int32_t>(u32(dot(kTail)) + u32(base));
    s[j] = sj;
    max = sj > max ? sj : max;
  }
  if (n_lanes != 0) {
    for (int v = 0; v < kVecs; ++v)
      for (uint32_t bits = lanes[v]; bits != 0; bits &= bits - 1) {
        const int c = 16 * v + __builtin_ctz(bits);
        const int32_t exact = q[c] - q_zero;
        const int32_t e = exact - (exact < -128 ? -128 : 127);
        max = correct_lane(k + c, dk, count, e, s);
      }
  }
  *max_out = max;
  return true;
}

template <int kWhole>
__attribute__((noinline)) bool scores_packed(const int8_t* q, const int8_t* k, size_t count, int32_t q_zero,
                                             int32_t k_zero, int32_t* s, int32_t* max_out) {
  return scores_packed_body<kWhole, false>(q, k, count, 16 * kWhole, q_zero, k_zero, s, max_out);
}

// dk = 16 kWhole + rem, rem in [1, 15] (kWhole = 0: rem >= 8).
template <int kWhole>
__attribute__((noinline)) bool scores_packed_tail(const int8_t* q, const int8_t* k, size_t count, size_t dk,
                                                  int32_t q_zero, int32_t k_zero, int32_t* s, int32_t* max_out) {
  return scores_packed_body<kWhole, true>(q, k, count, dk, q_zero, k_zero, s, max_out);
}

// Back-to-back keys (ldk = dk) of the widths other than 16, 32 and 64: a
// frame apart from scores, so that those widths' calls pay no more than its
// tests (scores ends in a tail call to it, so the deepest chain is still
// one kernel's frame).
__attribute__((noinline)) int32_t scores_other(const int8_t* q, const int8_t* k, size_t count, size_t dk,
                                               int32_t q_zero, int32_t k_zero, int32_t* s) {
  int32_t max;
  if (dk == 48 && scores_packed<3>(q, k, count, q_zero, k_zero, s, &max)) return max;
  if (dk >= 8 && dk < 32 && dk != 16) {
    if (dk < 16 ? scores_packed_tail<0>(q, k, count, dk, q_zero, k_zero, s, &max)
                : scores_packed_tail<1>(q, k, count, dk, q_zero, k_zero, s, &max))
      return max;
  }
  return scores_generic(q, k, dk, count, dk, q_zero, k_zero, s);
}

// A dispatcher with a small frame: the kernels it calls are leaves, so the
// deepest chain is one kernel's frame (the forward's stack bound).
int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  int32_t max;
  if (ldk == dk) {
    if (dk == 16) {
      if (scores_packed<1>(q, k, count, q_zero, k_zero, s, &max)) return max;
    } else if (dk == 32) {
      if (scores_packed<2>(q, k, count, q_zero, k_zero, s, &max)) return max;
    } else if (dk == 64) {
      if (scores_packed<4>(q, k, count, q_zero, k_zero, s, &max)) return max;
    } else {
      return scores_other(q, k, count, dk, q_zero, k_zero, s);
    }
  }
  return scores_generic(q, k, ldk, count, dk, q_zero, k_zero, s);
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_I8_SCORES_INL_H_
