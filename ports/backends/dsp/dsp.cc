// The Armv7E-M DSP port (Cortex-M4, M7, M33, M35P): its int8 kernels
// (dsp_i8.cc) use the dual 16-bit multiply-accumulates. Its fp32 table is
// the scalar port's with the products replaced where the core has a
// single-precision FPU (FPv4-SP, FPv5). The block products take register
// tiles of four query rows by four keys (scores) or four value columns
// (P.V), sixteen accumulators in s0-s15 and the operands of two steps in
// s16-s31, loaded two or four floats per VLDM, so a step costs 8 loads for
// 32 multiply-adds (the scalar block kernel: 5 for 4). A decode step has one
// to three rows: `scores`, `weighted_sum` and the blocks of fewer rows take
// one-row tiles (a query row against four keys, eight columns per VLDM; one
// row's 16, 8 or 4 output columns with eight weights per VLDM) and, for the
// scores of two rows and more, a two-row tile. GCC 12 never merges float
// loads into VLDM, hence the asm. The four-row sums run in the scalar block
// kernels' order: the same floats. Without an FPU (M33 without FP) every
// float operation is a libgcc call and the scalar kernels stay. The other
// entries are the scalar port's functions under this port's name, so an
// image with both ports holds them once.
#include "backends/scalar/scalar.h"
#include "port.h"

#include <cstddef>

