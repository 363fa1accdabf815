// The Helium port's kernels for one to three query rows (decode: a new
// token's query, or the query heads of one KV head): the dot products of a
// few rows with four keys at a time and P.V with the keys outer, shared by
// attend_few (fused-inl.h) and the one-row and few-row primitives the
// key-tiled routes call (scores, weighted_sum, and scores_block and
// weighted_sum_block below four rows, mve.cc). Included by mve.cc after
// load_pair and four_terms, which it uses: one translation unit.
#ifndef TINYATTN_MVE_FEW_INL_H_
#define TINYATTN_MVE_FEW_INL_H_

#include <arm_mve.h>

namespace tinyattn {
namespace mve {
namespace {

// Whether every lane of y is finite: 0 * y is 0 for a finite y and NaN for
// an inf or NaN one, so z += 0 * y stays 0 until some y is not finite.
inline float32x4_t note_finite(float32x4_t z, float32x4_t y) { return vfmaq_n_f32(z, y, 0.0f); }
inline bool noted_finite(float32x4_t z) {
  const float t = sum_lanes(z);
  return t == t;
}

// a += x0 * p[0] + x1 * p[1], p += 2: one LDRD and two VFMA, in one asm
// for the reason four_terms gives.
inline void two_terms(const float*& p, float32x4_t x0, float32x4_t x1, float32x4_t& a) {
  asm("ldrd r4, r5, [%[p]], #8\n\t"
      "vfma.f32 %q[a], %q[x0], r4\n\t"
      "vfma.f32 %q[a], %q[x1], r5"
      : [a] "+w"(a), [p] "+r"(p)
      : [x0] "w"(x0), [x1] "w"(x1), "m"(*reinterpret_cast<const float(*)[2]>(p))
      : "r4", "r5");
}

// ---- Blocks of one to three rows (decode: a new token's query, or the
// query heads of one KV head passed as rows) ----
//
// The four-row kernels repeat row 0 in the missing rows, which costs a
// block of one row four times its products. These keep one accumulator
// set per real row: the scores with the keys in the lanes (gathered columns
// of four keys, each row's query elements four at a time in one LDM, so no
// sum across lanes), each row's running maximum from the same vectors, and
// P.V with the keys outer and up to kFewMaxVectors[R] vectors of a row's
// output in registers, each value row loaded once for every row.

// a[r] += x0 * q_r[0] + .. + x3 * q_r[3] for the R rows, q_r += 4.
template <int R>
inline void few_four_terms(const float** q, float32x4_t x0, float32x4_t x1, float32x4_t x2, float32x4_t x3,
                           float32x4_t* a) {
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r) four_terms(q[r], x0, x1, x2, x3, a[r]);
}

// Four gathered columns of four keys at byte offset kOffset from addr.
template <bool kPartial, int kOffset>
inline float32x4_t gather_column(uint32x4_t addr, mve_pred16_t lanes) {
  return kPartial ? vldrwq_gather_base_z_f32(addr, kOffset, lanes) : vldrwq_gather_base_f32(addr, kOffset);
}
template <int R, bool kPartial, int kOffset>
inline void few_columns4(uint32x4_t addr, mve_pred16_t lanes, const float** q, float32x4_t* a) {
  few_four_terms<R>(q, gather_column<kPartial, kOffset>(addr, lanes), gather_column<kPartial, kOffset + 4>(addr, lanes),
                    gather_column<kPartial, kOffset + 8>(addr, lanes),
                    gather_column<kPartial, kOffset + 12>(addr, lanes), a);
}

// The dot products of R rows with four keys (lane i: key at addr lane i).
// Always inlined: shared by attend_few and the primitives, GCC 12 left it
// out of line (one call per four keys; 10% more instructions in attend_few).
template <int R, bool kPartial>
__attribute__((always_inline)) inline void few_dots(uint32x4_t addr, mve_pred16_t lanes, const float* const* q,
                                                    size_t dk, float32x4_t* a) {
  const float* qr[R];
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r) {
    qr[r] = q[r];
    a[r] = vdupq_n_f32(0.0f);
  }
  for (size_t c = dk / 8; c > 0; --c) {
    few_columns4<R, kPartial, 0>(addr, lanes, qr, a);
    few_columns4<R, kPartial, 16>(addr, lanes, qr, a);
    addr = vaddq_n_u32(addr, 8 * sizeof(float));
  }
  if (dk & 4) {
    few_columns4<R, kPartial, 0>(addr, lanes, qr, a);
    addr = vaddq_n_u32(addr, 4 * sizeof(float));
  }
  if (dk & 2) {
    const float32x4_t x0 = gather_column<kPartial, 0>(addr, lanes), x1 = gather_column<kPartial, 4>(addr, lanes);
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) two_terms(qr[r], x0, x1, a[r]);
    addr = vaddq_n_u32(addr, 2 * sizeof(float));
  }
  if (dk & 1) {
    const float32x4_t x0 = gather_column<kPartial, 0>(addr, lanes);
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) a[r] = vfmaq_n_f32(a[r], x0, *qr[r]);
  }
}

