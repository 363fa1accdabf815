// The DSP port's fp32 register tiles of a full block: four query rows by
// four keys (scores) or four value columns (P.V), sixteen accumulators in
// s0-s15. Included by dsp.cc after TileArgs, kZeros and
// TINYATTN_DSP_CLOBBERS, which they use: one translation unit.
#ifndef TINYATTN_DSP_BLOCK_TILES_INL_H_
#define TINYATTN_DSP_BLOCK_TILES_INL_H_

#include <cstddef>

namespace tinyattn {
namespace dsp {
namespace {

// One tile of scores: four query rows q_r = q + r*ldq against four keys
// k_i = k + i*ldk (ldk = t.ld_operand), dk = 2 * t.steps: the sums in s0-s15
// (4r + i), per column pair c, c+1 the rows' q in s16-s23 (2r, 2r + 1) and
// the keys' k in s24-s31 (2i, 2i + 1). Each sum runs over c in order, from
// zero, as in the scalar block kernel: the same floats.
__attribute__((noinline)) void scores_tile(const float* q, size_t ldq, const float* k, const TileArgs& t) {
  const float *q0 = q, *q1 = q0 + ldq, *q2 = q1 + ldq, *q3 = q2 + ldq;
  const float *k0 = k, *k1 = k0 + t.ld_operand, *k2 = k1 + t.ld_operand, *k3 = k2 + t.ld_operand;
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s15}\n"
      "ldr %[n], [%[t], #4]\n"
      "1:\n"
      "vldmia %[q0]!, {s16-s17}\n"
      "vldmia %[q1]!, {s18-s19}\n"
      "vldmia %[q2]!, {s20-s21}\n"
      "vldmia %[q3]!, {s22-s23}\n"
      "vldmia %[k0]!, {s24-s25}\n"
      "vldmia %[k1]!, {s26-s27}\n"
      "vldmia %[k2]!, {s28-s29}\n"
      "vldmia %[k3]!, {s30-s31}\n"
      "vfma.f32 s0, s16, s24\n"
      "vfma.f32 s1, s16, s26\n"
      "vfma.f32 s2, s16, s28\n"
      "vfma.f32 s3, s16, s30\n"
      "vfma.f32 s4, s18, s24\n"
      "vfma.f32 s5, s18, s26\n"
      "vfma.f32 s6, s18, s28\n"
      "vfma.f32 s7, s18, s30\n"
      "vfma.f32 s8, s20, s24\n"
      "vfma.f32 s9, s20, s26\n"
      "vfma.f32 s10, s20, s28\n"
      "vfma.f32 s11, s20, s30\n"
      "vfma.f32 s12, s22, s24\n"
      "vfma.f32 s13, s22, s26\n"
      "vfma.f32 s14, s22, s28\n"
      "vfma.f32 s15, s22, s30\n"
      "vfma.f32 s0, s17, s25\n"
      "vfma.f32 s1, s17, s27\n"
      "vfma.f32 s2, s17, s29\n"
      "vfma.f32 s3, s17, s31\n"
      "vfma.f32 s4, s19, s25\n"
      "vfma.f32 s5, s19, s27\n"
      "vfma.f32 s6, s19, s29\n"
      "vfma.f32 s7, s19, s31\n"
      "vfma.f32 s8, s21, s25\n"
      "vfma.f32 s9, s21, s27\n"
      "vfma.f32 s10, s21, s29\n"
      "vfma.f32 s11, s21, s31\n"
      "vfma.f32 s12, s23, s25\n"
      "vfma.f32 s13, s23, s27\n"
      "vfma.f32 s14, s23, s29\n"
      "vfma.f32 s15, s23, s31\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      "vldr s16, [%[t], #8]\n"
      "vmul.f32 s0, s0, s16\n"
      "vmul.f32 s1, s1, s16\n"
      "vmul.f32 s2, s2, s16\n"
      "vmul.f32 s3, s3, s16\n"
      "vmul.f32 s4, s4, s16\n"
      "vmul.f32 s5, s5, s16\n"
      "vmul.f32 s6, s6, s16\n"
      "vmul.f32 s7, s7, s16\n"
      "vmul.f32 s8, s8, s16\n"
      "vmul.f32 s9, s9, s16\n"
      "vmul.f32 s10, s10, s16\n"
      "vmul.f32 s11, s11, s16\n"
      "vmul.f32 s12, s12, s16\n"
      "vmul.f32 s13, s13, s16\n"
      "vmul.f32 s14, s14, s16\n"
      "vmul.f32 s15, s15, s16\n"
      "ldr %[q0], [%[t], #12]\n"
      "ldr %[q1], [%[t], #16]\n"
      "vstmia %[q0], {s0-s3}\n"
      "add %[q0], %[q0], %[q1]\n"
      "vstmia %[q0], {s4-s7}\n"
      "add %[q0], %[q0], %[q1]\n"
      "vstmia %[q0], {s8-s11}\n"
      "add %[q0], %[q0], %[q1]\n"
      "vstmia %[q0], {s12-s15}\n"
      : [q0] "+r"(q0), [q1] "+r"(q1), [q2] "+r"(q2), [q3] "+r"(q3), [k0] "+r"(k0), [k1] "+r"(k1), [k2] "+r"(k2),
        [k3] "+r"(k3), [n] "=&r"(n)
      : [t] "r"(&t)
      : TINYATTN_DSP_CLOBBERS);
}

// One tile of weighted sums: four rows p_r = p + r*ldp over count =
// 2 * t.steps value rows from v (ldv = t.ld_operand), four columns: the sums
// in s0-s15 (4r + i), per key pair j, j+1 the rows' p in s16-s23 (2r, 2r + 1)
// and the two value rows' four columns in s24-s27 and s28-s31, then times
// a[r]. Each sum runs over j in order, from zero, as in the scalar block
// kernel.
#define TINYATTN_DSP_WS_PAIRS  \
  "1:\n"                       \
  "vldmia %[p0]!, {s16-s17}\n" \
  "vldmia %[p1]!, {s18-s19}\n" \
  "vldmia %[p2]!, {s20-s21}\n" \
  "vldmia %[p3]!, {s22-s23}\n" \
  "vldmia %[v], {s24-s27}\n"   \
  "add %[v], %[v], %[ldv]\n"   \
  "vldmia %[v], {s28-s31}\n"   \
  "add %[v], %[v], %[ldv]\n"   \
  "vfma.f32 s0, s16, s24\n"    \
  "vfma.f32 s1, s16, s25\n"    \
  "vfma.f32 s2, s16, s26\n"    \
  "vfma.f32 s3, s16, s27\n"    \
  "vfma.f32 s4, s18, s24\n"    \
  "vfma.f32 s5, s18, s25\n"    \
  "vfma.f32 s6, s18, s26\n"    \
  "vfma.f32 s7, s18, s27\n"    \
  "vfma.f32 s8, s20, s24\n"    \
  "vfma.f32 s9, s20, s25\n"    \
  "vfma.f32 s10, s20, s26\n"   \
  "vfma.f32 s11, s20, s27\n"   \
  "vfma.f32 s12, s22, s24\n"   \
  "vfma.f32 s13, s22, s25\n"   \
  "vfma.f32 s14, s22, s26\n"   \
  "vfma.f32 s15, s22, s27\n"   \
  "vfma.f32 s0, s17, s28\n"    \
  "vfma.f32 s1, s17, s29\n"    \
  "vfma.f32 s2, s17, s30\n"    \
  "vfma.f32 s3, s17, s31\n"    \
  "vfma.f32 s4, s19, s28\n"    \
  "vfma.f32 s5, s19, s29\n"    \
  "vfma.f32 s6, s19, s30\n"    \
  "vfma.f32 s7, s19, s31\n"    \
  "vfma.f32 s8, s21, s28\n"    \
  "vfma.f32 s9, s21, s29\n"    \
  "vfma.f32 s10, s21, s30\n"   \
  "vfma.f32 s11, s21, s31\n"   \
  "vfma.f32 s12, s23, s28\n"   \
  "vfma.f32 s13, s23, s29\n"   \
  "vfma.f32 s14, s23, s30\n"   \
  "vfma.f32 s15, s23, s31\n"   \
  "subs %[n], %[n], #1\n"      \
  "bne 1b\n"
#define TINYATTN_DSP_WS_SCALE_STORE \
  "ldr %[n], [%[t], #8]\n"          \
  "vldmia %[n], {s16-s19}\n"        \
  "vmul.f32 s0, s0, s16\n"          \
  "vmul.f32 s1, s1, s16\n"          \
  "vmul.f32 s2, s2, s16\n"          \
  "vmul.f32 s3, s3, s16\n"          \
  "vmul.f32 s4, s4, s17\n"          \
  "vmul.f32 s5, s5, s17\n"          \
  "vmul.f32 s6, s6, s17\n"          \
  "vmul.f32 s7, s7, s17\n"          \
  "vmul.f32 s8, s8, s18\n"          \
  "vmul.f32 s9, s9, s18\n"          \
  "vmul.f32 s10, s10, s18\n"        \
  "vmul.f32 s11, s11, s18\n"        \
  "vmul.f32 s12, s12, s19\n"        \
  "vmul.f32 s13, s13, s19\n"        \
  "vmul.f32 s14, s14, s19\n"        \
  "vmul.f32 s15, s15, s19\n"        \
  "ldr %[p0], [%[t], #12]\n"        \
  "ldr %[p1], [%[t], #16]\n"        \
  "vstmia %[p0], {s0-s3}\n"         \
  "add %[p0], %[p0], %[p1]\n"       \
  "vstmia %[p0], {s4-s7}\n"         \
  "add %[p0], %[p0], %[p1]\n"       \
  "vstmia %[p0], {s8-s11}\n"        \
  "add %[p0], %[p0], %[p1]\n"       \
  "vstmia %[p0], {s12-s15}\n"
__attribute__((noinline)) void weighted_sum_tile(const float* p, size_t ldp, const float* v, const TileArgs& t) {
  const float *p0 = p, *p1 = p0 + ldp, *p2 = p1 + ldp, *p3 = p2 + ldp;
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s15}\n"
      "ldr %[n], [%[t], #4]\n"
      TINYATTN_DSP_WS_PAIRS
      TINYATTN_DSP_WS_SCALE_STORE
      : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3), [v] "+r"(v), [n] "=&r"(n)
      : [t] "r"(&t), [ldv] "r"(t.ld_operand * sizeof(float))
      : TINYATTN_DSP_CLOBBERS);
}

