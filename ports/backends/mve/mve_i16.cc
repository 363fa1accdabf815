// The Helium (MVE) int16 kernels: the integers of the scalar table
// (scalar_i16.cc), eight int16 or four int32 lanes at a time.
//
//  - scores: VMLALDAVA.S16, eight 16x16 products into a 64-bit sum per
//    instruction. Dk 16, 32 and 64 (in two blocks) keep the query in
//    registers (a key costs one load and one VMLALDAVA per eight columns);
//    other widths run two keys per pass, sharing the query's loads, with a
//    predicated tail.
//  - exp_row: the 64-bit differences d = max - s in 32-bit lanes (VLD2 splits
//    the words of four scores), d m rounded as apply_wide from VMULH/VMUL
//    of the words and a carry, saturated where 2^u is 0 anyway, and exp2_q30
//    in the same lanes (q30_softmax-inl.h, the int8 table's), one pass.
//  - probabilities: the int8 table's (q30_softmax-inl.h).
//  - weighted_sum: int16 weights of up to 32 keys held in registers against
//    halfword gathers of V's columns (VMLADAVA.S16), a column at a time, as
//    the int8 table's; rows with a weight of 2^15 (no int16) broadcast each
//    weight against 16 columns widened to int32 (VMLA.S32).
//  - requantize: VMULH and VRSHL, as the int8 table's (no zero point, clamp
//    to int16, VSTRH.32 narrows).
//  - i16_tflite-inl.h: the TFLite mode's requantization (SQRSHRL) and
//    softmax passes (KernelsI16Tflite).
// Loops run whole vectors unpredicated and finish with one tail-predicated
// step, so nothing outside the given ranges is read or written.
#include "backends/int8_fixed.h"
#include "backends/scalar/scalar.h"
#include "port.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)

#include <arm_mve.h>

#include <climits>