// Vector w of x (x + 4w) with an immediate offset from x: GCC 12 computes
// each address into a register of its own (and spills them).
template <int kOffset>
inline float32x4_t load_at(const float* x) {
  float32x4_t v;
  asm("vldrw.u32 %q0, [%1, #%c2]"
      : "=w"(v)
      : "r"(x), "i"(kOffset * 16), "m"(*reinterpret_cast<const float(*)[4]>(x + 4 * kOffset)));
  return v;
}
inline float32x4_t load_vector(const float* x, int w) {
  switch (w) {  // w is a constant in the unrolled loops
    case 0:
      return load_at<0>(x);
    case 1:
      return load_at<1>(x);
    case 2:
      return load_at<2>(x);
    case 3:
      return load_at<3>(x);
    case 4:
      return load_at<4>(x);
    default:
      return load_at<5>(x);
  }
}

// Output vectors per column pass for R rows: R * W accumulators and the
// value vector being loaded fit Helium's eight registers.
constexpr int kFewMaxVectors[4] = {0, 6, 3, 2};

// y_r[c] = inv[r] * sum_j p_r[j] v[j*ldv + c] for W vectors of columns from
// vc (kTail: the last of them has only the lanes of `last`), keys two at a
// time (one LDRD per row).
template <int R, int W, bool kTail>
__attribute__((always_inline)) inline void few_values_body(const float* const* p, const float* vc, size_t ldv,
                                                           size_t count, mve_pred16_t last, const float* inv,
                                                           float* const* y) {
  float32x4_t a[R][W];
  const float* pr[R];
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r) {
    pr[r] = p[r];
#pragma GCC unroll 6
    for (int w = 0; w < W; ++w) a[r][w] = vdupq_n_f32(0.0f);
  }
  auto load = [&](const float* x, int w) {
    return kTail && w == W - 1 ? vld1q_z_f32(x + 4 * w, last) : load_vector(x, w);
  };
  for (size_t j = count / 2; j > 0; --j) {
    float x[R], z[R];
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) load_pair(pr[r], x[r], z[r]);
    // One base register for a row's vectors (immediate offsets): GCC 12
    // otherwise keeps a pointer per vector and spills them.
    asm("" : "+r"(vc));
#pragma GCC unroll 6
    for (int w = 0; w < W; ++w) {
      const float32x4_t v0 = load(vc, w);
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) a[r][w] = vfmaq_n_f32(a[r][w], v0, x[r]);
    }
    vc += ldv;
    asm("" : "+r"(vc));
#pragma GCC unroll 6
    for (int w = 0; w < W; ++w) {
      const float32x4_t v1 = load(vc, w);
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) a[r][w] = vfmaq_n_f32(a[r][w], v1, z[r]);
    }
    vc += ldv;
  }
  if (count & 1) {
#pragma GCC unroll 6
    for (int w = 0; w < W; ++w) {
      const float32x4_t v0 = load(vc, w);
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) a[r][w] = vfmaq_n_f32(a[r][w], v0, *pr[r]);
    }
  }
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 6
    for (int w = 0; w < W; ++w) {
      const float32x4_t yv = vmulq_n_f32(a[r][w], inv[r]);
      if (kTail && w == W - 1)
        vst1q_p_f32(y[r] + 4 * w, yv, last);
      else
        vst1q_f32(y[r] + 4 * w, yv);
    }
}

