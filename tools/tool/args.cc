// The host tool's command-line pieces (args.h).
#include "tool/args.h"

#include <cerrno>
#include <cstdlib>

namespace tinyattn_tool {

int fail(const Io& io, const std::string& msg, int code) {
  std::fprintf(io.err, "tinyattn: error: %s\n", msg.c_str());
  return code;
}

int usage_error(const Io& io, const std::string& msg) {
  std::fprintf(io.err, "tinyattn: error: %s\n(run 'tinyattn --help' for usage)\n", msg.c_str());
  return kExitUsage;
}

bool parse_port(const std::string& s, tinyattn::Port* p) {
  if (s == tinyattn::port_name(tinyattn::Port::kDefault)) {
    *p = tinyattn::Port::kDefault;
    return true;
  }
  for (tinyattn::Port port : tinyattn::kAllPorts)
    if (s == tinyattn::port_name(port)) {
      *p = port;
      return true;
    }
  return false;
}

bool parse_long(const std::string& s, long long lo, long long hi, long long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

int take_value(const Io& io, ValueOption* opts, size_t count, int argc, char** argv, int* i) {
  const std::string a = argv[*i];
  for (size_t o = 0; o < count; ++o) {
    if (a != opts[o].flag) continue;
    if (*i + 1 >= argc) return usage_error(io, a + " needs a value");
    if (argv[*i + 1][0] == '\0') return usage_error(io, a + " has an empty value");
    if (opts[o].seen) return usage_error(io, a + " is given twice");
    opts[o].seen = true;
    *opts[o].dst = argv[++*i];
    return 0;
  }
  return -1;
}

}  // namespace tinyattn_tool
