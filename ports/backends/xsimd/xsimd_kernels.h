// KernelsF32 written once with xsimd, as a template over the architecture A.
// Include only from an xsimd_arch_*.cc compiled with A's flags; everything
// here has internal linkage so no code built for one architecture can be
// merged into another's (or into code that runs before the CPU check).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <limits>
#include <type_traits>

#include "tinyattn/exp.h"
#include "tinyattn/kernels.h"

// Before each loop over a tile's accumulators or a block's rows: unrolled,
// every index is a constant and those arrays live in registers. Left to
// itself GCC kept several on the stack and zeroed them with `rep stos` on
// every call: a third of the weighted-sum tile's time at 16 keys.
#define TINYATTN_XSIMD_UNROLL _Pragma("GCC unroll 16")
// Tiles stay inside their block routine, as one function (a call per tile
// of three keys would cost a tenth of its FMAs' time at small Dk).
#define TINYATTN_XSIMD_INLINE inline __attribute__((always_inline))

namespace tinyattn {
namespace xsimd_port {
// Included by one translation unit per architecture: internal linkage keeps
// each architecture's instantiation apart.
namespace {  // NOLINT(cert-dcl59-cpp)

template <class A>
struct Kernels {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  static constexpr size_t N = B::size;

  // xsimd has no masked loads: tails go through a buffer on the stack so no
  // byte outside the given range is read or written.
  static B load_tail(const float* p, size_t n, float fill) {
    alignas(A::alignment()) float buf[N];
    for (size_t i = 0; i < N; ++i) buf[i] = i < n ? p[i] : fill;
    return B::load_aligned(buf);
  }
  static void store_tail(B v, float* p, size_t n) {
    alignas(A::alignment()) float buf[N];
    v.store_aligned(buf);
    for (size_t i = 0; i < n; ++i) p[i] = buf[i];
  }

  // tinyattn::exp_poly (tinyattn/exp.h) step by step; fma fuses where the
  // architecture has it (the stated ULP bound covers both roundings). Without
  // the range selects: exact for x in [flush_below, overflow_above] and for
  // NaN; exp_fix_range gives the other lanes their values.
  static B exp_core(B x) {
    const ExpCoefficients& c = kExpCoefficients;
    const B t = xsimd::fma(x, B(c.log2e), B(c.magic));  // n + magic
    const B n = t - B(c.magic);
    const B s = xsimd::bitwise_cast<B>(xsimd::bitwise_cast<I>(t) << 23);  // 2^n
    B r = xsimd::fma(n, B(c.minus_ln2_hi), x);
    r = xsimd::fma(n, B(c.minus_ln2_lo), r);
    B q = xsimd::fma(B(c.c6), r, B(c.c5));
    q = xsimd::fma(q, r, B(c.c4));
    q = xsimd::fma(q, r, B(c.c3));
    q = xsimd::fma(q, r, B(c.c2));
    const B u = xsimd::fma(r * r, q, r);  // expm1(r)
    if (std::is_same<A, xsimd::neon>::value) {
      // ARMv7 NEON flushes subnormals: near the flush point s * u can be
      // subnormal and would become 0. (1 + u) * s keeps every intermediate
      // normal and rounds identically (s is a power of two).
      return (u + B(1.0f)) * s;
    }
    return xsimd::fma(s, u, s);  // s * (1 + u); s * u is exact
  }

  // Lanes outside [flush_below, overflow_above]: 0 below, +inf above.
  // Comparisons with NaN are false, so NaN stays NaN through both selects.
  static B exp_fix_range(B x, B e) {
    const ExpCoefficients& c = kExpCoefficients;
    e = xsimd::select(x < B(c.flush_below), B(0.0f), e);
    return xsimd::select(x > B(c.overflow_above), B(std::numeric_limits<float>::infinity()), e);
  }

  static B exp_poly(B x) { return exp_fix_range(x, exp_core(x)); }

