// The integer-only power-on self-test of the int16 path (selftest_int16() in
// tinyattn/selftest.h), parallel to selftest_int8.cc.
//
// Integer arithmetic only, in its own translation unit: an int8-only image
// does not link it, and an image that calls it and forward_i16() links no
// floating-point code for it, nor the TFLite mode's. The plan is stored (plan_int16 uses floating
// point), and the expected values come from the model of the int16 spec in
// tools/gen/selftest_i16_vectors.py. Memory: one static Scratch sized at
// compile time, small frames, no heap.
#include <climits>
#include <cstring>

#include "detail.h"
#include "selftest_common.h"
#include "selftest_i16_vectors.h"
#include "tinyattn/selftest_kernels.h"

namespace tinyattn {

namespace sd = selftest_i16_data;

namespace {

using detail::Crc32;
using detail::Line;

constexpr Dims kDims{sd::kN, sd::kM, sd::kDk, sd::kDv, sd::kHq, sd::kHkv};
constexpr size_t kRowBytes = keep_bits_row_bytes(sd::kM);
constexpr size_t kPlanFields = 5;
constexpr size_t kPrimLen = 40;  // longer than two 16-lane vectors, not a multiple of 4
constexpr uint32_t kExp2TableSize = 32;
constexpr int64_t kMasked = INT64_MIN;  // a key the keep mask drops (exp_row's contract)

struct Scratch {
  int64_t s[kPrimLen];
  int32_t a[kPrimLen];
  int32_t b[kPrimLen];
  int32_t c[kPrimLen];
  int16_t y16[kPrimLen];
  int16_t q_ext[sd::kDk];
  int16_t k_ext[sd::kM * sd::kDk];
  int16_t y[kDims.y_elems()];
  uint16_t weights[kDims.weight_elems()];
  char line[112];
  alignas(kWorkspaceAlign) unsigned char workspace[forward_i16_workspace_bytes(kDims)];
};
// Plain arrays only, so no constructor runs at startup: an image that links
// this file without calling it (through the C API's object) drops all of it.
Scratch g;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): static scratch, not re-entrant
// The decoded plan (constant-initialized: Int16HeadPlan's members all have initializers).
Int16HeadPlan g_plans[sd::kHq];  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

class Recorder {
 public:
  explicit Recorder(SelftestI16Report* r) : r_(r) {
    r_->count = 0;
    r_->failures = 0;
  }
  void add(const char* name, const char* property, uint32_t measured, uint32_t bound) {
    add_result(name, property, measured, bound, measured <= bound);
  }
  void add_result(const char* name, const char* property, uint32_t measured, uint32_t bound, bool passed) {
    if (r_->count >= kSelftestI16MaxChecks) return;
    r_->checks[r_->count++] = SelftestI8Check{name, property, measured, bound, passed};
    if (!passed) ++r_->failures;
  }

 private:
  SelftestI16Report* r_;
};

struct Context {
  const KernelsI16& kern;
  const SelftestI16Vectors& vec;
  const Port* port;  // non-null: run the known answers through forward_i16()'s validation and driver
  Recorder& rec;
};

// ---------------------------------------------------------------- integrity

// Little-endian whatever the target's byte order, as the generator writes them.
template <class T>  // int16_t, uint16_t
void crc_16(Crc32& crc, const T* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t u = static_cast<uint16_t>(x[i]);
    const uint8_t le[2] = {static_cast<uint8_t>(u), static_cast<uint8_t>(u >> 8)};
    crc.bytes(le, 2);
  }
}
void crc_i64(Crc32& crc, const int64_t* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t u = static_cast<uint64_t>(x[i]);
    crc.u32(static_cast<uint32_t>(u));
    crc.u32(static_cast<uint32_t>(u >> 32));
  }
}
void crc_i32(Crc32& crc, const int32_t* x, size_t n) {
  for (size_t i = 0; i < n; ++i) crc.u32(static_cast<uint32_t>(x[i]));
}

