// The int8 self-test must pass on every port compiled into this build and must
// report FAIL, naming the check, when an int8 kernel or a stored constant is
// broken. Corrupted kernel tables wrap the scalar port's int8 functions and
// break one thing.
#include <cstring>

#include "support.h"
#include "tatest.h"
#include "selftest_capture.h"
#include "tinyattn/selftest_kernels.h"

using tinyattn::KernelsI8;
using tinyattn::Port;
using tinyattn::SelftestFormat;
using tinyattn::SelftestI8Report;
using tinyattn::Status;

namespace {

using namespace selftest_capture;  // NOLINT(google-build-using-namespace): the suite's helpers

SelftestI8Report g_report;  // keep it off the (board) stack

const KernelsI8& scalar() { return *tinyattn::kernels_i8(Port::kScalar); }

// Number of failing known-answer checks.
uint32_t kat_failures(const SelftestI8Report& r) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < r.count; ++i)
    if (!r.checks[i].passed && std::strncmp(r.checks[i].name, "i8_kat_", 7) == 0) ++n;
  return n;
}

// ---- corrupted int8 kernels ----------------------------------------------------

// One output value off by one (index 2, when there is one and it is not saturated).
void requantize_off_by_one(const int32_t* acc, size_t n, tinyattn::FixedMultiplier output, int32_t y_zero,
                           int8_t* y) {
  scalar().requantize(acc, n, output, y_zero, y);
  if (n > 2 && y[2] < 127) y[2] = static_cast<int8_t>(y[2] + 1);
}
// Not the key zero point: that adds the same amount to every score of a row,
// which softmax cannot see (the known answers would rightly pass).
int32_t scores_without_q_zero(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t,
                              int32_t k_zero, int32_t* s) {
  return scalar().scores(q, k, ldk, count, dk, 0, k_zero, s);
}
int64_t exp_row_drops_last(const int32_t* s, size_t n, tinyattn::FixedMultiplier logit, int64_t max_logit,
                           int32_t* e) {
  if (n == 1) return scalar().exp_row(s, n, logit, max_logit, e);
  const int64_t sum = scalar().exp_row(s, n - 1, logit, max_logit, e);
  e[n - 1] = 0;
  return sum;
}
void probabilities_first_plus_one(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  scalar().probabilities(e, n, sum, p);
  if (n > 1) ++p[0];
}
void weighted_sum_skips_tail(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                             int32_t* acc) {
  scalar().weighted_sum(p, v, ldv, count, dv, v_zero, acc);
  if (dv > 4) acc[dv - 1] = 0;
}

// One KernelsI8 entry replaced by a broken one, and the check that must name it.
struct Corruption {
  const char* what;
  const char* expect_failing;
  void (*apply)(KernelsI8& table);
};

const Corruption kCorruptions[] = {
    {"requantize off by one on one value", "i8_kernel_requantize",
     [](KernelsI8& t) { t.requantize = requantize_off_by_one; }},
    {"scores ignore the query zero point", "i8_kernel_scores", [](KernelsI8& t) { t.scores = scores_without_q_zero; }},
    {"exp_row drops the last key", "i8_kernel_exp_row", [](KernelsI8& t) { t.exp_row = exp_row_drops_last; }},
    {"probabilities: first weight + 1", "i8_kernel_probabilities",
     [](KernelsI8& t) { t.probabilities = probabilities_first_plus_one; }},
    {"weighted_sum drops the last column", "i8_kernel_weighted_sum",
     [](KernelsI8& t) { t.weighted_sum = weighted_sum_skips_tail; }},
};

void expect_fail(const Corruption& c) {
  KernelsI8 table = scalar();
  c.apply(table);
  reset_capture();
  const Status s = tinyattn::selftest_i8_with(table, tinyattn::selftest_i8_vectors(), &g_report, capture);
  TA_CHECK_MSG(s == Status::kOk, "%s: status %s", c.what, tinyattn::to_string(s));
  TA_CHECK_MSG(!g_report.passed(), "%s: the int8 self-test passed a corrupted kernel", c.what);
  TA_CHECK_MSG(check_failed(g_report, c.expect_failing), "%s: expected %s to fail; failing: %s", c.what,
               c.expect_failing, failing(g_report).c_str());
  TA_CHECK_MSG(kat_failures(g_report) >= 1, "%s: no known answer failed; failing: %s", c.what,
               failing(g_report).c_str());
  char needle[96];
  tatest::format(needle, sizeof needle, ":%s:FAIL", c.expect_failing);
  TA_CHECK_MSG(std::strstr(g_out, needle) != nullptr, "%s: transcript lacks '%s'", c.what, needle);
  TA_CHECK_MSG(g_out_len > 5 && std::strcmp(g_out + g_out_len - 5, "FAIL\n") == 0,
               "%s: transcript does not end in FAIL", c.what);
}

// RAM copies of the stored constants, to flip bits in.
int8_t g_y_copy[512];
int8_t g_q_copy[512];
int64_t g_table_copy[32];

}  // namespace

TA_CASE("selftest_int8: passes on every compiled port") {
  expect_pass_on_every_port(
      g_report, [](Port p) { return tinyattn::selftest_int8(&g_report, p, capture, SelftestFormat::kBoth); },
      [](Port p) {
        return tinyattn::selftest_i8_with(*tinyattn::kernels_i8(p), tinyattn::selftest_i8_vectors(), &g_report);
      },
      16, "| weights sum to 2^15");
  // The transcript starts with the header line naming the int8 self-test.
  reset_capture();
  TA_CHECK(tinyattn::selftest_int8(&g_report, Port::kDefault, capture) == Status::kOk);
  TA_CHECK(std::strstr(g_out, "tinyattn selftest_int8: port ") == g_out);
}