  // Whether a lane of x0 or x1 lies outside [flush_below, overflow_above] (a
  // lane just inside may also say so): |x - mid| > half, compared as integer
  // bits (sign cleared, so ordered; NaN compares above inf, which is
  // harmless: exp_fix_range keeps NaN) and reduced with an integer max before
  // the one compare. Cheaper than exp_fix_range's two compares and two
  // selects, which rows in range (softmax's usual case) then skip.
  static bool exp_may_need_fix(B x0, B x1) {
    const ExpCoefficients& c = kExpCoefficients;
    constexpr float kMid = 0.5f * (c.flush_below + c.overflow_above);
    constexpr float kHalf = 0.5f * (c.overflow_above - c.flush_below) - 1.0f;  // margin >> rounding of x - kMid
    const I a0 = xsimd::bitwise_cast<I>(xsimd::abs(x0 - B(kMid)));
    const I a1 = xsimd::bitwise_cast<I>(xsimd::abs(x1 - B(kMid)));
    return xsimd::any(xsimd::max(a0, a1) > xsimd::bitwise_cast<I>(B(kHalf)));
  }

  // N keys at a time (N = lanes), one accumulator each: N independent FMA
  // chains, the query loaded once per N keys, and one haddp turns the N
  // accumulators into N scores (instead of N horizontal sums). The last
  // keys (fewer than N) go through the same chains and haddp, only their
  // accumulators live: a key's score is the same bits wherever it sits in a
  // call (KernelsF32::scores), so a KV-cache ring, whose keys sit in other
  // slots than in one forward over the sequence, gets the same logits.
  template <bool kWholeBlock>
  static TINYATTN_XSIMD_INLINE void score_keys(const float* q, const float* kb, size_t ldk, size_t keys, size_t dk,
                                               const B& sc, float* s) {
    const size_t full = dk - dk % N, rest = dk - full;
    B acc[N];
    TINYATTN_XSIMD_UNROLL
    for (size_t i = 0; i < N; ++i) acc[i] = B(0.0f);
    for (size_t c = 0; c < full; c += N) {
      const B qv = B::load_unaligned(q + c);
      TINYATTN_XSIMD_UNROLL
      for (size_t i = 0; i < N; ++i)
        if (kWholeBlock || i < keys) acc[i] = xsimd::fma(qv, B::load_unaligned(kb + i * ldk + c), acc[i]);
    }
    if (rest) {
      const B qv = load_tail(q + full, rest, 0.0f);
      TINYATTN_XSIMD_UNROLL
      for (size_t i = 0; i < N; ++i)
        if (kWholeBlock || i < keys) acc[i] = xsimd::fma(qv, load_tail(kb + i * ldk + full, rest, 0.0f), acc[i]);
    }
    if (kWholeBlock)
      (xsimd::haddp(acc) * sc).store_unaligned(s);
    else
      store_tail(xsimd::haddp(acc) * sc, s, keys);
  }

  static void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
    const B sc(scale);
    size_t j = 0;
    for (; j + N <= count; j += N) score_keys<true>(q, k + j * ldk, ldk, N, dk, sc, s + j);
    if (j < count) score_keys<false>(q, k + j * ldk, ldk, count - j, dk, sc, s + j);
  }

  // Every lane: the largest lane of m.
  static B broadcast_max(B m) {
    alignas(A::alignment()) float lanes[N];
    m.store_aligned(lanes);
    float r = lanes[0];
    for (size_t i = 1; i < N; ++i) r = lanes[i] > r ? lanes[i] : r;
    return B(r);
  }

