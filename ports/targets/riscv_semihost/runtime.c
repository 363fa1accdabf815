// Board glue for RISC-V bare metal with picolibc: picolibc's crt0 (linked
// with --crt0=hosted: no command line and no printf-based fault dump, which
// would pull in ~10 KB of printf with double support) sets up the stack,
// .data and .bss, runs the constructors and main, and exit() ends the run
// through semihosting (--oslib=semihost), so only the output and exit
// functions of board.h and a trap handler are needed here. Output goes straight to
// semihosting's SYS_WRITE0, without stdio (no FILE buffers, no heap).
#include <stdint.h>
#include <stdlib.h>

#include "board.h"

enum { kSysWrite0 = 0x04 };

// A trap (access fault, illegal instruction, ...) ends the run with the
// same status as a fault on the Cortex-M boards, 128 + 3, so the host can
// tell a crash from a test failure (1); picolibc's own handler exits with 1.
enum { kStatusFault = 128 + 3 };

// picolibc's semihosting call (libsemihost: the slli/ebreak/srai sequence).
extern uintptr_t sys_semihost(uintptr_t op, uintptr_t param);

void tinyattn_board_write(const char* text) { (void)sys_semihost(kSysWrite0, (uintptr_t)text); }

void tatest_write(const char* text) { tinyattn_board_write(text); }

// picolibc's exit() reports the status to the host (SYS_EXIT_EXTENDED).
void tinyattn_board_exit(int status) { _Exit(status); }

// CSR reads: the core flags (-march=rv32imac) need not name Zicsr, which
// every machine-mode core has.
#define TINYATTN_READ_CSR(name, out) \
  __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, " #name "\n.option pop" : "=r"(out))

static void hex32(char* out, uint32_t v) {
  for (int i = 7; i >= 0; --i) {
    const uint32_t d = v & 0xFu;
    out[i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v >>= 4;
  }
}

// Direct-mode trap vector (4-byte aligned). It never returns, so it saves
// nothing; it runs on the faulting code's stack.
static __attribute__((noreturn, aligned(4), used)) void tinyattn_trap(void) {
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
  __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw mtvec, %0\n.option pop" ::"r"(&tinyattn_trap));
}