void check_integrity(const Context& cx) {
  const SelftestI16Vectors& v = cx.vec;
  Crc32 crc;
  crc_16(crc, v.q, kDims.q_elems());
  crc_16(crc, v.k, kDims.k_elems());
  crc_16(crc, v.v, kDims.v_elems());
  crc.bytes(v.keep_bits, sd::kN * kRowBytes);
  crc_i32(crc, v.plan, sd::kHq * kPlanFields);
  crc_16(crc, v.expected_y, v.expected_y_count);
  crc_16(crc, v.expected_weights, v.expected_weights_count);
  crc_i32(crc, v.wide_multiplier, 2 * v.wide_count);
  crc_i64(crc, v.wide_x, v.wide_count);
  crc_i64(crc, v.wide_expected, v.wide_count);
  crc_i64(crc, v.exp2_u, v.exp2_count);
  crc_i32(crc, v.exp2_expected, v.exp2_count);
  cx.rec.add("i16_vectors_crc", "stored int16 vectors intact (CRC-32)", crc.value() == v.crc32 ? 0 : 1, 0);

  Crc32 table;
  crc_i64(table, v.exp2_table, kExp2TableSize);
  cx.rec.add("i16_exp2_table", "exp2_q30 table intact (CRC-32)", table.value() == v.exp2_table_crc32 ? 0 : 1, 0);

  uint32_t wrong = 0;
  for (size_t i = 0; i < v.exp2_count; ++i) wrong += exp2_q30(v.exp2_u[i]) == v.exp2_expected[i] ? 0 : 1;
  cx.rec.add("i16_exp2_q30", "exp2_q30 known answers (21 points)", wrong, 0);

  wrong = 0;
  for (size_t i = 0; i < v.wide_count; ++i) {
    const FixedMultiplier m{v.wide_multiplier[2 * i], v.wide_multiplier[2 * i + 1]};
    wrong += apply_wide(m, v.wide_x[i]) == v.wide_expected[i] ? 0 : 1;
  }
  cx.rec.add("i16_apply_wide", "apply_wide known answers (28 points)", wrong, 0);
}

// ---------------------------------------------------------------- kernels

Int16HeadPlan decode_plan(const int32_t* f) {
  Int16HeadPlan p;
  p.logit = FixedMultiplier{f[0], f[1]};
  p.output = FixedMultiplier{f[2], f[3]};
  p.mode = static_cast<Int16Mode>(f[4]);
  return p;
}

// The scores of q against count keys of width dk (stride kDk): wrong integers.
uint32_t scores_wrong(const Context& cx, const int16_t* q, const int16_t* k, size_t count, size_t dk) {
  const int64_t max = cx.kern.scores(q, k, sd::kDk, count, dk, g.s);
  int64_t want_max = INT64_MIN;
  uint32_t wrong = 0;
  for (size_t j = 0; j < count; ++j) {
    int64_t dot = 0;
    for (size_t c = 0; c < dk; ++c) dot += int64_t{q[c]} * k[j * sd::kDk + c];
    wrong += g.s[j] == dot ? 0 : 1;
    if (dot > want_max) want_max = dot;
  }
  return wrong + (max == want_max ? 0 : 1);
}

// scores: every key count, Dk = 17 and 16 (a tail and none), on the stored
// inputs and on the extremes (every product 2^30 or -2^30 + 2^15, so int32
// sums would overflow).
void check_scores(const Context& cx) {
  for (size_t c = 0; c < sd::kDk; ++c) g.q_ext[c] = -32768;
  for (size_t x = 0; x < sd::kM * sd::kDk; ++x) g.k_ext[x] = (x / sd::kDk) % 3 == 1 ? int16_t{32767} : int16_t{-32768};
  uint32_t wrong = 0;
  const size_t widths[] = {sd::kDk, sd::kDk - 1};
  for (size_t dk : widths) {
    for (size_t count = 1; count <= sd::kM; ++count) {
      wrong += scores_wrong(cx, cx.vec.q, cx.vec.k, count, dk);
      wrong += scores_wrong(cx, g.q_ext, g.k_ext, count, dk);
    }
  }
  cx.rec.add("i16_kernel_scores", "scores = q.k in int64, max (exact)", wrong, 0);
}

