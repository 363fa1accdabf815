// The int16 self-test must pass on every port compiled into this build and
// must report FAIL, naming the check, when an int16 kernel or a stored
// constant is broken. Corrupted kernel tables wrap the scalar port's int16
// functions and break one thing.
#include <cstring>

#include "support.h"
#include "tatest.h"
#include "selftest_capture.h"
#include "tinyattn/selftest_kernels.h"

using tinyattn::KernelsI16;
using tinyattn::Port;
using tinyattn::SelftestFormat;
using tinyattn::SelftestI16Report;
using tinyattn::Status;

namespace {

using namespace selftest_capture;  // NOLINT(google-build-using-namespace): the suite's helpers

SelftestI16Report g_report;  // keep it off the (board) stack

const KernelsI16& scalar() { return *tinyattn::kernels_i16(Port::kScalar); }

// Number of failing known-answer checks.
uint32_t kat_failures(const SelftestI16Report& r) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < r.count; ++i)
    if (!r.checks[i].passed && std::strncmp(r.checks[i].name, "i16_kat_", 8) == 0) ++n;
  return n;
}

// ---- corrupted int16 kernels ---------------------------------------------------

// One output value off by one (index 2, when there is one and it is not saturated).
void requantize_off_by_one(const int32_t* acc, size_t n, tinyattn::FixedMultiplier output, int16_t* y) {
  scalar().requantize(acc, n, output, y);
  if (n > 2 && y[2] < 32767) y[2] = static_cast<int16_t>(y[2] + 1);
}
// Scores summed in int32, as a kernel that forgets the widening would: the
// products of two int16 values overflow it.
int64_t scores_in_int32(const int16_t* q, const int16_t* k, size_t ldk, size_t count, size_t dk, int64_t* s) {
  int64_t max = INT64_MIN;
  for (size_t j = 0; j < count; ++j) {
    uint32_t dot = 0;  // wraps like the int32 sum of such a kernel, without the undefined overflow
    for (size_t c = 0; c < dk; ++c) dot += static_cast<uint32_t>(int32_t{q[c]} * k[j * ldk + c]);
    s[j] = static_cast<int32_t>(dot);
    if (s[j] > max) max = s[j];
  }
  return max;
}
int64_t exp_row_drops_last(const int64_t* s, size_t n, tinyattn::FixedMultiplier logit, int64_t max_score,
                           int32_t* e) {
  if (n == 1) return scalar().exp_row(s, n, logit, max_score, e);
  const int64_t sum = scalar().exp_row(s, n - 1, logit, max_score, e);
  e[n - 1] = 0;
  return sum;
}
// The logit difference's product rounded to 64 bits (its high half dropped).
int64_t exp_row_narrow_product(const int64_t* s, size_t n, tinyattn::FixedMultiplier logit, int64_t max_score,
                               int32_t* e) {
  int64_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    if (s[j] == INT64_MIN) {
      e[j] = 0;
      continue;
    }
    const uint64_t product = static_cast<uint64_t>(max_score - s[j]) * static_cast<uint32_t>(logit.multiplier);
    const uint64_t half = logit.shift > 0 ? uint64_t{1} << (logit.shift - 1) : 0;
    const int64_t u = static_cast<int64_t>((product + half) >> logit.shift);
    e[j] = tinyattn::exp2_q30(-(u < 0 ? INT64_MAX : u));
    sum += e[j];
  }
  return sum;
}
void probabilities_first_plus_one(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  scalar().probabilities(e, n, sum, p);
  if (n > 1) ++p[0];
}
void weighted_sum_skips_tail(const int32_t* p, const int16_t* v, size_t ldv, size_t count, size_t dv, int32_t* acc) {
  scalar().weighted_sum(p, v, ldv, count, dv, acc);
  if (dv > 4) acc[dv - 1] = 0;
}

// One KernelsI16 entry replaced by a broken one, and the check that must name it.
struct Corruption {
  const char* what;
  const char* expect_failing;
  void (*apply)(KernelsI16& table);
};

