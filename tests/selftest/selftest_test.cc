// The self-test must pass on every port compiled into this build and must
// report FAIL, naming the check, when a kernel or a stored constant is broken.
// Corrupted kernel tables wrap the scalar port's functions and break one thing.
#include <cstring>

#include "support.h"
#include "tatest.h"
#include "selftest_capture.h"
#include "tinyattn/selftest_kernels.h"

using tinyattn::KernelsF32;
using tinyattn::Port;
using tinyattn::SelftestFormat;
using tinyattn::SelftestReport;
using tinyattn::Status;

namespace {

using namespace selftest_capture;  // NOLINT(google-build-using-namespace): the suite's helpers

SelftestReport g_report;  // large: keep it off the (board) stack

const KernelsF32& scalar() { return *tinyattn::kernels_f32(Port::kScalar); }

// ---- corrupted kernels -------------------------------------------------------

tinyattn::ExpCoefficients wrong_coefficients() {
  tinyattn::ExpCoefficients c = tinyattn::kExpCoefficients;
  uint32_t u;
  std::memcpy(&u, &c.c3, sizeof u);
  u ^= 1u << 13;  // c3 off by 2^-10 relative
  std::memcpy(&c.c3, &u, sizeof u);
  return c;
}
void exp_wrong_coeff(const float* x, float* out, size_t n) {
  const tinyattn::ExpCoefficients c = wrong_coefficients();
  for (size_t j = 0; j < n; ++j) out[j] = tinyattn::exp_poly(x[j], c);
}
float exp_shift_sum_wrong_coeff(float* x, size_t n, float shift) {
  const tinyattn::ExpCoefficients c = wrong_coefficients();
  float sum = 0.0f;
  for (size_t j = 0; j < n; ++j) sum += (x[j] = tinyattn::exp_poly(x[j] - shift, c));
  return sum;
}
void scores_dropped_scale(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float, float* s) {
  scalar().scores(q, k, ldk, count, dk, 1.0f, s);
}
float row_max_skips_last(const float* x, size_t n) { return scalar().row_max(x, n > 1 ? n - 1 : n); }
void weighted_sum_off(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  scalar().weighted_sum(p, v, ldv, count, dv, a * (1.0f + 0x1p-12f), y);
}
float exp_shift_sum_short_sum(float* x, size_t n, float shift) {
  const float sum = scalar().exp_shift_sum(x, n, shift);
  return n > 1 ? sum - x[n - 1] : sum;  // forgets the last lane in the reduction
}
void scale_skips_tail(float* x, size_t n, float a) { scalar().scale(x, n / 4 * 4, a); }
void axpy_skips_tail(float a, const float* x, float* y, size_t n) { scalar().axpy(a, x, y, n / 4 * 4); }

struct Corruption {
  const char* what;
  const char* expect_failing;  // the check that must name it
  KernelsF32 table;
};

// Without the block primitives, so the known-answer forwards run the
// corrupted row kernels too (with them, blocks of rows bypass scores and
// weighted_sum; the block primitives are corrupted on their own below).
Corruption corruption(const char* what, const char* expect) {
  Corruption c{what, expect, scalar()};
  c.table.scores_block = nullptr;
  c.table.weighted_sum_block = nullptr;
  return c;
}

void scores_block_dropped_scale(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count,
                                size_t dk, float, float* s, size_t lds) {
  scalar().scores_block(q, ldq, rows, k, ldk, count, dk, 1.0f, s, lds);
}
void weighted_sum_block_off(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count,
                            size_t dv, const float* a, float* y, size_t ldy) {
  float off[tinyattn::kBlockRows];
  for (size_t r = 0; r < rows; ++r) off[r] = a[r] * (1.0f + 0x1p-12f);
  scalar().weighted_sum_block(p, ldp, rows, v, ldv, count, dv, off, y, ldy);
}

// ---- runs --------------------------------------------------------------------

void expect_fail(const Corruption& c) {
  reset_capture();
  const Status s = tinyattn::selftest_kernels(c.table, &g_report, capture, SelftestFormat::kUnity);
  TA_CHECK_MSG(s == Status::kOk, "%s: status %s", c.what, tinyattn::to_string(s));
  TA_CHECK_MSG(!g_report.passed(), "%s: the self-test passed a corrupted kernel", c.what);
  TA_CHECK_MSG(check_failed(g_report, c.expect_failing), "%s: expected %s to fail; failing: %s", c.what,
               c.expect_failing, failing(g_report).c_str());
  // The transcript names the failing check and ends in FAIL.
  char needle[96];
  tatest::format(needle, sizeof needle, ":%s:FAIL", c.expect_failing);
  TA_CHECK_MSG(std::strstr(g_out, needle) != nullptr, "%s: transcript lacks '%s'", c.what, needle);
  TA_CHECK_MSG(g_out_len > 5 && std::strcmp(g_out + g_out_len - 5, "FAIL\n") == 0, "%s: transcript does not end in FAIL",
               c.what);
}

}  // namespace

