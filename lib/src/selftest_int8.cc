// The integer-only power-on self-test of the int8 path (selftest_int8() in
// tinyattn/selftest.h).
//
// Integer arithmetic only, in its own translation unit: an FPU-less image
// that calls selftest_int8() and forward_i8() links no floating-point code
// (stage 52 checks the int8 firmware's symbols). The plan is stored (plan_int8
// uses floating point), and the expected values come from the NumPy model of
// the int8 spec (tools/gen/selftest_i8_vectors.py). Memory: one static Scratch
// sized at compile time, small frames, no heap.
#include <cstring>

#include "detail.h"
#include "selftest_common.h"
#include "selftest_i8_vectors.h"
#include "tinyattn/selftest_kernels.h"

namespace tinyattn {

namespace sd = selftest_i8_data;

namespace {

using detail::Crc32;
using detail::Line;

constexpr Dims kDims{sd::kN, sd::kM, sd::kDk, sd::kDv, sd::kHq, sd::kHkv};
constexpr size_t kRowBytes = keep_bits_row_bytes(sd::kM);
constexpr size_t kPlanFields = 11;
constexpr size_t kPrimLen = 40;  // longer than two 16-lane vectors, not a multiple of 4
constexpr uint32_t kExp2TableSize = 32;

struct Scratch {
  int32_t a[kPrimLen];
  int32_t b[kPrimLen];
  int32_t c[kPrimLen];
  int8_t y8[kPrimLen];
  int8_t y[kDims.y_elems()];
  uint16_t weights[kDims.weight_elems()];
  char line[112];
  alignas(kWorkspaceAlign) unsigned char workspace[forward_i8_workspace_bytes(kDims)];
};
// Plain arrays only, so no constructor runs at startup: an image that links
// this file without calling it (through the C API's object) drops all of it.
Scratch g;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): static scratch, not re-entrant
// The decoded plan (constant-initialized: Int8HeadPlan's members all have initializers).
Int8HeadPlan g_plans[sd::kHq];  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

class Recorder {
 public:
  explicit Recorder(SelftestI8Report* r) : r_(r) {
    r_->count = 0;
    r_->failures = 0;
  }
  void add(const char* name, const char* property, uint32_t measured, uint32_t bound) {
    add_result(name, property, measured, bound, measured <= bound);
  }
  void add_result(const char* name, const char* property, uint32_t measured, uint32_t bound, bool passed) {
    if (r_->count >= kSelftestI8MaxChecks) return;
    r_->checks[r_->count++] = SelftestI8Check{name, property, measured, bound, passed};
    if (!passed) ++r_->failures;
  }