const Corruption kCorruptions[] = {
    {"requantize off by one on one value", "i16_kernel_requantize",
     [](KernelsI16& t) { t.requantize = requantize_off_by_one; }},
    {"scores summed in int32", "i16_kernel_scores", [](KernelsI16& t) { t.scores = scores_in_int32; }},
    {"exp_row drops the last key", "i16_kernel_exp_row", [](KernelsI16& t) { t.exp_row = exp_row_drops_last; }},
    {"exp_row's logit product in 64 bits", "i16_kernel_exp_row",
     [](KernelsI16& t) { t.exp_row = exp_row_narrow_product; }},
    {"probabilities: first weight + 1", "i16_kernel_probabilities",
     [](KernelsI16& t) { t.probabilities = probabilities_first_plus_one; }},
    {"weighted_sum drops the last column", "i16_kernel_weighted_sum",
     [](KernelsI16& t) { t.weighted_sum = weighted_sum_skips_tail; }},
};

void expect_fail(const Corruption& c) {
  KernelsI16 table = scalar();
  c.apply(table);
  reset_capture();
  const Status s = tinyattn::selftest_i16_with(table, tinyattn::selftest_i16_vectors(), &g_report, capture);
  TA_CHECK_MSG(s == Status::kOk, "%s: status %s", c.what, tinyattn::to_string(s));
  TA_CHECK_MSG(!g_report.passed(), "%s: the int16 self-test passed a corrupted kernel", c.what);
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
int16_t g_y_copy[256];
int16_t g_q_copy[256];
int64_t g_wide_copy[64];
int64_t g_table_copy[32];

}  // namespace

TA_CASE("selftest_int16: passes on every compiled port") {
  expect_pass_on_every_port(
      g_report, [](Port p) { return tinyattn::selftest_int16(&g_report, p, capture, SelftestFormat::kBoth); },
      [](Port p) {
        return tinyattn::selftest_i16_with(*tinyattn::kernels_i16(p), tinyattn::selftest_i16_vectors(), &g_report);
      },
      17, "| weights sum to 2^15");
  // The transcript starts with the header line naming the int16 self-test.
  reset_capture();
  TA_CHECK(tinyattn::selftest_int16(&g_report, Port::kDefault, capture) == Status::kOk);
  TA_CHECK(std::strstr(g_out, "tinyattn selftest_int16: port ") == g_out);
}

TA_CASE("selftest_int16: reports every check with integer figures") {
  TA_CHECK(tinyattn::selftest_int16(&g_report) == Status::kOk);
  // Every check, in this order.
  const char* expected =
      "i16_vectors_crc i16_exp2_table i16_exp2_q30 i16_apply_wide i16_kernel_scores i16_kernel_exp_row "
      "i16_kernel_probabilities i16_kernel_weighted_sum i16_kernel_requantize i16_kat_plain i16_kat_causal "
      "i16_kat_keep_bits i16_kat_window i16_kat_gqa i16_masked_row i16_masked_keys i16_row_sum";
  uint32_t i = 0;
  for (; *expected; ++i) {
    const char* end = std::strchr(expected, ' ');
    const size_t len = end ? static_cast<size_t>(end - expected) : std::strlen(expected);
    const char* got = i < g_report.count ? g_report.checks[i].name : "";
    TA_CHECK_MSG(std::strlen(got) == len && std::strncmp(got, expected, len) == 0, "check %u is %s",
                 static_cast<unsigned>(i), got);
    expected += end ? len + 1 : len;
  }
  TA_CHECK(g_report.count == i);
  const tinyattn::SelftestI8Check* rs = g_report.find("i16_row_sum");
  TA_CHECK_MSG(rs && rs->passed && rs->measured <= rs->bound && rs->bound == 5, "row_sum figures");
  const tinyattn::SelftestI8Check* k = g_report.find("i16_kat_gqa");
  TA_CHECK_MSG(k && k->passed && k->measured == 0 && k->bound == 0, "kat figures");
}

TA_CASE("selftest_int16: a corrupted kernel fails its check and the known answers") {
  for (const Corruption& c : kCorruptions) expect_fail(c);
}