namespace tinyattn {
namespace mve {
namespace {

// Lanes [0, n - i) of the next vector (n - i may exceed the vector).
inline mve_pred16_t tail16(size_t n, size_t i) { return vctp16q(static_cast<uint32_t>(n - i)); }
inline mve_pred16_t tail32(size_t n, size_t i) { return vctp32q(static_cast<uint32_t>(n - i)); }

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#include "q30_softmax-inl.h"
#include "i16_tflite-inl.h"

namespace tinyattn {
namespace mve {
namespace {

const char* simd_target() { return "MVE"; }

// ---------------------------------------------------------------- scores

// Dk = 8 kVecs: the query's vectors in registers for the whole row. A row
// of more columns runs in blocks of them: the first block (kFirst) writes s,
// the others add to it, the last (kLast) also finds the maximum.
template <int kVecs, bool kFirst = true, bool kLast = true>
__attribute__((noinline)) int64_t scores_held(const int16_t* q, const int16_t* k, size_t ldk, size_t count,
                                              int64_t* s) {
  int16x8_t qv[kVecs];
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) qv[v] = vld1q_s16(q + 8 * v);
  int64_t max = INT64_MIN;
  for (size_t j = 0; j < count; ++j, k += ldk) {
    int64_t d = kFirst ? vmlaldavq_s16(qv[0], vld1q_s16(k)) : vmlaldavaq_s16(s[j], qv[0], vld1q_s16(k));
#pragma GCC unroll 4
    for (int v = 1; v < kVecs; ++v) d = vmlaldavaq_s16(d, qv[v], vld1q_s16(k + 8 * v));
    s[j] = d;
    if (kLast) max = d > max ? d : max;
  }
  return max;
}

// Any width: two keys per pass share the query's loads, whole vectors
// unpredicated, then (kTail) the last 1..7 columns with zeroing loads (the
// lanes past dk add nothing and are not read).
template <bool kTail>
__attribute__((noinline)) void scores_pairs(const int16_t* q, const int16_t* k, size_t ldk, size_t pairs,
                                            size_t whole, mve_pred16_t tail, int64_t* s) {
  for (; pairs > 0; --pairs, k += 2 * ldk, s += 2) {
    const int16_t* qp = q;
    const int16_t* k0 = k;
    const int16_t* k1 = k + ldk;
    int64_t d0 = 0, d1 = 0;
    for (size_t v = whole; v > 0; --v, qp += 8, k0 += 8, k1 += 8) {
      const int16x8_t qv = vld1q_s16(qp);
      d0 = vmlaldavaq_s16(d0, qv, vld1q_s16(k0));
      d1 = vmlaldavaq_s16(d1, qv, vld1q_s16(k1));
    }
    if (kTail) {
      const int16x8_t qv = vld1q_z_s16(qp, tail);
      d0 = vmlaldavaq_s16(d0, qv, vld1q_z_s16(k0, tail));
      d1 = vmlaldavaq_s16(d1, qv, vld1q_z_s16(k1, tail));
    }
    s[0] = d0;
    s[1] = d1;
  }
}

__attribute__((noinline)) int64_t scores_any(const int16_t* q, const int16_t* k, size_t ldk, size_t count,
                                             size_t dk, int64_t* s) {
  const size_t whole = dk / 8, pairs = count / 2;
  const mve_pred16_t tail = tail16(dk, 8 * whole);
  if (dk % 8 != 0)
    scores_pairs<true>(q, k, ldk, pairs, whole, tail, s);
  else
    scores_pairs<false>(q, k, ldk, pairs, whole, tail, s);
  if (count % 2) {
    const int16_t* kj = k + (count - 1) * ldk;
    int64_t d = 0;
    for (size_t c = 0; c < dk; c += 8) {
      const mve_pred16_t p = tail16(dk, c);
      d = vmlaldavaq_s16(d, vld1q_z_s16(q + c, p), vld1q_z_s16(kj + c, p));
    }
    s[count - 1] = d;
  }
  int64_t max = s[0];
  for (size_t j = 1; j < count; ++j) max = s[j] > max ? s[j] : max;
  return max;
}

// A dispatcher with a small frame: the kernels it calls are leaves.
int64_t scores(const int16_t* q, const int16_t* k, size_t ldk, size_t count, size_t dk, int64_t* s) {
  if (dk == 32) return scores_held<4>(q, k, ldk, count, s);
  if (dk == 16) return scores_held<2>(q, k, ldk, count, s);
  if (dk == 64) {  // two blocks of 32 columns: eight vectors of q do not fit beside a key's
    scores_held<4, true, false>(q, k, ldk, count, s);
    return scores_held<4, false, true>(q + 32, k + 32, ldk, count, s);
  }
  return scores_any(q, k, ldk, count, dk, s);
}

// ---------------------------------------------------------------- exp_row

// Where the logit shift puts the binary point of d m (apply_wide).
enum class Wide {
  kLow,   // shift in [1, 31]
  kMid,   // shift 32
  kHigh,  // shift in [33, 62]
};

// exp_row in one pass, four keys at a time. u = -apply_wide(logit, d),
// d = max - s = dh 2^32 + dl (modular; < 2^47 for a kept key), with
// h = 2^(shift-1) and
//   A = dl m + h = AH 2^32 + AL,   Y = AH + dh m = YH 2^32 + YL   (< 2^63)
//   apply_wide = floor((Y 2^32 + AL) / 2^shift):
//  - kHigh, k = shift - 32: h = 2^(k-1) 2^32, so AH = VMULH(dl, m) + 2^(k-1)
//    and the value is Y >> k; it is 2^31 or more exactly when YH >= 2^(k-1),
//    which is when YH << (33 - k) overflows: VQSHL saturates it to all ones,
//    and (that >> 1) | (YL >> k) is then 2^31 - 1, else the value;
//  - kMid: AH = VRMULH(dl, m) (rounds at 2^31), the value is Y, clamped to
//    2^31 - 1 (VQSHL of YH by 31 sets the top bit for any YH > 0);
//  - kLow: AL = VMUL(dl, m) + h, AH = VMULH(dl, m) plus the carry of that
//    sum; a lane with dh != 0 is at least 2^31 (Y >= dh m >= 2^30 >=
//    2^(shift-1)), so dh ORs in a top bit; the value is
//    (AH << (32 - shift)) | (AL >> shift), clamped as kHigh's.
// u = -(the clamped value): 2^31 - 1 and every larger value give exp2_q30 0
// (u < -31 2^26). A dropped key (s = INT64_MIN) takes dh = 2^32 - 1, which
// clamps in every mode. Carries and borrows are the top bit of a halving
// add (VHADD, VHSUB: 33-bit sums), so the lanes use no predicates (GCC 12
// moves every predicate of a loop through a core register).
template <Wide kMode>
int64_t exp_lanes(const int64_t* s, size_t n, uint32_t m, int32_t shift, int64_t max_score, int32_t* e) {
  const uint64_t top = static_cast<uint64_t>(max_score);
  const uint32_t top_lo = static_cast<uint32_t>(top);
  const uint32x4_t top_lo_v = vdupq_n_u32(top_lo);
  const uint32x4_t top_hi_v = vdupq_n_u32(static_cast<uint32_t>(top >> 32));
  const uint32x4_t mv = vdupq_n_u32(m);
  const int32_t right = kMode == Wide::kHigh ? shift - 32 : shift;  // kMid: unused
  const int32_t up = 33 - right;
  const uint32_t h = uint32_t{1} << ((right - 1) & 31);
  int32_t ln2 = kLn2Q30, third2 = 2 * kThirdQ30;
  uint32_t dropped_hi = 0x80000000u;  // the high word of INT64_MIN
  // In registers (exp2_q30_lanes); dropped_hi as a constant operand stops
  // GCC 12 (internal compiler error in trunc_int_for_mode).
  __asm__("" : "+r"(ln2), "+r"(third2), "+r"(dropped_hi));
  auto lanes = [&](uint32x4_t sl, uint32x4_t sh) {
    const uint32x4_t dl = vsubq_u32(top_lo_v, sl);
    const uint32x4_t borrow = vshrq_n_u32(vhaddq_n_u32(sl, ~top_lo), 31);  // sl > top_lo
    uint32x4_t dh = vsubq_u32(top_hi_v, vaddq_u32(sh, borrow));
    // sl | (sh + 2^31) is 0 for a dropped key alone, where (x - 1) >> 1 in
    // 33 bits is negative: all ones into dh.
    const uint32x4_t x = vorrq_u32(sl, vaddq_n_u32(sh, dropped_hi));
    dh = vorrq_u32(dh, vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_u32(vhsubq_n_u32(x, 1)), 31)));
    uint32x4_t r;
    if (kMode == Wide::kLow) {
      const uint32x4_t lo = vmulq_u32(dl, mv);
      const uint32x4_t al = vaddq_n_u32(lo, h);
      uint32x4_t ah = vaddq_u32(vmulhq_u32(dl, mv), vshrq_n_u32(vhaddq_n_u32(lo, h), 31));
      ah = vorrq_u32(ah, vqshlq_n_u32(dh, 31));
      r = vorrq_u32(vshrq_n_u32(vqshlq_r_u32(ah, up), 1), vshlq_r_u32(al, -right));
    } else {
      const uint32x4_t ah = kMode == Wide::kHigh ? vaddq_n_u32(vmulhq_u32(dl, mv), h) : vrmulhq_u32(dl, mv);
      const uint32x4_t plo = vmulq_u32(dh, mv);
      const uint32x4_t yl = vaddq_u32(plo, ah);
      const uint32x4_t yh = vaddq_u32(vmulhq_u32(dh, mv), vshrq_n_u32(vhaddq_u32(plo, ah), 31));
      if (kMode == Wide::kHigh) {
        r = vorrq_u32(vshrq_n_u32(vqshlq_r_u32(yh, up), 1), vshlq_r_u32(yl, -right));
      } else {
        r = vorrq_u32(vqshlq_n_u32(yh, 31), yl);
        r = vsubq_u32(r, vqsubq_n_u32(r, 0x7fffffffu));  // min(r, 2^31 - 1)
      }
    }
    return exp2_q30_lanes(vnegq_s32(vreinterpretq_s32_u32(r)), ln2, third2);
  };
  int64_t sum = 0;
  const int32_t* sp = reinterpret_cast<const int32_t*>(s);  // words: low, high (little-endian)
  int32_t* ep = e;
  for (size_t v = n / 4; v > 0; --v, sp += 8, ep += 4) {
    const int32x4x2_t w = vld2q_s32(sp);
    const int32x4_t ev = lanes(vreinterpretq_u32_s32(w.val[0]), vreinterpretq_u32_s32(w.val[1]));
    vst1q_s32(ep, ev);
    sum = vaddlvaq_s32(sum, ev);
  }
  if (n % 4 != 0) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n % 4));
    const uint32x4_t lo_words = vidupq_n_u32(0, 2);  // word offsets of four scores' low words
    const uint32_t* sw = reinterpret_cast<const uint32_t*>(sp);
    const uint32x4_t sl = vldrwq_gather_shifted_offset_z_u32(sw, lo_words, p);
    const uint32x4_t sh = vldrwq_gather_shifted_offset_z_u32(sw, vaddq_n_u32(lo_words, 1), p);
    const int32x4_t ev = lanes(sl, sh);
    vstrwq_p_s32(ep, ev, p);
    sum = vaddlvaq_p_s32(sum, ev, p);
  }
  return sum;
}

