// Test hook (linked into the test runners, not the library): forces one
// Highway target so the same suite runs once per target. Called by
// tests/framework/test_env.cc for TINYATTN_HWY_TARGET=<name>.
// Returns the name of the target now executing, or nullptr (with a line that
// says why) when that target is not compiled or this CPU cannot run it.
#include <cstdio>
#include <cstring>

#include <hwy/highway.h>

#include "backends/highway/highway.h"

namespace {

bool same_name(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b) {
    const char ca = (*a >= 'a' && *a <= 'z') ? static_cast<char>(*a - 32) : *a;
    const char cb = (*b >= 'a' && *b <= 'z') ? static_cast<char>(*b - 32) : *b;
    if (ca != cb) return false;
  }
  return *a == *b;
}

}  // namespace

extern "C" const char* tinyattn_test_select_target(const char* request) {
#if TINYATTN_HWY_DYNAMIC
  const int64_t compiled = HWY_TARGETS;
#else
  const int64_t compiled = HWY_STATIC_TARGET;
#endif
  int64_t target = 0;
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t t = int64_t{1} << bit;
    if ((compiled & t) && same_name(hwy::TargetName(t), request)) target = t;
  }
  if (target == 0) {
    std::printf("tinyattn: highway target %s is not compiled into this build\n", request);
    return nullptr;
  }
#if TINYATTN_HWY_DYNAMIC
  // Detection again, not the target an earlier call forced: a caller may
  // switch targets (differential_fuzz picks one per input).
  hwy::SetSupportedTargetsForTest(0);
  if (!(hwy::SupportedTargets() & target)) {
    std::printf("tinyattn: highway target %s is compiled but this CPU cannot run it\n", hwy::TargetName(target));
    return nullptr;
  }
  hwy::SetSupportedTargetsForTest(target);
#endif
  // Dispatch must now land exactly there, or the run would test another target.
  const char* running = tinyattn::highway::kernels_f32().simd_target();
  if (std::strcmp(running, hwy::TargetName(target)) != 0) {
    std::printf("tinyattn: forced highway target %s but %s runs\n", hwy::TargetName(target), running);
    return nullptr;
  }
  return running;
}