namespace tinyattn {
namespace dsp {
namespace {

#if defined(__ARM_FP) && (__ARM_FP & 4) && defined(__OPTIMIZE__)

// The asm below names every single-precision register (so the compiler
// keeps nothing of its own in them across it) and loads two or four
// consecutive floats per VLDM. The tiles are functions of their own
// (noinline): inlined into the block kernel's loop, GCC 12 at -Os finds no
// registers for the ten operands of the score tile ("impossible
// constraints"), and at -O0 none at all, so unoptimized builds keep the
// scalar kernels.
#define TINYATTN_DSP_CLOBBERS                                                                                         \
  "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", \
      "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "memory", "cc"

alignas(8) constexpr float kZeros[16] = {};

// What a tile's asm reads besides its operand rows, from one register (the
// others hold the row pointers).
struct TileArgs {
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  const float* zeros;  // kZeros, cleared into the sixteen accumulators
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t steps;  // pairs of multiply-add steps (dk / 2 or count / 2)
  union {
    // cppcheck-suppress unusedStructMember ; read by the score tile's asm
    float scale;     // scores: the factor of every score
    const float* a;  // weighted sums: the four rows' factors
  };
  float* out;  // the tile's first output row
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t ld_out;      // bytes between its output rows
  size_t ld_operand;  // elements between the key rows (scores) or the value rows
};
static_assert(offsetof(TileArgs, steps) == 4 && offsetof(TileArgs, scale) == 8 && offsetof(TileArgs, a) == 8 &&
                  offsetof(TileArgs, out) == 12 && offsetof(TileArgs, ld_out) == 16,
              "the asm below addresses TileArgs by these offsets");

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

// What a one-row tile's asm reads besides its operand rows.
struct RowArgs {
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  const float* zeros;  // kZeros, cleared into the accumulators
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t steps;  // scores: dk / 8; weighted sums: count / 8
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  float factor;  // scores: scale; weighted sums: a
  float* out;    // the tile's outputs
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t rest;  // scores: (dk % 8) / 2; weighted sums: count % 8
  // cppcheck-suppress unusedStructMember ; read by the two-row tile's asm
  size_t ld_out;  // bytes between the two-row tile's output rows
  float four[4];  // the outputs of a one-row score tile of fewer than four keys
};
static_assert(offsetof(RowArgs, steps) == 4 && offsetof(RowArgs, factor) == 8 && offsetof(RowArgs, out) == 12 &&
                  offsetof(RowArgs, rest) == 16 && offsetof(RowArgs, ld_out) == 20,
              "the asm below addresses RowArgs by these offsets");

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

// One row's weighted sums over count value rows from v (adj: the bytes from
// where a VLDM with writeback leaves the pointer to the next value row), 16,
// 8 or 4 columns: the sums in s0-s15 (s0-s7, s0-s3), eight keys' p at a time
// in s24-s31 (then the last count % 8 one at a time in s24), each value row
// as two halves in s16-s23 (16 columns) or alternately in two sets of
// registers, then times a. Each sum runs over j in order, from zero.
__attribute__((noinline)) void weighted_sum_row16(const float* p, const float* v, size_t adj, const RowArgs& t) {
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s15}\n"
      "ldr %[n], [%[t], #4]\n"
      "cmp %[n], #0\n"
      "beq 2f\n"
      "1:\n"
      "vldmia %[p]!, {s24-s31}\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s24, s16\n"
      "vfma.f32 s1, s24, s17\n"
      "vfma.f32 s2, s24, s18\n"
      "vfma.f32 s3, s24, s19\n"
      "vfma.f32 s4, s24, s20\n"
      "vfma.f32 s5, s24, s21\n"
      "vfma.f32 s6, s24, s22\n"
      "vfma.f32 s7, s24, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s24, s16\n"
      "vfma.f32 s9, s24, s17\n"
      "vfma.f32 s10, s24, s18\n"
      "vfma.f32 s11, s24, s19\n"
      "vfma.f32 s12, s24, s20\n"
      "vfma.f32 s13, s24, s21\n"
      "vfma.f32 s14, s24, s22\n"
      "vfma.f32 s15, s24, s23\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s25, s16\n"
      "vfma.f32 s1, s25, s17\n"
      "vfma.f32 s2, s25, s18\n"
      "vfma.f32 s3, s25, s19\n"
      "vfma.f32 s4, s25, s20\n"
      "vfma.f32 s5, s25, s21\n"
      "vfma.f32 s6, s25, s22\n"
      "vfma.f32 s7, s25, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s25, s16\n"
      "vfma.f32 s9, s25, s17\n"
      "vfma.f32 s10, s25, s18\n"
      "vfma.f32 s11, s25, s19\n"
      "vfma.f32 s12, s25, s20\n"
      "vfma.f32 s13, s25, s21\n"
      "vfma.f32 s14, s25, s22\n"
      "vfma.f32 s15, s25, s23\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s26, s16\n"
      "vfma.f32 s1, s26, s17\n"
      "vfma.f32 s2, s26, s18\n"
      "vfma.f32 s3, s26, s19\n"
      "vfma.f32 s4, s26, s20\n"
      "vfma.f32 s5, s26, s21\n"
      "vfma.f32 s6, s26, s22\n"
      "vfma.f32 s7, s26, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s26, s16\n"
      "vfma.f32 s9, s26, s17\n"
      "vfma.f32 s10, s26, s18\n"
      "vfma.f32 s11, s26, s19\n"
      "vfma.f32 s12, s26, s20\n"
      "vfma.f32 s13, s26, s21\n"
      "vfma.f32 s14, s26, s22\n"
      "vfma.f32 s15, s26, s23\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s27, s16\n"
      "vfma.f32 s1, s27, s17\n"
      "vfma.f32 s2, s27, s18\n"
      "vfma.f32 s3, s27, s19\n"
      "vfma.f32 s4, s27, s20\n"
      "vfma.f32 s5, s27, s21\n"
      "vfma.f32 s6, s27, s22\n"
      "vfma.f32 s7, s27, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s27, s16\n"
      "vfma.f32 s9, s27, s17\n"
      "vfma.f32 s10, s27, s18\n"
      "vfma.f32 s11, s27, s19\n"
      "vfma.f32 s12, s27, s20\n"
      "vfma.f32 s13, s27, s21\n"
      "vfma.f32 s14, s27, s22\n"
      "vfma.f32 s15, s27, s23\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s28, s16\n"
      "vfma.f32 s1, s28, s17\n"
      "vfma.f32 s2, s28, s18\n"
      "vfma.f32 s3, s28, s19\n"
      "vfma.f32 s4, s28, s20\n"
      "vfma.f32 s5, s28, s21\n"
      "vfma.f32 s6, s28, s22\n"
      "vfma.f32 s7, s28, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s28, s16\n"
      "vfma.f32 s9, s28, s17\n"
      "vfma.f32 s10, s28, s18\n"
      "vfma.f32 s11, s28, s19\n"
      "vfma.f32 s12, s28, s20\n"
      "vfma.f32 s13, s28, s21\n"
      "vfma.f32 s14, s28, s22\n"
      "vfma.f32 s15, s28, s23\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s29, s16\n"
      "vfma.f32 s1, s29, s17\n"
      "vfma.f32 s2, s29, s18\n"
      "vfma.f32 s3, s29, s19\n"
      "vfma.f32 s4, s29, s20\n"
      "vfma.f32 s5, s29, s21\n"
      "vfma.f32 s6, s29, s22\n"
      "vfma.f32 s7, s29, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s29, s16\n"
      "vfma.f32 s9, s29, s17\n"
      "vfma.f32 s10, s29, s18\n"
      "vfma.f32 s11, s29, s19\n"
      "vfma.f32 s12, s29, s20\n"
      "vfma.f32 s13, s29, s21\n"
      "vfma.f32 s14, s29, s22\n"
      "vfma.f32 s15, s29, s23\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s30, s16\n"
      "vfma.f32 s1, s30, s17\n"
      "vfma.f32 s2, s30, s18\n"
      "vfma.f32 s3, s30, s19\n"
      "vfma.f32 s4, s30, s20\n"
      "vfma.f32 s5, s30, s21\n"
      "vfma.f32 s6, s30, s22\n"
      "vfma.f32 s7, s30, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s30, s16\n"
      "vfma.f32 s9, s30, s17\n"
      "vfma.f32 s10, s30, s18\n"
      "vfma.f32 s11, s30, s19\n"
      "vfma.f32 s12, s30, s20\n"
      "vfma.f32 s13, s30, s21\n"
      "vfma.f32 s14, s30, s22\n"
      "vfma.f32 s15, s30, s23\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s31, s16\n"
      "vfma.f32 s1, s31, s17\n"
      "vfma.f32 s2, s31, s18\n"
      "vfma.f32 s3, s31, s19\n"
      "vfma.f32 s4, s31, s20\n"
      "vfma.f32 s5, s31, s21\n"
      "vfma.f32 s6, s31, s22\n"
      "vfma.f32 s7, s31, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s31, s16\n"
      "vfma.f32 s9, s31, s17\n"
      "vfma.f32 s10, s31, s18\n"
      "vfma.f32 s11, s31, s19\n"
      "vfma.f32 s12, s31, s20\n"
      "vfma.f32 s13, s31, s21\n"
      "vfma.f32 s14, s31, s22\n"
      "vfma.f32 s15, s31, s23\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      "2:\n"
      "ldr %[n], [%[t], #16]\n"
      "cmp %[n], #0\n"
      "beq 4f\n"
      "3:\n"
      "vldmia %[p]!, {s24}\n"
      "vldmia %[v]!, {s16-s23}\n"
      "vfma.f32 s0, s24, s16\n"
      "vfma.f32 s1, s24, s17\n"
      "vfma.f32 s2, s24, s18\n"
      "vfma.f32 s3, s24, s19\n"
      "vfma.f32 s4, s24, s20\n"
      "vfma.f32 s5, s24, s21\n"
      "vfma.f32 s6, s24, s22\n"
      "vfma.f32 s7, s24, s23\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s8, s24, s16\n"
      "vfma.f32 s9, s24, s17\n"
      "vfma.f32 s10, s24, s18\n"
      "vfma.f32 s11, s24, s19\n"
      "vfma.f32 s12, s24, s20\n"
      "vfma.f32 s13, s24, s21\n"
      "vfma.f32 s14, s24, s22\n"
      "vfma.f32 s15, s24, s23\n"
      "subs %[n], %[n], #1\n"
      "bne 3b\n"
      "4:\n"
      "vldr s24, [%[t], #8]\n"
      "vmul.f32 s0, s0, s24\n"
      "vmul.f32 s1, s1, s24\n"
      "vmul.f32 s2, s2, s24\n"
      "vmul.f32 s3, s3, s24\n"
      "vmul.f32 s4, s4, s24\n"
      "vmul.f32 s5, s5, s24\n"
      "vmul.f32 s6, s6, s24\n"
      "vmul.f32 s7, s7, s24\n"
      "vmul.f32 s8, s8, s24\n"
      "vmul.f32 s9, s9, s24\n"
      "vmul.f32 s10, s10, s24\n"
      "vmul.f32 s11, s11, s24\n"
      "vmul.f32 s12, s12, s24\n"
      "vmul.f32 s13, s13, s24\n"
      "vmul.f32 s14, s14, s24\n"
      "vmul.f32 s15, s15, s24\n"
      "ldr %[n], [%[t], #12]\n"
      "vstmia %[n], {s0-s15}\n"
      : [p] "+r"(p), [v] "+r"(v), [n] "=&r"(n)
      : [t] "r"(&t), [adj] "r"(adj)
      : TINYATTN_DSP_CLOBBERS);
}

__attribute__((noinline)) void weighted_sum_row8(const float* p, const float* v, size_t adj, const RowArgs& t) {
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s7}\n"
      "ldr %[n], [%[t], #4]\n"
      "cmp %[n], #0\n"
      "beq 2f\n"
      "1:\n"
      "vldmia %[p]!, {s24-s31}\n"
      "vldmia %[v], {s8-s15}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s24, s8\n"
      "vfma.f32 s1, s24, s9\n"
      "vfma.f32 s2, s24, s10\n"
      "vfma.f32 s3, s24, s11\n"
      "vfma.f32 s4, s24, s12\n"
      "vfma.f32 s5, s24, s13\n"
      "vfma.f32 s6, s24, s14\n"
      "vfma.f32 s7, s24, s15\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s25, s16\n"
      "vfma.f32 s1, s25, s17\n"
      "vfma.f32 s2, s25, s18\n"
      "vfma.f32 s3, s25, s19\n"
      "vfma.f32 s4, s25, s20\n"
      "vfma.f32 s5, s25, s21\n"
      "vfma.f32 s6, s25, s22\n"
      "vfma.f32 s7, s25, s23\n"
      "vldmia %[v], {s8-s15}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s26, s8\n"
      "vfma.f32 s1, s26, s9\n"
      "vfma.f32 s2, s26, s10\n"
      "vfma.f32 s3, s26, s11\n"
      "vfma.f32 s4, s26, s12\n"
      "vfma.f32 s5, s26, s13\n"
      "vfma.f32 s6, s26, s14\n"
      "vfma.f32 s7, s26, s15\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s27, s16\n"
      "vfma.f32 s1, s27, s17\n"
      "vfma.f32 s2, s27, s18\n"
      "vfma.f32 s3, s27, s19\n"
      "vfma.f32 s4, s27, s20\n"
      "vfma.f32 s5, s27, s21\n"
      "vfma.f32 s6, s27, s22\n"
      "vfma.f32 s7, s27, s23\n"
      "vldmia %[v], {s8-s15}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s28, s8\n"
      "vfma.f32 s1, s28, s9\n"
      "vfma.f32 s2, s28, s10\n"
      "vfma.f32 s3, s28, s11\n"
      "vfma.f32 s4, s28, s12\n"
      "vfma.f32 s5, s28, s13\n"
      "vfma.f32 s6, s28, s14\n"
      "vfma.f32 s7, s28, s15\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s29, s16\n"
      "vfma.f32 s1, s29, s17\n"
      "vfma.f32 s2, s29, s18\n"
      "vfma.f32 s3, s29, s19\n"
      "vfma.f32 s4, s29, s20\n"
      "vfma.f32 s5, s29, s21\n"
      "vfma.f32 s6, s29, s22\n"
      "vfma.f32 s7, s29, s23\n"
      "vldmia %[v], {s8-s15}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s30, s8\n"
      "vfma.f32 s1, s30, s9\n"
      "vfma.f32 s2, s30, s10\n"
      "vfma.f32 s3, s30, s11\n"
      "vfma.f32 s4, s30, s12\n"
      "vfma.f32 s5, s30, s13\n"
      "vfma.f32 s6, s30, s14\n"
      "vfma.f32 s7, s30, s15\n"
      "vldmia %[v], {s16-s23}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s31, s16\n"
      "vfma.f32 s1, s31, s17\n"
      "vfma.f32 s2, s31, s18\n"
      "vfma.f32 s3, s31, s19\n"
      "vfma.f32 s4, s31, s20\n"
      "vfma.f32 s5, s31, s21\n"
      "vfma.f32 s6, s31, s22\n"
      "vfma.f32 s7, s31, s23\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      "2:\n"
      "ldr %[n], [%[t], #16]\n"
      "cmp %[n], #0\n"
      "beq 4f\n"
      "3:\n"
      "vldmia %[p]!, {s24}\n"
      "vldmia %[v], {s8-s15}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s24, s8\n"
      "vfma.f32 s1, s24, s9\n"
      "vfma.f32 s2, s24, s10\n"
      "vfma.f32 s3, s24, s11\n"
      "vfma.f32 s4, s24, s12\n"
      "vfma.f32 s5, s24, s13\n"
      "vfma.f32 s6, s24, s14\n"
      "vfma.f32 s7, s24, s15\n"
      "subs %[n], %[n], #1\n"
      "bne 3b\n"
      "4:\n"
      "vldr s24, [%[t], #8]\n"
      "vmul.f32 s0, s0, s24\n"
      "vmul.f32 s1, s1, s24\n"
      "vmul.f32 s2, s2, s24\n"
      "vmul.f32 s3, s3, s24\n"
      "vmul.f32 s4, s4, s24\n"
      "vmul.f32 s5, s5, s24\n"
      "vmul.f32 s6, s6, s24\n"
      "vmul.f32 s7, s7, s24\n"
      "ldr %[n], [%[t], #12]\n"
      "vstmia %[n], {s0-s7}\n"
      : [p] "+r"(p), [v] "+r"(v), [n] "=&r"(n)
      : [t] "r"(&t), [adj] "r"(adj)
      : TINYATTN_DSP_CLOBBERS);
}