TA_CASE("selftest_int16: fails on a bit flip in the stored vectors") {
  tinyattn::SelftestI16Vectors v = tinyattn::selftest_i16_vectors();
  TA_CHECK(v.expected_y_count <= sizeof g_y_copy / sizeof g_y_copy[0]);
  if (v.expected_y_count > sizeof g_y_copy / sizeof g_y_copy[0]) return;
  std::memcpy(g_y_copy, v.expected_y, v.expected_y_count * sizeof(int16_t));
  g_y_copy[7] = static_cast<int16_t>(g_y_copy[7] ^ 1);
  v.expected_y = g_y_copy;
  reset_capture();
  TA_CHECK(tinyattn::selftest_i16_with(scalar(), v, &g_report, capture) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "i16_vectors_crc") && check_failed(g_report, "i16_kat_plain"), "failing: %s",
               failing(g_report).c_str());
  TA_CHECK(std::strstr(g_out, ":i16_vectors_crc:FAIL") != nullptr);

  // An input bit (a high one: the byte order of the CRC matters): the CRC names it.
  v = tinyattn::selftest_i16_vectors();
  std::memcpy(g_q_copy, v.q, 2 * 4 * 17 * sizeof(int16_t));
  g_q_copy[20] = static_cast<int16_t>(g_q_copy[20] ^ 0x1000);
  v.q = g_q_copy;
  TA_CHECK(tinyattn::selftest_i16_with(scalar(), v, &g_report) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "i16_vectors_crc"), "failing: %s", failing(g_report).c_str());

  // An apply_wide answer: the CRC and its check name it.
  v = tinyattn::selftest_i16_vectors();
  TA_CHECK(v.wide_count <= sizeof g_wide_copy / sizeof g_wide_copy[0]);
  if (v.wide_count > sizeof g_wide_copy / sizeof g_wide_copy[0]) return;
  std::memcpy(g_wide_copy, v.wide_expected, v.wide_count * sizeof(int64_t));
  g_wide_copy[4] ^= int64_t{1} << 40;
  v.wide_expected = g_wide_copy;
  TA_CHECK(tinyattn::selftest_i16_with(scalar(), v, &g_report) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "i16_vectors_crc") && check_failed(g_report, "i16_apply_wide") &&
                   g_report.failures == 2,
               "failing: %s", failing(g_report).c_str());
}

TA_CASE("selftest_int16: fails on a bit flip in the exp2 table") {
  tinyattn::SelftestI16Vectors v = tinyattn::selftest_i16_vectors();
  std::memcpy(g_table_copy, v.exp2_table, sizeof g_table_copy);
  g_table_copy[17] ^= int64_t{1} << 3;
  v.exp2_table = g_table_copy;
  reset_capture();
  TA_CHECK(tinyattn::selftest_i16_with(scalar(), v, &g_report, capture) == Status::kOk);
  TA_CHECK_MSG(check_failed(g_report, "i16_exp2_table"), "failing: %s", failing(g_report).c_str());
  TA_CHECK(g_report.failures == 1);
  TA_CHECK(std::strstr(g_out, ":i16_exp2_table:FAIL: measured 1 > bound 0") != nullptr);
}

TA_CASE("selftest_int16: argument errors and formats") {
  TA_CHECK(tinyattn::selftest_int16(nullptr) == Status::kNullPointer);
  KernelsI16 incomplete = scalar();
  incomplete.requantize = nullptr;
  TA_CHECK(tinyattn::selftest_i16_with(incomplete, tinyattn::selftest_i16_vectors(), &g_report) ==
           Status::kNullPointer);
  for (Port p : tinyattn::kAllPorts)
    if (!tinyattn::kernels_i16(p)) TA_CHECK(tinyattn::selftest_int16(&g_report, p) == Status::kPortUnavailable);
  // What each format prints (nothing without a sink).
  struct Format {
    SelftestFormat format;
    bool sink;
    const char* present;  // nullptr: nothing printed
    const char* absent;
  };
  const Format formats[] = {{SelftestFormat::kNone, true, nullptr, nullptr},
                            {SelftestFormat::kBoth, false, nullptr, nullptr},
                            {SelftestFormat::kUnity, true, ":i16_row_sum:PASS\n", "| property"},
                            {SelftestFormat::kTable, true, "| PASS   |", "Tests"}};
  for (const Format& f : formats) {
    reset_capture();
    TA_CHECK(tinyattn::selftest_int16(&g_report, Port::kDefault, f.sink ? capture : nullptr, f.format) ==
             Status::kOk);
    TA_CHECK(g_report.passed());
    const bool printed = f.present ? std::strstr(g_out, f.present) != nullptr : g_out_len == 0;
    const bool left_out = !f.absent || std::strstr(g_out, f.absent) == nullptr;
    TA_CHECK(printed);
    TA_CHECK(left_out);
  }
}
