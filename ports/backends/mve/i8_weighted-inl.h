// The Helium int8 kernels after the softmax: weighted_sum (P V) and
// requantize. Included by mve_i8.cc (one translation unit), after the
// helpers it defines (tail32, u32, pack4).
#ifndef TINYATTN_MVE_I8_WEIGHTED_INL_H_
#define TINYATTN_MVE_I8_WEIGHTED_INL_H_

#include <arm_mve.h>

namespace tinyattn {
namespace mve {
namespace {

// One weight broadcast against 16 columns (any weights, any ldv).
__attribute__((noinline)) void weighted_sum_rows(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                       int32_t* acc) {
  // sum_j p_j (v_jc - zv) = sum_j p_j v_jc - zv sum_j p_j: the accumulators
  // start at -zv sum p (modular; the final sums fit int32).
  int32_t sum_p = 0;
  size_t w = 0;
  for (; w + 4 <= count; w += 4) sum_p = vaddvaq_s32(sum_p, vld1q_s32(p + w));
  if (w < count) sum_p = vaddvaq_s32(sum_p, vld1q_z_s32(p + w, tail32(count, w)));  // zeroed lanes add 0
  const int32_t start = static_cast<int32_t>(0u - u32(v_zero) * u32(sum_p));
  size_t c = 0;
  for (; c + 16 <= dv; c += 16) {
    int32x4_t a0 = vdupq_n_s32(start), a1 = a0, a2 = a0, a3 = a0;
    const int8_t* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) {
      const int32_t pj = p[j];
      a0 = vmlaq_n_s32(a0, vldrbq_s32(vc), pj);
      a1 = vmlaq_n_s32(a1, vldrbq_s32(vc + 4), pj);
      a2 = vmlaq_n_s32(a2, vldrbq_s32(vc + 8), pj);
      a3 = vmlaq_n_s32(a3, vldrbq_s32(vc + 12), pj);
    }
    vst1q_s32(acc + c, a0);
    vst1q_s32(acc + c + 4, a1);
    vst1q_s32(acc + c + 8, a2);
    vst1q_s32(acc + c + 12, a3);
  }
  // The last 1..15 columns, four at a time, predicated.
  for (; c < dv; c += 4) {
    const mve_pred16_t pr = tail32(dv, c);
    int32x4_t a = vdupq_n_s32(start);
    const int8_t* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) a = vmlaq_n_s32(a, vldrbq_z_s32(vc, pr), p[j]);
    vstrwq_p_s32(acc + c, a, pr);
  }
}

// What a pass of gather_pass starts its sums from and adds to them.
struct PassEnds {
  bool first;     // the sums start at 0 (else at acc)
  bool last;      // -zv sum p is added (sum_p is then the whole row's)
  int32_t v_zero;
};

// Keys in the lanes: column c of V over eight keys is a byte gather
// (VLDRB.S16, offsets 0..7 ldv) and VMLADAVA.S16 adds the eight products
// p_j v_jc into the column's sum. One pass takes G groups of eight keys
// (kTail: G = 1, a group of fewer keys under `tail`, zeroing gathers: the
// keys past the end add nothing and are not read); their weights, int16
// straight from the int32 array (a halfword gather at byte offsets 0, 4, ..,
// 28 reads the low half of each p_j), stay in registers across all the
// columns, so a column costs its gathers and multiply-adds and one pointer
// step. The low half is p_j for every p but kProbOne (a row whose weight all
// sits on one key), which reads as -2^15: the pass then returns false before
// writing anything. sum_p accumulates the pass's weights.
template <int G, bool kTail>
bool gather_pass(const int32_t* p, const int8_t* v, size_t ldv, size_t dv, mve_pred16_t tail, PassEnds ends,
                 int32_t& sum_p, int32_t* acc) {
  const uint16x8_t p_offsets = vidupq_n_u16(0, 4);  // bytes: the low half of p_j, j = 0..7
  const int16_t* p16 = reinterpret_cast<const int16_t*>(p);
  int16x8_t pw[G];
  int16_t low = 0;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    pw[g] = kTail ? vldrhq_gather_offset_z_s16(p16 + 16 * g, p_offsets, tail)
                  : vldrhq_gather_offset_s16(p16 + 16 * g, p_offsets);
    sum_p = vaddvaq_s16(sum_p, pw[g]);
    low = vminvq_s16(low, pw[g]);
  }
  if (low == -32768) return false;
  const int32_t add = ends.last ? static_cast<int32_t>(0u - u32(ends.v_zero) * u32(sum_p)) : 0;
  // Groups 0 and 1 from one pointer, 2 and 3 from another 16 keys on.
  const uint16x8_t o0 = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(ldv));
  const uint16x8_t o1 = vaddq_n_u16(o0, static_cast<uint16_t>(8 * ldv));
  const size_t far = 16 * ldv;
  auto column = [&](const int8_t* b) {
    int32_t a;
    if (kTail)
      a = vmladavq_s16(pw[0], vldrbq_gather_offset_z_s16(b, o0, tail));
    else
      a = vmladavq_s16(pw[0], vldrbq_gather_offset_s16(b, o0));
    if (G > 1) a = vmladavaq_s16(a, pw[1], vldrbq_gather_offset_s16(b, o1));
    if (G > 2) a = vmladavaq_s16(a, pw[2], vldrbq_gather_offset_s16(b + far, o0));
    if (G > 3) a = vmladavaq_s16(a, pw[3], vldrbq_gather_offset_s16(b + far, o1));
    return a;
  };
  const int8_t* b = v;
  int32_t* out = acc;
  for (size_t c4 = dv / 4; c4 > 0; --c4, b += 4, out += 4) {
    const int32_t a0 = column(b), a1 = column(b + 1), a2 = column(b + 2), a3 = column(b + 3);
    int32x4_t r = vaddq_n_s32(pack4(a0, a1, a2, a3), add);
    if (!ends.first) r = vaddq_s32(r, vld1q_s32(out));
    vst1q_s32(out, r);
  }
  for (size_t c = dv % 4; c > 0; --c, ++b, ++out)
    *out = static_cast<int32_t>(u32(column(b)) + u32(add) + (ends.first ? 0u : u32(*out)));
  return true;
}