// Score rows whose logit differences reach every exp2 table index with a
// nonzero remainder under each multiplier: shift above 32, below 32, and 0
// (the saturation at 2^62), one key the keep mask drops and one far below
// the others (flushed to 0).
struct ExpCase {
  FixedMultiplier logit = {};
  int64_t unit = 0;  // score per 2^21 of logit (1/32 of a base-2 unit)
};
constexpr ExpCase kExpCases[] = {{{0x40003039, 39}, int64_t{1} << 30},
                                 {{0x5A827999, 25}, int64_t{1} << 16},
                                 {{0x7FFFFFFF, 0}, 1}};
constexpr size_t kDroppedKey = 5, kFarKey = 11;
int64_t exp_input(size_t j, int64_t unit) {
  if (j == kDroppedKey) return kMasked;
  if (j == kFarKey) return -(int64_t{1} << 45);
  const int64_t step = 600 - 33 * static_cast<int64_t>(j) + static_cast<int64_t>(j % 3) * 5;
  return step * unit + static_cast<int64_t>(j * 12345 % 999);
}

// The definition of exp_row on exp_input[0..n) into out (int32); returns the sum.
int64_t exp_row_reference(const ExpCase& ec, size_t n, int64_t* max, int32_t* out) {
  *max = INT64_MIN;
  for (size_t j = 0; j < n; ++j)
    if (exp_input(j, ec.unit) != kMasked && exp_input(j, ec.unit) > *max) *max = exp_input(j, ec.unit);
  int64_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    const int64_t s = exp_input(j, ec.unit);
    out[j] = s == kMasked ? 0 : exp2_q30(-apply_wide(ec.logit, *max - s));
    sum += out[j];
  }
  return sum;
}

// exp_row: every length, each multiplier.
void check_exp_row(const Context& cx) {
  uint32_t wrong = 0;
  for (const ExpCase& ec : kExpCases) {
    for (size_t n = 1; n <= kPrimLen; ++n) {
      int64_t max = 0;
      const int64_t want = exp_row_reference(ec, n, &max, g.c);
      for (size_t j = 0; j < n; ++j) g.s[j] = exp_input(j, ec.unit);
      const int64_t sum = cx.kern.exp_row(g.s, n, ec.logit, max, g.a);
      for (size_t j = 0; j < n; ++j) wrong += g.a[j] == g.c[j] ? 0 : 1;
      wrong += sum == want ? 0 : 1;
    }
  }
  cx.rec.add("i16_kernel_exp_row", "exp_row = exp2_q30(-wide(max-s)), sum (exact)", wrong, 0);
}

// p[j] = floor((e[j] 2^15 + floor(S/2)) / S), in 64-bit integers.
uint32_t probabilities_wrong(const Context& cx, const int32_t* e, size_t n, int64_t sum) {
  cx.kern.probabilities(e, n, sum, g.b);
  uint32_t wrong = 0;
  const uint64_t s = static_cast<uint64_t>(sum);
  for (size_t j = 0; j < n; ++j) {
    const uint64_t want = (static_cast<uint64_t>(e[j]) * kProbOne + s / 2) / s;
    wrong += static_cast<uint64_t>(g.b[j]) == want ? 0 : 1;
  }
  return wrong;
}

// probabilities: exp rows of every length, small sums and a single key holding all the mass.
void check_probabilities(const Context& cx) {
  uint32_t wrong = 0;
  for (size_t n = 1; n <= kPrimLen; ++n) {
    int64_t max = 0;
    const int64_t sum = exp_row_reference(kExpCases[0], n, &max, g.c);
    wrong += probabilities_wrong(cx, g.c, n, sum);
    int64_t small = 0;
    for (size_t j = 0; j < n; ++j) small += g.a[j] = static_cast<int32_t>(3 * j + 1);
    wrong += probabilities_wrong(cx, g.a, n, small);
  }
  for (size_t j = 0; j < kPrimLen; ++j) g.a[j] = j == 7 ? int32_t{1} << 30 : 0;
  wrong += probabilities_wrong(cx, g.a, kPrimLen, int64_t{1} << 30);
  wrong += g.b[7] == static_cast<int32_t>(kProbOne) ? 0 : 1;
  cx.rec.add("i16_kernel_probabilities", "p = floor((e 2^15 + S/2) / S) (exact)", wrong, 0);
}

