// A bus fault must end the run with the fault status (131), not hang.
#include "board.h"

int main(void) {
  tinyattn_board_write("reading unmapped memory\n");
  volatile const unsigned* unmapped = (volatile const unsigned*)0xF0000000u;
  return (int)*unmapped;
}
