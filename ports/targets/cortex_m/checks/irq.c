// The vector table takes the image's interrupt count (IRQ_COUNT 31 here,
// check_vectors.cmake checks the table's size) and routes interrupt n to
// IRQ<n>_Handler when the image defines one: interrupt 30, the last entry,
// pended through the NVIC, must run this image's handler.
#include <stdint.h>

#include "board.h"

#define NVIC_ISER0 (*(volatile uint32_t*)0xE000E100u)
#define NVIC_ISPR0 (*(volatile uint32_t*)0xE000E200u)

static volatile int g_ran;

void IRQ30_Handler(void);
void IRQ30_Handler(void) { g_ran = 1; }

int main(void) {
  NVIC_ISER0 = 1u << 30;
  NVIC_ISPR0 = 1u << 30;
  __asm__ volatile("cpsie i\n\tdsb\n\tisb" ::: "memory");
  for (int spin = 0; spin < 1000 && !g_ran; ++spin) {
  }
  tinyattn_board_write(g_ran ? "irq: IRQ30_Handler ran\n" : "irq: IRQ30_Handler did not run\n");
  return g_ran ? 0 : 1;
}