 private:
  SelftestI8Report* r_;
};

struct Context {
  const KernelsI8& kern;
  const SelftestI8Vectors& vec;
  const Port* port;  // non-null: run the known answers through the public forward_i8()
  Recorder& rec;
};

// ---------------------------------------------------------------- integrity

void check_integrity(const Context& cx) {
  const SelftestI8Vectors& v = cx.vec;
  Crc32 crc;
  detail::crc_inputs(crc, v, kDims, sd::kN * kRowBytes, sd::kN * sd::kM);
  for (size_t i = 0; i < sd::kHq * kPlanFields; ++i) crc.u32(static_cast<uint32_t>(v.plan[i]));
  crc.bytes(v.expected_y, v.expected_y_count);
  for (size_t i = 0; i < v.expected_weights_count; ++i) {
    const uint8_t le[2] = {static_cast<uint8_t>(v.expected_weights[i]), static_cast<uint8_t>(v.expected_weights[i] >> 8)};
    crc.bytes(le, 2);
  }
  for (size_t i = 0; i < v.exp2_count; ++i) {
    const uint64_t u = static_cast<uint64_t>(v.exp2_u[i]);
    crc.u32(static_cast<uint32_t>(u));
    crc.u32(static_cast<uint32_t>(u >> 32));
  }
  for (size_t i = 0; i < v.exp2_count; ++i) crc.u32(static_cast<uint32_t>(v.exp2_expected[i]));
  const uint32_t bad = crc.value() == v.crc32 ? 0 : 1;
  cx.rec.add("i8_vectors_crc", "stored int8 vectors intact (CRC-32)", bad, 0);

  Crc32 table;
  for (uint32_t i = 0; i < kExp2TableSize; ++i) {
    const uint64_t u = static_cast<uint64_t>(v.exp2_table[i]);
    table.u32(static_cast<uint32_t>(u));
    table.u32(static_cast<uint32_t>(u >> 32));
  }
  const uint32_t bad_table = table.value() == v.exp2_table_crc32 ? 0 : 1;
  cx.rec.add("i8_exp2_table", "exp2_q30 table intact (CRC-32)", bad_table, 0);

  uint32_t wrong = 0;
  for (size_t i = 0; i < v.exp2_count; ++i) wrong += exp2_q30(v.exp2_u[i]) == v.exp2_expected[i] ? 0 : 1;
  cx.rec.add("i8_exp2_q30", "exp2_q30 known answers (21 points)", wrong, 0);
}

// ---------------------------------------------------------------- kernels

Int8HeadPlan decode_plan(const int32_t* f) {
  Int8HeadPlan p;
  p.logit = FixedMultiplier{f[0], f[1]};
  p.output = FixedMultiplier{f[2], f[3]};
  p.bias = FixedMultiplier{f[4], f[5]};
  p.q_zero = f[6];
  p.k_zero = f[7];
  p.v_zero = f[8];
  p.y_zero = f[9];
  p.bias_zero = f[10];
  return p;
}

// scores: every key count, Dk = 17 and 16 (a tail and none), zero points of head 0.
void check_scores(const Context& cx) {
  const Int8HeadPlan& p = g_plans[0];
  uint32_t wrong = 0;
  const size_t widths[] = {sd::kDk, sd::kDk - 1};
  for (size_t dk : widths) {
    for (size_t count = 1; count <= sd::kM; ++count) {
      const int32_t max = cx.kern.scores(cx.vec.q, cx.vec.k, sd::kDk, count, dk, p.q_zero, p.k_zero, g.a);
      int32_t want_max = INT32_MIN;
      for (size_t j = 0; j < count; ++j) {
        int32_t dot = 0;
        for (size_t c = 0; c < dk; ++c)
          dot += (cx.vec.q[c] - p.q_zero) * (cx.vec.k[j * sd::kDk + c] - p.k_zero);
        wrong += g.a[j] == dot ? 0 : 1;
        if (dot > want_max) want_max = dot;
      }
      wrong += max == want_max ? 0 : 1;
    }
  }
  cx.rec.add("i8_kernel_scores", "scores = (q - zq).(k - zk), max (exact)", wrong, 0);
}

// Scores whose logits reach every exp2 table index with a nonzero remainder,
// and one key the keep mask drops.
constexpr FixedMultiplier kExpLogit{0x40003039, 9};  // ~2^21 per unit of score
constexpr size_t kDroppedKey = 5;
int32_t exp_input(size_t j) {
  return j == kDroppedKey ? INT32_MIN : 600 - 33 * static_cast<int32_t>(j) + static_cast<int32_t>(j % 3) * 5;
}

// The definition of exp_row on exp_input[0..n) into out; returns the sum.
int64_t exp_row_reference(size_t n, int32_t* out) {
  int64_t max = INT64_MIN;
  for (size_t j = 0; j < n; ++j)
    if (exp_input(j) != INT32_MIN && apply(kExpLogit, exp_input(j)) > max) max = apply(kExpLogit, exp_input(j));
  int64_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    out[j] = exp_input(j) == INT32_MIN ? 0 : exp2_q30(apply(kExpLogit, exp_input(j)) - max);
    sum += out[j];
  }
  return sum;
}