TA_CASE("selftest_int8: reports every check with integer figures") {
  TA_CHECK(tinyattn::selftest_int8(&g_report) == Status::kOk);
  // Every check, in this order.
  const char* expected =
      "i8_vectors_crc i8_exp2_table i8_exp2_q30 i8_kernel_scores i8_kernel_exp_row i8_kernel_probabilities "
      "i8_kernel_weighted_sum i8_kernel_requantize i8_kat_plain i8_kat_causal i8_kat_keep_bits i8_kat_bias "
      "i8_kat_gqa i8_masked_row i8_masked_keys i8_row_sum";
  uint32_t i = 0;
  for (; *expected; ++i) {
    const char* end = std::strchr(expected, ' ');
    const size_t len = end ? static_cast<size_t>(end - expected) : std::strlen(expected);
    const char* got = i < g_report.count ? g_report.checks[i].name : "";
    TA_CHECK_MSG(std::strlen(got) == len && std::strncmp(got, expected, len) == 0, "check %u is %s", static_cast<unsigned>(i), got);
    expected += end ? len + 1 : len;
  }
  TA_CHECK(g_report.count == i);
  const tinyattn::SelftestI8Check* rs = g_report.find("i8_row_sum");
  TA_CHECK_MSG(rs && rs->passed && rs->measured <= rs->bound && rs->bound == 5, "row_sum figures");
  const tinyattn::SelftestI8Check* k = g_report.find("i8_kat_gqa");
  TA_CHECK_MSG(k && k->passed && k->measured == 0 && k->bound == 0, "kat figures");
}

TA_CASE("selftest_int8: a corrupted kernel fails its check and the known answers") {
  for (const Corruption& c : kCorruptions) expect_fail(c);
}

TA_CASE("selftest_int8: fails on a bit flip in the stored vectors") {
  tinyattn::SelftestI8Vectors v = tinyattn::selftest_i8_vectors();
  TA_CHECK(v.expected_y_count <= sizeof g_y_copy);
  if (v.expected_y_count > sizeof g_y_copy) return;
  std::memcpy(g_y_copy, v.expected_y, v.expected_y_count);
  g_y_copy[7] = static_cast<int8_t>(g_y_copy[7] ^ 1);
  v.expected_y = g_y_copy;
  reset_capture();
  TA_CHECK(tinyattn::selftest_i8_with(scalar(), v, &g_report, capture) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "i8_vectors_crc") && check_failed(g_report, "i8_kat_plain"), "failing: %s",
               failing(g_report).c_str());
  TA_CHECK(std::strstr(g_out, ":i8_vectors_crc:FAIL") != nullptr);

  // An input bit: the CRC names it.
  v = tinyattn::selftest_i8_vectors();
  std::memcpy(g_q_copy, v.q, 2 * 4 * 17);
  g_q_copy[20] = static_cast<int8_t>(g_q_copy[20] ^ 0x10);
  v.q = g_q_copy;
  TA_CHECK(tinyattn::selftest_i8_with(scalar(), v, &g_report) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "i8_vectors_crc"), "failing: %s", failing(g_report).c_str());
}

TA_CASE("selftest_int8: fails on a bit flip in the exp2 table") {
  tinyattn::SelftestI8Vectors v = tinyattn::selftest_i8_vectors();
  std::memcpy(g_table_copy, v.exp2_table, sizeof g_table_copy);
  g_table_copy[17] ^= int64_t{1} << 3;
  v.exp2_table = g_table_copy;
  reset_capture();
  TA_CHECK(tinyattn::selftest_i8_with(scalar(), v, &g_report, capture) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "i8_exp2_table"), "failing: %s", failing(g_report).c_str());
  TA_CHECK(g_report.failures == 1);
  TA_CHECK(std::strstr(g_out, ":i8_exp2_table:FAIL: measured 1 > bound 0") != nullptr);
}

TA_CASE("selftest_int8: argument errors and formats") {
  TA_CHECK(tinyattn::selftest_int8(nullptr) == Status::kNullPointer);
  KernelsI8 incomplete = scalar();
  incomplete.requantize = nullptr;
  TA_CHECK(tinyattn::selftest_i8_with(incomplete, tinyattn::selftest_i8_vectors(), &g_report) ==
           Status::kNullPointer);
  for (Port p : tinyattn::kAllPorts)
    if (!tinyattn::kernels_i8(p)) TA_CHECK(tinyattn::selftest_int8(&g_report, p) == Status::kPortUnavailable);
  // What each format prints (nothing without a sink).
  struct Format {
    SelftestFormat format;
    bool sink;
    const char* present;  // nullptr: nothing printed
    const char* absent;
  };
  const Format formats[] = {{SelftestFormat::kNone, true, nullptr, nullptr},
                            {SelftestFormat::kBoth, false, nullptr, nullptr},
                            {SelftestFormat::kUnity, true, ":i8_row_sum:PASS\n", "| property"},
                            {SelftestFormat::kTable, true, "| PASS   |", "Tests"}};
  for (const Format& f : formats) {
    reset_capture();
    TA_CHECK(tinyattn::selftest_int8(&g_report, Port::kDefault, f.sink ? capture : nullptr, f.format) == Status::kOk);
    TA_CHECK(g_report.passed());
    const bool printed = f.present ? std::strstr(g_out, f.present) != nullptr : g_out_len == 0;
    const bool left_out = !f.absent || std::strstr(g_out, f.absent) == nullptr;
    TA_CHECK(printed);
    TA_CHECK(left_out);
  }
}
