#include "unity_format.h"

#include "format.h"

namespace tatest {

namespace {
// File names print without directories, as Unity does with __FILE__ from the
// build: stable across build trees and hosts.
const char* base_name(const char* path) {
  const char* b = path;
  for (const char* p = path; *p; ++p)
    if (*p == '/' || *p == '\\') b = p + 1;
  return b;
}
}  // namespace

void unity_result(WriteFn write, const char* file, int line, const char* name, const char* result,
                  const char* detail) {
  char buf[512];
  if (detail && *detail)
    format(buf, sizeof buf, "%s:%d:%s:%s: %s\n", base_name(file), line, name, result, detail);
  else
    format(buf, sizeof buf, "%s:%d:%s:%s\n", base_name(file), line, name, result);
  write(buf);
}

void unity_summary(WriteFn write, const UnityTally& t) {
  char buf[128];
  write("\n-----------------------\n");
  format(buf, sizeof buf, "%u Tests %u Failures %u Ignored\n", t.tests, t.failures, t.ignored);
  write(buf);
  write(t.failures ? "FAIL\n" : "OK\n");
}

}  // namespace tatest
