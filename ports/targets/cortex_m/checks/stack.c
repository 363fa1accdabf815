// The stack check: the reset handler painted the stack, so after a call
// chain that uses at least 4 KiB the high-water mark must be at least that
// and below the reservation; the runtime prints its report when main
// returns.
#include <stddef.h>

#include "board.h"

static void write_size(size_t value) {
  char digits[12], text[13];
  int n = 0, k = 0;
  do {
    digits[n++] = (char)('0' + value % 10u);
    value /= 10u;
  } while (value != 0u && n < 12);
  while (n) text[k++] = digits[--n];
  text[k] = '\0';
  tinyattn_board_write(text);
}

// 1 KiB of stack per level that the compiler cannot drop: each frame is
// read after the call below it returns, so the calls stay nested.
static __attribute__((noinline)) int deep(int levels) {
  volatile char frame[1024];
  for (size_t i = 0; i < sizeof frame; ++i) frame[i] = (char)(i + (size_t)levels);
  if (levels > 1) frame[0] = (char)deep(levels - 1);
  return frame[0] + frame[sizeof frame - 1];
}

int main(void) {
  const int sum = deep(4);
  const size_t used = tinyattn_board_stack_high_water(), size = tinyattn_board_stack_size();
  tinyattn_board_write("stack: high water ");
  write_size(used);
  tinyattn_board_write(" of ");
  write_size(size);
  tinyattn_board_write(" bytes\n");
  const int ok = sum != -1 && used >= 4 * 1024 && used < size;
  tinyattn_board_write(ok ? "stack: plausible\n" : "stack: implausible\n");
  return ok ? 0 : 1;
}
