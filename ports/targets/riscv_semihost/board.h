// What the RISC-V board glue offers firmware and tests: text output and exit
// over RISC-V semihosting (QEMU: -semihosting-config enable=on). On real
// hardware without a debugger attached, replace these two with a UART.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// Writes a NUL-terminated string to the host console (SYS_WRITE0).
void tinyattn_board_write(const char* text);

// Ends the program; the host sees `status` as the emulator's exit status
// (SYS_EXIT_EXTENDED). main() returning calls this with its return value.
__attribute__((noreturn)) void tinyattn_board_exit(int status);

// The test runner's output hook (tests/framework/runner.cc): same as
// tinyattn_board_write.
void tatest_write(const char* text);

#ifdef __cplusplus
}
#endif
