// tatest: the test vocabulary every tinyattn test is written in.
//
// The same source compiles onto two runners:
//  * hosted targets (TATEST_DOCTEST=1): doctest; `--reporters=unity` prints the
//    Unity transcript (tests/framework/unity_reporter.cc);
//  * boards (TATEST_DOCTEST=0): a heap-free runner (tests/framework/runner.cc)
//    printing the same Unity transcript over semihosting.
// So exactly the same checks run on every target; only the printing differs.
//
//   TA_CASE("name") { ... }                     a test case
//   TA_CHECK(cond)                              check, keeps going on failure
//   TA_CHECK_MSG(cond, "fmt", ...)              with a formatted message
//   TA_IGNORE("reason")                         report IGNORE and leave the case
//   TA_LOG("fmt", ...)                          informational line
// Formatting is tatest::format (no heap, same output everywhere).
#pragma once

#include "format.h"

#ifndef TATEST_DOCTEST
#define TATEST_DOCTEST 1
#endif

#if TATEST_DOCTEST
#include <doctest/doctest.h>

#define TA_CASE(name) DOCTEST_TEST_CASE(name)
#define TA_CHECK(cond) DOCTEST_CHECK(cond)
#define TA_CHECK_MSG(cond, ...) DOCTEST_CHECK_MESSAGE((cond), ::doctest::String(::tatest::fmt(__VA_ARGS__).c_str()))
#define TA_LOG(...) DOCTEST_MESSAGE(::doctest::String(::tatest::fmt(__VA_ARGS__).c_str()))
// The unity reporter turns a passing case that logged "IGNORE: ..." into IGNORE.
#define TA_IGNORE(reason)                                            \
  do {                                                               \
    DOCTEST_MESSAGE(::doctest::String(::tatest::fmt("IGNORE: %s", reason).c_str()));    \
    return;                                                          \
  } while (0)

#else  // heap-free runner

namespace tatest {

struct Case {
  const char* name;
  const char* file;
  int line;
  void (*fn)();
  Case* next;
};

// Registers a case at static-initialisation time (intrusive list, no heap).
struct Registrar {
  explicit Registrar(Case* c);
};

// Called by the macros below; implemented by the runner.
void check_failed(const char* file, int line, const char* expr, const char* message);
void ignore(const char* file, int line, const char* reason);
void log(const char* message);

}  // namespace tatest

#define TATEST_CAT2(a, b) a##b
#define TATEST_CAT(a, b) TATEST_CAT2(a, b)
#define TATEST_CASE_IMPL(name, fn)                                                   \
  static void fn();                                                                  \
  static ::tatest::Case TATEST_CAT(fn, _case){name, __FILE__, __LINE__, &fn, nullptr}; \
  static ::tatest::Registrar TATEST_CAT(fn, _reg){&TATEST_CAT(fn, _case)};           \
  static void fn()
#define TA_CASE(name) TATEST_CASE_IMPL(name, TATEST_CAT(tatest_case_, __LINE__))
#define TA_CHECK(cond)                                                 \
  do {                                                                 \
    if (!(cond)) ::tatest::check_failed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define TA_CHECK_MSG(cond, ...)                                                                  \
  do {                                                                                           \
    if (!(cond)) ::tatest::check_failed(__FILE__, __LINE__, #cond, ::tatest::fmt(__VA_ARGS__).c_str()); \
  } while (0)
#define TA_LOG(...) ::tatest::log(::tatest::fmt(__VA_ARGS__).c_str())
#define TA_IGNORE(reason)                            \
  do {                                               \
    ::tatest::ignore(__FILE__, __LINE__, reason);    \
    return;                                          \
  } while (0)

#endif
