// What the Cortex-M board runtime offers firmware and tests. Every function
// here, and every exception handler of the vector table, is a weak default:
// define one yourself and the linker takes yours.
//
// Output goes to the board's serial port by default: a CMSDK APB UART (the
// UART0 of Arm's MPS2/MPS3 boards and their QEMU models) at the address the
// memory map gives as `tinyattn_board_uart_base`. An image linked with the
// semihosting piece (tinyattn::semihosting, SEMIHOSTING of
// tinyattn_firmware_executable) talks to a debugger or QEMU instead: output,
// exit status and command line over semihosting. Nothing else in the runtime
// needs a debugger.
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
// to the output and the core stops (interrupts masked, WFI). main()
// returning calls this with its return value.
__attribute__((noreturn)) void tinyattn_board_exit(int status);

// Writes to the CMSDK APB UART at `tinyattn_board_uart_base` (a symbol of the
// memory map; BAUDDIV from `tinyattn_board_uart_bauddiv` when the map gives
// it, 217 otherwise: 115200 baud at 25 MHz). Does nothing when the map names
// no UART. A write hook of your own can call it, e.g. to prefix lines.
void tinyattn_board_uart_write(const char* text);

// With the stack check (tinyattn::stack_check, STACK_CHECK of
// tinyattn_firmware_executable): the reset handler paints the stack, and this
// returns the most stack used so far, in bytes (from the top of the stack to
// the deepest word written). tinyattn_board_stack_size() is the reservation
// (the memory map's STACK_SIZE). When main() returns,
// tinyattn_board_stack_report() prints both (define your own to print
// elsewhere or not at all).
size_t tinyattn_board_stack_high_water(void);
size_t tinyattn_board_stack_size(void);
void tinyattn_board_stack_report(void);

// The test runner's output hook (tests/framework/runner.cc): same as
// tinyattn_board_write.
void tatest_write(const char* text);

#ifdef __cplusplus
}
#endif