// weighted_sum: the Q0.15 weights of a 9-key exp row, every key count, Dv =
// 6, 5, 1 on a strided V (holding both int16 extremes).
void check_weighted_sum(const Context& cx) {
  int64_t max = 0;
  const int64_t sum = exp_row_reference(kExpCases[0], sd::kM, &max, g.c);
  const uint64_t s = static_cast<uint64_t>(sum);
  for (size_t j = 0; j < sd::kM; ++j)
    g.c[j] = static_cast<int32_t>((static_cast<uint64_t>(g.c[j]) * kProbOne + s / 2) / s);
  uint32_t wrong = 0;
  const size_t widths[] = {sd::kDv, sd::kDv - 1, 1};
  for (size_t dv : widths) {
    for (size_t count = 1; count <= sd::kM; ++count) {
      cx.kern.weighted_sum(g.c, cx.vec.v, sd::kDv, count, dv, g.a);
      for (size_t c = 0; c < dv; ++c) {
        int32_t want = 0;
        for (size_t j = 0; j < count; ++j) want += g.c[j] * cx.vec.v[j * sd::kDv + c];
        wrong += g.a[c] == want ? 0 : 1;
      }
    }
  }
  cx.rec.add("i16_kernel_weighted_sum", "acc = sum_j p_j v_j (exact)", wrong, 0);
}

// requantize: sums of the weighted_sum range, both saturations, every length
// (step 3), each head's output multiplier.
void check_requantize(const Context& cx) {
  constexpr int32_t kMaxAcc = 32768 * static_cast<int32_t>(kProbOne + sd::kM / 2);
  constexpr int32_t kStep = kMaxAcc / static_cast<int32_t>(kPrimLen / 2);
  for (size_t j = 0; j < kPrimLen; ++j)
    g.a[j] = (static_cast<int32_t>(j) - static_cast<int32_t>(kPrimLen / 2)) * kStep + static_cast<int32_t>(j * 37 % 101);
  g.a[0] = -kMaxAcc;
  g.a[1] = kMaxAcc;
  g.a[2] = 0;
  g.a[3] = -1;
  uint32_t wrong = 0;
  for (size_t h = 0; h < sd::kHq; ++h) {
    const Int16HeadPlan& p = g_plans[h];
    for (size_t n = 1; n <= kPrimLen; n += 3) {
      cx.kern.requantize(g.a, n, p.output, g.y16);
      for (size_t c = 0; c < n; ++c) {
        const int64_t x = apply(p.output, g.a[c]);
        const int16_t want = static_cast<int16_t>(x < -32768 ? -32768 : (x > 32767 ? 32767 : x));
        wrong += g.y16[c] == want ? 0 : 1;
      }
    }
  }
  cx.rec.add("i16_kernel_requantize", "y = clamp(round(acc m 2^-s)) (exact)", wrong, 0);
}

// ---------------------------------------------------------------- forward_i16

bool run_forward(const Context& cx, const Dims& d, const ForwardIoI16& io, const Mask& mask) {
  const Int16Plan plan{g_plans, d.hq};
  const Workspace ws{g.workspace, sizeof g.workspace};
  std::memset(g.y, 0x55, sizeof g.y);  // stale values must not pass
  std::memset(g.weights, 0xAA, sizeof g.weights);
  if (cx.port) {
    Options o;
    o.port = *cx.port;
    return detail::forward_i16_native(d, io, plan, ws, mask, o) == Status::kOk;
  }
  detail::forward_i16_validated(cx.kern, d, io, plan, ws, mask);
  return true;
}

bool visible(const Context& cx, sd::CaseKind kind, size_t i, size_t j) {
  switch (kind) {
    case sd::CaseKind::kCausalBottomRight: return j <= i + sd::kM - sd::kN;
    case sd::CaseKind::kKeepBits: return (cx.vec.keep_bits[i * kRowBytes + j / 8] >> (j % 8)) & 1u;
    case sd::CaseKind::kWindowKvLen:
      return j + static_cast<size_t>(sd::kWindowLeft) >= i && j <= i + static_cast<size_t>(sd::kWindowRight) &&
             j < sd::kKvLen;
    case sd::CaseKind::kPlain: return true;
  }
  return true;
}

