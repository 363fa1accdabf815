// The Helium (MVE) port for Cortex-M55: four fp32 lanes per 128-bit vector.
// Tails use tail predication (vctp32q with zeroing loads and predicated
// stores) instead of scalar loops, so no element outside the given ranges is
// touched; the hot loops run unpredicated over whole vectors and finish with
// one predicated step, which GCC 12 compiles to fewer instructions than a
// predicated loop. The exp is exp_poly
// (tinyattn/exp.h) step by step with the same coefficients, fused
// multiply-adds where the algorithm multiplies and adds.
#include "mve.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)

#include <arm_mve.h>

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

// exp_poly on four lanes. NaN propagates like the scalar form: a NaN t
// shifts to s = 0, and NaN * 0 stays NaN.
inline float32x4_t exp4(float32x4_t x) {
  constexpr ExpCoefficients c = kExpCoefficients;
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(c.magic), x, c.log2e);  // n + magic, rounded
  const float32x4_t n = vsubq_n_f32(t, c.magic);
  const float32x4_t s = vreinterpretq_f32_u32(vshlq_n_u32(vreinterpretq_u32_f32(t), 23));  // 2^n
  float32x4_t r = vfmaq_n_f32(x, n, c.minus_ln2_hi);
  r = vfmaq_n_f32(r, n, c.minus_ln2_lo);
  float32x4_t p = vfmasq_n_f32(vdupq_n_f32(c.c5), r, c.c4);  // p * r + c4
  p = vfmasq_n_f32(p, r, c.c3);
  p = vfmasq_n_f32(p, r, c.c2);
  p = vfmasq_n_f32(p, r, c.c1);
  // Helium arithmetic runs with the standard FPSCR value (flush-to-zero), so
  // the scalar form's r*s would vanish for n <= -125 (x below about -86.3).
  // Forming r*p(r) first and scaling by s inside the fused step keeps every
  // intermediate normal; it costs one extra rounding of r*p (< 0.3 ULP).
  const float32x4_t rp = vmulq_f32(r, p);
  float32x4_t e = vfmaq_f32(s, rp, s);  // s * (1 + r*p(r))
  // Helium's "lt" compare is "less than or unordered" (Arm condition LT), so
  // the flush test is written as flush_below > x, which is false for NaN.
  e = vpselq_f32(vdupq_n_f32(0.0f), e, vcmpgtq_f32(vdupq_n_f32(c.flush_below), x));
  e = vpselq_f32(vdupq_n_f32(__builtin_huge_valf()), e, vcmpgtq_n_f32(x, c.overflow_above));
  return e;
}

void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  const size_t full = dk / kLanes * kLanes;
  const mve_pred16_t tail_p = tail(dk, full);  // used only when dk is not a multiple of 4
  size_t j = 0;
  // Four keys per pass: each q vector is loaded once for four dot products.
  for (; j + 4 <= count; j += 4) {
    const float* k0 = k + j * ldk;
    const float* k1 = k0 + ldk;
    const float* k2 = k1 + ldk;
    const float* k3 = k2 + ldk;
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    const float* qc = q;
    // Pointers step with the loop (post-increment loads); fewer live
    // registers than base + index, so nothing spills.
    for (size_t v = full / kLanes; v > 0; --v) {
      const float32x4_t qv = vld1q_f32(qc);
      qc += kLanes;
      a0 = vfmaq_f32(a0, qv, vld1q_f32(k0));
      k0 += kLanes;
      a1 = vfmaq_f32(a1, qv, vld1q_f32(k1));
      k1 += kLanes;
      a2 = vfmaq_f32(a2, qv, vld1q_f32(k2));
      k2 += kLanes;
      a3 = vfmaq_f32(a3, qv, vld1q_f32(k3));
      k3 += kLanes;
    }
    if (full < dk) {
      const float32x4_t qv = vld1q_z_f32(qc, tail_p);  // inactive lanes 0: they add 0
      a0 = vfmaq_f32(a0, qv, vld1q_z_f32(k0, tail_p));
      a1 = vfmaq_f32(a1, qv, vld1q_z_f32(k1, tail_p));
      a2 = vfmaq_f32(a2, qv, vld1q_z_f32(k2, tail_p));
      a3 = vfmaq_f32(a3, qv, vld1q_z_f32(k3, tail_p));
    }
    // Transpose through memory (VST4 interleaves the four accumulators), so
    // four vector adds leave key j+i's dot product in lane i.
    alignas(16) float lanes[16];
    const float32x4x4_t acc{{a0, a1, a2, a3}};
    vst4q_f32(lanes, acc);
    const float32x4_t dots = vaddq_f32(vaddq_f32(vld1q_f32(lanes), vld1q_f32(lanes + 4)),
                                       vaddq_f32(vld1q_f32(lanes + 8), vld1q_f32(lanes + 12)));
    vst1q_f32(s + j, vmulq_n_f32(dots, scale));
  }
  for (; j < count; ++j) {
    const float* kj = k + j * ldk;
    float32x4_t a = vdupq_n_f32(0.0f);
    for (size_t c = 0; c < full; c += kLanes) a = vfmaq_f32(a, vld1q_f32(q + c), vld1q_f32(kj + c));
    if (full < dk) a = vfmaq_f32(a, vld1q_z_f32(q + full, tail_p), vld1q_z_f32(kj + full, tail_p));
    s[j] = scale * sum_lanes(a);
  }
}

float row_max(const float* x, size_t n) {
  // VMAXNM ignores NaN, so NaN lanes are tracked separately and win.
  float32x4_t m = vdupq_n_f32(x[0]);
  mve_pred16_t nan_lanes = 0;
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const float32x4_t v = vld1q_f32(x + j);
    m = vmaxnmq_f32(m, v);
    nan_lanes |= vcmpneq_f32(v, v);
  }
  if (j < n) {
    const mve_pred16_t p = tail(n, j);
    const float32x4_t v = vld1q_z_f32(x + j, p);
    m = vmaxnmq_m_f32(m, m, v, p);
    nan_lanes |= vcmpneq_m_f32(v, v, p);
  }
  if (nan_lanes)
    for (j = 0; j < n; ++j)
      if (x[j] != x[j]) return x[j];
  return vmaxnmvq_f32(x[0], m);
}

float exp_shift_sum(float* x, size_t n, float shift) {
  float32x4_t sum = vdupq_n_f32(0.0f);
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const float32x4_t e = exp4(vsubq_n_f32(vld1q_f32(x + j), shift));
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

void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
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

constexpr KernelsF32 kKernels{"mve", simd_target, scores, row_max, exp_shift_sum,
                              weighted_sum, axpy, scale, exp_array};

}  // namespace

const KernelsF32& kernels_f32() { return kKernels; }

}  // namespace mve
}  // namespace tinyattn

#endif  // __ARM_FEATURE_MVE & 2
