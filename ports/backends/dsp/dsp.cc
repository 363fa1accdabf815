// The Armv7E-M DSP port (Cortex-M4, M7, M33, M35P): its int8 kernels
// (dsp_i8.cc) use the dual 16-bit multiply-accumulates. Its fp32 table is
// the scalar port's with the two block products replaced where the core has
// a single-precision FPU (FPv4-SP, FPv5): register tiles of four query rows
// by four keys (scores) or four value columns (P.V), sixteen accumulators in
// s0-s15 and the operands of two steps in s16-s31, loaded two or four floats
// per VLDM, so a step costs 8 loads for 32 multiply-adds (the scalar block
// kernel: 5 for 4). GCC 12 never merges float loads into VLDM, hence the
// asm. The sums run in the scalar block kernels' order: the same floats.
// Without an FPU (M33 without FP) every float operation is a libgcc call and
// the scalar kernels stay. The other entries are the scalar port's functions
// under this port's name, so an image with both ports holds them once.
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
__attribute__((noinline)) void weighted_sum_tile(const float* p, size_t ldp, const float* v, const TileArgs& t) {
  const float *p0 = p, *p1 = p0 + ldp, *p2 = p1 + ldp, *p3 = p2 + ldp;
  size_t n;
  __asm__ volatile(
      "ldr %[n], [%[t]]\n"
      "vldmia %[n], {s0-s15}\n"
      "ldr %[n], [%[t], #4]\n"
      "1:\n"
      "vldmia %[p0]!, {s16-s17}\n"
      "vldmia %[p1]!, {s18-s19}\n"
      "vldmia %[p2]!, {s20-s21}\n"
      "vldmia %[p3]!, {s22-s23}\n"
      "vldmia %[v], {s24-s27}\n"
      "add %[v], %[v], %[ldv]\n"
      "vldmia %[v], {s28-s31}\n"
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
      "vfma.f32 s0, s17, s28\n"
      "vfma.f32 s1, s17, s29\n"
      "vfma.f32 s2, s17, s30\n"
      "vfma.f32 s3, s17, s31\n"
      "vfma.f32 s4, s19, s28\n"
      "vfma.f32 s5, s19, s29\n"
      "vfma.f32 s6, s19, s30\n"
      "vfma.f32 s7, s19, s31\n"
      "vfma.f32 s8, s21, s28\n"
      "vfma.f32 s9, s21, s29\n"
      "vfma.f32 s10, s21, s30\n"
      "vfma.f32 s11, s21, s31\n"
      "vfma.f32 s12, s23, s28\n"
      "vfma.f32 s13, s23, s29\n"
      "vfma.f32 s14, s23, s30\n"
      "vfma.f32 s15, s23, s31\n"
      "subs %[n], %[n], #1\n"
      "bne 1b\n"
      "ldr %[n], [%[t], #8]\n"
      "vldmia %[n], {s16-s19}\n"
      "vmul.f32 s0, s0, s16\n"
      "vmul.f32 s1, s1, s16\n"
      "vmul.f32 s2, s2, s16\n"
      "vmul.f32 s3, s3, s16\n"
      "vmul.f32 s4, s4, s17\n"
      "vmul.f32 s5, s5, s17\n"
      "vmul.f32 s6, s6, s17\n"
      "vmul.f32 s7, s7, s17\n"
      "vmul.f32 s8, s8, s18\n"
      "vmul.f32 s9, s9, s18\n"
      "vmul.f32 s10, s10, s18\n"
      "vmul.f32 s11, s11, s18\n"
      "vmul.f32 s12, s12, s19\n"
      "vmul.f32 s13, s13, s19\n"
      "vmul.f32 s14, s14, s19\n"
      "vmul.f32 s15, s15, s19\n"
      "ldr %[p0], [%[t], #12]\n"
      "ldr %[p1], [%[t], #16]\n"
      "vstmia %[p0], {s0-s3}\n"
      "add %[p0], %[p0], %[p1]\n"
      "vstmia %[p0], {s4-s7}\n"
      "add %[p0], %[p0], %[p1]\n"
      "vstmia %[p0], {s8-s11}\n"
      "add %[p0], %[p0], %[p1]\n"
      "vstmia %[p0], {s12-s15}\n"
      : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3), [v] "+r"(v), [n] "=&r"(n)
      : [t] "r"(&t), [ldv] "r"(t.ld_operand * sizeof(float))
      : TINYATTN_DSP_CLOBBERS);
}

// s[r*lds + j] = scale * dot(q_r, k_j): a full block (kBlockRows rows) of
// at least four keys with dk even in tiles of four keys, the last tile
// overlapping the one before when four do not divide count (its sums are
// the same floats again); anything else by the scalar kernel.
void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                  float scale, float* s, size_t lds) {
  if (rows != kBlockRows || dk % 2 != 0 || dk == 0 || count < 4) {
    scalar::f32::scores_block(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
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

// y[r*ldy + c] = a[r] * sum_j p[r*ldp + j] * v[j*ldv + c]: a full block with
// an even count and dv >= 4 in tiles of four columns, the last tile
// overlapping the one before when four do not divide dv; anything else by
// the scalar kernel. Every value row is finite here
// (KernelsF32::weighted_sum_block), so zero weights need no test.
void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count, size_t dv,
                        const float* a, float* y, size_t ldy) {
  if (rows != kBlockRows || count % 2 != 0 || count == 0 || dv < 4) {
    scalar::f32::weighted_sum_block(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
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

constexpr KernelsF32 make_table() {
  KernelsF32 t = scalar::table_f32("dsp");
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