int64_t exp_row(const int64_t* s, size_t n, FixedMultiplier logit, int64_t max_score, int32_t* e) {
  const int32_t shift = logit.shift;
  const uint32_t m = static_cast<uint32_t>(logit.multiplier);
  if (shift > 32) return exp_lanes<Wide::kHigh>(s, n, m, shift, max_score, e);
  if (shift == 32) return exp_lanes<Wide::kMid>(s, n, m, shift, max_score, e);
  if (shift >= 1) return exp_lanes<Wide::kLow>(s, n, m, shift, max_score, e);
  return scalar::i16::exp_row(s, n, logit, max_score, e);  // not from plan_int16 at real scales
}

// ---------------------------------------------------------------- weighted_sum

// Four sums as one vector (lane moves, as mve_i8.cc's pack4).
inline int32x4_t pack4(int32_t a, int32_t b, int32_t c, int32_t d) {
  int32x4_t v = vdupq_n_s32(a);
  v = vsetq_lane_s32(b, v, 1);
  v = vsetq_lane_s32(c, v, 2);
  return vsetq_lane_s32(d, v, 3);
}

// One weight broadcast against 16 columns widened to int32 (any weights,
// any ldv): VLDRH.S32 and VMLA.S32.
__attribute__((noinline)) void weighted_sum_rows(const int32_t* p, const int16_t* v, size_t ldv, size_t count,
                                                 size_t dv, int32_t* acc) {
  size_t c = 0;
  for (; c + 16 <= dv; c += 16) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    const int16_t* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) {
      const int32_t pj = p[j];
      a0 = vmlaq_n_s32(a0, vldrhq_s32(vc), pj);
      a1 = vmlaq_n_s32(a1, vldrhq_s32(vc + 4), pj);
      a2 = vmlaq_n_s32(a2, vldrhq_s32(vc + 8), pj);
      a3 = vmlaq_n_s32(a3, vldrhq_s32(vc + 12), pj);
    }
    vst1q_s32(acc + c, a0);
    vst1q_s32(acc + c + 4, a1);
    vst1q_s32(acc + c + 8, a2);
    vst1q_s32(acc + c + 12, a3);
  }
  // The last 1..15 columns, four at a time, predicated.
  for (; c < dv; c += 4) {
    const mve_pred16_t pr = tail32(dv, c);
    int32x4_t a = vdupq_n_s32(0);
    const int16_t* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) a = vmlaq_n_s32(a, vldrhq_z_s32(vc, pr), p[j]);
    vstrwq_p_s32(acc + c, a, pr);
  }
}

