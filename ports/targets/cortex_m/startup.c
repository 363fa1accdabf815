// Reset and fault handling for the Cortex-M boards (Armv7E-M, Armv8-M
// mainline and Armv8.1-M).
//
// Reset_Handler: enable the FPU when the build uses one (and with it MVE: on
// Armv8.1-M the same CPACR bits CP10/CP11 gate Helium; a soft-float build,
// e.g. the Cortex-M33 without FPU, leaves CPACR alone), name the configurable faults, copy .data from
// flash to RAM, zero .bss, run static constructors, pass the semihosting
// command line to main() and hand main's return value to the host as the
// exit status. The vector table sits where VTOR points after reset (each
// board's linker script places .vectors there).
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "semihosting.h"

// Linker-script symbols (cortex_m/sections.ld).
extern uint32_t __stack_top__;
extern uint32_t __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__;

extern int main(int argc, char** argv);
extern void __libc_init_array(void);

#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)
#define SCB_SHCSR (*(volatile uint32_t*)0xE000ED24u)

// SYS_GET_CMDLINE returns "<image path> <-append text>"; split on spaces.
static char g_cmdline[256];
static char* g_argv[16];

static int command_line_args(void) {
  uintptr_t block[2] = {(uintptr_t)g_cmdline, sizeof g_cmdline - 1};
  int argc = 0;
  if (sh_call(kShGetCmdline, (uintptr_t)block) != 0) return 0;
  for (char* p = g_cmdline; *p && argc < 15;) {
    while (*p == ' ') *p++ = '\0';
    if (!*p) break;
    g_argv[argc++] = p;
    while (*p && *p != ' ') ++p;
  }
  g_argv[argc] = NULL;
  return argc;
}

void tinyattn_board_write(const char* text) { sh_call(kShWrite0, (uintptr_t)text); }

void tatest_write(const char* text) { tinyattn_board_write(text); }

void tinyattn_board_exit(int status) {
  // SYS_EXIT_EXTENDED carries any status; plain SYS_EXIT on 32-bit Arm only
  // says success or failure, so it is the fallback for older hosts.
  uintptr_t block[2] = {kShApplicationExit, (uintptr_t)status};
  sh_call(kShExitExtended, (uintptr_t)block);
  sh_call(kShExit, status == 0 ? kShApplicationExit : kShRunTimeErrorUnknown);
  for (;;) {
  }
}

__attribute__((noreturn)) void Reset_Handler(void) {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  SCB_CPACR |= 0xFu << 20;  // CP10 + CP11: full access
#endif
#if __ARM_ARCH >= 7
  // MemManage, BusFault and UsageFault get their own handlers instead of
  // escalating to HardFault, so a crash report says which one it was
  // (Armv6-M has HardFault only).
  SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18);
#endif
  __asm__ volatile("dsb\n\tisb" ::: "memory");

  memcpy(&__data_start__, &__data_load__, (size_t)((char*)&__data_end__ - (char*)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((char*)&__bss_end__ - (char*)&__bss_start__));
  __libc_init_array();
  const int argc = command_line_args();
  // Static destructors never run: firmware leaves through the host.
  tinyattn_board_exit(main(argc, g_argv));
}

// Distinct exit statuses for crashes, so a test log tells them apart from
// failed checks (status 1).
enum { kStatusFault = 128 + 3 };

static __attribute__((noreturn)) void fault(const char* what) {
  tinyattn_board_write("tinyattn board: fatal exception: ");
  tinyattn_board_write(what);
  tinyattn_board_write("\n");
  tinyattn_board_exit(kStatusFault);
}

void NMI_Handler(void) { fault("NMI"); }
void HardFault_Handler(void) { fault("HardFault"); }
void MemManage_Handler(void) { fault("MemManage"); }
void BusFault_Handler(void) { fault("BusFault"); }
void UsageFault_Handler(void) { fault("UsageFault"); }
void SecureFault_Handler(void) { fault("SecureFault"); }
void Default_Handler(void) { fault("unexpected interrupt"); }
__attribute__((weak)) void SysTick_Handler(void) { Default_Handler(); }

typedef void (*Vector)(void);

// 16 system exceptions + 16 external interrupts (none enabled by the glue).
__attribute__((section(".vectors"), used)) const Vector tinyattn_vector_table[16 + 16] = {
    (Vector)(uintptr_t)&__stack_top__,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SecureFault_Handler,  // Armv8-M; reserved on Armv7-M
    0,
    0,
    0,
    Default_Handler,  // SVCall
    Default_Handler,  // DebugMonitor
    0,
    Default_Handler,  // PendSV
    SysTick_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
};
