// KernelsI8::scores with SDOT: raw signed int8 products, four per int32 lane,
// and the zero points applied afterwards by algebra,
//   sum (q - zq)(k - zk) = sum q k - zk sum q - zq sum k + dk zq zk,
// since q - zq need not fit int8 (SDOT takes int8 operands only). Every sum
// is exact: |sum q k| <= 2^14 dk <= 2^29, |sum k| <= 2^22, and the result is
// formed in int64 (it fits int32 by the contract). This file alone is built
// with -march=armv8.2-a+dotprod (CMakeLists.txt); cpu_has_sdot() guards it.
#include "sdot_a64.h"

#if TINYATTN_HWY_SDOT
#include <arm_neon.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>

#include <climits>

namespace tinyattn {
namespace highway {

bool cpu_has_sdot() {
  static const bool has = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return has;
}

namespace {

// Four keys at a time share each q load; kSums: also sum each key's entries
// (needed only when q's zero point is not 0).
template <bool kSums>
void four_keys(const int8_t* q, const int8_t* k0, size_t ldk, size_t dk, int32_t dot[4], int32_t ksum[4]) {
  const int8_t* k1 = k0 + ldk;
  const int8_t* k2 = k1 + ldk;
  const int8_t* k3 = k2 + ldk;
  const int8x16_t ones = vdupq_n_s8(1);
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
  int32x4_t s0 = a0, s1 = a0, s2 = a0, s3 = a0;
  size_t c = 0;
  for (; c + 16 <= dk; c += 16) {
    const int8x16_t qv = vld1q_s8(q + c);
    const int8x16_t v0 = vld1q_s8(k0 + c), v1 = vld1q_s8(k1 + c), v2 = vld1q_s8(k2 + c), v3 = vld1q_s8(k3 + c);
    a0 = vdotq_s32(a0, qv, v0);
    a1 = vdotq_s32(a1, qv, v1);
    a2 = vdotq_s32(a2, qv, v2);
    a3 = vdotq_s32(a3, qv, v3);
    if (kSums) {
      s0 = vdotq_s32(s0, v0, ones);
      s1 = vdotq_s32(s1, v1, ones);
      s2 = vdotq_s32(s2, v2, ones);
      s3 = vdotq_s32(s3, v3, ones);
    }
  }
  dot[0] = vaddvq_s32(a0);
  dot[1] = vaddvq_s32(a1);
  dot[2] = vaddvq_s32(a2);
  dot[3] = vaddvq_s32(a3);
  ksum[0] = kSums ? vaddvq_s32(s0) : 0;
  ksum[1] = kSums ? vaddvq_s32(s1) : 0;
  ksum[2] = kSums ? vaddvq_s32(s2) : 0;
  ksum[3] = kSums ? vaddvq_s32(s3) : 0;
  for (; c < dk; ++c) {
    const int32_t qc = q[c];
    dot[0] += qc * k0[c];
    dot[1] += qc * k1[c];
    dot[2] += qc * k2[c];
    dot[3] += qc * k3[c];
    if (kSums) {
      ksum[0] += k0[c];
      ksum[1] += k1[c];
      ksum[2] += k2[c];
      ksum[3] += k3[c];
    }
  }
}

template <bool kSums>
void one_key(const int8_t* q, const int8_t* kj, size_t dk, int32_t* dot, int32_t* ksum) {
  const int8x16_t ones = vdupq_n_s8(1);
  int32x4_t a = vdupq_n_s32(0), sk = a;
  size_t c = 0;
  for (; c + 16 <= dk; c += 16) {
    const int8x16_t v = vld1q_s8(kj + c);
    a = vdotq_s32(a, vld1q_s8(q + c), v);
    if (kSums) sk = vdotq_s32(sk, v, ones);
  }
  int32_t d = vaddvq_s32(a), s = kSums ? vaddvq_s32(sk) : 0;
  for (; c < dk; ++c) {
    d += int32_t{q[c]} * kj[c];
    if (kSums) s += kj[c];
  }
  *dot = d;
  *ksum = s;
}

template <bool kSums>
int32_t scores_impl(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero,
                    int32_t k_zero, int32_t* s) {
  int32_t qsum = 0;
  for (size_t c = 0; c < dk; ++c) qsum += q[c];
  // The key-independent part of the correction: -zk sum q + dk zq zk.
  const int64_t base = -int64_t{k_zero} * qsum + static_cast<int64_t>(dk) * q_zero * k_zero;
  int32_t max = INT32_MIN;
  const auto finish = [&](size_t j, int32_t dot, int32_t ksum) {
    const int32_t v = static_cast<int32_t>(dot + base - int64_t{q_zero} * ksum);
    s[j] = v;
    if (v > max) max = v;
  };
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    int32_t dot[4], ksum[4];
    four_keys<kSums>(q, k + j * ldk, ldk, dk, dot, ksum);
    for (size_t t = 0; t < 4; ++t) finish(j + t, dot[t], ksum[t]);
  }
  for (; j < count; ++j) {
    int32_t dot, ksum;
    one_key<kSums>(q, k + j * ldk, dk, &dot, &ksum);
    finish(j, dot, ksum);
  }
  return max;
}

}  // namespace

int32_t scores_sdot(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero,
                    int32_t k_zero, int32_t* s) {
  return q_zero != 0 ? scores_impl<true>(q, k, ldk, count, dk, q_zero, k_zero, s)
                     : scores_impl<false>(q, k, ldk, count, dk, q_zero, k_zero, s);
}

}  // namespace highway
}  // namespace tinyattn
#endif  // TINYATTN_HWY_SDOT
