// Arm semihosting for the board output, exit status and command line: the
// opt-in piece (tinyattn::semihosting) for images that run under a debugger
// or QEMU's -semihosting. The runtime calls these when they are linked
// (io.c, startup.c). Without a debugger attached, the first call here stops
// the core (BKPT escalates to a lockup), so an image for the field leaves
// this piece out.
#include <stddef.h>
#include <stdint.h>

#include "semihosting.h"

void tinyattn_semihosting_write(const char* text);
__attribute__((noreturn)) void tinyattn_semihosting_exit(int status);
int tinyattn_semihosting_command_line(char*** argv);

void tinyattn_semihosting_write(const char* text) { sh_call(kShWrite0, (uintptr_t)text); }

void tinyattn_semihosting_exit(int status) {
  // SYS_EXIT_EXTENDED carries any status; plain SYS_EXIT on 32-bit Arm only
  // says success or failure, so it is the fallback for older hosts.
  uintptr_t block[2] = {kShApplicationExit, (uintptr_t)status};
  sh_call(kShExitExtended, (uintptr_t)block);
  sh_call(kShExit, status == 0 ? kShApplicationExit : kShRunTimeErrorUnknown);
  for (;;) {
  }
}

// SYS_GET_CMDLINE returns "<image path> <-append text>"; split on spaces.
static char g_cmdline[256];
static char* g_argv[16];

int tinyattn_semihosting_command_line(char*** argv) {
  uintptr_t block[2] = {(uintptr_t)g_cmdline, sizeof g_cmdline - 1};
  int argc = 0;
  g_argv[0] = NULL;
  *argv = g_argv;
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
