/* Start-up for the bench programs on QEMU's Cortex-M boards (mps2-an386:
 * Cortex-M4F, mps3-an547: Cortex-M55). Self-contained on purpose: the bench
 * must measure the library, not a test harness. Reset enables the FPU (and
 * Helium, gated by the same CPACR bits), copies .data, zeroes .bss, runs
 * constructors, passes the -append string as argv (semihosting
 * SYS_GET_CMDLINE) and exits QEMU with main's status (SYS_EXIT_EXTENDED). */
#include <stdint.h>
#include <string.h>

extern uint32_t __stack_top__, __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__;
extern int main(int argc, char** argv);
extern void __libc_init_array(void);

/* -nostartfiles drops crti/crtbegin, which __libc_init_array expects. */
__attribute__((weak)) void _init(void) {}
__attribute__((weak)) void _fini(void) {}

static uintptr_t semihost(uintptr_t op, uintptr_t arg) {
  register uintptr_t r0 __asm__("r0") = op;
  register uintptr_t r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void board_write(const char* text) { semihost(0x04 /* SYS_WRITE0 */, (uintptr_t)text); }

__attribute__((noreturn)) static void board_exit(int status) {
  uintptr_t block[2] = {0x20026 /* ADP_Stopped_ApplicationExit */, (uintptr_t)status};
  semihost(0x20 /* SYS_EXIT_EXTENDED */, (uintptr_t)block);
  for (;;) {
  }
}

static char cmdline[256];
static char* argv_buf[16];

static int split_cmdline(void) {
  uintptr_t block[2] = {(uintptr_t)cmdline, sizeof cmdline - 1};
  int argc = 0;
  if (semihost(0x15 /* SYS_GET_CMDLINE */, (uintptr_t)block) != 0) return 0;
  for (char* p = cmdline; *p && argc < 15;) {
    while (*p == ' ') *p++ = 0;
    if (!*p) break;
    argv_buf[argc++] = p;
    while (*p && *p != ' ') ++p;
  }
  argv_buf[argc] = 0;
  return argc;
}

__attribute__((noreturn)) void Reset_Handler(void) {
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10, CP11 full access */
  __asm__ volatile("dsb\n isb" ::: "memory");
  memcpy(&__data_start__, &__data_load__, (size_t)((char*)&__data_end__ - (char*)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((char*)&__bss_end__ - (char*)&__bss_start__));
  __libc_init_array();
  const int argc = split_cmdline();
  board_exit(main(argc, argv_buf));
}

static void fault(void) {
  board_write("fault\n");
  board_exit(131);
}

typedef void (*vector_t)(void);
__attribute__((section(".vectors"), used)) const vector_t vectors[16] = {
    (vector_t)(uintptr_t)&__stack_top__, Reset_Handler, fault, fault, fault, fault, fault, fault,
    0, 0, 0, fault, fault, 0, fault, fault,
};
