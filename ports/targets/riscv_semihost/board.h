// What the RISC-V board runtime offers firmware and tests: the same
// functions as the Cortex-M one (cortex_m/board.h). Every function here is a
// weak default: define one yourself and the linker takes yours.
//
// Output goes to the board's serial port by default: an NS16550A UART (the
// one of QEMU's virt board) at the address the memory map gives as
// `tinyattn_board_uart_base`. An image linked with the semihosting piece
// (tinyattn::semihosting, SEMIHOSTING of tinyattn_firmware_executable, with
// picolibc's --oslib=semihost) talks to a debugger or QEMU instead.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Writes a NUL-terminated string to the board's output: semihosting
// (SYS_WRITE0) when the image links the semihosting piece, else
// tinyattn_board_uart_write.
void tinyattn_board_write(const char* text);

// Ends the program: with semihosting, `status` becomes the host's exit status
// (SYS_EXIT_EXTENDED); without, the line "tinyattn board: exit <status>" goes
// to the output and the core stops (interrupts off, WFI). exit() and main()
// returning (picolibc's crt0) end here.
__attribute__((noreturn)) void tinyattn_board_exit(int status);

// Writes to the NS16550A UART at `tinyattn_board_uart_base` (a symbol of the
// memory map; line settings as the boot left them). Does nothing when the
// map names no UART. A write hook of your own can call it.
void tinyattn_board_uart_write(const char* text);

// With the stack check (tinyattn::stack_check, STACK_CHECK of
// tinyattn_firmware_executable): the stack is painted before the
// constructors run, and this returns the most stack used so far, in bytes.
// tinyattn_board_stack_size() is the reservation (__stack_size of the memory
// map). When the program exits, tinyattn_board_stack_report() prints both
// (define your own to print elsewhere or not at all).
size_t tinyattn_board_stack_high_water(void);
size_t tinyattn_board_stack_size(void);
void tinyattn_board_stack_report(void);

// The test runner's output hook (tests/framework/runner.cc): same as
// tinyattn_board_write.
void tatest_write(const char* text);

#ifdef __cplusplus
}
#endif
