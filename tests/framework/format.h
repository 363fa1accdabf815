// A tiny, heap-free formatter for test messages and reports. newlib's printf
// family allocates (and its float formatting calls malloc), so everything the
// test runners and the self-test print goes through this instead; the same code
// runs on the host so transcripts are identical on every target.
//
// Supported: %s %c %d %i %u %ld %lu %zu %x %% and %g / %e / %f with an
// optional precision (%.3g, %.6f). Field widths: %-Ns and %Nd pad with spaces.
#pragma once

#include <cstdarg>
#include <cstddef>

namespace tatest {

// Formats into buf (always NUL-terminated, truncated to cap-1 chars). Returns
// the number of characters written.
size_t vformat(char* buf, size_t cap, const char* fmt, va_list ap);
size_t format(char* buf, size_t cap, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// A fixed-capacity string built with format().
template <size_t Cap>
struct Text {
  char s[Cap] = {0};
  const char* c_str() const { return s; }
};

Text<256> fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

}  // namespace tatest