__attribute__((noinline)) void weighted_sum_row4(const float* p, const float* v, size_t adj, const RowArgs& t) {
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s3}\n"
      "ldr %[n], [%[t], #4]\n"
      "cmp %[n], #0\n"
      "beq 2f\n"
      "1:\n"
      "vldmia %[p]!, {s24-s31}\n"
      "vldmia %[v], {s4-s7}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s24, s4\n"
      "vfma.f32 s1, s24, s5\n"
      "vfma.f32 s2, s24, s6\n"
      "vfma.f32 s3, s24, s7\n"
      "vldmia %[v], {s8-s11}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s25, s8\n"
      "vfma.f32 s1, s25, s9\n"
      "vfma.f32 s2, s25, s10\n"
      "vfma.f32 s3, s25, s11\n"
      "vldmia %[v], {s4-s7}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s26, s4\n"
      "vfma.f32 s1, s26, s5\n"
      "vfma.f32 s2, s26, s6\n"
      "vfma.f32 s3, s26, s7\n"
      "vldmia %[v], {s8-s11}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s27, s8\n"
      "vfma.f32 s1, s27, s9\n"
      "vfma.f32 s2, s27, s10\n"
      "vfma.f32 s3, s27, s11\n"
      "vldmia %[v], {s4-s7}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s28, s4\n"
      "vfma.f32 s1, s28, s5\n"
      "vfma.f32 s2, s28, s6\n"
      "vfma.f32 s3, s28, s7\n"
      "vldmia %[v], {s8-s11}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s29, s8\n"
      "vfma.f32 s1, s29, s9\n"
      "vfma.f32 s2, s29, s10\n"
      "vfma.f32 s3, s29, s11\n"
      "vldmia %[v], {s4-s7}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s30, s4\n"
      "vfma.f32 s1, s30, s5\n"
      "vfma.f32 s2, s30, s6\n"
      "vfma.f32 s3, s30, s7\n"
      "vldmia %[v], {s8-s11}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s31, s8\n"
      "vfma.f32 s1, s31, s9\n"
      "vfma.f32 s2, s31, s10\n"
      "vfma.f32 s3, s31, s11\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      "2:\n"
      "ldr %[n], [%[t], #16]\n"
      "cmp %[n], #0\n"
      "beq 4f\n"
      "3:\n"
      "vldmia %[p]!, {s24}\n"
      "vldmia %[v], {s4-s7}\n"
      "add %[v], %[v], %[adj]\n"
      "vfma.f32 s0, s24, s4\n"
      "vfma.f32 s1, s24, s5\n"
      "vfma.f32 s2, s24, s6\n"
      "vfma.f32 s3, s24, s7\n"
      "subs %[n], %[n], #1\n"
      "bne 3b\n"
      "4:\n"
      "vldr s24, [%[t], #8]\n"
      "vmul.f32 s0, s0, s24\n"
      "vmul.f32 s1, s1, s24\n"
      "vmul.f32 s2, s2, s24\n"
      "vmul.f32 s3, s3, s24\n"
      "ldr %[n], [%[t], #12]\n"
      "vstmia %[n], {s0-s3}\n"
      : [p] "+r"(p), [v] "+r"(v), [n] "=&r"(n)
      : [t] "r"(&t), [adj] "r"(adj)
      : TINYATTN_DSP_CLOBBERS);
}