TA_CASE("selftest: passes on every compiled port") {
  expect_pass_on_every_port(
      g_report, [](Port p) { return tinyattn::selftest(&g_report, p, capture, SelftestFormat::kBoth); },
      [](Port p) { return tinyattn::selftest_kernels(*tinyattn::kernels_f32(p), &g_report); }, 20,
      "| row sum normalization");
}

TA_CASE("selftest: reports every check kind with its figures") {
  TA_CHECK(tinyattn::selftest(&g_report) == Status::kOk);
  const char* names[] = {"exp_table",       "vectors_crc",          "exp_ulp",
                         "exp_special",     "kernel_scores",        "kernel_row_max",
                         "kernel_exp_shift_sum", "kernel_weighted_sum", "kernel_axpy",
                         "kernel_scale",    "kat_plain",            "kat_causal_top_left",
                         "kat_causal_bottom_right", "kat_window_top_left", "kat_window_bottom_right",
                         "kat_kv_len",      "kat_causal_cache",     "kat_keep_bytes",       "kat_keep_bits",
                         "kat_bias",        "kat_gqa",              "kat_softcap_bias",     "masked_row",
                         "row_sum",         "weights_nonnegative",  "convex_hull",
                         "norm_bound",      "kat_tiled"};
  for (const char* n : names) TA_CHECK_MSG(g_report.find(n) != nullptr, "missing check %s", n);
  const tinyattn::SelftestCheck* ulp = g_report.find("exp_ulp");
  TA_CHECK_MSG(ulp && ulp->bound == tinyattn::kExpMaxUlp && ulp->hi <= ulp->bound && ulp->hi > 0.0f, "exp_ulp figures");
  const tinyattn::SelftestCheck* rs = g_report.find("row_sum");
  TA_CHECK_MSG(rs && rs->lo > 0.9999f && rs->hi < 1.0001f, "row_sum figures");
  const tinyattn::SelftestCheck* nn = g_report.find("weights_nonnegative");
  TA_CHECK_MSG(nn && nn->lo >= 0.0f && nn->hi <= 1.0f, "weight figures");
  const tinyattn::SelftestCheck* mr = g_report.find("masked_row");
  TA_CHECK_MSG(mr && mr->passed && mr->hi == 0.0f, "masked rows: %g wrong", mr ? mr->hi : -1.0);
}

TA_CASE("selftest: fails on a wrong exp coefficient") {
  Corruption c = corruption("exp coefficient c3 bit flip", "exp_ulp");
  c.table.exp = exp_wrong_coeff;
  c.table.exp_shift_sum = exp_shift_sum_wrong_coeff;
  expect_fail(c);
}

TA_CASE("selftest: fails on a dropped scale in scores") {
  Corruption c = corruption("scores without scale", "kernel_scores");
  c.table.scores = scores_dropped_scale;
  expect_fail(c);
  TA_CHECK_MSG(check_failed(g_report, "kat_plain"), "the known answers must catch it too: %s",
               failing(g_report).c_str());
}

TA_CASE("selftest: the known answers catch corrupted block primitives") {
  TA_CHECK((scalar().scores_block != nullptr && scalar().weighted_sum_block != nullptr));
  Corruption c{"scores_block without scale", "kat_plain", scalar()};
  c.table.scores_block = scores_block_dropped_scale;
  expect_fail(c);
  Corruption d{"weighted_sum_block scaled by 1 + 2^-12", "kat_gqa", scalar()};
  d.table.weighted_sum_block = weighted_sum_block_off;
  expect_fail(d);
}

TA_CASE("selftest: fails on a row_max that ignores the last element") {
  Corruption c = corruption("row_max skips the last element", "kernel_row_max");
  c.table.row_max = row_max_skips_last;
  expect_fail(c);
}

TA_CASE("selftest: fails on a weighted_sum off by 1 + 2^-12") {
  Corruption c = corruption("weighted_sum scaled by 1 + 2^-12", "kernel_weighted_sum");
  c.table.weighted_sum = weighted_sum_off;
  expect_fail(c);
  TA_CHECK_MSG(check_failed(g_report, "kat_gqa"), "the known answers must catch it too: %s",
               failing(g_report).c_str());
}