// exp_row: every length, in place (odd lengths) and not (even ones).
void check_exp_row(const Context& cx) {
  uint32_t wrong = 0;
  for (size_t n = 1; n <= kPrimLen; ++n) {
    const int64_t want = exp_row_reference(n, g.c);
    int64_t max = INT64_MIN;
    for (size_t j = 0; j < n; ++j) {
      g.a[j] = exp_input(j);
      if (g.a[j] != INT32_MIN && apply(kExpLogit, g.a[j]) > max) max = apply(kExpLogit, g.a[j]);
    }
    int32_t* out = n % 2 ? g.a : g.b;
    const int64_t sum = cx.kern.exp_row(g.a, n, kExpLogit, max, out);
    for (size_t j = 0; j < n; ++j) wrong += out[j] == g.c[j] ? 0 : 1;
    wrong += sum == want ? 0 : 1;
  }
  cx.rec.add("i8_kernel_exp_row", "exp_row = exp2_q30(logit - max), sum (exact)", wrong, 0);
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

// probabilities: exp rows of every length (the reciprocal path), small sums
// (the division path) and a single key holding all the mass.
void check_probabilities(const Context& cx) {
  uint32_t wrong = 0;
  for (size_t n = 1; n <= kPrimLen; ++n) {
    const int64_t sum = exp_row_reference(n, g.c);
    wrong += probabilities_wrong(cx, g.c, n, sum);
    int64_t small = 0;
    for (size_t j = 0; j < n; ++j) small += g.a[j] = static_cast<int32_t>(3 * j + 1);
    wrong += probabilities_wrong(cx, g.a, n, small);
  }
  for (size_t j = 0; j < kPrimLen; ++j) g.a[j] = j == 7 ? int32_t{1} << 30 : 0;
  wrong += probabilities_wrong(cx, g.a, kPrimLen, int64_t{1} << 30);
  wrong += g.b[7] == static_cast<int32_t>(kProbOne) ? 0 : 1;
  cx.rec.add("i8_kernel_probabilities", "p = floor((e 2^15 + S/2) / S) (exact)", wrong, 0);
}

// weighted_sum: the Q0.15 weights of a 9-key exp row, every key count, Dv = 6,
// 5, 1 on a strided V, V's zero point.
void check_weighted_sum(const Context& cx) {
  const int32_t vz = g_plans[0].v_zero;
  const int64_t sum = exp_row_reference(sd::kM, g.c);
  const uint64_t s = static_cast<uint64_t>(sum);
  for (size_t j = 0; j < sd::kM; ++j)
    g.c[j] = static_cast<int32_t>((static_cast<uint64_t>(g.c[j]) * kProbOne + s / 2) / s);
  uint32_t wrong = 0;
  const size_t widths[] = {sd::kDv, sd::kDv - 1, 1};
  for (size_t dv : widths) {
    for (size_t count = 1; count <= sd::kM; ++count) {
      cx.kern.weighted_sum(g.c, cx.vec.v, sd::kDv, count, dv, vz, g.a);
      for (size_t c = 0; c < dv; ++c) {
        int32_t want = 0;
        for (size_t j = 0; j < count; ++j) want += g.c[j] * (cx.vec.v[j * sd::kDv + c] - vz);
        wrong += g.a[c] == want ? 0 : 1;
      }
    }
  }
  cx.rec.add("i8_kernel_weighted_sum", "acc = sum_j p_j (v_j - zv) (exact)", wrong, 0);
}

// requantize: sums of the weighted_sum range, both saturations, every length,
// each head's output multiplier and zero point.
void check_requantize(const Context& cx) {
  constexpr int32_t kMaxAcc = 255 * static_cast<int32_t>(kProbOne + sd::kM / 2);
  for (size_t j = 0; j < kPrimLen; ++j) {
    const int32_t step = kMaxAcc / static_cast<int32_t>(kPrimLen / 2);
    g.a[j] = (static_cast<int32_t>(j) - static_cast<int32_t>(kPrimLen / 2)) * step + static_cast<int32_t>(j * 37 % 101);
  }
  g.a[0] = -kMaxAcc;
  g.a[1] = kMaxAcc;
  g.a[2] = 0;
  g.a[3] = -1;
  uint32_t wrong = 0;
  for (size_t h = 0; h < sd::kHq; ++h) {
    const Int8HeadPlan& p = g_plans[h];
    for (size_t n = 1; n <= kPrimLen; n += 3) {
      cx.kern.requantize(g.a, n, p.output, p.y_zero, g.y8);
      for (size_t c = 0; c < n; ++c) {
        const int64_t x = p.y_zero + apply(p.output, g.a[c]);
        const int8_t want = static_cast<int8_t>(x < -128 ? -128 : (x > 127 ? 127 : x));
        wrong += g.y8[c] == want ? 0 : 1;
      }
    }
  }
  cx.rec.add("i8_kernel_requantize", "y = clamp(zy + round(acc m 2^-s)) (exact)", wrong, 0);
}

// ---------------------------------------------------------------- forward_i8

bool run_forward(const Context& cx, const Dims& d, const ForwardIoI8& io, const Mask& mask) {
  const Int8Plan plan{g_plans, d.hq};
  const Workspace ws{g.workspace, sizeof g.workspace};
  std::memset(g.y, 0x55, sizeof g.y);  // stale bytes must not pass
  std::memset(g.weights, 0xAA, sizeof g.weights);
  if (cx.port) {
    Options o;
    o.port = *cx.port;
    return detail::forward_i8_native(d, io, plan, ws, mask, o) == Status::kOk;
  }
  detail::forward_i8_validated(cx.kern, d, io, plan, ws, mask);
  return true;
}

bool visible(const Context& cx, sd::CaseKind kind, size_t i, size_t j) {
  switch (kind) {
    case sd::CaseKind::kCausalBottomRight: return j <= i + sd::kM - sd::kN;
    case sd::CaseKind::kKeepBits: return (cx.vec.keep_bits[i * kRowBytes + j / 8] >> (j % 8)) & 1u;
    case sd::CaseKind::kPlain:
    case sd::CaseKind::kBias: return true;
  }
  return true;
}

// Properties of the weights over every known-answer run.
struct Properties {
  uint32_t row_sum_worst = 0;     // max |sum_j p_j - 2^15| over visible rows
  uint32_t row_sum_over = 0;      // rows beyond their bound ceil(visible keys / 2)
  uint32_t masked_keys_wrong = 0;  // nonzero weights of masked keys
  uint32_t masked_rows_wrong = 0;  // elements of fully masked rows that are not Y = zy, p = 0
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
        const int8_t* y = g.y + (h * d.n + i) * d.dv;
        for (size_t c = 0; c < d.dv; ++c) pr.masked_rows_wrong += y[c] == g_plans[h].y_zero ? 0 : 1;
        continue;
      }
      const uint32_t dev = sum > kProbOne ? sum - kProbOne : kProbOne - sum;
      if (dev > pr.row_sum_worst) pr.row_sum_worst = dev;
      pr.row_sum_over += dev <= (keys + 1) / 2 ? 0 : 1;
    }
  }
}