// Properties of the weights over every known-answer run.
struct Properties {
  uint32_t row_sum_worst = 0;      // max |sum_j p_j - 2^15| over visible rows
  uint32_t row_sum_over = 0;       // rows beyond their bound ceil(visible keys / 2)
  uint32_t masked_keys_wrong = 0;  // nonzero weights of masked keys
  uint32_t masked_rows_wrong = 0;  // elements of fully masked rows that are not Y = 0
};

void gather_properties(const Context& cx, const Dims& d, sd::CaseKind kind, Properties& pr) {
  for (size_t h = 0; h < d.hq; ++h) {
    for (size_t i = 0; i < d.n; ++i) {
      const uint16_t* w = g.weights + (h * d.n + i) * d.m;
      uint32_t keys = 0, sum = 0;
      for (size_t j = 0; j < d.m; ++j) {
        if (visible(cx, kind, i, j)) {
          ++keys;
          sum += w[j];
        } else {
          pr.masked_keys_wrong += w[j] == 0 ? 0 : 1;
        }
      }
      if (keys == 0) {
        const int16_t* y = g.y + (h * d.n + i) * d.dv;
        for (size_t c = 0; c < d.dv; ++c) pr.masked_rows_wrong += y[c] == 0 ? 0 : 1;
        continue;
      }
      const uint32_t dev = sum > kProbOne ? sum - kProbOne : kProbOne - sum;
      if (dev > pr.row_sum_worst) pr.row_sum_worst = dev;
      pr.row_sum_over += dev <= (keys + 1) / 2 ? 0 : 1;
    }
  }
}

void check_known_answers(const Context& cx, Properties& pr) {
  const SelftestI16Vectors& v = cx.vec;
  for (const sd::Case& c : sd::kCases) {
    Dims d = kDims;
    d.hq = c.hq;
    Mask mask;
    if (c.kind == sd::CaseKind::kCausalBottomRight) mask = Mask::causal_bottom_right();
    if (c.kind == sd::CaseKind::kKeepBits) mask = Mask::keep_bitmask(v.keep_bits);
    if (c.kind == sd::CaseKind::kWindowKvLen) {
      mask = Mask::sliding_window(sd::kWindowLeft, sd::kWindowRight, Align::kTopLeft);
      mask.kv_len = sd::kKvLen;
    }
    const ForwardIoI16 io{v.q, v.k, v.v, g.y, g.weights};
    uint32_t wrong = 0;
    if (c.y_offset + d.y_elems() > v.expected_y_count || c.w_offset + d.weight_elems() > v.expected_weights_count ||
        !run_forward(cx, d, io, mask)) {
      wrong = UINT32_MAX;
    } else {
      for (size_t x = 0; x < d.y_elems(); ++x) wrong += g.y[x] == v.expected_y[c.y_offset + x] ? 0 : 1;
      for (size_t x = 0; x < d.weight_elems(); ++x)
        wrong += g.weights[x] == v.expected_weights[c.w_offset + x] ? 0 : 1;
      gather_properties(cx, d, c.kind, pr);
    }
    cx.rec.add(c.name, c.title, wrong, 0);
  }
}

void check_properties(const Context& cx, Properties& pr) {
  // Every key padded away: every row of both heads is zero.
  const ForwardIoI16 io{cx.vec.q, cx.vec.k, cx.vec.v, g.y, g.weights};
  if (run_forward(cx, kDims, io, Mask::key_padding(0))) {
    for (size_t x = 0; x < kDims.weight_elems(); ++x) pr.masked_keys_wrong += g.weights[x] == 0 ? 0 : 1;
    for (size_t x = 0; x < kDims.y_elems(); ++x) pr.masked_rows_wrong += g.y[x] == 0 ? 0 : 1;
  } else {
    ++pr.masked_rows_wrong;
  }
  cx.rec.add("i16_masked_row", "fully masked rows: Y = 0", pr.masked_rows_wrong, 0);
  cx.rec.add("i16_masked_keys", "masked keys: weight exactly 0", pr.masked_keys_wrong, 0);
  // As int8: each p_j is within 1/2 of e_j 2^15 / S, so a row of k visible
  // keys sums to 2^15 within ceil(k / 2); the figure is the worst row.
  cx.rec.add_result("i16_row_sum", "weights sum to 2^15 within ceil(keys / 2)", pr.row_sum_worst,
                    (sd::kM + 1) / 2, pr.row_sum_over == 0);
}

