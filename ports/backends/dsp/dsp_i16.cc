// The Armv7E-M DSP int16 kernels: the integers of the scalar table
// (scalar_i16.cc) with the 16-bit multiply-accumulates on word loads.
//
//  - scores: SMLALD adds two 16x16 products to a 64-bit sum; q and k rows
//    are int16 along Dk, so their words are the pairs. Two keys per pass
//    share the loads of q (dot2_passes: 9 instructions per 4 columns x 2
//    keys). LDRD needs word-aligned rows: a query starting at a halfword
//    offset takes its first column apart when the keys start the same way;
//    other layouts (odd ldk, q and k misaligned to each other) run one key
//    at a time on unaligned word loads (LDR).
//  - exp_row: d = max - s (64-bit) times the logit multiplier from two
//    32x32-bit long multiplies (dl m + 2^(shift-1), then dh m), rounded as
//    apply_wide and saturated where 2^u is 0 anyway; then exp2_q30 in 32-bit
//    words (q30_softmax-inl.h, the int8 table's).
//  - probabilities: the int8 table's (q30_softmax-inl.h).
//  - weighted_sum: pairs of keys with packed halfword weights (p_j, p_j+1)
//    against a word of each row, SMLABB / SMLATB / SMLABT / SMLATT (no
//    repacking), four columns per pass in registers (pairs4). p_j = kProbOne
//    = 2^15 does not fit a signed halfword and enters as -2^15: such a key
//    (one holding the whole row) gets 2^16 v_jc added back.
//  - requantize: one SMLAL per value for the shifts above 32 that
//    plan_int16 gives, SSAT to clamp.
//  - i16_tflite-inl.h: the TFLite mode's requantization and softmax passes
//    (KernelsI16Tflite), in 32-bit words.
// Unaligned word loads go through memcpy (one LDR on Armv7E-M).
#include "backends/scalar/scalar.h"
#include "port.h"

#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>

#include <climits>
#include <cstdint>
#include <cstring>

#include "q30_softmax-inl.h"

