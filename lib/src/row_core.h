// The softmax row core shared by every float path: fp32 forward() (its row
// path and, piece by piece, its blocks), forward_f16() in both compute modes,
// and the backward pass's recomputed logits. What differs between them (the
// storage type, where K and V tiles come from) is the row source's; what the
// non-finite contract (docs/hardening.md) says happens is written once here.
//
// A row source provides:
//   const RowContext& ctx() const;
//   size_t plain_tile() const;   keys per scores/values call in the plain path
//   size_t online_tile() const;  keys per tile of the online softmax
//   void begin_row(const Row&) const;           once, before a row's first tile
//   void scores(const Row&, off, n, float* s) const;     raw scale * q.k
//   void values(const Row&, off, n, const float* p, float a, float* out) const;
//                                               out[0..Dv) = a * sum_j p[j] V[j]
//   float* output(const Row&, float* acc) const; where the plain row sums Y
// with Row = RowOf<T>; keys are counted from the row's first visible key.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "build_switches.h"
#include "detail.h"
#include "float_math.h"
#include "tinyattn/exp.h"
#include "tinyattn/half.h"

namespace tinyattn {
namespace detail {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// What every row of one call shares.
struct RowContext {
  const Dims& d;
  const KernelsF32& kern;
  const Mask& mask;
  float scale = 1.0f;
  bool element_masks = false;
  float softcap = 0.0f;  // Options::softcap, 0 when unset
};

// One query row: head h, row i, its visible keys r; k and v start at key r.lo
// of the row's KV head.
template <class T>
struct RowOf {
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  T* y = nullptr;
  T* weights = nullptr;  // the full row of M, or null
  float* lse = nullptr;  // one float, or null
  KeyRange r;
  size_t h = 0, i = 0;
};

// Whether x[0..n) holds no inf or NaN. x * 0 is 0 for a finite x and NaN
// otherwise, so the sum of every x * 0 is 0 exactly when all are finite.
// M-profile cores with a single-precision FPU and no Helium: eight values
// per VLDM, one VFMA each (GCC loads one float per VLDR), z += x * z: z
// stays 0 while the values are finite, and NaN once it is NaN. Other M-profile
// cores with an FPU (Helium): the same sum in C, which GCC vectorises.
// Hosted targets and cores without an FPU: an all-ones exponent sets bit 31
// of (bits & exponent) + lowest exponent bit, which no finite value does;
// integer operations in one OR chain, which the compiler vectorises (and no
// soft-float calls).
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP) && !defined(__ARM_FEATURE_MVE)
#define TINYATTN_ALL_FINITE_VLDM 1
#else
#define TINYATTN_ALL_FINITE_VLDM 0
#endif
#if TINYATTN_ALL_FINITE_VLDM
// Pure: the asm's memory clobber would otherwise make each call a possible
// store, and the callers reload what they hold across it.
__attribute__((pure))
#endif
inline bool all_finite(const float* x, size_t n) {
#if TINYATTN_ALL_FINITE_VLDM
  const float* p = x;
  float z = 0.0f;
  __asm__ volatile(
      "cmp %[p], %[last]\n"
      "beq 2f\n"
      "1:\n"
      "vldmia %[p]!, {s0-s7}\n"
      "vfma.f32 %[z], s0, %[z]\n"
      "vfma.f32 %[z], s1, %[z]\n"
      "vfma.f32 %[z], s2, %[z]\n"
      "vfma.f32 %[z], s3, %[z]\n"
      "vfma.f32 %[z], s4, %[z]\n"
      "vfma.f32 %[z], s5, %[z]\n"
      "vfma.f32 %[z], s6, %[z]\n"
      "vfma.f32 %[z], s7, %[z]\n"
      "cmp %[p], %[last]\n"
      "bne 1b\n"
      "2:\n"  // the last n % 8 values one by one
      "cmp %[p], %[end]\n"
      "beq 4f\n"
      "3:\n"
      "vldmia %[p]!, {s0}\n"
      "vfma.f32 %[z], s0, %[z]\n"
      "cmp %[p], %[end]\n"
      "bne 3b\n"
      "4:\n"
      : [p] "+r"(p), [z] "+t"(z)
      : [last] "r"(x + (n & ~size_t{7})), [end] "r"(x + n)
      : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "memory", "cc");
  return z == 0.0f;
#elif defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP)
  float z0 = 0.0f, z1 = 0.0f, z2 = 0.0f, z3 = 0.0f;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {  // four values per loop step: loads and the loop amortised
    z0 += x[i] * 0.0f;
    z1 += x[i + 1] * 0.0f;
    z2 += x[i + 2] * 0.0f;
    z3 += x[i + 3] * 0.0f;
  }
  for (; i < n; ++i) z0 += x[i] * 0.0f;
  return (z0 + z1) + (z2 + z3) == 0.0f;
#else
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    any |= (bits & 0x7f800000u) + 0x00800000u;
  }
  return (any & 0x80000000u) == 0;
#endif
}