// The row loops, inlined where they are used: a call between the kernels
// would add its frame to the deepest chain (stage 80-stack).
#define TINYATTN_DSP_INLINE inline __attribute__((always_inline))

// s[j] = scale * dot(q, k_j) for one query row, dk even (t: its steps,
// rest and scale), in tiles of four keys, the last tile overlapping the one
// before when four do not divide count (its sums are the same floats again);
// under four keys, one tile per key with the key in all four places.
TINYATTN_DSP_INLINE void scores_row(const float* q, const float* k, size_t ldk, size_t count, RowArgs& t, float* s) {
  if (count < 4) {
    t.out = t.four;
    for (size_t j = 0; j < count; ++j) {
      scores_row_tile(q, k + j * ldk, 0, t);
      s[j] = t.four[0];
    }
    return;
  }
  for (size_t j = 0;; j += 4) {
    if (j + 4 > count) j = count - 4;
    t.out = s + j;
    scores_row_tile(q, k + j * ldk, ldk, t);
    if (j + 4 == count) break;
  }
}

// KernelsF32::scores: the one-row tiles; odd dk by the scalar kernel, for
// every key alike.
void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  if (dk % 2 != 0) {
    scalar::f32::scores(q, k, ldk, count, dk, scale, s);
    return;
  }
  RowArgs t{kZeros, dk / 8, scale, s, dk % 8 / 2, 0, {}};
  scores_row(q, k, ldk, count, t, s);
}