namespace tinyattn {
namespace dsp {
namespace {

const char* simd_target() { return "DSP"; }

inline uint32_t u32(int32_t x) { return static_cast<uint32_t>(x); }

// Two int16 as one word, any halfword alignment (one LDR).
inline int32_t load2(const int16_t* p) {
  int32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// ---------------------------------------------------------------- scores

// Passes of two keys, s advancing by two per pass until end: s[0], s[1] =
// the dot products of `quads` (>= 1) groups of four columns of q with the
// keys at k0 and k0 + l bytes (q and both rows word-aligned); the next
// pass's k0 is this one's plus 2 l. Per group one LDRD of q, two of k and
// four SMLALD. One asm block for all passes: GCC spills around a loop of
// them.
__attribute__((noinline)) void dot2_passes(const int16_t* q, size_t quads, const int16_t* k0, size_t l, int64_t* s,
                                           const int64_t* end) {
  uint32_t a0, b0, a1, b1, x, y, u, v, n;
  const int16_t* qp;
  const int16_t* k1;
  const size_t step = l - 8 * quads;  // from the end of key 1's columns to the next key 0 (modular)
  __asm__ volatile(
      "2:\n\t"
      "ldr %[n], %[quads]\n\t"
      "ldr %[qp], %[q]\n\t"
      "ldr %[k1], %[l]\n\t"
      "add %[k1], %[k1], %[k0]\n\t"
      "movs %[a0], #0\n\t"
      "movs %[b0], #0\n\t"
      "movs %[a1], #0\n\t"
      "movs %[b1], #0\n"
      "1:\n\t"
      "ldrd %[x], %[y], [%[qp]], #8\n\t"
      "ldrd %[u], %[v], [%[k0]], #8\n\t"
      "smlald %[a0], %[b0], %[x], %[u]\n\t"
      "smlald %[a0], %[b0], %[y], %[v]\n\t"
      "ldrd %[u], %[v], [%[k1]], #8\n\t"
      "smlald %[a1], %[b1], %[x], %[u]\n\t"
      "smlald %[a1], %[b1], %[y], %[v]\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      "strd %[a0], %[b0], [%[s]], #8\n\t"
      "strd %[a1], %[b1], [%[s]], #8\n\t"
      "ldr %[x], %[step]\n\t"
      "add %[k0], %[k1], %[x]\n\t"
      "ldr %[x], %[end]\n\t"
      "cmp %[s], %[x]\n\t"
      "bne 2b"
      : [a0] "=&r"(a0), [b0] "=&r"(b0), [a1] "=&r"(a1), [b1] "=&r"(b1), [x] "=&r"(x), [y] "=&r"(y), [u] "=&r"(u),
        [v] "=&r"(v), [n] "=&r"(n), [qp] "=&r"(qp), [k1] "=&r"(k1), [k0] "+r"(k0), [s] "+r"(s)
      : [quads] "m"(quads), [q] "m"(q), [l] "m"(l), [step] "m"(step), [end] "m"(end)
      : "cc", "memory");
}

inline int64_t row_max(const int64_t* s, size_t count) {
  int64_t max = s[0];
  for (size_t j = 1; j < count; ++j) max = s[j] > max ? s[j] : max;
  return max;
}

// Any layout: one key at a time, unaligned word loads.
__attribute__((noinline)) int64_t scores_words(const int16_t* q, const int16_t* k, size_t ldk, size_t count,
                                               size_t dk, int64_t* s) {
  for (size_t j = 0; j < count; ++j, k += ldk) {
    int64_t d = 0;
    size_t c = 0;
    for (; c + 2 <= dk; c += 2) d = __smlald(load2(q + c), load2(k + c), d);
    if (c < dk) d += int32_t{q[c]} * k[c];
    s[j] = d;
  }
  return row_max(s, count);
}

int64_t scores(const int16_t* q, const int16_t* k, size_t ldk, size_t count, size_t dk, int64_t* s) {
  const uintptr_t qa = reinterpret_cast<uintptr_t>(q), ka = reinterpret_cast<uintptr_t>(k);
  const size_t c0 = (qa & 2) ? 1 : 0;  // columns before the first word-aligned one
  const size_t quads = dk > c0 ? (dk - c0) / 4 : 0;
  // Every row word-aligned at column c0: k as q, and ldk even.
  if (quads == 0 || ldk % 2 != 0 || ((qa ^ ka) & 2) != 0) return scores_words(q, k, ldk, count, dk, s);
  const size_t even = count & ~size_t{1};
  if (even) dot2_passes(q + c0, quads, k + c0, ldk * sizeof(int16_t), s, s + even);
  if (count % 2) {  // the last key, alone: the same pass with both keys on it
    int64_t d[2];
    dot2_passes(q + c0, quads, k + even * ldk + c0, 0, d, d + 2);
    s[even] = d[0];
  }
  // The columns outside the groups of four: the first (c0) and the last 0..3.
  const size_t tail = c0 + 4 * quads;
  if (c0 || tail < dk) {
    for (size_t j = 0; j < count; ++j) {
      const int16_t* kj = k + j * ldk;
      int64_t d = s[j];
      if (c0) d += int32_t{q[0]} * kj[0];
      for (size_t c = tail; c < dk; ++c) d += int32_t{q[c]} * kj[c];
      s[j] = d;
    }
  }
  return row_max(s, count);
}

// ---------------------------------------------------------------- exp_row

// Pass 1: e[j] = u_j = -apply_wide(logit, max - s_j) where that is below
// 2^31, else INT32_MIN (2^u rounds to 0 from u < -31 2^26 on, so both give
// the same exp2_q30), INT32_MIN for a dropped key. With d = max - s =
// dh 2^32 + dl (modular; d < 2^47 for a kept key) and h = 2^(shift-1):
//   A = dl m + h = AH 2^32 + AL     (< 2^64)
//   Y = AH + dh m                   (< 2^63)
//   apply_wide = floor((Y 2^32 + AL) / 2^shift), which is >= 2^31 exactly
//   when Y >= 2^(shift-1) = h. Below that it is Y >> (shift - 32) for
//   kHigh (shift >= 32; Y's high word is then below 2^(shift-33), and 0 for
//   shift 32), else (Y << (32 - shift)) | (AL >> shift) (Y < 2^31).
template <bool kHigh>
void logits(const int64_t* s, size_t n, uint32_t m, int32_t shift, int64_t max_score, int32_t* e) {
  const uint64_t top = static_cast<uint64_t>(max_score);
  const uint64_t h = uint64_t{1} << (shift - 1);
  const uint32_t right = static_cast<uint32_t>(kHigh ? shift - 32 : shift);
  const uint32_t left = (32 - right) & 31;  // 32 (kHigh, shift 32) only where the high word is 0
  constexpr uint64_t kDropped = uint64_t{1} << 63;  // INT64_MIN
  for (size_t j = 0; j < n; ++j) {
    const uint64_t sj = static_cast<uint64_t>(s[j]);
    const uint64_t d = top - sj;
    const uint64_t a = h + static_cast<uint64_t>(static_cast<uint32_t>(d)) * m;
    const uint64_t y = (a >> 32) + static_cast<uint64_t>(static_cast<uint32_t>(d >> 32)) * m;
    const uint32_t ylo = static_cast<uint32_t>(y);
    const uint32_t r = kHigh ? (ylo >> right) | (static_cast<uint32_t>(y >> 32) << left)
                             : (ylo << left) | (static_cast<uint32_t>(a) >> right);
    e[j] = y >= h || sj == kDropped ? INT32_MIN : static_cast<int32_t>(0u - r);
  }
}

int64_t exp_row(const int64_t* s, size_t n, FixedMultiplier logit, int64_t max_score, int32_t* e) {
  const int32_t shift = logit.shift;
  if (shift < 1) return scalar::i16::exp_row(s, n, logit, max_score, e);  // not from plan_int16 at real scales
  const uint32_t m = static_cast<uint32_t>(logit.multiplier);
  if (shift >= 32)
    logits<true>(s, n, m, shift, max_score, e);
  else
    logits<false>(s, n, m, shift, max_score, e);
  // Pass 2: the exp, with its constant in a register.
  int32_t one = kOneQ30;
  __asm__("" : "+r"(one));
  uint32_t sum_lo = 0, sum_hi = 0;
  for (size_t j = 0; j < n; ++j) {
    const int32_t ej = exp2_q30_word(e[j], one);
    e[j] = ej;
    __asm__("adds %0, %0, %2\n\tadc %1, %1, #0" : "+r"(sum_lo), "+r"(sum_hi) : "r"(ej) : "cc");
  }
  return static_cast<int64_t>((uint64_t{sum_hi} << 32) | sum_lo);
}

// ---------------------------------------------------------------- weighted_sum

// Keys per pass: the stack buffer holds kPChunk / 2 pairs of weights.
constexpr size_t kPChunk = 64;

// acc[c..c+3] = (first ? 0 : acc[c..c+3]) + four columns c of `pairs` (>= 1)
// pairs of rows from row (rows l bytes apart) against the packed weights at
// pw, for c = 0, 4, ... up to end: per pair one weight word, four LDR and
// eight SMLAxy. Out of line: weighted_sum calls it twice.
__attribute__((noinline)) void pairs4(const uint32_t* pw, const int16_t* row, size_t l, size_t pairs, int32_t* acc,
                                      const int32_t* end, uint32_t first) {
  int32_t a0, a1, a2, a3;
  uint32_t w, x, y, n;
  const uint32_t* pp;
  const size_t l4 = l + 4;
  const size_t back = 2 * l * pairs - 8;  // from past the last pair to the next columns' first row
  __asm__ volatile(
      "2:\n\t"
      "ldr %[n], %[first]\n\t"
      "cbz %[n], 3f\n\t"
      "movs %[a0], #0\n\t"
      "movs %[a1], #0\n\t"
      "movs %[a2], #0\n\t"
      "movs %[a3], #0\n\t"
      "b 4f\n"
      "3:\n\t"
      "ldrd %[a0], %[a1], [%[acc]]\n\t"
      "ldrd %[a2], %[a3], [%[acc], #8]\n"
      "4:\n\t"
      "ldr %[n], %[pairs]\n\t"
      "ldr %[pp], %[pw]\n"
      "1:\n\t"
      "ldr %[w], [%[pp]], #4\n\t"
      "ldr %[x], [%[r]]\n\t"
      "ldr %[y], [%[r], %[l]]\n\t"
      "smlabb %[a0], %[x], %[w], %[a0]\n\t"
      "smlatb %[a1], %[x], %[w], %[a1]\n\t"
      "smlabt %[a0], %[y], %[w], %[a0]\n\t"
      "smlatt %[a1], %[y], %[w], %[a1]\n\t"
      "ldr %[x], [%[r], #4]\n\t"
      "ldr %[y], [%[r], %[l4]]\n\t"
      "smlabb %[a2], %[x], %[w], %[a2]\n\t"
      "smlatb %[a3], %[x], %[w], %[a3]\n\t"
      "smlabt %[a2], %[y], %[w], %[a2]\n\t"
      "smlatt %[a3], %[y], %[w], %[a3]\n\t"
      "add %[r], %[r], %[l], lsl #1\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      "strd %[a0], %[a1], [%[acc]], #8\n\t"
      "strd %[a2], %[a3], [%[acc]], #8\n\t"
      "ldr %[w], %[back]\n\t"
      "subs %[r], %[r], %[w]\n\t"
      "ldr %[w], %[end]\n\t"
      "cmp %[acc], %[w]\n\t"
      "bne 2b"
      : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [w] "=&r"(w), [x] "=&r"(x), [y] "=&r"(y),
        [n] "=&l"(n), [pp] "=&r"(pp), [r] "+r"(row), [acc] "+r"(acc)
      : [l] "r"(l), [l4] "r"(l4), [pairs] "m"(pairs), [pw] "m"(pw), [back] "m"(back), [end] "m"(end),
        [first] "m"(first)
      : "cc", "memory");
}

void weighted_sum(const int32_t* p, const int16_t* v, size_t ldv, size_t count, size_t dv, int32_t* acc) {
  const size_t blocked = dv & ~size_t{3};  // columns done four at a time
  const size_t l = ldv * sizeof(int16_t);
  uint32_t pw[kPChunk / 2 + 1];
  for (size_t j0 = 0; j0 < count; j0 += kPChunk) {
    size_t len = kPChunk;  // (a conditional expression here misleads cppcheck 2.10's value flow)
    if (count - j0 < len) len = count - j0;
    const size_t pairs = len / 2;
    const int32_t* pj = p + j0;
    const int16_t* vj = v + j0 * ldv;
    uint32_t bits = 0;  // bit 15: some p_j == kProbOne (the others are below)
    for (size_t i = 0; i < pairs; ++i) {
      const uint32_t a = u32(pj[2 * i]), b = u32(pj[2 * i + 1]);
      bits |= a | b;
      pw[i] = (a & 0xffffu) | (b << 16);
    }
    if (blocked) {
      if (pairs) pairs4(pw, vj, l, pairs, acc, acc + blocked, j0 == 0);
      if (len % 2) {
        // An odd last key pairs with the key before it (or itself, alone) at weight 0.
        const uint32_t last = u32(pj[len - 1]);
        bits |= last;
        pw[pairs] = last << 16;
        const size_t back = pairs ? ldv : 0;
        pairs4(pw + pairs, vj + (len - 1) * ldv - back, back * sizeof(int16_t), 1, acc, acc + blocked,
               j0 == 0 && pairs == 0);
      }
      // A key with p_j == kProbOne entered the blocked columns as -2^15:
      // 2^16 v_jc added back (modular).
      if (bits & kProbOne) {
        for (size_t i = 0; i < len; ++i) {
          if (pj[i] != static_cast<int32_t>(kProbOne)) continue;
          const int16_t* vi = vj + i * ldv;
          for (size_t c = 0; c < blocked; ++c) acc[c] = static_cast<int32_t>(u32(acc[c]) + (u32(vi[c]) << 16));
        }
      }
    }
    // The last 0..3 columns, one at a time.
    for (size_t c = blocked; c < dv; ++c) {
      uint32_t a = j0 ? u32(acc[c]) : 0u;
      for (size_t i = 0; i < len; ++i) a += u32(pj[i]) * u32(vj[i * ldv + c]);
      acc[c] = static_cast<int32_t>(a);
    }
  }
}

// ---------------------------------------------------------------- requantize

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int16_t* y) {
  const int32_t m = output.multiplier;
  if (output.shift <= 32 || m <= 0) {  // not from plan_int16 at ordinary scale ratios
    scalar::i16::requantize(acc, n, output, y);
    return;
  }
  // x = acc m, shift = 32 + k, 1 <= k <= 30: rounding_rshift(x, shift)
  // = (x + 2^(k-1) 2^32 - [x < 0]) >> shift, the sum formed by one SMLAL on
  // the high word 2^(k-1) - [a < 0] and the low word -[a < 0] (|x| < 2^62,
  // so the high word stays within int32); SSAT clamps to int16.
  const int k = output.shift - 32;
  const int32_t base = int32_t{1} << (k - 1);
  for (size_t c = 0; c < n; ++c) {
    const int32_t a = acc[c];
    // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
    int32_t lo = a >> 31, hi = base + lo;
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(m));
    y[c] = static_cast<int16_t>(__ssat(hi >> k, 16));
  }
}

// The scalar table with the kernels above.
constexpr KernelsI16 make_table() {
  KernelsI16 t = scalar::table_i16("dsp");
  t.simd_target = simd_target;
  t.scores = scores;
  t.exp_row = exp_row;
  t.probabilities = probabilities;
  t.weighted_sum = weighted_sum;
  t.requantize = requantize;
  return t;
}
constexpr KernelsI16 kKernelsI16 = make_table();

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

#include "i16_tflite-inl.h"

namespace tinyattn {
namespace dsp {
namespace {

// The TFLite mode's kernels (i16_tflite-inl.h), for tflite_kernels_i16.
constexpr KernelsI16Tflite kKernelsI16Tflite{scores, weighted_sum, tflite16_requantize, tflite16_requantize_y, tflite16_exps,
                                             tflite16_outputs};

}  // namespace
}  // namespace dsp

template <>
const KernelsI16* port_kernels_i16<Port::kDsp>() {
  return &dsp::kKernelsI16;
}

template <>
const KernelsI16Tflite* port_tflite_kernels_i16<Port::kDsp>() {
  return &dsp::kKernelsI16Tflite;
}

}  // namespace tinyattn

#endif  // __ARM_FEATURE_DSP
