// The stack check (tinyattn::stack_check, STACK_CHECK): the reset handler
// calls tinyattn_stack_paint first, which fills the unused stack with a
// pattern; tinyattn_board_stack_high_water() finds the deepest word no longer
// holding it. Exceptions push onto the same (main) stack, so their frames
// count too.
#include <stddef.h>
#include <stdint.h>

#include "../board_text.h"
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

__attribute__((weak)) void tinyattn_board_stack_report(void) {
  char line[TINYATTN_BOARD_STACK_LINE_BYTES];
  tinyattn_board_stack_line(line, tinyattn_board_stack_high_water(), tinyattn_board_stack_size());
  tinyattn_board_write(line);
}