// Keys in the lanes, as the int8 table's gather_pass: column c of V over
// eight keys is a halfword gather (offsets 0..7 ldv) and VMLADAVA.S16 adds
// the eight products p_j v_jc to the column's sum. One pass takes G groups
// of eight keys (kTail: G = 1, a group of fewer keys under `tail`, zeroing
// gathers); their weights, int16 straight from the int32 array (a halfword
// gather of the low half of each p_j), stay in registers across all the
// columns. The low half is p_j for every p but kProbOne (a row whose weight
// sits on one key), which reads as -2^15: the pass then returns false before
// writing anything. first: the sums start at 0 (else at acc).
template <int G, bool kTail>
bool gather_pass(const int32_t* p, const int16_t* v, size_t ldv, size_t dv, mve_pred16_t tail, bool first,
                 int32_t* acc) {
  const uint16x8_t p_offsets = vidupq_n_u16(0, 4);  // bytes: the low half of p_j, j = 0..7
  const int16_t* p16 = reinterpret_cast<const int16_t*>(p);
  int16x8_t pw[G];
  int16_t low = 0;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    pw[g] = kTail ? vldrhq_gather_offset_z_s16(p16 + 16 * g, p_offsets, tail)
                  : vldrhq_gather_offset_s16(p16 + 16 * g, p_offsets);
    low = vminvq_s16(low, pw[g]);
  }
  if (low == -32768) return false;
  // Groups 0 and 1 from one pointer, 2 and 3 from another 16 keys on
  // (element offsets up to 15 ldv, checked by the caller).
  const uint16x8_t o0 = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(ldv));
  const uint16x8_t o1 = vaddq_n_u16(o0, static_cast<uint16_t>(8 * ldv));
  const size_t far = 16 * ldv;
  auto column = [&](const int16_t* b) {
    int32_t a;
    if (kTail)
      a = vmladavq_s16(pw[0], vldrhq_gather_shifted_offset_z_s16(b, o0, tail));
    else
      a = vmladavq_s16(pw[0], vldrhq_gather_shifted_offset_s16(b, o0));
    if (G > 1) a = vmladavaq_s16(a, pw[1], vldrhq_gather_shifted_offset_s16(b, o1));
    if (G > 2) a = vmladavaq_s16(a, pw[2], vldrhq_gather_shifted_offset_s16(b + far, o0));
    if (G > 3) a = vmladavaq_s16(a, pw[3], vldrhq_gather_shifted_offset_s16(b + far, o1));
    return a;
  };
  const int16_t* b = v;
  int32_t* out = acc;
  for (size_t c4 = dv / 4; c4 > 0; --c4, b += 4, out += 4) {
    const int32_t a0 = column(b), a1 = column(b + 1), a2 = column(b + 2), a3 = column(b + 3);
    int32x4_t r = pack4(a0, a1, a2, a3);
    if (!first) r = vaddq_s32(r, vld1q_s32(out));
    vst1q_s32(out, r);
  }
  for (size_t c = dv % 4; c > 0; --c, ++b, ++out)
    *out = static_cast<int32_t>(static_cast<uint32_t>(column(b)) + (first ? 0u : static_cast<uint32_t>(*out)));
  return true;
}

