// Private pieces shared by the self-tests (selftest.cc: fp32, selftest_int8.cc:
// int8): a tiny line formatter (no printf: newlib's allocates, and its float
// formatting pulls in malloc), a bitwise CRC-32 and the Unity transcript.
// Everything is inline, so a member a translation unit does not call (the
// floating-point ones, in the int8 self-test) is not emitted there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tinyattn/selftest.h"
#include "tinyattn/shape.h"

namespace tinyattn {
namespace detail {

class Line {
 public:
  Line(char* buf, size_t cap) : buf_(buf), cap_(cap) { buf_[0] = '\0'; }
  Line& str(const char* s) {
    while (*s) put(*s++);
    return *this;
  }
  Line& uint(uint32_t u) {
    char digits[10];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    while (n) put(digits[--n]);
    return *this;
  }
  // x with `decimals` digits after the point (as %.Nf), for |x| < 4e9.
  Line& fixed(double x, int decimals) {
    if (!special(x)) {
      if (x < 0) {
        put('-');
        x = -x;
      }
      double p = 1.0;
      for (int i = 0; i < decimals; ++i) p *= 10.0;
      const uint64_t all = static_cast<uint64_t>(x * p + 0.5);  // NOLINT(bugprone-incorrect-roundings): x >= 0 here
      const uint64_t ip = all / static_cast<uint64_t>(p);
      uint(static_cast<uint32_t>(ip));
      if (decimals > 0) {
        put('.');
        uint64_t frac = all - ip * static_cast<uint64_t>(p);
        char digits[12];
        for (int i = decimals - 1; i >= 0; --i) {
          digits[i] = static_cast<char>('0' + frac % 10);
          frac /= 10;
        }
        for (int i = 0; i < decimals; ++i) put(digits[i]);
      }
    }
    return *this;
  }
  // Integers as integers, |x| >= 1e-4 as %.6f (the notebook's table), else d.dde-N.
  Line& num(double x) {
    if (special(x)) return *this;
    const double ax = x < 0 ? -x : x;
    if (ax < 1e6 && static_cast<double>(static_cast<int64_t>(x)) == x) return fixed(x, 0);
    if (ax >= 1e-4) return fixed(x, 6);
    int e = 0;
    double m = ax;
    while (m >= 10.0) { m /= 10.0; ++e; }
    while (m < 1.0) { m *= 10.0; --e; }
    if (m + 0.005 >= 10.0) { m /= 10.0; ++e; }
    if (x < 0) put('-');
    fixed(m, 2);
    put('e');
    if (e < 0) { put('-'); e = -e; } else put('+');
    if (e < 10) put('0');
    return uint(static_cast<uint32_t>(e));
  }
  Line& pad(size_t column) {
    while (len_ < column) put(' ');
    return *this;
  }
  size_t size() const { return len_; }

 private:
  bool special(double x) {
    if (x != x) { str("nan"); return true; }
    if (x == std::numeric_limits<double>::infinity()) { str("inf"); return true; }
    if (x == -std::numeric_limits<double>::infinity()) { str("-inf"); return true; }
    if (x >= 4e9 || x <= -4e9) {  // beyond the fixed-point path: print the order only
      str(x < 0 ? "-" : "").str(">4e9");
      return true;
    }
    return false;
  }
  void put(char ch) {
    if (len_ + 1 < cap_) {
      buf_[len_++] = ch;
      buf_[len_] = '\0';
    }
  }
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

// CRC-32 (IEEE 802.3, reflected), bitwise: no 1 KiB table in flash.
class Crc32 {
 public:
  void bytes(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) byte(b[i]);
  }
  void u32(uint32_t u) {
    for (int i = 0; i < 4; ++i) byte(static_cast<uint8_t>(u >> (8 * i)));
  }
  void f32s(const float* x, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      uint32_t u;
      std::memcpy(&u, &x[i], sizeof u);
      u32(u);
    }
  }
  void f64s(const double* x, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      uint64_t u;
      std::memcpy(&u, &x[i], sizeof u);
      u32(static_cast<uint32_t>(u));
      u32(static_cast<uint32_t>(u >> 32));
    }
  }
  uint32_t value() const { return ~crc_; }

