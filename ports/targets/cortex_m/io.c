// The board's output and exit (board.h): semihosting when the image links
// the semihosting piece (semihosting.c), else the board's UART. All weak.
#include <stddef.h>
#include <stdint.h>

#include "../board_text.h"
#include "board.h"

// semihosting.c, when linked (null otherwise).
extern void tinyattn_semihosting_write(const char* text) __attribute__((weak));
extern void tinyattn_semihosting_exit(int status) __attribute__((weak, noreturn));

// Set by the memory map (e.g. `tinyattn_board_uart_base = 0x40004000;`):
// absolute symbols whose addresses are the values; undefined means none.
extern char tinyattn_board_uart_base[] __attribute__((weak));
extern char tinyattn_board_uart_bauddiv[] __attribute__((weak));

// CMSDK APB UART registers, in words: DATA, STATE (bit 0: TX buffer full),
// CTRL (bit 0: TX enable), INTSTATUS, BAUDDIV.
enum { kUartData = 0, kUartState = 1, kUartCtrl = 2, kUartBauddiv = 4 };
enum { kUartTxFull = 1u, kUartTxEnable = 1u, kUartDefaultBauddiv = 217 };

void tinyattn_board_uart_write(const char* text) {
  volatile uint32_t* const uart = (volatile uint32_t*)(uintptr_t)tinyattn_board_uart_base;
  if (!uart) return;
  if (!(uart[kUartCtrl] & kUartTxEnable)) {
    const uintptr_t div = (uintptr_t)tinyattn_board_uart_bauddiv;
    uart[kUartBauddiv] = div ? (uint32_t)div : kUartDefaultBauddiv;
    uart[kUartCtrl] |= kUartTxEnable;
  }
  for (; *text; ++text) {
    while (uart[kUartState] & kUartTxFull) {
    }
    uart[kUartData] = (uint8_t)*text;
  }
}

__attribute__((weak)) void tinyattn_board_write(const char* text) {
  if (tinyattn_semihosting_write) {
    tinyattn_semihosting_write(text);
    return;
  }
  tinyattn_board_uart_write(text);
}

__attribute__((weak)) void tatest_write(const char* text) { tinyattn_board_write(text); }

__attribute__((weak, noreturn)) void tinyattn_board_exit(int status) {
  if (tinyattn_semihosting_exit) tinyattn_semihosting_exit(status);
  // No host to hand the status to: say it on the output (a test runner stops
  // the emulator on this line), then stop the core.
  char line[TINYATTN_BOARD_EXIT_LINE_BYTES];
  tinyattn_board_write(tinyattn_board_exit_line(line, status));
  __asm__ volatile("cpsid i" ::: "memory");
  for (;;) __asm__ volatile("wfi");
}
