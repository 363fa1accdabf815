// The RISC-V Vector port: RVV 1.0 intrinsics, vector-length agnostic. Every
// loop asks vsetvl for its vector length, so one binary runs at any VLEN and
// the last, shorter vector of a row is the same code with a smaller vl (no
// scalar tails, nothing read or written past the ranges given). Only fp32
// lanes are used (no 64-bit elements), so the kernels also build for the
// Zve32f microcontroller profile.
//
//  - scores: the keys in the lanes, each key's column loaded by a strided
//    load and its dot product built up in its own lane by the same multiply
//    and fused multiply-adds wherever it sits, so a key's score is the same
//    bits at every position of every call (KernelsF32::scores) and no sum
//    across lanes is needed. scores_block does the same for four rows with
//    each key column loaded once, so its rows equal scores' bits.
//  - weighted_sum(_block): the columns of V in the lanes, one fused
//    multiply-add per key and row with the weight as a scalar operand.
//  - exp: exp_poly (tinyattn/exp.h) step by step with the same coefficients,
//    fused where the algorithm multiplies and adds.
#include "rvv.h"
#include "port.h"

#if defined(TINYATTN_RVV_BUILT)

#include <riscv_vector.h>

#include "tinyattn/exp.h"

namespace tinyattn {
namespace rvv {

const char* simd_target() {
  switch (__riscv_vsetvlmax_e8m1()) {  // VLEN / 8
    case 4: return "RVV_32";
    case 8: return "RVV_64";
    case 16: return "RVV_128";
    case 32: return "RVV_256";
    case 64: return "RVV_512";
    case 128: return "RVV_1024";
    case 256: return "RVV_2048";
    case 512: return "RVV_4096";
    case 1024: return "RVV_8192";
    case 2048: return "RVV_16384";
    default: return "RVV";
  }
}

namespace {

// s[j] for keys in the lanes: a = q[0] k[0], then a += q[c] k[c] per column.
void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  const ptrdiff_t stride = static_cast<ptrdiff_t>(ldk * sizeof(float));
  for (size_t j = 0; j < count;) {
    const size_t vl = __riscv_vsetvl_e32m8(count - j);
    const float* kc = k + j * ldk;
    vfloat32m8_t a = __riscv_vfmul_vf_f32m8(__riscv_vlse32_v_f32m8(kc, stride, vl), q[0], vl);
    for (size_t c = 1; c < dk; ++c) a = __riscv_vfmacc_vf_f32m8(a, q[c], __riscv_vlse32_v_f32m8(kc + c, stride, vl), vl);
    __riscv_vse32_v_f32m8(s + j, __riscv_vfmul_vf_f32m8(a, scale, vl), vl);
    j += vl;
  }
}

// Four rows per key column load (LMUL 4: four accumulators and the column
// fill 20 of the 32 vector registers). Other row counts: scores per row.
void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                  float scale, float* s, size_t lds) {
  if (rows != kBlockRows) {
    for (size_t r = 0; r < rows; ++r) scores(q + r * ldq, k, ldk, count, dk, scale, s + r * lds);
    return;
  }
  const float *q0 = q, *q1 = q + ldq, *q2 = q + 2 * ldq, *q3 = q + 3 * ldq;
  const ptrdiff_t stride = static_cast<ptrdiff_t>(ldk * sizeof(float));
  for (size_t j = 0; j < count;) {
    const size_t vl = __riscv_vsetvl_e32m4(count - j);
    const float* kc = k + j * ldk;
    vfloat32m4_t kv = __riscv_vlse32_v_f32m4(kc, stride, vl);
    vfloat32m4_t a0 = __riscv_vfmul_vf_f32m4(kv, q0[0], vl);
    vfloat32m4_t a1 = __riscv_vfmul_vf_f32m4(kv, q1[0], vl);
    vfloat32m4_t a2 = __riscv_vfmul_vf_f32m4(kv, q2[0], vl);
    vfloat32m4_t a3 = __riscv_vfmul_vf_f32m4(kv, q3[0], vl);
    for (size_t c = 1; c < dk; ++c) {
      kv = __riscv_vlse32_v_f32m4(kc + c, stride, vl);
      a0 = __riscv_vfmacc_vf_f32m4(a0, q0[c], kv, vl);
      a1 = __riscv_vfmacc_vf_f32m4(a1, q1[c], kv, vl);
      a2 = __riscv_vfmacc_vf_f32m4(a2, q2[c], kv, vl);
      a3 = __riscv_vfmacc_vf_f32m4(a3, q3[c], kv, vl);
    }
    __riscv_vse32_v_f32m4(s + j, __riscv_vfmul_vf_f32m4(a0, scale, vl), vl);
    __riscv_vse32_v_f32m4(s + lds + j, __riscv_vfmul_vf_f32m4(a1, scale, vl), vl);
    __riscv_vse32_v_f32m4(s + 2 * lds + j, __riscv_vfmul_vf_f32m4(a2, scale, vl), vl);
    __riscv_vse32_v_f32m4(s + 3 * lds + j, __riscv_vfmul_vf_f32m4(a3, scale, vl), vl);
    j += vl;
  }
}

inline float sum_lanes(vfloat32m8_t v, size_t vl) {
  return __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredusum_vs_f32m8_f32m1(v, __riscv_vfmv_s_f_f32m1(0.0f, 1), vl));
}

