// The host tool's command-line pieces, shared by its commands (tool.cc,
// explain.cc): where a command writes, its one-line errors, and options
// that take a value.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "tinyattn/port.h"

namespace tinyattn_tool {

constexpr int kExitFail = 1;   // the computation or a check failed, or bad data
constexpr int kExitUsage = 2;  // bad command line

// Where a command writes: its normal output and its one-line errors.
struct Io {
  std::FILE* out;
  std::FILE* err;
};

int fail(const Io& io, const std::string& msg, int code = kExitFail);
int usage_error(const Io& io, const std::string& msg);

// "default" or a port's name (tinyattn/port_list.h).
bool parse_port(const std::string& s, tinyattn::Port* p);
// A decimal integer in [lo, hi], nothing else.
bool parse_long(const std::string& s, long long lo, long long hi, long long* out);
std::vector<std::string> split(const std::string& s, char sep);

// An option that takes a value, where the value goes, and whether it came.
struct ValueOption {
  const char* flag;
  std::string* dst;
  bool seen = false;
};

// If argv[*i] is one of `opts`, takes its value (argv[*i + 1]) and returns 0.
// A missing or empty value and a repeated option are usage errors: an empty
// string is what an unset shell variable gives ("--causal $ALIGN"), and
// taking it as "absent" would silently drop the option. Returns -1 when
// argv[*i] is none of `opts`.
int take_value(const Io& io, ValueOption* opts, size_t count, int argc, char** argv, int* i);

// `tinyattn explain` (explain.cc).
int cmd_explain(const Io& io, int argc, char** argv);
// `tinyattn decode` (decode.cc).
int cmd_decode(const Io& io, int argc, char** argv);

}  // namespace tinyattn_tool