  static float row_max(const float* x, size_t n) {
    const float minus_inf = -std::numeric_limits<float>::infinity();
    // Four accumulators: four independent max chains per iteration.
    B m0(minus_inf), m1(minus_inf), m2(minus_inf), m3(minus_inf);
    // max() does not propagate NaN on every architecture (x86 maxps returns
    // an operand), so NaNs are tracked separately.
    auto nan = xsimd::isnan(m0);  // all false
    size_t j = 0;
    for (; j + 4 * N <= n; j += 4 * N) {
      const B v0 = B::load_unaligned(x + j), v1 = B::load_unaligned(x + j + N);
      const B v2 = B::load_unaligned(x + j + 2 * N), v3 = B::load_unaligned(x + j + 3 * N);
      nan = nan | (xsimd::isnan(v0) | xsimd::isnan(v1)) | (xsimd::isnan(v2) | xsimd::isnan(v3));
      m0 = xsimd::max(m0, v0);
      m1 = xsimd::max(m1, v1);
      m2 = xsimd::max(m2, v2);
      m3 = xsimd::max(m3, v3);
    }
    for (; j + N <= n; j += N) {
      const B v = B::load_unaligned(x + j);
      nan = nan | xsimd::isnan(v);
      m0 = xsimd::max(m0, v);
    }
    if (j < n) {
      const B v = load_tail(x + j, n - j, minus_inf);
      nan = nan | xsimd::isnan(v);
      m1 = xsimd::max(m1, v);
    }
    if (xsimd::any(nan)) return std::numeric_limits<float>::quiet_NaN();
    return broadcast_max(xsimd::max(xsimd::max(m0, m1), xsimd::max(m2, m3))).get(0);
  }

  static float exp_shift_sum(float* x, size_t n, float shift) {
    const B sh(shift);
    B s0(0.0f), s1(0.0f);
    size_t j = 0;
    for (; j + 2 * N <= n; j += 2 * N) {
      const B x0 = B::load_unaligned(x + j) - sh, x1 = B::load_unaligned(x + j + N) - sh;
      B e0 = exp_core(x0), e1 = exp_core(x1);
      if (exp_may_need_fix(x0, x1)) {
        e0 = exp_fix_range(x0, e0);
        e1 = exp_fix_range(x1, e1);
      }
      e0.store_unaligned(x + j);
      e1.store_unaligned(x + j + N);
      s0 += e0;
      s1 += e1;
    }
    if (j + N <= n) {
      const B e = exp_poly(B::load_unaligned(x + j) - sh);
      e.store_unaligned(x + j);
      s0 += e;
      j += N;
    }
    float tail = 0.0f;
    if (j < n) {  // only the lanes in range are stored and summed
      alignas(A::alignment()) float buf[N];
      exp_poly(load_tail(x + j, n - j, 0.0f) - sh).store_aligned(buf);
      for (size_t i = 0; i < n - j; ++i) {
        x[j + i] = buf[i];
        tail += buf[i];
      }
    }
    return xsimd::hadd(s0 + s1) + tail;
  }

  // Columns in blocks of four vectors held in registers across all keys.
  static void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
    const B av(a);
    size_t c = 0;
    for (; c + 4 * N <= dv; c += 4 * N) {
      B y0(0.0f), y1(0.0f), y2(0.0f), y3(0.0f);
      const float* vc = v + c;
      for (size_t j = 0; j < count; ++j, vc += ldv) {
        if (p[j] == 0.0f) continue;  // zero weight: a masked key, whose value row may hold NaN/inf (KernelsF32)
        const B pj(p[j]);
        y0 = xsimd::fma(pj, B::load_unaligned(vc), y0);
        y1 = xsimd::fma(pj, B::load_unaligned(vc + N), y1);
        y2 = xsimd::fma(pj, B::load_unaligned(vc + 2 * N), y2);
        y3 = xsimd::fma(pj, B::load_unaligned(vc + 3 * N), y3);
      }
      (y0 * av).store_unaligned(y + c);
      (y1 * av).store_unaligned(y + c + N);
      (y2 * av).store_unaligned(y + c + 2 * N);
      (y3 * av).store_unaligned(y + c + 3 * N);
    }
    // Fewer than four vectors left: two chains over even and odd keys.
    for (; c + N <= dv; c += N) {
      B y0(0.0f), y1(0.0f);
      const float* vc = v + c;
      size_t j = 0;
      for (; j + 2 <= count; j += 2, vc += 2 * ldv) {
        if (p[j] != 0.0f) y0 = xsimd::fma(B(p[j]), B::load_unaligned(vc), y0);
        if (p[j + 1] != 0.0f) y1 = xsimd::fma(B(p[j + 1]), B::load_unaligned(vc + ldv), y1);
      }
      if (j < count && p[j] != 0.0f) y0 = xsimd::fma(B(p[j]), B::load_unaligned(vc), y0);
      ((y0 + y1) * av).store_unaligned(y + c);
    }
    if (c < dv) {
      const size_t rest = dv - c;
      B y0(0.0f), y1(0.0f);
      const float* vc = v + c;
      size_t j = 0;
      for (; j + 2 <= count; j += 2, vc += 2 * ldv) {
        if (p[j] != 0.0f) y0 = xsimd::fma(B(p[j]), load_tail(vc, rest, 0.0f), y0);
        if (p[j + 1] != 0.0f) y1 = xsimd::fma(B(p[j + 1]), load_tail(vc + ldv, rest, 0.0f), y1);
      }
      if (j < count && p[j] != 0.0f) y0 = xsimd::fma(B(p[j]), load_tail(vc, rest, 0.0f), y0);
      store_tail((y0 + y1) * av, y + c, rest);
    }
  }

