#include "format.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tatest {

namespace {

struct Out {
  char* buf;
  size_t cap;
  size_t len;
  void put(char c) {
    if (len + 1 < cap) buf[len] = c;
    ++len;
  }
  void puts(const char* s) {
    while (*s) put(*s++);
  }
};

void put_unsigned(Out& o, unsigned long long v, unsigned base, int width, bool left) {
  char tmp[24];
  int n = 0;
  do {
    const unsigned d = static_cast<unsigned>(v % base);
    tmp[n++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while (v);
  if (!left)
    for (int p = n; p < width; ++p) o.put(' ');
  while (n) o.put(tmp[--n]);
}

void put_signed(Out& o, long long v, int width, bool left) {
  if (v < 0) {
    o.put('-');
    put_unsigned(o, static_cast<unsigned long long>(-(v + 1)) + 1, 10, width > 0 ? width - 1 : 0, left);
  } else {
    put_unsigned(o, static_cast<unsigned long long>(v), 10, width, left);
  }
}

// Fixed notation with `prec` decimals, by integer arithmetic on a scaled value.
void put_fixed(Out& o, double v, int prec) {
  if (v < 0) { o.put('-'); v = -v; }
  double scale = 1.0;
  for (int p = 0; p < prec; ++p) scale *= 10.0;
  double scaled = std::floor(v * scale + 0.5);
  if (scaled >= 1.8e19) { o.puts("(big)"); return; }
  const unsigned long long total = static_cast<unsigned long long>(scaled);
  const unsigned long long ip = static_cast<unsigned long long>(total / static_cast<unsigned long long>(scale));
  unsigned long long fp = total - ip * static_cast<unsigned long long>(scale);
  put_unsigned(o, ip, 10, 0, false);
  if (prec > 0) {
    o.put('.');
    char digits[24];
    for (int p = prec - 1; p >= 0; --p) { digits[p] = static_cast<char>('0' + fp % 10); fp /= 10; }
    for (int p = 0; p < prec; ++p) o.put(digits[p]);
  }
}

void put_exp(Out& o, double v, int prec) {
  if (v < 0) { o.put('-'); v = -v; }
  int e = 0;
  if (v != 0.0) {
    e = static_cast<int>(std::floor(std::log10(v)));
    double m = v / std::pow(10.0, e);
    // rounding may carry to 10.0
    double r = std::pow(10.0, prec);
    if (std::floor(m * r + 0.5) >= 10.0 * r) { ++e; }
  }
  put_fixed(o, v == 0.0 ? 0.0 : v / std::pow(10.0, e), prec);
  o.put('e');
  o.put(e < 0 ? '-' : '+');
  const int ae = e < 0 ? -e : e;
  if (ae < 10) o.put('0');
  put_unsigned(o, static_cast<unsigned>(ae), 10, 0, false);
}

void put_double(Out& o, double v, char conv, int prec) {
  if (std::isnan(v)) { o.puts("nan"); return; }
  if (std::isinf(v)) { o.puts(v < 0 ? "-inf" : "inf"); return; }
  if (prec < 0) prec = 6;
  if (conv == 'f') { put_fixed(o, v, prec); return; }
  if (conv == 'e') { put_exp(o, v, prec); return; }
  // %g: significant digits, fixed for moderate exponents, trailing zeros kept short
  if (prec == 0) prec = 1;
  const double a = std::fabs(v);
  const int e = a == 0.0 ? 0 : static_cast<int>(std::floor(std::log10(a)));
  if (e < -4 || e >= prec) { put_exp(o, v, prec - 1); return; }
  char tmp[64];
  Out t{tmp, sizeof tmp, 0};
  put_fixed(t, v, prec - 1 - e);
  tmp[t.len < sizeof tmp ? t.len : sizeof tmp - 1] = 0;
  // trim trailing zeros after a decimal point
  size_t n = std::strlen(tmp);
  if (std::strchr(tmp, '.')) {
    while (n > 0 && tmp[n - 1] == '0') --n;
    if (n > 0 && tmp[n - 1] == '.') --n;
  }
  for (size_t c = 0; c < n; ++c) o.put(tmp[c]);
}

}  // namespace

size_t vformat(char* buf, size_t cap, const char* f, va_list ap) {
  Out o{buf, cap, 0};
  while (*f) {
    if (*f != '%') { o.put(*f++); continue; }
    ++f;
    bool left = false;
    if (*f == '-') { left = true; ++f; }
    int width = 0;
    while (*f >= '0' && *f <= '9') width = width * 10 + (*f++ - '0');
    int prec = -1;
    if (*f == '.') {
      ++f;
      prec = 0;
      while (*f >= '0' && *f <= '9') prec = prec * 10 + (*f++ - '0');
    }
    int lng = 0;
    bool size = false;
    while (*f == 'l') { ++lng; ++f; }
    if (*f == 'z') { size = true; ++f; }
    const char c = *f ? *f++ : '\0';
    switch (c) {
      case 's': {
        const char* s = va_arg(ap, const char*);
        if (!s) s = "(null)";
        const size_t n = std::strlen(s);
        if (!left) for (size_t p = n; p < static_cast<size_t>(width); ++p) o.put(' ');
        o.puts(s);
        if (left) for (size_t p = n; p < static_cast<size_t>(width); ++p) o.put(' ');
        break;
      }
      case 'c': o.put(static_cast<char>(va_arg(ap, int))); break;
      case 'd':
      case 'i':
        if (size) put_signed(o, static_cast<long long>(va_arg(ap, ptrdiff_t)), width, left);
        else if (lng) put_signed(o, lng > 1 ? va_arg(ap, long long) : va_arg(ap, long), width, left);
        else put_signed(o, va_arg(ap, int), width, left);
        break;
      case 'u':
      case 'x': {
        unsigned long long v;
        if (size) v = va_arg(ap, size_t);
        else if (lng) v = lng > 1 ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned long);
        else v = va_arg(ap, unsigned);
        put_unsigned(o, v, c == 'x' ? 16 : 10, width, left);
        break;
      }
      case 'g':
      case 'e':
      case 'f': {
        const size_t start = o.len;
        char tmp[64];
        Out t{tmp, sizeof tmp, 0};
        put_double(t, va_arg(ap, double), c, prec);
        tmp[t.len < sizeof tmp ? t.len : sizeof tmp - 1] = 0;
        const size_t n = std::strlen(tmp);
        if (!left) for (size_t p = n; p < static_cast<size_t>(width); ++p) o.put(' ');
        o.puts(tmp);
        if (left) for (size_t p = o.len - start; p < static_cast<size_t>(width); ++p) o.put(' ');
        break;
      }
      case '%': o.put('%'); break;
      default: o.put('%'); if (c) o.put(c); break;
    }
  }
  if (cap) buf[o.len < cap ? o.len : cap - 1] = '\0';
  return o.len < cap ? o.len : (cap ? cap - 1 : 0);
}

size_t format(char* buf, size_t cap, const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  const size_t n = vformat(buf, cap, f, ap);
  va_end(ap);
  return n;
}

Text<256> fmt(const char* f, ...) {
  Text<256> t;
  va_list ap;
  va_start(ap, f);
  vformat(t.s, sizeof t.s, f, ap);
  va_end(ap);
  return t;
}

}  // namespace tatest
