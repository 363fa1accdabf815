// The `tinyattn` command line as a function, for the program (main.cc) and
// the fuzzer (tests/fuzz/tool_fuzz.cc).
#pragma once

#include <cstdio>

namespace tinyattn_tool {

// Runs one command: argv[0] is the program name, argv[1] the command (run,
// plan, selftest, demo), like main's. Writes its normal output to `out` and
// its errors to `err` only, never exits or aborts, and returns the exit
// status: 0, 1 (bad data or a failed computation or check) or 2 (a bad
// command line: an option, a value or an output path). Not reentrant (the
// selftest's transcript goes through a file-scope stream).
int tool_main(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace tinyattn_tool