// y = a * sum_j p[j] * v[j*ldv + ...] for one row, dv >= 4, every term
// computed (no zero skipping), in tiles of 16, 8 and 4 columns, a last tile
// of four overlapping the one before when four do not divide dv.
TINYATTN_DSP_INLINE void weighted_sum_row(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a,
                                          float* y) {
  RowArgs t{kZeros, count / 8, a, y, count % 8, 0, {}};
  const size_t ld = ldv * sizeof(float);
  size_t c = 0;
  for (; c + 16 <= dv; c += 16) {
    t.out = y + c;
    weighted_sum_row16(p, v + c, ld - 8 * sizeof(float), t);
  }
  if (c + 8 <= dv) {
    t.out = y + c;
    weighted_sum_row8(p, v + c, ld, t);
    c += 8;
  }
  if (c + 4 <= dv) {
    t.out = y + c;
    weighted_sum_row4(p, v + c, ld, t);
    c += 4;
  }
  if (c < dv) {
    t.out = y + dv - 4;
    weighted_sum_row4(p, v + dv - 4, ld, t);
  }
}

// weighted_sum_row, and whether every output is finite (x * 0 is 0 for a
// finite x, NaN otherwise).
__attribute__((noinline)) bool weighted_sum_finite(const float* p, const float* v, size_t ldv, size_t count, size_t dv,
                                                   float a, float* y) {
  weighted_sum_row(p, v, ldv, count, dv, a, y);
  float z = 0.0f;
  for (size_t c = 0; c < dv; ++c) z += y[c] * 0.0f;
  return z == 0.0f;
}

