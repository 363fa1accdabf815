// The stack check (tinyattn::stack_check, STACK_CHECK): the first
// constructor paints the unused stack with a pattern;
// tinyattn_board_stack_high_water() finds the deepest word no longer
// holding it. The stack is picolibc.ld's: from __stack (the top of RAM) down
// to __heap_end (__stack - __stack_size).
#include <stddef.h>
#include <stdint.h>

#include "../board_text.h"
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

__attribute__((weak)) void tinyattn_board_stack_report(void) {
  char line[TINYATTN_BOARD_STACK_LINE_BYTES];
  tinyattn_board_stack_line(line, tinyattn_board_stack_high_water(), tinyattn_board_stack_size());
  tinyattn_board_write(line);
}