  static void axpy(float a, const float* x, float* y, size_t n) {
    const B av(a);
    size_t c = 0;
    for (; c + N <= n; c += N) xsimd::fma(av, B::load_unaligned(x + c), B::load_unaligned(y + c)).store_unaligned(y + c);
    if (c < n) store_tail(xsimd::fma(av, load_tail(x + c, n - c, 0.0f), load_tail(y + c, n - c, 0.0f)), y + c, n - c);
  }

  static void scale(float* x, size_t n, float a) {
    const B av(a);
    size_t c = 0;
    for (; c + N <= n; c += N) (B::load_unaligned(x + c) * av).store_unaligned(x + c);
    if (c < n) store_tail(load_tail(x + c, n - c, 0.0f) * av, x + c, n - c);
  }

  // Keeps a query vector in a register: on x86 GCC otherwise folds its load
  // into each of its FMAs as a memory operand (one load per FMA, more than
  // two load ports issue while two FMA pipes run).
  static B in_register(B v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    asm("" : "+x"(v.data));
#endif
    return v;
  }

  // A full vector at p, or (kTail) its first `rest` lanes and zeros.
  template <bool kTail>
  static TINYATTN_XSIMD_INLINE B load_dk(const float* p, size_t rest) {
    if (kTail) return load_tail(p, rest, 0.0f);
    return B::load_unaligned(p);
  }

  // acc[kKeys*r + key] += the products of one vector of Dk at c: kKeys key
  // loads and four query loads feed 4*kKeys FMAs, one query vector live at a
  // time (kept in a register for three keys: in_register).
  template <size_t kKeys, bool kTail>
  static TINYATTN_XSIMD_INLINE void dots_step(const float* q, size_t ldq, const float* k, size_t ldk, size_t c, size_t rest, B* acc) {
    B kv[kKeys];
    TINYATTN_XSIMD_UNROLL
    for (size_t t = 0; t < kKeys; ++t) kv[t] = load_dk<kTail>(k + t * ldk + c, rest);
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < 4; ++r) {
      B qv = load_dk<kTail>(q + r * ldq + c, rest);
      if (kKeys == 3 && !kTail) qv = in_register(qv);
      TINYATTN_XSIMD_UNROLL
      for (size_t t = 0; t < kKeys; ++t) acc[kKeys * r + t] = xsimd::fma(qv, kv[t], acc[kKeys * r + t]);
    }
  }