// The same tile over an odd count = 2 * t.steps + 1: key 0 on its own (the
// rows' p in s16, s18, s20, s22), then the pairs, so each sum still runs
// over j in order from zero.
__attribute__((noinline)) void weighted_sum_tile_odd(const float* p, size_t ldp, const float* v, const TileArgs& t) {
  const float *p0 = p, *p1 = p0 + ldp, *p2 = p1 + ldp, *p3 = p2 + ldp;
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s15}\n"
      "vldmia %[p0]!, {s16}\n"
      "vldmia %[p1]!, {s18}\n"
      "vldmia %[p2]!, {s20}\n"
      "vldmia %[p3]!, {s22}\n"
      "vldmia %[v], {s24-s27}\n"
      "add %[v], %[v], %[ldv]\n"
      "vfma.f32 s0, s16, s24\n"
      "vfma.f32 s1, s16, s25\n"
      "vfma.f32 s2, s16, s26\n"
      "vfma.f32 s3, s16, s27\n"
      "vfma.f32 s4, s18, s24\n"
      "vfma.f32 s5, s18, s25\n"
      "vfma.f32 s6, s18, s26\n"
      "vfma.f32 s7, s18, s27\n"
      "vfma.f32 s8, s20, s24\n"
      "vfma.f32 s9, s20, s25\n"
      "vfma.f32 s10, s20, s26\n"
      "vfma.f32 s11, s20, s27\n"
      "vfma.f32 s12, s22, s24\n"
      "vfma.f32 s13, s22, s25\n"
      "vfma.f32 s14, s22, s26\n"
      "vfma.f32 s15, s22, s27\n"
      "ldr %[n], [%[t], #4]\n"
      "cmp %[n], #0\n"
      "beq 2f\n"
      TINYATTN_DSP_WS_PAIRS
      "2:\n"
      TINYATTN_DSP_WS_SCALE_STORE
      : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3), [v] "+r"(v), [n] "=&r"(n)
      : [t] "r"(&t), [ldv] "r"(t.ld_operand * sizeof(float))
      : TINYATTN_DSP_CLOBBERS);
}

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

#endif  // TINYATTN_DSP_BLOCK_TILES_INL_H_