inline float widen(float x) { return x; }
inline float widen(half x) { return to_float(x); }

// Powers of two as floats, exact: 2^e for e in [-126, 127].
inline float pow2(int e) { return bits_to_float(static_cast<uint32_t>(e + 127) << 23); }
// e with 2^e <= |x| < 2^(e+1), clamped to [-126, 126] so that 2^-e is a
// normal float too (0, subnormals: -126; 2^127 and up, inf, NaN: 126), from
// the exponent bits. x * 2^-e is then below 4 in magnitude.
inline int exponent_of(float x) {
  const int e = static_cast<int>((float_to_bits(x) >> 23) & 0xffu) - 127;
  return e < -126 ? -126 : e > 126 ? 126 : e;
}
// x * 2^e in steps that are each exact (up to the final over- or underflow).
inline float scale_by_pow2(float x, int e) {
  for (; e > 127; e -= 127) x *= pow2(127);
  for (; e < -126; e += 126) x *= pow2(-126);
  return x * pow2(e);
}

// p + e = a * b exactly (Dekker's product: no FMA needed, and the same
// result where the compiler fuses, each partial product being exact).
inline void two_product(float a, float b, float& p, float& e) {
  p = a * b;
  const float sa = a * 4097.0f, ah = sa - (sa - a), al = a - ah;
  const float sb = b * 4097.0f, bh = sb - (sb - b), bl = b - bh;
  e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
// s + e = a + b exactly (Knuth's sum).
inline void two_sum(float a, float b, float& s, float& e) {
  s = a + b;
  const float z = s - a;
  e = (a - (s - z)) + (b - z);
}

// scale * <q, k> without an fp32 overflow before the end: each product is
// taken of its factors brought to [1, 2) by exact powers of two, then put
// on the scale of the largest product (2^emax), so no product or partial sum
// can overflow (the sum stays below 16 Dk), and the powers are applied at the
// end, where the result overflows to +-inf exactly when the value is beyond
// fp32. Scaling each product by its own exponents, not q and k by their
// largest entries, keeps a small product beside a large entry whose own
// product is small (q = [2, FLT_MAX], k = [3, 0]: 6, not 0). Finite entries:
// a compensated dot product (products and sums with their exact errors: as if
// in twice fp32's precision, so large products that cancel leave the small
// ones' sum, as in double, down to 2^-126 of the largest product). Entries
// with inf or NaN: plain IEEE products and sums of the terms that have one
// (+-inf, or NaN for a NaN entry, inf * 0, +inf and -inf). fp32 arithmetic
// only, no software double on cores without a double-precision FPU; one fixed
// order in the driver: the same on every port and target.
template <class T>
float exact_logit(const T* q, const T* k, size_t dk, float scale) {
  bool finite = true, any = false;
  int emax = 0;
  for (size_t c = 0; c < dk; ++c) {
    const float x = widen(q[c]), y = widen(k[c]);
    finite &= std::fabs(x) <= FLT_MAX && std::fabs(y) <= FLT_MAX;
    if (x == 0.0f || y == 0.0f) continue;
    const int e = exponent_of(x) + exponent_of(y);
    emax = !any || e > emax ? e : emax;
    any = true;
  }
  if (!finite) {
    // Only the terms with an inf or NaN entry decide the value: a finite
    // product cannot change +-inf, and it must not overflow into an inf of
    // the other sign, nor an entry scaled to 0 turn inf * x into NaN. These
    // terms unscaled, in IEEE arithmetic: +-inf, or NaN (a NaN entry, inf * 0,
    // +inf and -inf).
    float dot = 0.0f;
    for (size_t c = 0; c < dk; ++c) {
      const float x = widen(q[c]), y = widen(k[c]);
      if (!(std::fabs(x) <= FLT_MAX && std::fabs(y) <= FLT_MAX)) dot += x * y;
    }
    return scale * dot;
  }
  if (!any) return scale * 0.0f;  // every product is 0
  const int es = exponent_of(scale);
  float dot = 0.0f, err = 0.0f;
  for (size_t c = 0; c < dk; ++c) {
    const float x = widen(q[c]), y = widen(k[c]);
    if (x == 0.0f || y == 0.0f) continue;
    const int ex = exponent_of(x), ey = exponent_of(y);
    float p, ep, es2;
    two_product(x * pow2(-ex), y * pow2(-ey), p, ep);
    // On the largest product's scale: exact down to fp32's normal range.
    const int shift = ex + ey - emax;
    p = scale_by_pow2(p, shift);
    ep = scale_by_pow2(ep, shift);
    two_sum(dot, p, dot, es2);
    err += ep + es2;
  }
  return scale_by_pow2((scale * pow2(-es)) * (dot + err), emax + es);
}

// The overflow rule (docs/hardening.md): a logit whose dot product a port
// computed as inf or NaN is recomputed by exact_logit. Ports differ in
// where they add (lanes, FMA contraction), so an overflowing partial sum is
// +inf on one and NaN on another; once a partial sum is not finite the fp32
// result is not finite either, so this check finds every such logit. Finite
// logits, the common case, cost the all_finite pass.
// The rare recompute in a frame of its own, so its locals do not weigh on
// every caller's frame (the board stack bound, docs/hardening.md).
template <class T>
TINYATTN_NOINLINE void settle_nonfinite(const T* q, const T* k, size_t ldk, size_t count, size_t dk, float scale,
                                        float* s) {
  for (size_t j = 0; j < count; ++j)
    if (!std::isfinite(s[j])) s[j] = exact_logit(q, k + j * ldk, dk, scale);
}

template <class T>
void settle_logits(const T* q, const T* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  if (!all_finite(s, count)) settle_nonfinite(q, k, ldk, count, dk, scale, s);
}

// Options::softcap on settled scores: s -> c tanh(s / c), so +-inf becomes
// +-c and NaN stays NaN. Before the element masks, as ONNX Attention orders
// it: a key the mask drops still ends at -inf, never at -c.
inline void cap_logits(float c, float* s, size_t n) {
  for (size_t j = 0; j < n; ++j) s[j] = c * tanh_f32(s[j] / c);
}

// d(c tanh(s / c))/ds at the capped logit t = c tanh(s / c): 1 - (t / c)^2,
// in the factored form, exact where t / c is near +-1.
inline float cap_slope(float c, float t) {
  const float x = t / c;
  return (1.0f - x) * (1.0f + x);
}

// s = the masked logits of keys [lo, lo + n) of query row i of head h, from
// the raw scores the port left in s (q: the row's query; k: key lo).
template <class T>
void finish_logits(const RowContext& c, const T* q, const T* k, size_t h, size_t i, size_t lo, size_t n, float* s) {
  settle_logits(q, k, c.d.dk, n, c.d.dk, c.scale, s);
  if (c.softcap != 0.0f) cap_logits(c.softcap, s, n);
  if (c.element_masks) apply_element_masks(c.mask, c.d, h, i, KeyRange{lo, lo + n}, s);
}

// Outputs are stored in the caller's type: fp32 as is, fp16 rounded.
inline void store(const float* x, float* out, size_t n) {
  if (x != out) std::memcpy(out, x, n * sizeof(float));
}
inline void store(const float* x, half* out, size_t n) { to_half(x, out, n); }
inline void fill_with(float* p, size_t n, float x) { fill(p, n, x); }
inline void fill_with(half* p, size_t n, float x) { fill(p, n, to_half(x)); }

// lse of a row whose maximum logit is m and whose sum of exp(s - m) is l.
inline float log_sum_exp(float m, float l) { return m == kInf ? kInf : m + log_f32(l); }

// No visible key: Y row 0, weights 0, lse -inf.
template <class T>
void finish_empty(const RowOf<T>& row, size_t dv) {
  fill_with(row.y, dv, 0.0f);
  if (row.weights) fill_with(row.weights + row.r.lo, row.r.size(), 0.0f);
  if (row.lse) *row.lse = -kInf;
}

// A NaN logit poisons its own row only. Masked keys keep weight exactly 0
// even here; s holds the row's masked logits whenever weights are written (it
// is overwritten), and may be null otherwise.
template <class T>
void finish_nan(const RowOf<T>& row, size_t dv, float* s) {
  fill_with(row.y, dv, kNaN);
  if (row.weights) {
    for (size_t j = 0; j < row.r.size(); ++j) s[j] = s[j] == -kInf ? 0.0f : kNaN;
    store(s, row.weights + row.r.lo, row.r.size());
  }
  if (row.lse) *row.lse = kNaN;
}

// s[j] -> exp(s[j] - max) and their sum; with max == +inf, the limit of
// softmax: the +inf logits share all the weight.
inline float exponentiate(const KernelsF32& kern, float* s, size_t len, float max) {
  if (max != kInf) return kern.exp_shift_sum(s, len, max);
  float sum = 0.0f;
  for (size_t j = 0; j < len; ++j) {
    s[j] = s[j] == kInf ? 1.0f : 0.0f;
    sum += s[j];
  }
  return sum;
}

// How a row of logits ends after its maximum: live (a finite or +inf
// maximum: its exp and sum follow), no visible key (the maximum is -inf),
// or a NaN logit.
enum class RowEnd : unsigned char { kLive, kNoKey, kNaNLogit };
inline RowEnd row_end(float max) {
  return max == -kInf ? RowEnd::kNoKey : max != max ? RowEnd::kNaNLogit : RowEnd::kLive;
}

// A row's maximum, how it ends (row_end) and, when live, exp(s - max) and
// its sum (exponentiate): the row pass of the forward's rows and blocks,
// which call these three in this order per row. exp_rows makes the same
// calls for `count` rows of n (row r at s + r * ld), pass by pass: every
// row's maximum, then every live row's exp and sum. Each row gets the same
// bits; only the order differs, so the exp chains of neighbouring rows sit
// next to each other in the instruction stream and overlap, where one short
// row alone leaves the core waiting on its max -> exp -> sum latency.
struct RowExp {
  RowEnd end;
  float max;
  float sum;  // 0 unless live
};
// One row after its maximum e.max: how it ends and, when live, its
// exponentials and their sum (in place: a returned RowExp cost the boards'
// softmax_rows frame 8-16 bytes).
inline void exp_after_max(const KernelsF32& kern, float* s, size_t n, RowExp& e) {
  e.end = row_end(e.max);
  e.sum = e.end == RowEnd::kLive ? exponentiate(kern, s, n, e.max) : 0.0f;
}
inline void exp_rows(const KernelsF32& kern, float* s, size_t ld, size_t count, size_t n, RowExp* out) {
  for (size_t r = 0; r < count; ++r) out[r].max = kern.row_max(s + r * ld, n);
  for (size_t r = 0; r < count; ++r) exp_after_max(kern, s + r * ld, n, out[r]);
}

// softmax() of `rows` rows of n in place (tinyattn/softmax.h), row r at
// p + r * ld, kExpRowsAtOnce rows per exp_rows: all -inf -> zeros, a NaN ->
// all NaN (the NaN row_max returned), else exp(s - max) / sum (the +inf keys
// share the weight).
inline constexpr size_t kExpRowsAtOnce = 8;
static_assert(kExpRowsAtOnce <= kShortRowsAtOnce, "softmax_short_rows takes a group of rows at once");
// A row after its maximum and (live) exponentials: scaled by 1/sum, or the
// zeros or NaNs of a row without a visible key or with a NaN logit.
inline void finish_softmax_row(const KernelsF32& kern, float* s, size_t n, const RowExp& e) {
  if (e.end == RowEnd::kLive)
    kern.scale(s, n, 1.0f / e.sum);
  else
    fill(s, n, e.end == RowEnd::kNoKey ? 0.0f : e.max);
}
// A group of rows through the port's softmax_short_rows, where it takes
// them: false leaves them to the three primitives. Groups gain 1.2x over
// those; one row alone (Highway's kernel for one row) 1.1x.
inline bool short_rows_in_place(const KernelsF32& kern, float* s, size_t ld, size_t count, size_t n) {
  float max[kExpRowsAtOnce], sum[kExpRowsAtOnce];
  if (!(n <= kern.short_rows_max && kern.softmax_short_rows &&
        kern.softmax_short_rows(s, ld, count, n, max, sum)))
    return false;
  // Rows with a finite maximum are done; the others as the primitives' path.
  for (size_t r = 0; r < count; ++r) {
    if (max[r] > -kInf && max[r] < kInf) continue;
    RowExp e{RowEnd::kLive, max[r], 0.0f};  // exp_after_max settles end and sum
    exp_after_max(kern, s + r * ld, n, e);
    finish_softmax_row(kern, s + r * ld, n, e);
  }
  return true;
}
// One row: softmax_rows_in_place's path for rows == 1, without the group
// loop. A short row through softmax_short_rows; a finite maximum (live,
// exp_shift_sum, scale by 1/sum) inline; the others, rare, in a frame of
// their own, so the common call saves no registers for them.
inline TINYATTN_NOINLINE void softmax_row_nonfinite_max(const KernelsF32& kern, float* p, size_t n, float max) {
  RowExp e{RowEnd::kLive, max, 0.0f};  // exp_after_max settles end and sum
  exp_after_max(kern, p, n, e);
  finish_softmax_row(kern, p, n, e);
}
inline void softmax_row_in_place(const KernelsF32& kern, float* p, size_t n) {
  if (kShortRowsUsed && n <= kern.short_rows_max && kern.softmax_short_rows) {
    float max, sum;
    if (kern.softmax_short_rows(p, n, 1, n, &max, &sum)) {
      if (!(max > -kInf && max < kInf)) softmax_row_nonfinite_max(kern, p, n, max);
      return;
    }
  }
  const float max = kern.row_max(p, n);
  if (!(max > -kInf && max < kInf)) return softmax_row_nonfinite_max(kern, p, n, max);
  kern.scale(p, n, 1.0f / kern.exp_shift_sum(p, n, max));
}
inline void softmax_rows_in_place(const KernelsF32& kern, float* p, size_t rows, size_t n, size_t ld) {
  RowExp e[kExpRowsAtOnce];
  for (size_t r0 = 0; r0 < rows; r0 += kExpRowsAtOnce) {
    const size_t count = rows - r0 < kExpRowsAtOnce ? rows - r0 : kExpRowsAtOnce;
    float* s = p + r0 * ld;
    if (kShortRowsUsed && short_rows_in_place(kern, s, ld, count, n)) continue;
    exp_rows(kern, s, ld, count, n, e);
    for (size_t r = 0; r < count; ++r) finish_softmax_row(kern, s + r * ld, n, e[r]);
  }
}

// The online softmax's running maximum m and sum l of exp(s - m).
struct Online {
  float m = -kInf;
  float l = 0.0f;
};

// A tile whose largest logit is tile_max (not NaN, not -inf) arrives: when it
// raises the maximum, what was accumulated under the old one (acc, Dv
// floats, and l) is rescaled by exp(m_old - m_new). A zero factor (m was
// -inf, the new maximum is +inf, or the difference underflows) drops it
// outright: scaling would turn an infinite value from V into NaN, and those
// keys now have weight 0.
inline void raise_max(const KernelsF32& kern, float* acc, size_t dv, Online& o, float tile_max) {
  if (!(tile_max > o.m)) return;
  const float factor = o.m == -kInf || tile_max == kInf ? 0.0f : exp_poly(o.m - tile_max);
  if (factor == 0.0f)
    fill(acc, dv, 0.0f);
  else
    kern.scale(acc, dv, factor);
  o.l *= factor;
  o.m = tile_max;
}

// The masked logits of keys [off, off + n) of a row (relative to r.lo).
template <class Source, class T>
void row_logits(const Source& src, const RowOf<T>& row, size_t off, size_t n, float* s) {
  const RowContext& c = src.ctx();
  src.scores(row, off, n, s);
  finish_logits(c, row.q, row.k + off * c.d.dk, row.h, row.i, row.r.lo + off, n, s);
}

// out = a * sum_j p[j] V[j] over keys [0, len) of a row, in the source's
// plain tiles (part: Dv floats of scratch when there is more than one).
template <class Source, class T>
void sum_values(const Source& src, const RowOf<T>& row, size_t len, const float* p, float a, float* out, float* part) {
  const RowContext& c = src.ctx();
  const size_t tile = src.plain_tile();
  src.values(row, 0, len < tile ? len : tile, p, a, out);
  for (size_t off = tile; off < len; off += tile) {
    src.values(row, off, len - off < tile ? len - off : tile, p + off, a, part);
    c.kern.axpy(1.0f, part, out, c.d.dv);
  }
}

// One pass over the row, its M logits kept in s (the weights need them all).
// Both row algorithms have frames of their own: their callers' frames stay
// small (the board stack bound, docs/hardening.md).
template <class Source, class T>
TINYATTN_NOINLINE void plain_row(const Source& src, const RowOf<T>& row, float* s, float* acc, float* part) {
  const RowContext& c = src.ctx();
  const size_t len = row.r.size(), dv = c.d.dv, tile = src.plain_tile();
  src.begin_row(row);
  for (size_t off = 0; off < len; off += tile) row_logits(src, row, off, len - off < tile ? len - off : tile, s + off);
  const float max = c.kern.row_max(s, len);
  if (max == -kInf) return finish_empty(row, dv);
  if (max != max) return finish_nan(row, dv, s);
  const float sum = exponentiate(c.kern, s, len, max);
  float a = 1.0f / sum;
  if (row.weights) {
    c.kern.scale(s, len, a);
    store(s, row.weights + row.r.lo, len);
    a = 1.0f;
  }
  float* y = src.output(row, acc);
  sum_values(src, row, len, s, a, y, part);
  store(y, row.y, dv);
  if (row.lse) *row.lse = log_sum_exp(max, sum);
}

// The online pass's accumulator holds an inf or NaN: a value of V reached
// it at a weight that was positive under a running maximum but may be
// exactly 0 under the final one m, where the plain path leaves the key out.
// Sums the row again at m, as the plain path does, and returns the sum of
// weights. Rare (V not finite), so the common case pays nothing for it.
template <class Source, class T>
float resum_at(const Source& src, const RowOf<T>& row, float m, float* s, float* acc, float* part) {
  const RowContext& c = src.ctx();
  const size_t len = row.r.size(), dv = c.d.dv, tile = src.online_tile();
  float l = 0.0f;
  fill(acc, dv, 0.0f);
  for (size_t off = 0; off < len; off += tile) {
    const size_t n = len - off < tile ? len - off : tile;
    row_logits(src, row, off, n, s);
    l += exponentiate(c.kern, s, n, m);
    src.values(row, off, n, s, 1.0f, part);
    c.kern.axpy(1.0f, part, acc, dv);
  }
  return l;
}

// Online softmax over key tiles (FlashAttention style): the running maximum
// and sum, and an unnormalised accumulator acc (Dv floats) rescaled whenever
// a tile raises the maximum. No weights (they would need the whole row).
template <class Source, class T>
TINYATTN_NOINLINE void tiled_row(const Source& src, const RowOf<T>& row, float* s, float* acc, float* part) {
  const RowContext& c = src.ctx();
  const size_t len = row.r.size(), dv = c.d.dv, tile = src.online_tile();
  src.begin_row(row);
  Online o;
  fill(acc, dv, 0.0f);
  for (size_t off = 0; off < len; off += tile) {
    const size_t n = len - off < tile ? len - off : tile;
    row_logits(src, row, off, n, s);
    const float tile_max = c.kern.row_max(s, n);
    if (tile_max != tile_max) return finish_nan(row, dv, nullptr);
    if (tile_max == -kInf) continue;  // nothing visible in this tile
    raise_max(c.kern, acc, dv, o, tile_max);
    o.l += exponentiate(c.kern, s, n, o.m);
    src.values(row, off, n, s, 1.0f, part);
    c.kern.axpy(1.0f, part, acc, dv);
  }
  if (o.m == -kInf) return finish_empty(row, dv);
  if (!all_finite(acc, dv)) o.l = resum_at(src, row, o.m, s, acc, part);
  c.kern.scale(acc, dv, 1.0f / o.l);
  store(acc, row.y, dv);
  if (row.lse) *row.lse = log_sum_exp(o.m, o.l);
}

}  // namespace detail
}  // namespace tinyattn