  // Four query rows by kKeys (1 to 3) keys: 4*kKeys FMA chains (three keys:
  // twelve, as eight do not cover the FMA latency on two pipes). haddp
  // reduces them N at a time (zero padding where 4*kKeys is no multiple of
  // N), lane kKeys*r + key holding row r's score; one key: a hadd per row.
  template <size_t kKeys>
  static TINYATTN_XSIMD_INLINE void scores_tile(const float* q, size_t ldq, const float* k, size_t ldk, size_t dk, float scale, float* s,
                          size_t lds) {
    constexpr size_t kPad = (4 * kKeys + N - 1) / N * N;
    const size_t full = dk - dk % N, rest = dk - full;
    B acc[kPad];
    TINYATTN_XSIMD_UNROLL
    for (B& x : acc) x = B(0.0f);
    for (size_t c = 0; c < full; c += N) dots_step<kKeys, false>(q, ldq, k, ldk, c, 0, acc);
    if (rest) dots_step<kKeys, true>(q, ldq, k, ldk, full, rest, acc);
    if (kKeys == 1) {
      TINYATTN_XSIMD_UNROLL
      for (size_t r = 0; r < 4; ++r) s[r * lds] = scale * xsimd::hadd(acc[r]);
      return;
    }
    const B sc(scale);
    alignas(A::alignment()) float sums[kPad];
    TINYATTN_XSIMD_UNROLL
    for (size_t g = 0; g < kPad; g += N) (xsimd::haddp(acc + g) * sc).store_aligned(sums + g);
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < 4; ++r)
      TINYATTN_XSIMD_UNROLL
      for (size_t t = 0; t < kKeys; ++t) s[r * lds + t] = sums[kKeys * r + t];
  }

  static void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count,
                           size_t dk, float scale, float* s, size_t lds) {
    if (rows != kBlockRows) {
      for (size_t r = 0; r < rows; ++r) scores(q + r * ldq, k, ldk, count, dk, scale, s + r * lds);
      return;
    }
    size_t j = 0;
    // Three keys at a time once Dk spans 8 vectors; below, the longer
    // reduction of twelve sums (on 8 lanes a half-empty second haddp) costs
    // more than the extra chains save. Forward on AVX2: 59 vs 55 GFLOP/s at
    // (128,128,64), 62 vs 60 at (512,512,128); 3-4% slower at Dk 16 and 32.
    if (dk >= 8 * N)
      for (; j + 3 <= count; j += 3) scores_tile<3>(q, ldq, k + j * ldk, ldk, dk, scale, s + j, lds);
    for (; j + 2 <= count; j += 2) scores_tile<2>(q, ldq, k + j * ldk, ldk, dk, scale, s + j, lds);
    if (j < count) scores_tile<1>(q, ldq, k + j * ldk, ldk, dk, scale, s + j, lds);
  }

  // Four rows by kCols (1 to 3) vectors of columns: per key, kCols value
  // loads and four weight broadcasts feed 4*kCols FMAs (3: twelve
  // independent chains). rest > 0 (kCols 1 only): one partial vector of
  // that many lanes.
  template <size_t kCols>
  static void weighted_sum_tile(const float* p, size_t ldp, const float* v, size_t ldv, size_t count, const float* a,
                                float* y, size_t ldy, size_t rest) {
    B acc[4 * kCols];  // acc[kCols*r + col]
    TINYATTN_XSIMD_UNROLL
    for (B& x : acc) x = B(0.0f);
    const float* vj = v;
    for (size_t j = 0; j < count; ++j, vj += ldv) {
      // V is finite here (KernelsF32::weighted_sum_block): zero weights add nothing.
      B vv[kCols];
      vv[0] = rest ? load_tail(vj, rest, 0.0f) : B::load_unaligned(vj);
      TINYATTN_XSIMD_UNROLL
      for (size_t c = 1; c < kCols; ++c) vv[c] = B::load_unaligned(vj + c * N);
      TINYATTN_XSIMD_UNROLL
      for (size_t r = 0; r < 4; ++r) {
        const B w(p[r * ldp + j]);
        TINYATTN_XSIMD_UNROLL
        for (size_t c = 0; c < kCols; ++c) acc[kCols * r + c] = xsimd::fma(w, vv[c], acc[kCols * r + c]);
      }
    }
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < 4; ++r) {
      const B ar(a[r]);
      if (rest) {
        store_tail(acc[kCols * r] * ar, y + r * ldy, rest);
        continue;
      }
      TINYATTN_XSIMD_UNROLL
      for (size_t c = 0; c < kCols; ++c) (acc[kCols * r + c] * ar).store_unaligned(y + r * ldy + c * N);
    }
  }

  static void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count,
                                 size_t dv, const float* a, float* y, size_t ldy) {
    if (rows != kBlockRows) {
      for (size_t r = 0; r < rows; ++r) weighted_sum(p + r * ldp, v, ldv, count, dv, a[r], y + r * ldy);
      return;
    }
    size_t c = 0;
    // Three vectors at a time, but not 3 + 1 where 2 + 2 fits (two equal tiles).
    for (; c + 3 * N <= dv && dv - c != 4 * N; c += 3 * N)
      weighted_sum_tile<3>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
    for (; c + 2 * N <= dv; c += 2 * N) weighted_sum_tile<2>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
    if (c + N <= dv) {
      weighted_sum_tile<1>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
      c += N;
    }
    if (c < dv) weighted_sum_tile<1>(p, ldp, v + c, ldv, count, a, y + c, ldy, dv - c);
  }

  // Scores of a full block from the keys transposed: the weighted-sum tile with
  // the query rows as weights and K^T's rows as value rows (each query element
  // broadcast against a vector of keys, no horizontal sums). Every product is
  // computed, so an inf or NaN in K reaches its scores as in a dot product.
  static void scores_block_transposed(const float* q, size_t ldq, const float* kt, size_t ldkt, size_t count,
                                      size_t dk, float scale, float* s, size_t lds) {
    const float a[kBlockRows] = {scale, scale, scale, scale};
    static_assert(kBlockRows == 4, "a lists kBlockRows scales");
    weighted_sum_block(q, ldq, kBlockRows, kt, ldkt, dk, count, a, s, lds);
  }

  // exp(x) for x <= 0 or NaN (scores minus their row's max): only the flush
  // select of exp_fix_range can apply.
  static B exp_non_positive(B x) {
    return xsimd::select(x < B(kExpCoefficients.flush_below), B(0.0f), exp_core(x));
  }

  // The softmax numerators of R rows of scores at once, s[r*lds + j] =
  // exp(s[r*lds + j] - max_r) for j < count; the rows' max and sum in
  // max[r], sum[r]. The R rows' independent max, exp and sum chains
  // interleave, which short rows (the small shapes' case) need: a row at a
  // time is bound by the latency of its reductions. No NaN bookkeeping in the
  // max (x86 max returns an operand): a NaN score makes its row's sum NaN.
  // Returns whether every score is above -inf: a -inf score is a dot product
  // that overflowed (the driver recomputes it), never a masked key, which
  // attend_rows gives -FLT_MAX.
  template <size_t R>
  static bool block_numerators(float* s, size_t lds, size_t count, float* max, float* sum) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const size_t full = count - count % N, rest = count - full;
    B m[R], acc[R], shift[R];
    B least(kInf);  // every row's least score, lane-wise
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < R; ++r) m[r] = B(-kInf);
    for (size_t j = 0; j < full; j += N)
      TINYATTN_XSIMD_UNROLL
      for (size_t r = 0; r < R; ++r) {
        const B x = B::load_unaligned(s + r * lds + j);
        m[r] = xsimd::max(m[r], x);
        least = xsimd::min(least, x);
      }
    if (rest)
      TINYATTN_XSIMD_UNROLL
      for (size_t r = 0; r < R; ++r) {  // padded with -FLT_MAX: no -inf, and no max (attend_rows' check)
        const B x = load_tail(s + r * lds + full, rest, -std::numeric_limits<float>::max());
        m[r] = xsimd::max(m[r], x);
        least = xsimd::min(least, x);
      }
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < R; ++r) {
      shift[r] = broadcast_max(m[r]);
      acc[r] = B(0.0f);
    }
    for (size_t j = 0; j < full; j += N)
      TINYATTN_XSIMD_UNROLL
      for (size_t r = 0; r < R; ++r) {
        const B e = exp_non_positive(B::load_unaligned(s + r * lds + j) - shift[r]);
        e.store_unaligned(s + r * lds + j);
        acc[r] += e;
      }
    if (rest)
      TINYATTN_XSIMD_UNROLL
      for (size_t r = 0; r < R; ++r) {  // the tail's padding (-inf) gives 0
        const B e = exp_non_positive(load_tail(s + r * lds + full, rest, -kInf) - shift[r]);
        store_tail(e, s + r * lds + full, rest);
        acc[r] += e;
      }
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < R; ++r) {
      max[r] = shift[r].get(0);
      sum[r] = xsimd::hadd(acc[r]);
    }
    return xsimd::all(least > B(-kInf));
  }

  // Whether y[r*ldy + c] is finite for every r < R, c < dv.
  template <size_t R>
  static bool outputs_finite(const float* y, size_t ldy, size_t dv) {
    const size_t full = dv - dv % N;
    auto fine = xsimd::isfinite(B(0.0f));  // all true
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < R; ++r) {
      for (size_t c = 0; c < full; c += N) fine = fine & xsimd::isfinite(B::load_unaligned(y + r * ldy + c));
      if (full < dv) fine = fine & xsimd::isfinite(load_tail(y + r * ldy + full, dv - full, 0.0f));
    }
    return xsimd::all(fine);
  }

  template <size_t R>
  static bool attend_rows(const AttendBlock& b) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    constexpr float kMax = std::numeric_limits<float>::max();
    if (R == kBlockRows && b.kt) scores_block_transposed(b.q, b.ldq, b.kt, b.ldkt, b.count, b.dk, b.scale, b.s, b.lds);
    else scores_block(b.q, b.ldq, R, b.k, b.ldk, b.count, b.dk, b.scale, b.s, b.lds);
    if (b.own) {  // keys outside a row's range: -FLT_MAX, finite, with numerators exactly 0 (below)
      TINYATTN_XSIMD_UNROLL
      for (size_t r = 0; r < R; ++r) {
        float* sr = b.s + r * b.lds;
        for (size_t j = 0; j < b.own[2 * r]; ++j) sr[j] = -kMax;
        for (size_t j = b.own[2 * r + 1]; j < b.count; ++j) sr[j] = -kMax;
      }
    }
    if (!block_numerators<R>(b.s, b.lds, b.count, b.max, b.sum)) return false;
    float inv[kBlockRows];
    TINYATTN_XSIMD_UNROLL
    for (size_t r = 0; r < R; ++r) {
      // A finite max has a term exp(0) = 1, so the sum is >= 1 (false for NaN);
      // a max above -FLT_MAX leaves the keys outside the range exactly 0.
      if (!(b.max[r] > -kMax && b.max[r] < kInf && b.sum[r] >= 1.0f)) return false;
      inv[r] = 1.0f / b.sum[r];
    }
    weighted_sum_block(b.s, b.lds, R, b.v, b.ldv, b.count, b.dv, inv, b.y, b.ldy);
    // An inf or NaN in V (a zero weight times inf is NaN): declined, the
    // driver's row kernels skip zero weights.
    return outputs_finite<R>(b.y, b.ldy, b.dv);
  }

  static bool attend_block(const AttendBlock& b) {
    switch (b.rows) {
      case 1: return attend_rows<1>(b);
      case 2: return attend_rows<2>(b);
      case 3: return attend_rows<3>(b);
      default: return attend_rows<4>(b);
    }
  }

  static void exp(const float* x, float* out, size_t n) {
    size_t j = 0;
    for (; j + N <= n; j += N) exp_poly(B::load_unaligned(x + j)).store_unaligned(out + j);
    if (j < n) store_tail(exp_poly(load_tail(x + j, n - j, 0.0f)), out + j, n - j);
  }
};

// The table for architecture A; `label` is what simd_target() reports.
template <class A, const char* (*Label)()>
constexpr KernelsF32 table_for() {
  using K = Kernels<A>;
  KernelsF32 t{};
  t.port = "xsimd";
  t.simd_target = Label;
  t.scores = K::scores;
  t.row_max = K::row_max;
  t.exp_shift_sum = K::exp_shift_sum;
  t.weighted_sum = K::weighted_sum;
  t.axpy = K::axpy;
  t.scale = K::scale;
  t.exp = K::exp;
  t.scores_block = K::scores_block;
  t.weighted_sum_block = K::weighted_sum_block;
  t.attend_block = K::attend_block;
  t.scores_block_transposed = K::scores_block_transposed;
  return t;
}

template <class A, const char* (*Label)()>
const KernelsF32* make_table() {
  static constexpr KernelsF32 kTable = table_for<A, Label>();
  return &kTable;
}

}  // namespace
}  // namespace xsimd_port
}  // namespace tinyattn
