// The Unity transcript both runners print, so one parser reads every target:
//   <file>:<line>:<test name>:PASS
//   <file>:<line>:<test name>:FAIL: <message>
//   <file>:<line>:<test name>:IGNORE: <reason>
//   -----------------------
//   <N> Tests <F> Failures <I> Ignored
//   OK | FAIL
#pragma once

#include <cstddef>

namespace tatest {

using WriteFn = void (*)(const char* text);

struct UnityTally {
  unsigned tests = 0, failures = 0, ignored = 0;
};

// Formats one result line ("PASS" / "FAIL" / "IGNORE"); detail may be null.
void unity_result(WriteFn write, const char* file, int line, const char* name, const char* result,
                  const char* detail);
void unity_summary(WriteFn write, const UnityTally& tally);

}  // namespace tatest