// Passes of gather_pass over the row (32, 16 and 8 keys, then the last
// 1..7); false (a weight of 2^15) leaves it to weighted_sum_rows.
__attribute__((noinline)) bool weighted_sum_gathers(const int32_t* p, const int16_t* v, size_t ldv, size_t count,
                                                    size_t dv, int32_t* acc) {
  bool first = true, gathered = true;
  size_t j = 0;
  while (gathered && j < count) {
    const size_t rest = count - j;
    const int16_t* vj = v + j * ldv;
    if (rest >= 32) {
      gathered = gather_pass<4, false>(p + j, vj, ldv, dv, 0, first, acc);
      j += 32;
    } else if (rest >= 16) {
      gathered = gather_pass<2, false>(p + j, vj, ldv, dv, 0, first, acc);
      j += 16;
    } else if (rest >= 8) {
      gathered = gather_pass<1, false>(p + j, vj, ldv, dv, 0, first, acc);
      j += 8;
    } else {
      gathered = gather_pass<1, true>(p + j, vj, ldv, dv, vctp16q(static_cast<uint32_t>(rest)), first, acc);
      j = count;
    }
    first = false;
  }
  return gathered;
}

// A dispatcher with a small frame, as scores is.
void weighted_sum(const int32_t* p, const int16_t* v, size_t ldv, size_t count, size_t dv, int32_t* acc) {
  // Element offsets up to 15 ldv in 16 bits.
  if (15 * ldv <= 0xffff && weighted_sum_gathers(p, v, ldv, count, dv, acc)) return;
  weighted_sum_rows(p, v, ldv, count, dv, acc);
}

