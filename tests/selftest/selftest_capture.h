// What both self-test suites share: a sink capturing the transcript (the ctest
// log must not contain the deliberately failing transcripts' summary lines)
// and lookups in a report (fp32 or int8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "support.h"
#include "tatest.h"

namespace selftest_capture {

inline char g_out[8192];
inline size_t g_out_len = 0;
inline void capture(const char* text) {
  while (*text && g_out_len + 1 < sizeof g_out) g_out[g_out_len++] = *text++;
  g_out[g_out_len] = '\0';
}
inline void reset_capture() {
  g_out_len = 0;
  g_out[0] = '\0';
}

// Names of the failing checks, for messages.
template <class Report>
tatest::Text<256> failing(const Report& r) {
  tatest::Text<256> t;
  size_t n = 0;
  for (uint32_t i = 0; i < r.count; ++i)
    if (!r.checks[i].passed) n += tatest::format(t.s + n, sizeof t.s - n, "%s ", r.checks[i].name);
  return t;
}

template <class Report>
bool check_failed(const Report& r, const char* name) {
  const auto* c = r.find(name);
  return c != nullptr && !c->passed;
}

// run(port) (printing to capture in both formats) and run_table(port) (the
// same checks on the port's kernel table, into the same report) must pass on
// every port under test, with at least min_checks checks, the OK summary and
// `table_marker` in the table.
template <class Report, class Run, class RunTable>
void expect_pass_on_every_port(const Report& report, Run run, RunTable run_table, uint32_t min_checks,
                               const char* table_marker) {
  tinyattn::Port ports[tatest::kMaxPorts];
  const size_t n = tatest::ports_under_test(ports);
  TA_CHECK(n >= 1);
  for (size_t i = 0; i < n; ++i) {
    const char* name = tinyattn::port_name(ports[i]);
    reset_capture();
    tinyattn::Status s = run(ports[i]);
    TA_CHECK_MSG(s == tinyattn::Status::kOk, "%s: status %s", name, tinyattn::to_string(s));
    TA_CHECK_MSG(report.passed(), "%s: failing checks: %s", name, failing(report).c_str());
    TA_CHECK_MSG(report.count >= min_checks, "%s: only %u checks ran", name, static_cast<unsigned>(report.count));
    TA_CHECK_MSG(std::strstr(g_out, " Tests 0 Failures 0 Ignored\nOK\n") != nullptr, "%s: no OK summary", name);
    TA_CHECK_MSG(std::strstr(g_out, table_marker) != nullptr, "%s: no properties table", name);
    s = run_table(ports[i]);
    TA_CHECK_MSG(s == tinyattn::Status::kOk && report.passed(), "%s (table): failing checks: %s", name,
                 failing(report).c_str());
  }
}

}  // namespace selftest_capture