// Passes of gather_pass over the row; false (a weight of 2^15) leaves it
// to weighted_sum_rows.
__attribute__((noinline)) bool weighted_sum_gathers(const int32_t* p, const int8_t* v, size_t ldv, size_t count,
                                                    size_t dv, int32_t v_zero, int32_t* acc) {
  // Passes of 32, 16 and 8 keys, then the last 1..7, each over all the columns.
  int32_t sum_p = 0;
  PassEnds ends{true, false, v_zero};
  size_t j = 0;
  bool gathered = true;
  while (gathered && j < count) {
    const size_t rest = count - j;
    const int8_t* vj = v + j * ldv;
    if (rest >= 32) {
      ends.last = rest == 32;
      gathered = gather_pass<4, false>(p + j, vj, ldv, dv, 0, ends, sum_p, acc);
      j += 32;
    } else if (rest >= 16) {
      ends.last = rest == 16;
      gathered = gather_pass<2, false>(p + j, vj, ldv, dv, 0, ends, sum_p, acc);
      j += 16;
    } else if (rest >= 8) {
      ends.last = rest == 8;
      gathered = gather_pass<1, false>(p + j, vj, ldv, dv, 0, ends, sum_p, acc);
      j += 8;
    } else {
      ends.last = true;
      gathered = gather_pass<1, true>(p + j, vj, ldv, dv, vctp16q(static_cast<uint32_t>(rest)), ends, sum_p, acc);
      j = count;
    }
    ends.first = false;
  }
  return gathered;
}