float row_max(const float* x, size_t n) {
  // vfmax ignores NaN, so a NaN, which wins, is looked for apart: z += v * 0
  // stays 0 unless some v is NaN or infinite (inf * 0 is NaN), one
  // instruction per vector; only then a scan for the NaN. The tail-undisturbed
  // forms leave the lanes past a short last vector as they were.
  const size_t vlmax = __riscv_vsetvlmax_e32m8();
  vfloat32m8_t m = __riscv_vfmv_v_f_f32m8(x[0], vlmax);
  vfloat32m8_t z = __riscv_vfmv_v_f_f32m8(0.0f, vlmax);
  for (size_t j = 0; j < n;) {
    const size_t vl = __riscv_vsetvl_e32m8(n - j);
    const vfloat32m8_t v = __riscv_vle32_v_f32m8(x + j, vl);
    m = __riscv_vfmax_vv_f32m8_tu(m, m, v, vl);
    z = __riscv_vfmacc_vf_f32m8_tu(z, 0.0f, v, vl);
    j += vl;
  }
  const float any = sum_lanes(z, vlmax);
  if (any != any)
    for (size_t j = 0; j < n; ++j)
      if (x[j] != x[j]) return x[j];
  return __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredmax_vs_f32m8_f32m1(m, __riscv_vfmv_s_f_f32m1(x[0], 1), vlmax));
}

// exp_poly on vl lanes (LMUL 2: its dozen live vectors stay in registers).
// NaN propagates as in the scalar form: a NaN t shifts to s = 0, and
// 0 + 0 * NaN is NaN; the flush compare is false for NaN.
inline vfloat32m2_t exp_lanes(vfloat32m2_t x, size_t vl) {
  constexpr ExpCoefficients c = kExpCoefficients;
  const vfloat32m2_t t = __riscv_vfmacc_vf_f32m2(__riscv_vfmv_v_f_f32m2(c.magic, vl), c.log2e, x, vl);  // n + magic
  const vfloat32m2_t n = __riscv_vfsub_vf_f32m2(t, c.magic, vl);
  const vfloat32m2_t s =
      __riscv_vreinterpret_v_u32m2_f32m2(__riscv_vsll_vx_u32m2(__riscv_vreinterpret_v_f32m2_u32m2(t), 23, vl));  // 2^n
  vfloat32m2_t r = __riscv_vfmacc_vf_f32m2(x, c.minus_ln2_hi, n, vl);
  r = __riscv_vfmacc_vf_f32m2(r, c.minus_ln2_lo, n, vl);
  vfloat32m2_t q = __riscv_vfmacc_vf_f32m2(__riscv_vfmv_v_f_f32m2(c.c5, vl), c.c6, r, vl);  // c6 r + c5
  q = __riscv_vfmadd_vv_f32m2(q, r, __riscv_vfmv_v_f_f32m2(c.c4, vl), vl);
  q = __riscv_vfmadd_vv_f32m2(q, r, __riscv_vfmv_v_f_f32m2(c.c3, vl), vl);
  q = __riscv_vfmadd_vv_f32m2(q, r, __riscv_vfmv_v_f_f32m2(c.c2, vl), vl);
  const vfloat32m2_t u = __riscv_vfmacc_vv_f32m2(r, __riscv_vfmul_vv_f32m2(r, r, vl), q, vl);  // expm1(r)
  vfloat32m2_t e = __riscv_vfmacc_vv_f32m2(s, s, u, vl);                                     // s (1 + u)
  e = __riscv_vfmerge_vfm_f32m2(e, 0.0f, __riscv_vmflt_vf_f32m2_b16(x, c.flush_below, vl), vl);
  return __riscv_vfmerge_vfm_f32m2(e, __builtin_huge_valf(), __riscv_vmfgt_vf_f32m2_b16(x, c.overflow_above, vl), vl);
}

float exp_shift_sum(float* x, size_t n, float shift) {
  const size_t vlmax = __riscv_vsetvlmax_e32m2();
  vfloat32m2_t sum = __riscv_vfmv_v_f_f32m2(0.0f, vlmax);
  for (size_t j = 0; j < n;) {
    const size_t vl = __riscv_vsetvl_e32m2(n - j);
    const vfloat32m2_t e = exp_lanes(__riscv_vfsub_vf_f32m2(__riscv_vle32_v_f32m2(x + j, vl), shift, vl), vl);
    __riscv_vse32_v_f32m2(x + j, e, vl);
    sum = __riscv_vfadd_vv_f32m2_tu(sum, sum, e, vl);
    j += vl;
  }
  return __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredusum_vs_f32m2_f32m1(sum, __riscv_vfmv_s_f_f32m1(0.0f, 1), vlmax));
}

