// The runtime's handlers and hooks are weak: this image's own
// tinyattn_board_write (which prefixes every write) and HardFault_Handler
// (on RISC-V the trap handler) must be the ones that run. main forces a
// HardFault (a trap); the handler exits with 42, and the exit line goes
// through the prefixing hook too.
#include <stdint.h>

#include "board.h"

void tinyattn_board_write(const char* text) {
  tinyattn_board_uart_write("user-hook> ");
  tinyattn_board_uart_write(text);
}

#ifdef __riscv
// mtvec in direct mode needs a 4-byte aligned handler.
__attribute__((aligned(4), noreturn)) void tinyattn_trap_handler(void);
void tinyattn_trap_handler(void) {
  tinyattn_board_write("user trap handler ran\n");
  tinyattn_board_exit(42);
}
#else
void HardFault_Handler(void) {
  tinyattn_board_write("user HardFault_Handler ran\n");
  tinyattn_board_exit(42);
}
#endif

int main(void) {
  tinyattn_board_write("forcing a fault\n");
#if defined(__ARM_ARCH) && __ARM_ARCH >= 7
  // Without MemManage, BusFault and UsageFault enabled, the bus fault below
  // escalates to HardFault (Armv6-M has HardFault only).
  *(volatile uint32_t*)0xE000ED24u &= ~((1u << 16) | (1u << 17) | (1u << 18));
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  volatile const unsigned* unmapped = (volatile const unsigned*)0xF0000000u;
  return (int)*unmapped;
}
