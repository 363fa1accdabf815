// Board glue for RISC-V bare metal with picolibc: picolibc's crt0 (the
// hosted one by default: no command line and no printf-based fault dump,
// which would pull in ~10 KB of printf with double support) sets up the
// stack, .data and .bss, runs the constructors and main, and exit() ends in
// _exit here. So only board.h's output and exit and a trap handler are
// needed: output on the UART, or over semihosting when the image links the
// semihosting piece (semihosting.c). Every function is weak.
#include <stddef.h>
#include <stdint.h>

#include "../board_text.h"
#include "board.h"

// The optional pieces (null when not linked).
extern void tinyattn_semihosting_write(const char* text) __attribute__((weak));
extern void tinyattn_semihosting_exit(int status) __attribute__((weak, noreturn));
extern void tinyattn_board_stack_report(void) __attribute__((weak));

// Set by the memory map (`tinyattn_board_uart_base = 0x10000000;` on QEMU's
// virt): an absolute symbol whose address is the value; undefined means none.
extern char tinyattn_board_uart_base[] __attribute__((weak));

// A trap (access fault, illegal instruction, ...) ends the run with the
// same status as a fault on the Cortex-M boards, 128 + 3, so the host can
// tell a crash from a test failure (1).
enum { kStatusFault = 128 + 3 };

// NS16550A: THR at +0, LSR at +5 (bit 5: THR empty).
enum { kUartThr = 0, kUartLsr = 5, kUartThrEmpty = 0x20 };

void tinyattn_board_uart_write(const char* text) {
  volatile uint8_t* const uart = (volatile uint8_t*)(uintptr_t)tinyattn_board_uart_base;
  if (!uart) return;
  for (; *text; ++text) {
    while (!(uart[kUartLsr] & kUartThrEmpty)) {
    }
    uart[kUartThr] = (uint8_t)*text;
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

// CSR access: the core flags (-march=rv32imac) need not name Zicsr, which
// every machine-mode core has. clang 16 has the CSR instructions on every
// RISC-V core and no `.option arch`.
#if defined(__clang__) && __clang_major__ < 17
#define TINYATTN_CSR_ASM(insn) insn
#else
#define TINYATTN_CSR_ASM(insn) ".option push\n.option arch, +zicsr\n" insn "\n.option pop"
#endif
#define TINYATTN_READ_CSR(name, out) __asm__ volatile(TINYATTN_CSR_ASM("csrr %0, " #name) : "=r"(out))

__attribute__((weak, noreturn)) void tinyattn_board_exit(int status) {
  if (tinyattn_semihosting_exit) tinyattn_semihosting_exit(status);
  // No host to hand the status to: say it on the output (a test runner stops
  // the emulator on this line), then stop the core.
  char line[TINYATTN_BOARD_EXIT_LINE_BYTES];
  tinyattn_board_write(tinyattn_board_exit_line(line, status));
  __asm__ volatile(TINYATTN_CSR_ASM("csrci mstatus, 8")::: "memory");  // MIE off
  for (;;) __asm__ volatile("wfi");
}

// picolibc's exit() ends here (after atexit handlers and destructors): the
// stack report when the image has the stack check, then the board's exit.
__attribute__((weak, noreturn)) void _exit(int status) {
  if (tinyattn_board_stack_report) tinyattn_board_stack_report();
  tinyattn_board_exit(status);
}

static void hex32(char* out, uint32_t v) {
  for (int i = 7; i >= 0; --i) {
    const uint32_t d = v & 0xFu;
    out[i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v >>= 4;
  }
}

// Direct-mode trap vector (4-byte aligned). It never returns, so it saves
// nothing; it runs on the faulting code's stack. Weak: a firmware's own
// tinyattn_trap_handler (4-byte aligned) takes its place in mtvec.
__attribute__((weak, noreturn, aligned(4))) void tinyattn_trap_handler(void) {
  uint32_t cause, epc, tval;
  TINYATTN_READ_CSR(mcause, cause);
  TINYATTN_READ_CSR(mepc, epc);
  TINYATTN_READ_CSR(mtval, tval);
  char line[] = "tinyattn board: trap mcause=0x........ mepc=0x........ mtval=0x........\n";
  hex32(line + 30, cause);
  hex32(line + 46, epc);
  hex32(line + 63, tval);
  tinyattn_board_write(line);
  tinyattn_board_exit(kStatusFault);
}

// Runs before main (picolibc's crt0 calls the constructors): replaces
// picolibc's trap vector with the one above.
static __attribute__((constructor)) void tinyattn_install_trap(void) {
  __asm__ volatile(TINYATTN_CSR_ASM("csrw mtvec, %0")::"r"(&tinyattn_trap_handler));
}

#if defined(__riscv_vector)
// A core with vectors (V or a Zve* profile) starts with them off
// (mstatus.VS = Off: every vector instruction traps) and picolibc's crt0
// turns on the FPU only: VS = Initial here, before the other constructors.
static __attribute__((constructor(101))) void tinyattn_enable_vector(void) {
  __asm__ volatile(TINYATTN_CSR_ASM("csrs mstatus, %0")::"r"(0x200u));
}
#endif