// ---------------------------------------------------------------- requantize

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int16_t* y) {
  // As the int8 table's (mve_i8.cc): with m = m' 2^t (m' odd) and
  // shift - t = 32 + k, k >= 1, no product acc m' is an exact negative tie,
  // so VRSHL(VMULH(acc, m'), -k) is rounding_rshift(acc m, shift).
  const int t = __builtin_ctz(static_cast<uint32_t>(output.multiplier));
  const int32_t m_odd = output.multiplier >> t;
  const int32_t k = output.shift - t - 32;
  const int32x4_t lo = vdupq_n_s32(-32768), hi = vdupq_n_s32(32767);
  auto store = [&](auto lanes) {
    size_t c = 0;
    for (; c + 4 <= n; c += 4) vstrhq_s32(y + c, lanes(vld1q_s32(acc + c)));
    if (c < n) {
      const mve_pred16_t pr = tail32(n, c);
      vstrhq_p_s32(y + c, lanes(vld1q_z_s32(acc + c, pr)), pr);
    }
  };
  if (k >= 1 && k <= 31) {
    const int32_t minus_k = -k;
    store([&](int32x4_t a) { return vminq_s32(vmaxq_s32(vrshlq_n_s32(vmulhq_s32(a, vdupq_n_s32(m_odd)), minus_k), lo), hi); });
    return;
  }
  const int32_t m = output.multiplier;
  if (output.shift <= 32) {  // not from plan_int16 at any real scale ratio
    scalar::i16::requantize(acc, n, output, y);
    return;
  }
  // x = acc m = H 2^32 + L (0 <= L < 2^32), shift = 32 + k, k >= 1:
  // rounding_rshift(x, shift) = (H + 2^(k-1) - [x < 0 and L == 0]) >> k,
  // VRSHL by -k adds the 2^(k-1); [x < 0 and L == 0] is the sign bit of
  // acc & ~(L | -L).
  const int32_t minus_k = 32 - output.shift;
  store([&](int32x4_t a) {
    const int32x4_t low = vmulq_n_s32(a, m);
    const int32x4_t tie = vreinterpretq_s32_u32(
        vshrq_n_u32(vreinterpretq_u32_s32(vbicq_s32(a, vorrq_s32(low, vnegq_s32(low)))), 31));
    const int32x4_t h = vsubq_s32(vmulhq_s32(a, vdupq_n_s32(m)), tie);
    return vminq_s32(vmaxq_s32(vrshlq_n_s32(h, minus_k), lo), hi);
  });
}

// The scalar table with the kernels above.
constexpr KernelsI16 make_table() {
  KernelsI16 t = scalar::table_i16("mve");
  t.simd_target = simd_target;
  t.scores = scores;
  t.exp_row = exp_row;
  t.probabilities = probabilities;
  t.weighted_sum = weighted_sum;
  t.requantize = requantize;
  return t;
}
constexpr KernelsI16 kKernelsI16 = make_table();

// The TFLite mode's kernels (i16_tflite-inl.h), for tflite_kernels_i16.
constexpr KernelsI16Tflite kKernelsI16Tflite{scores, weighted_sum, tflite16_requantize, tflite16_requantize_y, tflite16_exps,
                                             tflite16_outputs};

}  // namespace
}  // namespace mve

template <>
const KernelsI16* port_kernels_i16<Port::kMve>() {
  return &mve::kKernelsI16;
}

template <>
const KernelsI16Tflite* port_tflite_kernels_i16<Port::kMve>() {
  return &mve::kKernelsI16Tflite;
}

}  // namespace tinyattn

#endif  // __ARM_FEATURE_MVE & 1
