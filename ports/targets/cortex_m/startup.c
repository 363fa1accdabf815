// Reset and exception handling for the Cortex-M boards (Armv6-M, Armv7-M,
// Armv8-M mainline and Armv8.1-M).
//
// Reset_Handler: enable the FPU when the build uses one (and with it MVE: on
// Armv8.1-M the same CPACR bits CP10/CP11 gate Helium; a soft-float build,
// e.g. the Cortex-M33 without FPU, leaves CPACR alone), name the
// configurable faults, paint the stack (when the image has the stack
// check), copy .data from flash to RAM, zero .bss, run static constructors,
// call main() (with the semihosting command line when the image links the
// semihosting piece) and hand its return value to tinyattn_board_exit.
// Nothing here needs a debugger. The vector table is vectors.c, compiled
// into each image.
//
// Every handler and hook is weak: the firmware's own definition wins.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"

// Linker-script symbols (cortex_m/sections.ld).
extern uint32_t __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__;

extern int main(int argc, char** argv);
extern void __libc_init_array(void);

// The optional pieces, linked on request (null when absent): semihosting.c
// and stack_check.c.
extern int tinyattn_semihosting_command_line(char*** argv) __attribute__((weak));
extern void tinyattn_stack_paint(void) __attribute__((weak));
extern void tinyattn_board_stack_report(void) __attribute__((weak));

#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)
#define SCB_SHCSR (*(volatile uint32_t*)0xE000ED24u)

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
  // First, so that everything after it counts (and after the FPU, whose
  // registers compiled code may use).
  if (tinyattn_stack_paint) tinyattn_stack_paint();

  memcpy(&__data_start__, &__data_load__, (size_t)((char*)&__data_end__ - (char*)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((char*)&__bss_end__ - (char*)&__bss_start__));
  __libc_init_array();
  static char* no_args[1] = {NULL};
  char** argv = no_args;
  const int argc = tinyattn_semihosting_command_line ? tinyattn_semihosting_command_line(&argv) : 0;
  const int status = main(argc, argv);
  if (tinyattn_board_stack_report) tinyattn_board_stack_report();
  // Static destructors never run: firmware does not return to anything.
  tinyattn_board_exit(status);
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

__attribute__((weak)) void NMI_Handler(void) { fault("NMI"); }
__attribute__((weak)) void HardFault_Handler(void) { fault("HardFault"); }
__attribute__((weak)) void MemManage_Handler(void) { fault("MemManage"); }
__attribute__((weak)) void BusFault_Handler(void) { fault("BusFault"); }
__attribute__((weak)) void UsageFault_Handler(void) { fault("UsageFault"); }
__attribute__((weak)) void SecureFault_Handler(void) { fault("SecureFault"); }
// Every exception and interrupt without a handler of its own ends here
// (vectors.c routes the interrupts through it).
__attribute__((weak)) void Default_Handler(void) { fault("unexpected interrupt"); }
// A call rather than an alias of Default_Handler, so that a firmware's own
// Default_Handler catches these too.
void tinyattn_unhandled_exception(void);
void tinyattn_unhandled_exception(void) { Default_Handler(); }
void SVC_Handler(void) __attribute__((weak, alias("tinyattn_unhandled_exception")));
void DebugMon_Handler(void) __attribute__((weak, alias("tinyattn_unhandled_exception")));
void PendSV_Handler(void) __attribute__((weak, alias("tinyattn_unhandled_exception")));
void SysTick_Handler(void) __attribute__((weak, alias("tinyattn_unhandled_exception")));
