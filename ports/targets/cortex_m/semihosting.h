// Arm semihosting on M-profile: BKPT 0xAB with the operation in r0 and the
// argument block in r1. Internal to the board glue.
#pragma once

#include <stdint.h>

enum {
  kShWrite0 = 0x04,
  kShGetCmdline = 0x15,
  kShExit = 0x18,
  kShExitExtended = 0x20,
  kShApplicationExit = 0x20026,
  kShRunTimeErrorUnknown = 0x20023,
};

static inline uintptr_t sh_call(uintptr_t op, uintptr_t arg) {
  register uintptr_t r0 __asm__("r0") = op;
  register uintptr_t r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