TA_CASE("selftest: fails on an exp_shift_sum that drops a lane from the sum") {
  Corruption c = corruption("exp_shift_sum short sum", "kernel_exp_shift_sum");
  c.table.exp_shift_sum = exp_shift_sum_short_sum;
  expect_fail(c);
  TA_CHECK_MSG(check_failed(g_report, "row_sum"), "the row sums must show it: %s", failing(g_report).c_str());
}

TA_CASE("selftest: fails on scale and axpy kernels that skip their tails") {
  Corruption c = corruption("scale skips the tail", "kernel_scale");
  c.table.scale = scale_skips_tail;
  expect_fail(c);
  Corruption d = corruption("axpy skips the tail", "kernel_axpy");
  d.table.axpy = axpy_skips_tail;
  expect_fail(d);
}

namespace {
// RAM copies of the stored constants, to flip bits in.
float g_y_copy[512];
double g_exp_y_copy[64];
}  // namespace

TA_CASE("selftest: fails on a bit flip in a known-answer vector") {
  tinyattn::SelftestVectors v = tinyattn::selftest_vectors();
  TA_CHECK(v.expected_y_count <= sizeof g_y_copy / sizeof g_y_copy[0]);
  if (v.expected_y_count > sizeof g_y_copy / sizeof g_y_copy[0]) return;
  std::memcpy(g_y_copy, v.expected_y, v.expected_y_count * sizeof(float));
  uint32_t u;
  std::memcpy(&u, &g_y_copy[5], sizeof u);
  u ^= 1u;  // the least significant mantissa bit: invisible to the tolerance, not to the CRC
  std::memcpy(&g_y_copy[5], &u, sizeof u);
  v.expected_y = g_y_copy;
  reset_capture();
  const Status s = tinyattn::selftest_with(scalar(), v, tinyattn::kExpCoefficients, &g_report, capture);
  TA_CHECK(s == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "vectors_crc"), "failing: %s", failing(g_report).c_str());
  TA_CHECK(std::strstr(g_out, ":vectors_crc:FAIL") != nullptr);

  // A flip in the exp reference values is caught the same way.
  v = tinyattn::selftest_vectors();
  std::memcpy(g_exp_y_copy, v.exp_y, v.exp_count * sizeof(double));
  g_exp_y_copy[3] = -g_exp_y_copy[3];
  v.exp_y = g_exp_y_copy;
  TA_CHECK(tinyattn::selftest_with(scalar(), v, tinyattn::kExpCoefficients, &g_report) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "vectors_crc") && check_failed(g_report, "exp_ulp"), "failing: %s",
               failing(g_report).c_str());
}

TA_CASE("selftest: fails on a bit flip in the exp coefficient table") {
  tinyattn::ExpCoefficients c = tinyattn::kExpCoefficients;
  uint32_t u;
  std::memcpy(&u, &c.minus_ln2_lo, sizeof u);
  u ^= 1u << 2;
  std::memcpy(&c.minus_ln2_lo, &u, sizeof u);
  reset_capture();
  TA_CHECK(tinyattn::selftest_with(scalar(), tinyattn::selftest_vectors(), c, &g_report, capture) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "exp_table"), "failing: %s", failing(g_report).c_str());
  TA_CHECK(std::strstr(g_out, ":exp_table:FAIL") != nullptr);
  const tinyattn::SelftestCheck* t = g_report.find("exp_table");
  TA_CHECK_MSG(t && t->measured == 1.0f, "one wrong word");
}

TA_CASE("selftest: argument errors") {
  TA_CHECK(tinyattn::selftest(nullptr) == Status::kNullPointer);
  KernelsF32 incomplete = scalar();
  incomplete.exp = nullptr;
  TA_CHECK(tinyattn::selftest_kernels(incomplete, &g_report) == Status::kNullPointer);
  for (Port p : tinyattn::kAllPorts)
    if (!tinyattn::kernels_f32(p)) TA_CHECK(tinyattn::selftest(&g_report, p) == Status::kPortUnavailable);
}

TA_CASE("selftest: prints nothing without a sink and the table on request") {
  reset_capture();
  TA_CHECK(tinyattn::selftest(&g_report, Port::kDefault, capture, SelftestFormat::kNone) == Status::kOk);
  TA_CHECK(g_out_len == 0);
  TA_CHECK(tinyattn::selftest(&g_report, Port::kDefault, nullptr, SelftestFormat::kBoth) == Status::kOk);
  reset_capture();
  TA_CHECK(tinyattn::selftest(&g_report, Port::kDefault, capture, SelftestFormat::kTable) == Status::kOk);
  TA_CHECK(std::strstr(g_out, "| property") != nullptr);
  TA_CHECK(std::strstr(g_out, "| 1.000000") != nullptr);
  TA_CHECK(std::strstr(g_out, "Tests") == nullptr);
}