 private:
  void byte(uint8_t b) {
    crc_ ^= b;
    for (int k = 0; k < 8; ++k) crc_ = (crc_ >> 1) ^ (0xEDB88320u & (0u - (crc_ & 1u)));
  }
  uint32_t crc_ = 0xFFFFFFFFu;
};

// The stored int8 inputs both self-tests share the layout of: Q, K, V, the
// keep bits and the int8 bias.
template <class Vectors>
void crc_inputs(Crc32& crc, const Vectors& v, const Dims& d, size_t keep_bytes, size_t bias_bytes) {
  crc.bytes(v.q, d.q_elems());
  crc.bytes(v.k, d.k_elems());
  crc.bytes(v.v, d.v_elems());
  crc.bytes(v.keep_bits, keep_bytes);
  crc.bytes(v.bias, bias_bytes);
}

inline Line& figure(Line& l, float x) { return l.num(x); }
inline Line& figure(Line& l, uint32_t x) { return l.uint(x); }

// selftest:<n>:<name>:PASS|FAIL lines, then the Unity summary and OK|FAIL;
// `line` is the caller's static buffer. Report: SelftestReport or SelftestI8Report.
template <class Report>
void print_unity(WriteFn write, const Report& r, char* line, size_t cap) {
  for (uint32_t i = 0; i < r.count; ++i) {
    const auto& c = r.checks[i];
    Line l(line, cap);
    l.str("selftest:").uint(i + 1).str(":").str(c.name).str(c.passed ? ":PASS" : ":FAIL: measured ");
    if (!c.passed) figure(figure(l, c.measured).str(" > bound "), c.bound);
    l.str("\n");
    write(line);
  }
  write("\n-----------------------\n");
  Line l(line, cap);
  l.uint(r.count).str(" Tests ").uint(r.failures).str(" Failures 0 Ignored\n");
  write(line);
  write(r.failures ? "FAIL\n" : "OK\n");
}

// A table's header row and its separator: titles[i] starts at column
// starts[i] (starts[0] is ignored: the first column starts the line).
template <size_t kCols>
void print_table_head(WriteFn write, char* line, size_t cap, const char* const (&titles)[kCols],
                      const size_t (&starts)[kCols]) {
  Line h(line, cap);
  for (size_t i = 0; i < kCols; ++i) h.pad(i ? starts[i] - 1 : 0).str("| ").str(titles[i]);
  h.str(" |\n");
  write(line);
  Line s(line, cap);
  s.str("|");
  for (size_t c = 1; c < starts[kCols - 1] + 8; ++c) {
    bool bar = false;
    for (size_t i = 1; i < kCols; ++i) bar = bar || c == starts[i] - 1;
    s.str(bar ? "|" : "-");
  }
  s.str("|\n");
  write(line);
}

// The whole transcript in `format`: a header line naming the self-test, the
// port and its SIMD target, then the Unity lines and/or the table
// (print_table(write, report)).
template <class Report, class Kernels, class PrintTable>
void print_report(WriteFn write, SelftestFormat format, const char* title, const Kernels& kern, const Report& r,
                  char* line, size_t cap, PrintTable print_table) {
  if (!write || format == SelftestFormat::kNone) return;
  Line l(line, cap);
  l.str("tinyattn ").str(title).str(": port ").str(kern.port ? kern.port : "?").str(", simd target ");
  l.str(kern.simd_target ? kern.simd_target() : "?").str("\n");
  write(line);
  if (format == SelftestFormat::kUnity || format == SelftestFormat::kBoth) print_unity(write, r, line, cap);
  if (format == SelftestFormat::kBoth) write("\n");
  if (format == SelftestFormat::kTable || format == SelftestFormat::kBoth) print_table(write, r);
}

}  // namespace detail
}  // namespace tinyattn
