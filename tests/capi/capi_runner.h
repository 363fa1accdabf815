/* The Unity-style runner of the C99 suites that are images of their own on
 * the boards (capi_kv_test.c, capi_int8_test.c): checks that name their
 * case, context and port, and the transcript the other suites print, without
 * printf (it needs a heap on newlib-nano). The including file defines
 * CAPI_RUNNER_FILE (its name) and out(text) first, and sets g_context and
 * g_port where a case has them. */
#ifndef TINYATTN_TESTS_CAPI_RUNNER_H_
#define TINYATTN_TESTS_CAPI_RUNNER_H_

#include "tinyattn/tinyattn_c.h"

static void out_uint(unsigned long x) {
  char text[24];
  char* p = text + sizeof text;
  *--p = '\0';
  do {
    *--p = (char)('0' + x % 10u);
    x /= 10u;
  } while (x != 0);
  out(p);
}

static unsigned g_tests, g_failures, g_case_failed;
static const char* g_case_name;
static const char* g_context = ""; /* what the case has under test */
static int g_port = -1;            /* and its port, when one is set */

static void check_at(int ok, int line, const char* what) {
  if (ok) return;
  if (!g_case_failed) {
    out(CAPI_RUNNER_FILE ":");
    out_uint((unsigned long)line);
    out(":");
    out(g_case_name);
    out(":FAIL: ");
    out(what);
    out(" (");
    out(g_context);
    if (g_port >= 0) {
      out(", port ");
      out(tinyattn_port_name((tinyattn_port)g_port));
    }
    out(")\n");
  }
  g_case_failed = 1;
}
#define CHECK(cond) check_at((cond) ? 1 : 0, __LINE__, #cond)
#define CHECK_STATUS(expr, want) check_at((expr) == (want), __LINE__, #expr " == " #want)

static void run(void (*fn)(void), const char* name, int line) {
  g_case_name = name;
  g_case_failed = 0;
  g_context = "";
  g_port = -1;
  fn();
  ++g_tests;
  if (g_case_failed) {
    ++g_failures;
  } else {
    out(CAPI_RUNNER_FILE ":");
    out_uint((unsigned long)line);
    out(":");
    out(name);
    out(":PASS\n");
  }
}
#define RUN(fn) run(fn, #fn, __LINE__)

/* The transcript's last lines; main's exit status. */
static int finish(void) {
  out("-----------------------\n");
  out_uint(g_tests);
  out(" Tests ");
  out_uint(g_failures);
  out(" Failures 0 Ignored\n");
  out(g_failures ? "FAIL\n" : "OK\n");
  return g_failures ? 1 : 0;
}

#endif /* TINYATTN_TESTS_CAPI_RUNNER_H_ */
