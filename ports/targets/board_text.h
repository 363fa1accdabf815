// The lines every board runtime prints without a C library's printf: the
// exit line a test runner stops the emulator on, and the stack check's
// report. Shared by the Cortex-M (cortex_m/) and RISC-V (riscv_semihost/)
// runtimes; header-only, so each runtime's build compiles it in.
#pragma once

#include <stddef.h>
#include <stdint.h>

// "tinyattn board: exit <status>\n", built from the end of `line` (which
// must hold TINYATTN_BOARD_EXIT_LINE_BYTES): one buffer, one write, so a
// write hook that prefixes its text keeps the line whole. Returns its start.
#define TINYATTN_BOARD_EXIT_LINE_BYTES (sizeof "tinyattn board: exit " + sizeof "-2147483648\n")
static inline char* tinyattn_board_exit_line(char* line, int status) {
  static const char prefix[] = "tinyattn board: exit ";
  char* p = line + (TINYATTN_BOARD_EXIT_LINE_BYTES - 1);
  *p = '\0';
  *--p = '\n';
  uint32_t magnitude = status < 0 ? 0u - (uint32_t)status : (uint32_t)status;
  do {
    *--p = (char)('0' + magnitude % 10u);
    magnitude /= 10u;
  } while (magnitude != 0u);
  if (status < 0) *--p = '-';
  for (size_t i = sizeof prefix - 1; i > 0; --i) *--p = prefix[i - 1];
  return p;
}

static inline char* tinyattn_board_decimal(char* out, size_t value) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = (char)('0' + value % 10u);
    value /= 10u;
  } while (value != 0u && n < 20);
  while (n) *out++ = digits[--n];
  return out;
}

// "tinyattn board: stack high water <high> of <size> bytes\n" into `line`
// (at least TINYATTN_BOARD_STACK_LINE_BYTES).
#define TINYATTN_BOARD_STACK_LINE_BYTES 96
static inline void tinyattn_board_stack_line(char* line, size_t high, size_t size) {
  static const char head[] = "tinyattn board: stack high water ";
  static const char of[] = " of ";
  static const char bytes[] = " bytes\n";
  char* p = line;
  for (const char* s = head; *s; ++s) *p++ = *s;
  p = tinyattn_board_decimal(p, high);
  for (const char* s = of; *s; ++s) *p++ = *s;
  p = tinyattn_board_decimal(p, size);
  for (const char* s = bytes; *s; ++s) *p++ = *s;
  *p = '\0';
}