// ---------------------------------------------------------------- printing

constexpr size_t kColMeasured = 49, kColBound = 62, kColStatus = 75;

void print_table(WriteFn write, const SelftestI16Report& r) {
  static constexpr const char* kTitles[] = {"property", "measured", "bound", "status"};
  static constexpr size_t kStarts[] = {1, kColMeasured, kColBound, kColStatus};
  detail::print_table_head(write, g.line, sizeof g.line, kTitles, kStarts);
  for (uint32_t i = 0; i < r.count; ++i) {
    const SelftestI8Check& c = r.checks[i];
    Line l(g.line, sizeof g.line);
    l.str("| ").str(c.property).pad(kColMeasured - 1).str("| ").uint(c.measured).pad(kColBound - 1).str("| ");
    l.uint(c.bound).pad(kColStatus - 1).str(c.passed ? "| PASS   |\n" : "| FAIL   |\n");
    write(g.line);
  }
}

Status run(const Context& cx, SelftestI16Report* report, WriteFn write, SelftestFormat format) {
  for (size_t h = 0; h < sd::kHq; ++h) g_plans[h] = decode_plan(cx.vec.plan + h * kPlanFields);
  check_integrity(cx);
  check_scores(cx);
  check_exp_row(cx);
  check_probabilities(cx);
  check_weighted_sum(cx);
  check_requantize(cx);
  Properties pr;
  check_known_answers(cx, pr);
  check_properties(cx, pr);

  detail::print_report(write, format, "selftest_int16", cx.kern, *report, g.line, sizeof g.line, print_table);
  return Status::kOk;
}

bool table_complete(const KernelsI16& k) {
  return k.simd_target && k.scores && k.exp_row && k.probabilities && k.weighted_sum && k.requantize;
}

// port: null for an explicit table (the known answers then run forward_i16's driver on it).
Status run_checked(const KernelsI16& kernels, const SelftestI16Vectors& vectors, const Port* port,
                   SelftestI16Report* report, WriteFn write, SelftestFormat format) {
  if (!table_complete(kernels)) return Status::kNullPointer;
  Recorder rec(report);
  const Context cx{kernels, vectors, port, rec};
  return run(cx, report, write, format);
}

}  // namespace

const SelftestI16Vectors& selftest_i16_vectors() {
  static constexpr SelftestI16Vectors kVectors{
      sd::kQ,          sd::kK,          sd::kV,           sd::kKeepMaskBits, sd::kPlan,
      sd::kExpectedY,  sd::kExpectedWeights,
      sizeof sd::kExpectedY / sizeof sd::kExpectedY[0], sizeof sd::kExpectedWeights / sizeof sd::kExpectedWeights[0],
      sd::kWideMultiplier, sd::kWideX, sd::kWideExpected, sizeof sd::kWideX / sizeof sd::kWideX[0],
      sd::kExp2U,      sd::kExp2Expected, sizeof sd::kExp2U / sizeof sd::kExp2U[0],
      sd::kCrc32,      detail::kExp2Table, sd::kExp2TableCrc32};
  return kVectors;
}

Status selftest_i16_with(const KernelsI16& kernels, const SelftestI16Vectors& vectors, SelftestI16Report* report,
                         WriteFn write, SelftestFormat format) {
  return report ? run_checked(kernels, vectors, nullptr, report, write, format) : Status::kNullPointer;
}

Status selftest_int16(SelftestI16Report* report, Port port, WriteFn write, SelftestFormat format) {
  if (!report) return Status::kNullPointer;
  const KernelsI16* k = kernels_i16(port);
  return k ? run_checked(*k, selftest_i16_vectors(), &port, report, write, format) : Status::kPortUnavailable;
}

}  // namespace tinyattn