void exp_array(const float* x, float* out, size_t n) {
  for (size_t j = 0; j < n;) {
    const size_t vl = __riscv_vsetvl_e32m2(n - j);
    __riscv_vse32_v_f32m2(out + j, exp_lanes(__riscv_vle32_v_f32m2(x + j, vl), vl), vl);
    j += vl;
  }
}

void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  for (size_t c = 0; c < dv;) {
    const size_t vl = __riscv_vsetvl_e32m8(dv - c);
    vfloat32m8_t acc = __riscv_vfmv_v_f_f32m8(0.0f, vl);
    const float* vj = v + c;
    for (size_t j = 0; j < count; ++j, vj += ldv) {
      const float pj = p[j];
      if (pj == 0.0f) continue;  // masked keys contribute nothing, even a NaN/inf value (KernelsF32)
      acc = __riscv_vfmacc_vf_f32m8(acc, pj, __riscv_vle32_v_f32m8(vj, vl), vl);
    }
    if (a != 1.0f) acc = __riscv_vfmul_vf_f32m8(acc, a, vl);
    __riscv_vse32_v_f32m8(y + c, acc, vl);
    c += vl;
  }
}

// Four rows per value row load; V is finite here (KernelsF32), so zero
// weights are not skipped.
void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count, size_t dv,
                        const float* a, float* y, size_t ldy) {
  if (rows != kBlockRows) {
    for (size_t r = 0; r < rows; ++r) weighted_sum(p + r * ldp, v, ldv, count, dv, a[r], y + r * ldy);
    return;
  }
  const float *p0 = p, *p1 = p + ldp, *p2 = p + 2 * ldp, *p3 = p + 3 * ldp;
  for (size_t c = 0; c < dv;) {
    const size_t vl = __riscv_vsetvl_e32m4(dv - c);
    vfloat32m4_t y0 = __riscv_vfmv_v_f_f32m4(0.0f, vl);
    vfloat32m4_t y1 = y0, y2 = y0, y3 = y0;
    const float* vj = v + c;
    for (size_t j = 0; j < count; ++j, vj += ldv) {
      const vfloat32m4_t x = __riscv_vle32_v_f32m4(vj, vl);
      y0 = __riscv_vfmacc_vf_f32m4(y0, p0[j], x, vl);
      y1 = __riscv_vfmacc_vf_f32m4(y1, p1[j], x, vl);
      y2 = __riscv_vfmacc_vf_f32m4(y2, p2[j], x, vl);
      y3 = __riscv_vfmacc_vf_f32m4(y3, p3[j], x, vl);
    }
    __riscv_vse32_v_f32m4(y + c, __riscv_vfmul_vf_f32m4(y0, a[0], vl), vl);
    __riscv_vse32_v_f32m4(y + ldy + c, __riscv_vfmul_vf_f32m4(y1, a[1], vl), vl);
    __riscv_vse32_v_f32m4(y + 2 * ldy + c, __riscv_vfmul_vf_f32m4(y2, a[2], vl), vl);
    __riscv_vse32_v_f32m4(y + 3 * ldy + c, __riscv_vfmul_vf_f32m4(y3, a[3], vl), vl);
    c += vl;
  }
}

void axpy(float a, const float* x, float* y, size_t n) {
  for (size_t c = 0; c < n;) {
    const size_t vl = __riscv_vsetvl_e32m8(n - c);
    __riscv_vse32_v_f32m8(
        y + c, __riscv_vfmacc_vf_f32m8(__riscv_vle32_v_f32m8(y + c, vl), a, __riscv_vle32_v_f32m8(x + c, vl), vl), vl);
    c += vl;
  }
}

void scale(float* x, size_t n, float a) {
  for (size_t c = 0; c < n;) {
    const size_t vl = __riscv_vsetvl_e32m8(n - c);
    __riscv_vse32_v_f32m8(x + c, __riscv_vfmul_vf_f32m8(__riscv_vle32_v_f32m8(x + c, vl), a, vl), vl);
    c += vl;
  }
}

constexpr KernelsF32 make_table() {
  KernelsF32 t{};
  t.port = "rvv";
  t.simd_target = simd_target;
  t.scores = scores;
  t.row_max = row_max;
  t.exp_shift_sum = exp_shift_sum;
  t.weighted_sum = weighted_sum;
  t.axpy = axpy;
  t.scale = scale;
  t.exp = exp_array;
  t.scores_block = scores_block;
  t.weighted_sum_block = weighted_sum_block;
  return t;
}
constexpr KernelsF32 kKernels = make_table();

}  // namespace

const KernelsF32& kernels_f32() { return kKernels; }

}  // namespace rvv

template <>
const KernelsF32* port_kernels_f32<Port::kRvv>() {
  return &rvv::kernels_f32();
}
// Attention<S>'s plain calls run on the whole table: application cores are
// not short of flash.
TINYATTN_PORT_EXTENT_TABLES_ARE_THE_TABLE(kRvv)
}  // namespace tinyattn

#endif  // TINYATTN_RVV_BUILT
