// The DSP port's fp32 softmax row kernels, two elements per loop step:
// row_max, and the exp of exp_shift_sum and exp, exp_poly's steps
// (tinyattn/exp.h) with every multiply-add fused, in the order GCC compiles
// the scalar form on these cores.
// Included by dsp.cc after kZeros and TINYATTN_DSP_CLOBBERS: one
// translation unit.
#ifndef TINYATTN_DSP_SOFTMAX_ROWS_INL_H_
#define TINYATTN_DSP_SOFTMAX_ROWS_INL_H_

#include <cstddef>
#include <cstdint>

#include "tinyattn/exp.h"

namespace tinyattn {
namespace dsp {
namespace {

// One element's step of the maximum in s0: VMAXNM where the FPU has it
// (FPv5: every Armv8-M FPU, and the M7's double-precision one; GCC defines
// no macro for it on M-profile), else a compare and a conditional move
// (x > m: never true for a NaN, which the flag finds).
#if __ARM_ARCH >= 8 || (__ARM_FP & 8)
#define TINYATTN_DSP_MAX_STEP(x) "vmaxnm.f32 s0, s0, " x "\n"
#else
#define TINYATTN_DSP_MAX_STEP(x)   \
  "vcmp.f32 " x ", s0\n"           \
  "vmrs APSR_nzcv, fpscr\n"        \
  "it gt\n"                        \
  "vmovgt.f32 s0, " x "\n"
#endif

// KernelsF32::row_max (n >= 1). As the scalar kernel: no NaN test per
// element, but a flag, the sum of every x * 0 (NaN exactly when some element
// is inf or NaN); a row it flags is scanned for its first NaN, which wins.
// The maximum starts at x[0]; an even n takes x[1] in a step of its own,
// then the pairs run to the end.
__attribute__((noinline)) float row_max(const float* x, size_t n) {
  float out[2];  // the maximum and the flag
  const float* p = x + 2 - n % 2;
  __asm__ volatile(
      "vldr s4, [%[zeros]]\n"
      "vldr s0, [%[x]]\n"
      "vmul.f32 s1, s0, s4\n"
      "tst %[n], #1\n"
      "bne 3f\n"
      "vldr s2, [%[x], #4]\n" TINYATTN_DSP_MAX_STEP("s2")
      "vfma.f32 s1, s2, s4\n"
      "3:\n"
      "cmp %[p], %[end]\n"
      "beq 2f\n"
      "1:\n"
      "vldmia %[p]!, {s2-s3}\n" TINYATTN_DSP_MAX_STEP("s2") TINYATTN_DSP_MAX_STEP("s3")
      "vfma.f32 s1, s2, s4\n"
      "vfma.f32 s1, s3, s4\n"
      "cmp %[p], %[end]\n"
      "bne 1b\n"
      "2:\n"
      "vstmia %[out], {s0-s1}\n"
      : [p] "+r"(p)
      : [x] "r"(x), [n] "r"(n), [end] "r"(x + n), [zeros] "r"(kZeros), [out] "r"(out)
      : "s0", "s1", "s2", "s3", "s4", "memory", "cc");
  if (out[1] != out[1])
    for (size_t j = 0; j < n; ++j)
      if (x[j] != x[j]) return x[j];
  return out[0];
}

#undef TINYATTN_DSP_MAX_STEP

// What the exp loop's asm reads, from one register. A VFMA adds into its
// destination, so each Horner step needs a fresh copy of its constant: one
// VLDM per step of two elements reloads them all (copies), where a VMOV per
// constant and element cost five instructions more per element.
struct ExpTable {
  float log2e, magic, minus_ln2_hi, minus_ln2_lo, c6;
  // The bits of magic - 125 (1.5 * 2^23 + 2): t's bits minus these are
  // n + 125, in [0, 127] exactly when n is in [-125, 2], where 2^n is a
  // normal float and x - shift lies well inside [flush_below,
  // overflow_above], so neither range rule applies.
  uint32_t fast_base;
  float copies[10];  // the two elements' t (magic), then c5, c4, c3, c2
  float flush_below, overflow_above, inf, zero;
};
static_assert(kExpCoefficients.magic == 12582912.0f + 127.0f, "fast_base assumes magic = 1.5 * 2^23 + 127");
static_assert(offsetof(ExpTable, fast_base) == 20 && offsetof(ExpTable, copies) == 24 &&
                  offsetof(ExpTable, flush_below) == 64,
              "the asm below addresses ExpTable by these offsets");

alignas(8) constexpr ExpTable kExpTable{
    kExpCoefficients.log2e,
    kExpCoefficients.magic,
    kExpCoefficients.minus_ln2_hi,
    kExpCoefficients.minus_ln2_lo,
    kExpCoefficients.c6,
    0x4B400002u,
    {kExpCoefficients.magic, kExpCoefficients.magic, kExpCoefficients.c5, kExpCoefficients.c5, kExpCoefficients.c4,
     kExpCoefficients.c4, kExpCoefficients.c3, kExpCoefficients.c3, kExpCoefficients.c2, kExpCoefficients.c2},
    kExpCoefficients.flush_below,
    kExpCoefficients.overflow_above,
    __builtin_inff(),
    0.0f,
};

// y[j] = exp_poly(x[j] - shift) for j < n (y == x is fine), each added to
// the sum in order, which it returns. Per element: t = (x - shift) * log2e +
// magic, n = t - magic, 2^n from t's bits shifted by 23 (two elements per
// VMOV each way), r = x - shift + n * -ln2 (two steps), the Horner steps of
// q, u = r + r^2 q, e = 2^n + 2^n u. A pair whose n falls outside
// [-125, 2] (x - shift below about -86.9 or above 1.7, inf, NaN) takes the
// range rules afterwards as exp_poly does: below flush_below exactly +0,
// above overflow_above +inf (its e may have come from a 2^n that wrapped);
// NaN stays NaN through the steps. An odd row's last element runs as a
// pair with itself into a buffer, the sum then restored to before the pair
// plus it once.
__attribute__((noinline)) float exp_row(const float* x, float* y, size_t n, float shift) {
  // The shift and the sum in the registers the asm names.
  register float shift_s1 __asm__("s1") = shift;
  register float sum __asm__("s0");
  float two[2];           // an odd row's last element, as a pair with itself
  uintptr_t tail = n % 2;  // 1: n is odd; then where its last exp goes, once it ran
  const float* end = x + (n - n % 2);
  const ExpTable* c = &kExpTable;
  uint32_t ta, tb, sa, sb, base;
  __asm__ volatile(
      "vldmia %[c], {s2-s6}\n"
      "vldr s0, [%[c], #76]\n"
      "ldr %[base], [%[c], #20]\n"
      "add %[c], %[c], #24\n"
      "cmp %[x], %[end]\n"
      "beq 6f\n"
      "1:\n"
      "vldmia %[x]!, {s8-s9}\n"
      "5:\n"
      "vldmia %[c], {s16-s25}\n"
      "vsub.f32 s10, s8, s1\n"
      "vsub.f32 s11, s9, s1\n"
      "vfma.f32 s16, s10, s2\n"
      "vfma.f32 s17, s11, s2\n"
      "vsub.f32 s12, s16, s3\n"
      "vsub.f32 s13, s17, s3\n"
      "vmov %[ta], %[tb], s16, s17\n"
      "vfma.f32 s10, s12, s4\n"
      "vfma.f32 s11, s13, s4\n"
      "lsl %[sa], %[ta], #23\n"
      "lsl %[sb], %[tb], #23\n"
      "vfma.f32 s10, s12, s5\n"
      "vfma.f32 s11, s13, s5\n"
      "vmov s16, s17, %[sa], %[sb]\n"
      "vfma.f32 s18, s10, s6\n"
      "vfma.f32 s19, s11, s6\n"
      "sub %[ta], %[ta], %[base]\n"
      "sub %[tb], %[tb], %[base]\n"
      "vmul.f32 s14, s10, s10\n"
      "vmul.f32 s15, s11, s11\n"
      "vfma.f32 s20, s18, s10\n"
      "vfma.f32 s21, s19, s11\n"
      "orr %[ta], %[ta], %[tb]\n"
      "vfma.f32 s22, s20, s10\n"
      "vfma.f32 s23, s21, s11\n"
      "vfma.f32 s24, s22, s10\n"
      "vfma.f32 s25, s23, s11\n"
      "vfma.f32 s10, s24, s14\n"
      "vfma.f32 s11, s25, s15\n"
      "vfma.f32 s16, s16, s10\n"
      "vfma.f32 s17, s17, s11\n"
      "cmp %[ta], #127\n"
      "bhi 3f\n"
      "2:\n"
      "vadd.f32 s0, s0, s16\n"
      "vadd.f32 s0, s0, s17\n"
      "vstmia %[y]!, {s16-s17}\n"
      "cmp %[x], %[end]\n"
      "bne 1b\n"
      // Past the pairs (x == end): an odd row's last element once, as a
      // pair with itself (x stays at end, so the pair exits here again).
      "6:\n"
      "cmp %[tail], #1\n"
      "bhi 8f\n"
      "bne 7f\n"
      "mov %[tail], %[y]\n"
      "vmov.f32 s30, s0\n"
      "vldr s8, [%[x]]\n"
      "vmov.f32 s9, s8\n"
      "mov %[y], %[two]\n"
      "b 5b\n"
      // The range rules on x - shift (not ordered for NaN: mi and gt false).
      "3:\n"
      "add %[sa], %[c], #40\n"
      "vldmia %[sa], {s26-s29}\n"
      "vsub.f32 s10, s8, s1\n"
      "vsub.f32 s11, s9, s1\n"
      "vcmp.f32 s10, s26\n"
      "vmrs APSR_nzcv, fpscr\n"
      "it mi\n"
      "vmovmi.f32 s16, s29\n"
      "vcmp.f32 s10, s27\n"
      "vmrs APSR_nzcv, fpscr\n"
      "it gt\n"
      "vmovgt.f32 s16, s28\n"
      "vcmp.f32 s11, s26\n"
      "vmrs APSR_nzcv, fpscr\n"
      "it mi\n"
      "vmovmi.f32 s17, s29\n"
      "vcmp.f32 s11, s27\n"
      "vmrs APSR_nzcv, fpscr\n"
      "it gt\n"
      "vmovgt.f32 s17, s28\n"
      "b 2b\n"
      "8:\n"
      "vadd.f32 s0, s30, s16\n"
      "vstr s16, [%[tail]]\n"
      "7:\n"
      : [sum] "=&t"(sum), [x] "+r"(x), [y] "+r"(y), [c] "+r"(c), [tail] "+r"(tail), [ta] "=&r"(ta), [tb] "=&r"(tb),
        [sa] "=&r"(sa), [sb] "=&r"(sb), [base] "=&r"(base)
      : [shift] "t"(shift_s1), [end] "r"(end), [two] "r"(two)
      : "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18",
        "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "memory", "cc");
  return sum;
}

// KernelsF32::exp_shift_sum and KernelsF32::exp: one loop, so the two give
// the same floats.
float exp_shift_sum(float* x, size_t n, float shift) { return exp_row(x, x, n, shift); }
void exp(const float* x, float* out, size_t n) { exp_row(x, out, n, 0.0f); }

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

#endif  // TINYATTN_DSP_SOFTMAX_ROWS_INL_H_