// A dispatcher with a small frame, as scores is.
void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  // Offsets up to 15 ldv in 16 bits.
  if (15 * ldv <= 0xffff && weighted_sum_gathers(p, v, ldv, count, dv, v_zero, acc)) return;
  weighted_sum_rows(p, v, ldv, count, dv, v_zero, acc);
}

// ---------------------------------------------------------------- requantize

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  // acc m with m = m' 2^t (m' odd) rounds as acc m' at shift - t (2^t divides
  // the rounding constant too): with an odd m' and shift - t = 32 + k, k >= 1,
  // the low word of acc m' is 0 only for acc = 0, so no negative product is
  // an exact tie, and VMULH's high word H gives the result as VRSHL(H, -k)
  // (rounding_rshift(x, 32 + k) = (H + 2^(k-1) - [x < 0 and L == 0]) >> k).
  // The zero point joins H as y_zero 2^k (a multiple of 2^k shifts out
  // exactly), which fits for k <= 23 (|H| < 2^30).
  const int t = __builtin_ctz(static_cast<uint32_t>(output.multiplier));
  const int32_t m_odd = output.multiplier >> t;
  const int32_t k = output.shift - t - 32;
  const int32x4_t lo = vdupq_n_s32(-128), hi = vdupq_n_s32(127);
  if (k >= 1 && k <= 23) {
    const int32_t zk = static_cast<int32_t>(u32(y_zero) << k);
    const int32_t minus_k = -k;
    auto lanes = [&](int32x4_t a) {
      const int32x4_t h = vaddq_n_s32(vmulhq_s32(a, vdupq_n_s32(m_odd)), zk);
      return vminq_s32(vmaxq_s32(vrshlq_n_s32(h, minus_k), lo), hi);
    };
    size_t c = 0;
    for (; c + 4 <= n; c += 4) vstrbq_s32(y + c, lanes(vld1q_s32(acc + c)));
    if (c < n) {
      const mve_pred16_t pr = tail32(n, c);
      vstrbq_p_s32(y + c, lanes(vld1q_z_s32(acc + c, pr)), pr);
    }
    return;
  }
  const int32_t m = output.multiplier;
  if (output.shift <= 32) {  // not from plan_int8 at any real scale ratio below 2^14
    for (size_t c = 0; c < n; ++c) {
      const int64_t x = y_zero + apply(output, acc[c]);
      y[c] = static_cast<int8_t>(x < -128 ? -128 : (x > 127 ? 127 : x));
    }
    return;
  }
  // x = acc m = H 2^32 + L (0 <= L < 2^32), shift = 32 + k, k >= 1:
  // rounding_rshift(x, shift) = (H + 2^(k-1) - [x < 0 and L == 0]) >> k, and
  // VRSHL by -k adds the 2^(k-1).
  const int32_t minus_k = 32 - output.shift;
  // Lanes without predicates: [x < 0 and L == 0] is the sign bit of
  // acc & ~(L | -L) (L | -L has the sign bit set exactly when L != 0).
  auto lanes = [&](int32x4_t a) {
    const int32x4_t low = vmulq_n_s32(a, m);
    const int32x4_t tie = vreinterpretq_s32_u32(
        vshrq_n_u32(vreinterpretq_u32_s32(vbicq_s32(a, vorrq_s32(low, vnegq_s32(low)))), 31));
    const int32x4_t h = vsubq_s32(vmulhq_s32(a, vdupq_n_s32(m)), tie);
    // Clamp after adding the zero point: |value| < 2^30, no overflow.
    return vminq_s32(vmaxq_s32(vaddq_n_s32(vrshlq_n_s32(h, minus_k), y_zero), lo), hi);
  };
  size_t c = 0;
  for (; c + 4 <= n; c += 4) vstrbq_s32(y + c, lanes(vld1q_s32(acc + c)));
  if (c < n) {
    const mve_pred16_t pr = tail32(n, c);
    vstrbq_p_s32(y + c, lanes(vld1q_z_s32(acc + c, pr)), pr);
  }
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_I8_WEIGHTED_INL_H_
