// Output of the bench programs on the QEMU boards: text over semihosting
// (the board glue, ports/targets/cortex_m), one "label<8 hex digits>" line
// per figure the scripts parse.
#pragma once

#include <cstdint>
#include <cstring>

#include "board.h"
#include "tinyattn/kernels.h"

inline void board_write(const char* text) { tinyattn_board_write(text); }

inline void write_hex(const char* label, uint32_t value) {
  char line[32];
  std::strcpy(line, label);
  char* p = line + std::strlen(line);
  for (int shift = 28; shift >= 0; shift -= 4) *p++ = "0123456789abcdef"[(value >> shift) & 0xF];
  *p++ = '\n';
  *p = '\0';
  board_write(line);
}

// How many times a bench program calls what it measures (its third
// argument, one digit). The scripts count a run of 2 calls and a run of 1:
// the first call is the warm-up, and the difference is one warm call.
inline int board_calls(const char* arg) { return arg[0] >= '0' && arg[0] <= '9' ? arg[0] - '0' : 0; }

// The port a bench argument names (port_name()), the scalar port if none.
inline tinyattn::Port board_port(const char* name) {
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (std::strcmp(name, tinyattn::port_name(p)) == 0) return p;
  return tinyattn::Port::kScalar;
}
