// Output of the bench programs on the QEMU boards: text over semihosting
// (startup.c), one "label<8 hex digits>" line per figure the scripts parse.
#pragma once

#include <cstdint>
#include <cstring>

extern "C" void board_write(const char* text);

inline void write_hex(const char* label, uint32_t value) {
  char line[32];
  std::strcpy(line, label);
  char* p = line + std::strlen(line);
  for (int shift = 28; shift >= 0; shift -= 4) *p++ = "0123456789abcdef"[(value >> shift) & 0xF];
  *p++ = '\n';
  *p = '\0';
  board_write(line);
}