// KernelsF32::weighted_sum: the row tiles multiply every weight, so a zero
// weight meeting an inf or NaN value row gives NaN where the contract says
// the key adds nothing. With finite terms the two agree (adding 0 * v
// changes no sum), so only an output that is not finite is computed again
// by the scalar kernel, which skips zero weights.
void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  if (dv >= 4 && weighted_sum_finite(p, v, ldv, count, dv, a, y)) return;
  scalar::f32::weighted_sum(p, v, ldv, count, dv, a, y);
}

// The blocks' paths other than a full block's: each its own function (the
// full blocks' code stays what it was without them), called through a
// dispatcher of the same signature, so each call chain holds at most two of
// this file's frames above a tile (stage 80-stack bounds every indirect call
// by the deepest port function).

// Fewer rows than a block (a decode step's one to three), dk even: the
// first two rows through the two-row tile, the others through the one-row
// tiles (both sum as scores does: the same floats).
__attribute__((noinline)) void scores_block_rows(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk,
                                                 size_t count, size_t dk, float scale, float* s, size_t lds) {
  RowArgs t{kZeros, dk / 8, scale, s, dk % 8 / 2, lds * sizeof(float), {}};
  size_t r = 0;
  if (rows >= 2 && count >= 4) {
    for (size_t j = 0;; j += 4) {
      if (j + 4 > count) j = count - 4;
      t.out = s + j;
      scores_rows2_tile(q, ldq, k + j * ldk, ldk, t);
      if (j + 4 == count) break;
    }
    r = 2;
  }
  for (; r < rows; ++r) scores_row(q + r * ldq, k, ldk, count, t, s + r * lds);
}

