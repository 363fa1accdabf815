// doctest reporter "unity": prints the Unity transcript (unity_format.h), so a
// hosted run reads exactly like a board run. Select with --reporters=unity.
#include <doctest/doctest.h>

#include <cstdio>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>

#include "unity_format.h"

namespace tatest {
namespace {

std::ostream* g_out = nullptr;
void write_to_stream(const char* text) { *g_out << text; }

class UnityReporter : public doctest::IReporter {
 public:
  explicit UnityReporter(const doctest::ContextOptions& options) : options_(options) {}

  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override { g_out = options_.cout; }
  void test_run_end(const doctest::TestRunStats&) override {
    unity_summary(write_to_stream, tally_);
    options_.cout->flush();
  }

  void test_case_start(const doctest::TestCaseData& tc) override {
    current_ = &tc;
    failed_ = false;
    first_failure_.clear();
    ignore_reason_.clear();
    fail_file_ = tc.m_file.c_str();
    fail_line_ = static_cast<int>(tc.m_line);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    ++tally_.tests;
    const bool failed = failed_ || stats.failure_flags != 0;
    if (failed) {
      ++tally_.failures;
      unity_result(write_to_stream, fail_file_.c_str(), fail_line_, current_->m_name, "FAIL",
                   first_failure_.empty() ? "test case failed" : first_failure_.c_str());
    } else if (!ignore_reason_.empty()) {
      ++tally_.ignored;
      unity_result(write_to_stream, current_->m_file.c_str(), static_cast<int>(current_->m_line),
                   current_->m_name, "IGNORE", ignore_reason_.c_str());
    } else {
      unity_result(write_to_stream, current_->m_file.c_str(), static_cast<int>(current_->m_line),
                   current_->m_name, "PASS", nullptr);
    }
  }
  void test_case_exception(const doctest::TestCaseException& e) override {
    note_failure(current_->m_file.c_str(), static_cast<int>(current_->m_line), e.error_string.c_str());
  }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}

  void log_assert(const doctest::AssertData& ad) override {
    if (!ad.m_failed) return;
    std::ostringstream msg;
    msg << ad.m_expr;
    if (ad.m_decomp.size() && std::string(ad.m_decomp.c_str()) != ad.m_expr) msg << " [" << ad.m_decomp.c_str() << "]";
    const int n = doctest::IReporter::get_num_active_contexts();
    const doctest::IContextScope* const* ctx = doctest::IReporter::get_active_contexts();
    for (int c = 0; c < n; ++c) {
      std::ostringstream part;
      ctx[c]->stringify(&part);
      if (!part.str().empty()) msg << " " << part.str();
    }
    note_failure(ad.m_file, ad.m_line, msg.str().c_str());
  }

  void log_message(const doctest::MessageData& md) override {
    static const char kIgnore[] = "IGNORE: ";
    const std::string text = md.m_string.c_str();
    if (text.compare(0, sizeof kIgnore - 1, kIgnore) == 0) ignore_reason_ = text.substr(sizeof kIgnore - 1);
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  void note_failure(const char* file, int line, const char* what) {
    if (!failed_) {
      first_failure_ = what;
      fail_file_ = file;
      fail_line_ = line;
    }
    failed_ = true;
  }

  const doctest::ContextOptions& options_;
  const doctest::TestCaseData* current_ = nullptr;
  UnityTally tally_;
  bool failed_ = false;
  std::string first_failure_, ignore_reason_, fail_file_;
  int fail_line_ = 0;
};

}  // namespace
}  // namespace tatest

DOCTEST_REGISTER_REPORTER("unity", 1, tatest::UnityReporter);
