// The Armv7E-M DSP port (Cortex-M4, M7, M33, M35P): its int8 kernels
// (dsp_i8.cc) use the dual 16-bit multiply-accumulates. Its fp32 table is
// the scalar port's with the two block products replaced where the core has
// a single-precision FPU (FPv4-SP, FPv5): register tiles of four query rows
// by four keys (scores) or four value columns (P.V), sixteen accumulators in
// the 32 single-precision registers, so each loaded element feeds four
// multiply-adds instead of one. Without an FPU (M33 without FP) every float
// operation is a libgcc call and the scalar kernels stay. The other entries
// are the scalar port's functions under this port's name, so an image with
// both ports holds them once.
#include "backends/scalar/scalar.h"
#include "port.h"

namespace tinyattn {
namespace dsp {
namespace {

#if defined(__ARM_FP) && (__ARM_FP & 4)

// s[r*lds + j] = scale * dot(q_r, k_j): a full block (kBlockRows rows) in
// tiles of four keys, a tail of single keys. The sums run over c in order
// (one chain per row and key), as the scalar block kernel's do.
void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                  float scale, float* s, size_t lds) {
  if (rows != kBlockRows) {
    scalar::f32::scores_block(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
    return;
  }
  const float *q0 = q, *q1 = q + ldq, *q2 = q + 2 * ldq, *q3 = q + 3 * ldq;
  float *s0 = s, *s1 = s + lds, *s2 = s + 2 * lds, *s3 = s + 3 * lds;
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    const float *k0 = k + j * ldk, *k1 = k0 + ldk, *k2 = k1 + ldk, *k3 = k2 + ldk;
    float a00 = 0.0f, a01 = 0.0f, a02 = 0.0f, a03 = 0.0f;
    float a10 = 0.0f, a11 = 0.0f, a12 = 0.0f, a13 = 0.0f;
    float a20 = 0.0f, a21 = 0.0f, a22 = 0.0f, a23 = 0.0f;
    float a30 = 0.0f, a31 = 0.0f, a32 = 0.0f, a33 = 0.0f;
    for (size_t c = 0; c < dk; ++c) {
      const float x0 = q0[c], x1 = q1[c], x2 = q2[c], x3 = q3[c];
      const float y0 = k0[c], y1 = k1[c], y2 = k2[c], y3 = k3[c];
      a00 += x0 * y0, a01 += x0 * y1, a02 += x0 * y2, a03 += x0 * y3;
      a10 += x1 * y0, a11 += x1 * y1, a12 += x1 * y2, a13 += x1 * y3;
      a20 += x2 * y0, a21 += x2 * y1, a22 += x2 * y2, a23 += x2 * y3;
      a30 += x3 * y0, a31 += x3 * y1, a32 += x3 * y2, a33 += x3 * y3;
    }
    s0[j] = scale * a00, s0[j + 1] = scale * a01, s0[j + 2] = scale * a02, s0[j + 3] = scale * a03;
    s1[j] = scale * a10, s1[j + 1] = scale * a11, s1[j + 2] = scale * a12, s1[j + 3] = scale * a13;
    s2[j] = scale * a20, s2[j + 1] = scale * a21, s2[j + 2] = scale * a22, s2[j + 3] = scale * a23;
    s3[j] = scale * a30, s3[j + 1] = scale * a31, s3[j + 2] = scale * a32, s3[j + 3] = scale * a33;
  }
  if (j < count)
    scalar::f32::scores_block(q, ldq, rows, k + j * ldk, ldk, count - j, dk, scale, s + j, lds);
}

// y[r*ldy + c] = a[r] * sum_j p[r*ldp + j] * v[j*ldv + c]: a full block in
// tiles of four columns, a tail of single columns. Every value row is finite
// here (KernelsF32::weighted_sum_block), so zero weights need no test.
void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count,
                        size_t dv, const float* a, float* y, size_t ldy) {
  if (rows != kBlockRows) {
    scalar::f32::weighted_sum_block(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
    return;
  }
  const float *p0 = p, *p1 = p + ldp, *p2 = p + 2 * ldp, *p3 = p + 3 * ldp;
  float *y0 = y, *y1 = y + ldy, *y2 = y + 2 * ldy, *y3 = y + 3 * ldy;
  size_t c = 0;
  for (; c + 4 <= dv; c += 4) {
    float a00 = 0.0f, a01 = 0.0f, a02 = 0.0f, a03 = 0.0f;
    float a10 = 0.0f, a11 = 0.0f, a12 = 0.0f, a13 = 0.0f;
    float a20 = 0.0f, a21 = 0.0f, a22 = 0.0f, a23 = 0.0f;
    float a30 = 0.0f, a31 = 0.0f, a32 = 0.0f, a33 = 0.0f;
    const float* vj = v + c;
    for (size_t j = 0; j < count; ++j, vj += ldv) {
      const float x0 = p0[j], x1 = p1[j], x2 = p2[j], x3 = p3[j];
      const float w0 = vj[0], w1 = vj[1], w2 = vj[2], w3 = vj[3];
      a00 += x0 * w0, a01 += x0 * w1, a02 += x0 * w2, a03 += x0 * w3;
      a10 += x1 * w0, a11 += x1 * w1, a12 += x1 * w2, a13 += x1 * w3;
      a20 += x2 * w0, a21 += x2 * w1, a22 += x2 * w2, a23 += x2 * w3;
      a30 += x3 * w0, a31 += x3 * w1, a32 += x3 * w2, a33 += x3 * w3;
    }
    // The factors read before any store (y may not alias a, but the
    // compiler cannot know): four loads per tile instead of sixteen.
    const float f0 = a[0], f1 = a[1], f2 = a[2], f3 = a[3];
    y0[c] = f0 * a00, y0[c + 1] = f0 * a01, y0[c + 2] = f0 * a02, y0[c + 3] = f0 * a03;
    y1[c] = f1 * a10, y1[c + 1] = f1 * a11, y1[c + 2] = f1 * a12, y1[c + 3] = f1 * a13;
    y2[c] = f2 * a20, y2[c + 1] = f2 * a21, y2[c + 2] = f2 * a22, y2[c + 3] = f2 * a23;
    y3[c] = f3 * a30, y3[c + 1] = f3 * a31, y3[c + 2] = f3 * a32, y3[c + 3] = f3 * a33;
  }
  if (c < dv) scalar::f32::weighted_sum_block(p, ldp, rows, v + c, ldv, count, dv - c, a, y + c, ldy);
}

constexpr KernelsF32 make_table() {
  KernelsF32 t = scalar::table_f32("dsp");
  t.scores_block = scores_block;
  t.weighted_sum_block = weighted_sum_block;
  return t;
}
constexpr KernelsF32 kKernels = make_table();

#else   // no single-precision FPU: soft float, the scalar kernels

constexpr KernelsF32 kKernels = scalar::table_f32("dsp");

#endif  // __ARM_FP

}  // namespace
}  // namespace dsp

template <>
const KernelsF32* port_kernels_f32<Port::kDsp>() {
  return &dsp::kKernels;
}

}  // namespace tinyattn
