// RISC-V semihosting for the board output and exit status: the opt-in piece
// (tinyattn::semihosting) for images that run under a debugger or QEMU's
// -semihosting; the runtime calls these when they are linked (runtime.c).
// It uses picolibc's semihosting library (link with --oslib=semihost, which
// also gives crt0=semihost its command line).
#include <stdint.h>

enum {
  kSysWrite0 = 0x04,
  kSysExit = 0x18,
  kSysExitExtended = 0x20,
  kApplicationExit = 0x20026,
  kRunTimeErrorUnknown = 0x20023,
};

// picolibc's semihosting call (libsemihost: the slli/ebreak/srai sequence).
extern uintptr_t sys_semihost(uintptr_t op, uintptr_t param);

void tinyattn_semihosting_write(const char* text);
__attribute__((noreturn)) void tinyattn_semihosting_exit(int status);

void tinyattn_semihosting_write(const char* text) { (void)sys_semihost(kSysWrite0, (uintptr_t)text); }

void tinyattn_semihosting_exit(int status) {
  // SYS_EXIT_EXTENDED carries any status; plain SYS_EXIT on a 32-bit core
  // only says success or failure, so it is the fallback for older hosts.
  uintptr_t block[2] = {kApplicationExit, (uintptr_t)status};
  (void)sys_semihost(kSysExitExtended, (uintptr_t)block);
  (void)sys_semihost(kSysExit, status == 0 ? kApplicationExit : kRunTimeErrorUnknown);
  for (;;) {
  }
}
