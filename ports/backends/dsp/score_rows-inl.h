// The DSP port's fp32 score tiles of one or two query rows (a decode
// step, the rows of a block past its last full four) against four keys.
// Included by dsp.cc after RowArgs and TINYATTN_DSP_CLOBBERS, which they
// use: one translation unit.
#ifndef TINYATTN_DSP_SCORE_ROWS_INL_H_
#define TINYATTN_DSP_SCORE_ROWS_INL_H_

#include <cstddef>

namespace tinyattn {
namespace dsp {
namespace {

// One query row q against four keys k + i*ldk, dk even: the sums in s0-s3,
// per eight columns q in s8-s15 and two keys at a time in s16-s23 and
// s24-s31, then the last dk % 8 columns two at a time (q in s8-s9, the keys
// in s16-s23). Each key's sum runs over c in order, from zero, whichever
// position of the four it takes: a key gets the same bits in every call.
__attribute__((noinline)) void scores_row_tile(const float* q, const float* k, size_t ldk, const RowArgs& t) {
  const float *k0 = k, *k1 = k0 + ldk, *k2 = k1 + ldk, *k3 = k2 + ldk;
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s3}\n"
      "ldr %[n], [%[t], #4]\n"
      "cmp %[n], #0\n"
      "beq 2f\n"
      "1:\n"
      "vldmia %[q]!, {s8-s15}\n"
      "vldmia %[k0]!, {s16-s23}\n"
      "vldmia %[k1]!, {s24-s31}\n"
      "vfma.f32 s0, s8, s16\n"
      "vfma.f32 s1, s8, s24\n"
      "vfma.f32 s0, s9, s17\n"
      "vfma.f32 s1, s9, s25\n"
      "vfma.f32 s0, s10, s18\n"
      "vfma.f32 s1, s10, s26\n"
      "vfma.f32 s0, s11, s19\n"
      "vfma.f32 s1, s11, s27\n"
      "vfma.f32 s0, s12, s20\n"
      "vfma.f32 s1, s12, s28\n"
      "vfma.f32 s0, s13, s21\n"
      "vfma.f32 s1, s13, s29\n"
      "vfma.f32 s0, s14, s22\n"
      "vfma.f32 s1, s14, s30\n"
      "vfma.f32 s0, s15, s23\n"
      "vfma.f32 s1, s15, s31\n"
      "vldmia %[k2]!, {s16-s23}\n"
      "vldmia %[k3]!, {s24-s31}\n"
      "vfma.f32 s2, s8, s16\n"
      "vfma.f32 s3, s8, s24\n"
      "vfma.f32 s2, s9, s17\n"
      "vfma.f32 s3, s9, s25\n"
      "vfma.f32 s2, s10, s18\n"
      "vfma.f32 s3, s10, s26\n"
      "vfma.f32 s2, s11, s19\n"
      "vfma.f32 s3, s11, s27\n"
      "vfma.f32 s2, s12, s20\n"
      "vfma.f32 s3, s12, s28\n"
      "vfma.f32 s2, s13, s21\n"
      "vfma.f32 s3, s13, s29\n"
      "vfma.f32 s2, s14, s22\n"
      "vfma.f32 s3, s14, s30\n"
      "vfma.f32 s2, s15, s23\n"
      "vfma.f32 s3, s15, s31\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      "2:\n"
      "ldr %[n], [%[t], #16]\n"
      "cmp %[n], #0\n"
      "beq 4f\n"
      "3:\n"
      "vldmia %[q]!, {s8-s9}\n"
      "vldmia %[k0]!, {s16-s17}\n"
      "vldmia %[k1]!, {s18-s19}\n"
      "vldmia %[k2]!, {s20-s21}\n"
      "vldmia %[k3]!, {s22-s23}\n"
      "vfma.f32 s0, s8, s16\n"
      "vfma.f32 s1, s8, s18\n"
      "vfma.f32 s2, s8, s20\n"
      "vfma.f32 s3, s8, s22\n"
      "vfma.f32 s0, s9, s17\n"
      "vfma.f32 s1, s9, s19\n"
      "vfma.f32 s2, s9, s21\n"
      "vfma.f32 s3, s9, s23\n"
      "subs %[n], %[n], #1\n"
      "bne 3b\n"
      "4:\n"
      "vldr s8, [%[t], #8]\n"
      "vmul.f32 s0, s0, s8\n"
      "vmul.f32 s1, s1, s8\n"
      "vmul.f32 s2, s2, s8\n"
      "vmul.f32 s3, s3, s8\n"
      "ldr %[n], [%[t], #12]\n"
      "vstmia %[n], {s0-s3}\n"
      : [q] "+r"(q), [k0] "+r"(k0), [k1] "+r"(k1), [k2] "+r"(k2), [k3] "+r"(k3), [n] "=&r"(n)
      : [t] "r"(&t)
      : TINYATTN_DSP_CLOBBERS);
}

// Two query rows q0, q0 + ldq against four keys, as scores_row_tile: the
// sums in s0-s7 (4r + i), per eight columns the rows' q in s8-s15 and
// s16-s23 and one key at a time in s24-s31 (each key element loaded once for
// both rows), then the last dk % 8 columns two at a time. Each sum runs as
// in scores_row_tile: the same floats.
__attribute__((noinline)) void scores_rows2_tile(const float* q0, size_t ldq, const float* k, size_t ldk,
                                                 const RowArgs& t) {
  const float* q1 = q0 + ldq;
  const float *k0 = k, *k1 = k0 + ldk, *k2 = k1 + ldk, *k3 = k2 + ldk;
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s7}\n"
      "ldr %[n], [%[t], #4]\n"
      "cmp %[n], #0\n"
      "beq 2f\n"
      "1:\n"
      "vldmia %[q0]!, {s8-s15}\n"
      "vldmia %[q1]!, {s16-s23}\n"
      "vldmia %[k0]!, {s24-s31}\n"
      "vfma.f32 s0, s8, s24\n"
      "vfma.f32 s4, s16, s24\n"
      "vfma.f32 s0, s9, s25\n"
      "vfma.f32 s4, s17, s25\n"
      "vfma.f32 s0, s10, s26\n"
      "vfma.f32 s4, s18, s26\n"
      "vfma.f32 s0, s11, s27\n"
      "vfma.f32 s4, s19, s27\n"
      "vfma.f32 s0, s12, s28\n"
      "vfma.f32 s4, s20, s28\n"
      "vfma.f32 s0, s13, s29\n"
      "vfma.f32 s4, s21, s29\n"
      "vfma.f32 s0, s14, s30\n"
      "vfma.f32 s4, s22, s30\n"
      "vfma.f32 s0, s15, s31\n"
      "vfma.f32 s4, s23, s31\n"
      "vldmia %[k1]!, {s24-s31}\n"
      "vfma.f32 s1, s8, s24\n"
      "vfma.f32 s5, s16, s24\n"
      "vfma.f32 s1, s9, s25\n"
      "vfma.f32 s5, s17, s25\n"
      "vfma.f32 s1, s10, s26\n"
      "vfma.f32 s5, s18, s26\n"
      "vfma.f32 s1, s11, s27\n"
      "vfma.f32 s5, s19, s27\n"
      "vfma.f32 s1, s12, s28\n"
      "vfma.f32 s5, s20, s28\n"
      "vfma.f32 s1, s13, s29\n"
      "vfma.f32 s5, s21, s29\n"
      "vfma.f32 s1, s14, s30\n"
      "vfma.f32 s5, s22, s30\n"
      "vfma.f32 s1, s15, s31\n"
      "vfma.f32 s5, s23, s31\n"
      "vldmia %[k2]!, {s24-s31}\n"
      "vfma.f32 s2, s8, s24\n"
      "vfma.f32 s6, s16, s24\n"
      "vfma.f32 s2, s9, s25\n"
      "vfma.f32 s6, s17, s25\n"
      "vfma.f32 s2, s10, s26\n"
      "vfma.f32 s6, s18, s26\n"
      "vfma.f32 s2, s11, s27\n"
      "vfma.f32 s6, s19, s27\n"
      "vfma.f32 s2, s12, s28\n"
      "vfma.f32 s6, s20, s28\n"
      "vfma.f32 s2, s13, s29\n"
      "vfma.f32 s6, s21, s29\n"
      "vfma.f32 s2, s14, s30\n"
      "vfma.f32 s6, s22, s30\n"
      "vfma.f32 s2, s15, s31\n"
      "vfma.f32 s6, s23, s31\n"
      "vldmia %[k3]!, {s24-s31}\n"
      "vfma.f32 s3, s8, s24\n"
      "vfma.f32 s7, s16, s24\n"
      "vfma.f32 s3, s9, s25\n"
      "vfma.f32 s7, s17, s25\n"
      "vfma.f32 s3, s10, s26\n"
      "vfma.f32 s7, s18, s26\n"
      "vfma.f32 s3, s11, s27\n"
      "vfma.f32 s7, s19, s27\n"
      "vfma.f32 s3, s12, s28\n"
      "vfma.f32 s7, s20, s28\n"
      "vfma.f32 s3, s13, s29\n"
      "vfma.f32 s7, s21, s29\n"
      "vfma.f32 s3, s14, s30\n"
      "vfma.f32 s7, s22, s30\n"
      "vfma.f32 s3, s15, s31\n"
      "vfma.f32 s7, s23, s31\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      "2:\n"
      "ldr %[n], [%[t], #16]\n"
      "cmp %[n], #0\n"
      "beq 4f\n"
      "3:\n"
      "vldmia %[q0]!, {s8-s9}\n"
      "vldmia %[q1]!, {s16-s17}\n"
      "vldmia %[k0]!, {s24-s25}\n"
      "vldmia %[k1]!, {s26-s27}\n"
      "vldmia %[k2]!, {s28-s29}\n"
      "vldmia %[k3]!, {s30-s31}\n"
      "vfma.f32 s0, s8, s24\n"
      "vfma.f32 s4, s16, s24\n"
      "vfma.f32 s1, s8, s26\n"
      "vfma.f32 s5, s16, s26\n"
      "vfma.f32 s2, s8, s28\n"
      "vfma.f32 s6, s16, s28\n"
      "vfma.f32 s3, s8, s30\n"
      "vfma.f32 s7, s16, s30\n"
      "vfma.f32 s0, s9, s25\n"
      "vfma.f32 s4, s17, s25\n"
      "vfma.f32 s1, s9, s27\n"
      "vfma.f32 s5, s17, s27\n"
      "vfma.f32 s2, s9, s29\n"
      "vfma.f32 s6, s17, s29\n"
      "vfma.f32 s3, s9, s31\n"
      "vfma.f32 s7, s17, s31\n"
      "subs %[n], %[n], #1\n"
      "bne 3b\n"
      "4:\n"
      "vldr s8, [%[t], #8]\n"
      "vmul.f32 s0, s0, s8\n"
      "vmul.f32 s1, s1, s8\n"
      "vmul.f32 s2, s2, s8\n"
      "vmul.f32 s3, s3, s8\n"
      "vmul.f32 s4, s4, s8\n"
      "vmul.f32 s5, s5, s8\n"
      "vmul.f32 s6, s6, s8\n"
      "vmul.f32 s7, s7, s8\n"
      "ldr %[q0], [%[t], #12]\n"
      "ldr %[q1], [%[t], #20]\n"
      "vstmia %[q0], {s0-s3}\n"
      "add %[q0], %[q0], %[q1]\n"
      "vstmia %[q0], {s4-s7}\n"
      : [q0] "+r"(q0), [q1] "+r"(q1), [k0] "+r"(k0), [k1] "+r"(k1), [k2] "+r"(k2), [k3] "+r"(k3), [n] "=&r"(n)
      : [t] "r"(&t)
      : TINYATTN_DSP_CLOBBERS);
}

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

#endif  // TINYATTN_DSP_SCORE_ROWS_INL_H_
