// The heap-free test runner for boards: runs every registered TA_CASE and
// prints the Unity transcript through tatest_write (semihosting on the boards).
#include <cstring>

#include "tatest.h"
#include "test_env.h"
#include "unity_format.h"

extern "C" void tatest_write(const char* text);  // provided by the target glue

namespace tatest {

namespace {
Case* g_head = nullptr;
Case* g_tail = nullptr;
Case* g_current = nullptr;
bool g_failed = false;
bool g_ignored = false;
char g_detail[320];
const char* g_fail_file = "";
int g_fail_line = 0;

void write(const char* text) { tatest_write(text); }
}  // namespace

Registrar::Registrar(Case* c) {
  c->next = nullptr;
  if (g_tail) g_tail->next = c;
  else g_head = c;
  g_tail = c;
}

void check_failed(const char* file, int line, const char* expr, const char* message) {
  if (g_failed) return;  // Unity reports the first failure of a case
  g_failed = true;
  g_fail_file = file;
  g_fail_line = line;
  if (message && *message) format(g_detail, sizeof g_detail, "%s %s", expr, message);
  else format(g_detail, sizeof g_detail, "%s", expr);
}

void ignore(const char*, int, const char* reason) {
  g_ignored = true;
  format(g_detail, sizeof g_detail, "%s", reason);
}

void log(const char* message) {
  write(message);
  write("\n");
}

}  // namespace tatest

// argv[1] may name one case to run (substring match), for debugging on a board.
int main(int argc, char** argv) {
  using namespace tatest;
  announce_environment();
  const char* filter = argc > 1 ? argv[1] : nullptr;
  UnityTally tally;
  for (Case* c = g_head; c; c = c->next) {
    if (filter && !std::strstr(c->name, filter)) continue;
    g_current = c;
    g_failed = g_ignored = false;
    g_detail[0] = '\0';
    c->fn();
    ++tally.tests;
    if (g_failed) {
      ++tally.failures;
      unity_result(write, g_fail_file, g_fail_line, c->name, "FAIL", g_detail);
    } else if (g_ignored) {
      ++tally.ignored;
      unity_result(write, c->file, c->line, c->name, "IGNORE", g_detail);
    } else {
      unity_result(write, c->file, c->line, c->name, "PASS", nullptr);
    }
  }
  unity_summary(write, tally);
  return tally.failures ? 1 : 0;
}