// few_values for attend_few, whose only caller it is: GCC 12 inlines it or
// not as for one caller (more callers left attend_few's passes out of line,
// 10-25% more instructions).
template <int R, int W, bool kTail>
inline void few_values(const float* const* p, const float* vc, size_t ldv, size_t count, mve_pred16_t last,
                       const float* inv, float* const* y) {
  few_values_body<R, W, kTail>(p, vc, ldv, count, last, inv, y);
}

// few_values out of line for the primitives (values_rows in mve.cc): each
// pass a leaf frame of its own. no_icf: merged with attend_few's identical
// few_values, that one would have two callers (see above).
template <int R, int W, bool kTail>
__attribute__((noinline, no_icf)) void few_values_apart(const float* const* p, const float* vc, size_t ldv,
                                                        size_t count, mve_pred16_t last, const float* inv,
                                                        float* const* y) {
  few_values_body<R, W, kTail>(p, vc, ldv, count, last, inv, y);
}
template <int R, int W, bool kTail, bool kApart>
__attribute__((always_inline)) inline void few_values_call(const float* const* p, const float* vc, size_t ldv,
                                                           size_t count, mve_pred16_t last, const float* inv,
                                                           float* const* y) {
  if (kApart)
    few_values_apart<R, W, kTail>(p, vc, ldv, count, last, inv, y);
  else if (R == 1)  // one row's passes: always inlined (1-5% fewer instructions in attend_few<1>)
    few_values_body<R, W, kTail>(p, vc, ldv, count, last, inv, y);
  else
    few_values<R, W, kTail>(p, vc, ldv, count, last, inv, y);
}

template <int R, int W, bool kApart>
__attribute__((always_inline)) inline void few_values_pass(const float* const* p, const float* vc, size_t ldv,
                                                           size_t count, bool tail, mve_pred16_t last, const float* inv,
                                                           float* const* y) {
  if (tail)
    few_values_call<R, W, true, kApart>(p, vc, ldv, count, last, inv, y);
  else
    few_values_call<R, W, false, kApart>(p, vc, ldv, count, last, inv, y);
}

// y_r = inv[r] * sum_j p_r[j] v_j for the R rows (row r's output at y[r]),
// every column of dv in passes of at most kFewMaxVectors[R] vectors, as
// even as they go; kApart: every pass out of line (few_values_apart).
template <int R, bool kApart = false>
__attribute__((always_inline)) inline void few_values_all(const float* const* p, const float* v, size_t ldv,
                                                          size_t count, size_t dv, const float* inv, float* const* y0) {
  constexpr int kMaxW = kFewMaxVectors[R];
  // Passes of 3 to 6 vectors, capped at kMaxW (a width R rows never take).
  constexpr int kW3 = kMaxW < 3 ? kMaxW : 3, kW4 = kMaxW < 4 ? kMaxW : 4, kW5 = kMaxW < 5 ? kMaxW : 5,
                kW6 = kMaxW < 6 ? kMaxW : 6;
  const size_t vectors = (dv + kLanes - 1) / kLanes;
  const size_t passes = (vectors + kMaxW - 1) / kMaxW;
  const mve_pred16_t last = tail(dv, (vectors - 1) * kLanes);
  for (size_t i = 0, c = 0; i < passes; ++i) {
    const size_t w = (vectors - c / kLanes) / (passes - i) + ((vectors - c / kLanes) % (passes - i) != 0);
    const bool tail_pass = c / kLanes + w == vectors && dv % kLanes != 0;
    float* y[R];
#pragma GCC unroll 3
    for (int r = 0; r < R; ++r) y[r] = y0[r] + c;
    const float* vc = v + c;
    switch (w) {
      case 1:
        few_values_pass<R, 1, kApart>(p, vc, ldv, count, tail_pass, last, inv, y);
        break;
      case 2:
        few_values_pass<R, 2, kApart>(p, vc, ldv, count, tail_pass, last, inv, y);
        break;
      case 3:
        few_values_pass<R, kW3, kApart>(p, vc, ldv, count, tail_pass, last, inv, y);
        break;
      case 4:
        few_values_pass<R, kW4, kApart>(p, vc, ldv, count, tail_pass, last, inv, y);
        break;
      case 5:
        few_values_pass<R, kW5, kApart>(p, vc, ldv, count, tail_pass, last, inv, y);
        break;
      default:
        few_values_pass<R, kW6, kApart>(p, vc, ldv, count, tail_pass, last, inv, y);
        break;
    }
    c += w * kLanes;
  }
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_FEW_INL_H_
