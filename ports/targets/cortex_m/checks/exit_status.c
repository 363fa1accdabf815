// main's return value must reach the host as the emulator's exit status.
#include "board.h"

int main(void) {
  tinyattn_board_write("returning 7\n");
  return 7;
}