// What scores_block leaves to others: fewer rows (dk even) to
// scores_block_rows; odd dk, or a full block of fewer than four keys, to the
// scalar kernel.
__attribute__((noinline)) void scores_block_rest(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk,
                                                 size_t count, size_t dk, float scale, float* s, size_t lds) {
  if (rows != kBlockRows && dk % 2 == 0)
    scores_block_rows(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
  else
    scalar::f32::scores_block(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
}

// s[r*lds + j] = scale * dot(q_r, k_j): a full block (kBlockRows rows) of
// at least four keys with dk even in tiles of four keys, the last tile
// overlapping the one before when four do not divide count (its sums are
// the same floats again); anything else by scores_block_rest.
void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                  float scale, float* s, size_t lds) {
  if (rows != kBlockRows || dk % 2 != 0 || dk == 0 || count < 4) {
    scores_block_rest(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
    return;
  }
  TileArgs t{kZeros, dk / 2, {scale}, s, lds * sizeof(float), ldk};
  for (size_t j = 0;; j += 4) {
    if (j + 4 > count) j = count - 4;
    t.out = s + j;
    scores_tile(q, ldq, k + j * ldk, t);
    if (j + 4 == count) break;
  }
}

// Fewer rows than a block, dv >= 4: row by row through the one-row tiles.
__attribute__((noinline)) void weighted_sum_block_rows(const float* p, size_t ldp, size_t rows, const float* v,
                                                       size_t ldv, size_t count, size_t dv, const float* a, float* y,
                                                       size_t ldy) {
  for (size_t r = 0; r < rows; ++r) weighted_sum_row(p + r * ldp, v, ldv, count, dv, a[r], y + r * ldy);
}

// A full block of an odd count, dv >= 4: the tiles that take its first key
// on its own.
__attribute__((noinline)) void weighted_sum_block_odd(const float* p, size_t ldp, size_t, const float* v, size_t ldv,
                                                      size_t count, size_t dv, const float* a, float* y, size_t ldy) {
  TileArgs t{kZeros, count / 2, {0.0f}, y, ldy * sizeof(float), ldv};
  t.a = a;
  for (size_t c = 0;; c += 4) {
    if (c + 4 > dv) c = dv - 4;
    t.out = y + c;
    weighted_sum_tile_odd(p, ldp, v + c, t);
    if (c + 4 == dv) break;
  }
}

// What weighted_sum_block leaves to others: fewer rows to
// weighted_sum_block_rows, an odd count to weighted_sum_block_odd; dv < 4 (or
// no key) to the scalar kernel.
__attribute__((noinline)) void weighted_sum_block_rest(const float* p, size_t ldp, size_t rows, const float* v,
                                                       size_t ldv, size_t count, size_t dv, const float* a, float* y,
                                                       size_t ldy) {
  if (dv < 4 || count == 0)
    scalar::f32::weighted_sum_block(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
  else if (rows != kBlockRows)
    weighted_sum_block_rows(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
  else
    weighted_sum_block_odd(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
}

// y[r*ldy + c] = a[r] * sum_j p[r*ldp + j] * v[j*ldv + c]: a full block with
// an even count and dv >= 4 in tiles of four columns, the last tile
// overlapping the one before when four do not divide dv; anything else by
// weighted_sum_block_rest. Every value row is finite here
// (KernelsF32::weighted_sum_block), so zero weights need no test.
void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count, size_t dv,
                        const float* a, float* y, size_t ldy) {
  if (rows != kBlockRows || count % 2 != 0 || count == 0 || dv < 4) {
    weighted_sum_block_rest(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
    return;
  }
  TileArgs t{kZeros, count / 2, {0.0f}, y, ldy * sizeof(float), ldv};
  t.a = a;
  for (size_t c = 0;; c += 4) {
    if (c + 4 > dv) c = dv - 4;
    t.out = y + c;
    weighted_sum_tile(p, ldp, v + c, t);
    if (c + 4 == dv) break;
  }
}

#undef TINYATTN_DSP_INLINE

constexpr KernelsF32 make_table() {
  KernelsF32 t = scalar::table_f32("dsp");
  t.scores = scores;
  t.weighted_sum = weighted_sum;
  t.scores_block = scores_block;
  t.weighted_sum_block = weighted_sum_block;
  return t;
}
constexpr KernelsF32 kKernels = make_table();

#else  // no single-precision FPU (soft float) or an unoptimized build: the scalar kernels

constexpr KernelsF32 kKernels = scalar::table_f32("dsp");

#endif

}  // namespace
}  // namespace dsp

template <>
const KernelsF32* port_kernels_f32<Port::kDsp>() {
  return &dsp::kKernels;
}

}  // namespace tinyattn
