// The stack check (tinyattn::stack_check, STACK_CHECK): the first
// constructor paints the unused stack with a pattern;
// tinyattn_board_stack_high_water() finds the deepest word no longer
// holding it. The stack is picolibc.ld's: from __stack (the top of RAM) down
// to __heap_end (__stack - __stack_size).
#include <stddef.h>
#include <stdint.h>

#include "board.h"

extern uint32_t __stack[], __heap_end[];

enum { kPaint = 0x5354434Bu };  // "STCK"

// Paints below the current stack pointer only: everything there is unused
// (constructors run right after crt0 set the stack up). The volatile stores
// keep the compiler from turning the loop into a memset call, whose own
// frame would lie in the area being painted.
static __attribute__((constructor(101))) void tinyattn_stack_paint(void) {
  uintptr_t sp;
  __asm__ volatile("mv %0, sp" : "=r"(sp));
  for (volatile uint32_t* p = __heap_end; (uintptr_t)p < sp; ++p) *p = kPaint;
}

// Addresses as integers: the linker's symbols are two objects to C, and
// comparing or subtracting pointers to different objects is undefined.
size_t tinyattn_board_stack_size(void) { return (size_t)((uintptr_t)__stack - (uintptr_t)__heap_end); }

size_t tinyattn_board_stack_high_water(void) {
  const volatile uint32_t* p = __heap_end;
  while ((uintptr_t)p < (uintptr_t)__stack && *p == kPaint) ++p;
  return (size_t)((uintptr_t)__stack - (uintptr_t)p);
}

static char* decimal(char* out, size_t value) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = (char)('0' + value % 10u);
    value /= 10u;
  } while (value != 0u && n < 12);
  while (n) *out++ = digits[--n];
  return out;
}

__attribute__((weak)) void tinyattn_board_stack_report(void) {
  char line[80] = "tinyattn board: stack high water ";
  char* p = line + sizeof "tinyattn board: stack high water " - 1;
  p = decimal(p, tinyattn_board_stack_high_water());
  static const char of[] = " of ";
  for (const char* s = of; *s; ++s) *p++ = *s;
  p = decimal(p, tinyattn_board_stack_size());
  static const char bytes[] = " bytes\n";
  for (const char* s = bytes; *s; ++s) *p++ = *s;
  *p = '\0';
  tinyattn_board_write(line);
}