void check_known_answers(const Context& cx, Properties& pr) {
  const SelftestI8Vectors& v = cx.vec;
  for (const sd::Case& c : sd::kCases) {
    Dims d = kDims;
    d.hq = c.hq;
    Mask mask;
    if (c.kind == sd::CaseKind::kCausalBottomRight) mask = Mask::causal_bottom_right();
    if (c.kind == sd::CaseKind::kKeepBits) mask = Mask::keep_bitmask(v.keep_bits);
    const ForwardIoI8 io{v.q, v.k, v.v, g.y, g.weights, c.kind == sd::CaseKind::kBias ? v.bias : nullptr};
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
  // Every key padded away: every row of both heads is the output zero point.
  const ForwardIoI8 io{cx.vec.q, cx.vec.k, cx.vec.v, g.y, g.weights, nullptr};
  if (run_forward(cx, kDims, io, Mask::key_padding(0))) {
    for (size_t x = 0; x < kDims.weight_elems(); ++x) pr.masked_keys_wrong += g.weights[x] == 0 ? 0 : 1;
    for (size_t x = 0; x < kDims.y_elems(); ++x)
      pr.masked_rows_wrong += g.y[x] == g_plans[x / (kDims.n * kDims.dv)].y_zero ? 0 : 1;
  } else {
    ++pr.masked_rows_wrong;
  }
  cx.rec.add("i8_masked_row", "fully masked rows: Y = output zero point", pr.masked_rows_wrong, 0);
  cx.rec.add("i8_masked_keys", "masked keys: weight exactly 0", pr.masked_keys_wrong, 0);
  // Each p_j is within 1/2 of e_j 2^15 / S (rounded half up), so a row of k
  // visible keys sums to 2^15 within ceil(k / 2); the figure is the worst row.
  cx.rec.add_result("i8_row_sum", "weights sum to 2^15 within ceil(keys / 2)", pr.row_sum_worst,
                    (sd::kM + 1) / 2, pr.row_sum_over == 0);
}

// ---------------------------------------------------------------- printing

constexpr size_t kColMeasured = 49, kColBound = 62, kColStatus = 75;

void print_table(WriteFn write, const SelftestI8Report& r) {
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

Status run(const Context& cx, SelftestI8Report* report, WriteFn write, SelftestFormat format) {
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

  detail::print_report(write, format, "selftest_int8", cx.kern, *report, g.line, sizeof g.line, print_table);
  return Status::kOk;
}

bool table_complete(const KernelsI8& k) {
  return k.simd_target && k.scores && k.exp_row && k.probabilities && k.weighted_sum && k.requantize;
}

// port: null for an explicit table (the known answers then run forward_i8's driver on it).
Status run_checked(const KernelsI8& kernels, const SelftestI8Vectors& vectors, const Port* port,
                   SelftestI8Report* report, WriteFn write, SelftestFormat format) {
  if (!table_complete(kernels)) return Status::kNullPointer;
  Recorder rec(report);
  const Context cx{kernels, vectors, port, rec};
  return run(cx, report, write, format);
}

}  // namespace

const SelftestI8Vectors& selftest_i8_vectors() {
  static constexpr SelftestI8Vectors kVectors{
      sd::kQ,           sd::kK,  sd::kV, sd::kKeepMaskBits, sd::kBiasValues, sd::kPlan,
      sd::kExpectedY,   sd::kExpectedWeights,
      sizeof sd::kExpectedY, sizeof sd::kExpectedWeights / sizeof sd::kExpectedWeights[0],
      sd::kExp2U,       sd::kExp2Expected, sizeof sd::kExp2U / sizeof sd::kExp2U[0],
      sd::kCrc32,       detail::kExp2Table, sd::kExp2TableCrc32};
  return kVectors;
}

Status selftest_i8_with(const KernelsI8& kernels, const SelftestI8Vectors& vectors, SelftestI8Report* report,
                        WriteFn write, SelftestFormat format) {
  return report ? run_checked(kernels, vectors, nullptr, report, write, format) : Status::kNullPointer;
}

Status selftest_int8(SelftestI8Report* report, Port port, WriteFn write, SelftestFormat format) {
  if (!report) return Status::kNullPointer;
  const KernelsI8* k = kernels_i8(port);
  return k ? run_checked(*k, selftest_i8_vectors(), &port, report, write, format) : Status::kPortUnavailable;
}

}  // namespace tinyattn
