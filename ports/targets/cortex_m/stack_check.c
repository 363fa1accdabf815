// The stack check (tinyattn::stack_check, STACK_CHECK): the reset handler
// calls tinyattn_stack_paint first, which fills the unused stack with a
// pattern; tinyattn_board_stack_high_water() finds the deepest word no longer
// holding it. Exceptions push onto the same (main) stack, so their frames
// count too.
#include <stddef.h>
#include <stdint.h>

#include "board.h"

// sections.ld: the stack is [__stack_limit__, __stack_top__).
extern uint32_t __stack_limit__, __stack_top__;

enum { kPaint = 0x5354434Bu };  // "STCK"

void tinyattn_stack_paint(void);

// Paints below the current stack pointer only: everything there is unused
// (the reset handler calls this before .data, .bss and the constructors).
// The volatile stores keep the compiler from turning the loop into a memset
// call, whose own frame would lie in the area being painted.
void tinyattn_stack_paint(void) {
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (volatile uint32_t* p = &__stack_limit__; (uintptr_t)p < sp; ++p) *p = kPaint;
}

// Addresses as integers: the linker's symbols are two objects to C, and
// comparing or subtracting pointers to different objects is undefined.
size_t tinyattn_board_stack_size(void) { return (size_t)((uintptr_t)&__stack_top__ - (uintptr_t)&__stack_limit__); }

size_t tinyattn_board_stack_high_water(void) {
  const volatile uint32_t* p = &__stack_limit__;
  while ((uintptr_t)p < (uintptr_t)&__stack_top__ && *p == kPaint) ++p;
  return (size_t)((uintptr_t)&__stack_top__ - (uintptr_t)p);
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
