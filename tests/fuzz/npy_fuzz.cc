// libFuzzer target for the .npy reader of the host tool (tools/tool/npy.cc).
// Built by tests/fuzz/suite.cmake: npy_fuzz (TINYATTN_FUZZ=ON, clang; run by
// scripts/stages/65-fuzz.sh) and npy_fuzz_replay (every host build, ctest
// replays tests/fuzz/corpus/npy/). By hand:
//   build-fuzz/tests/npy_fuzz -max_total_time=60 -rss_limit_mb=512 tests/fuzz/corpus/npy
// The reader must never crash, read out of bounds, or allocate more than the
// input's size: every accepted array's payload is exactly what the header says.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tool/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tinyattn_tool::Array a;
  std::string error;
  if (!tinyattn_tool::parse_npy(data, size, &a, &error)) {
    if (error.empty() || error.find('\n') != std::string::npos) std::abort();  // one-line message, always
    return 0;
  }
  if (a.shape.empty() && a.count() != 1) std::abort();
  if (a.data.size() != a.count() * tinyattn_tool::dtype_size(a.dtype) || a.data.size() > size) std::abort();
  (void)a.shape_text();
  if (a.dtype == tinyattn_tool::DType::kF32 || a.dtype == tinyattn_tool::DType::kF16) {
    const std::vector<float> f = a.to_f32();
    if (f.size() != a.count()) std::abort();
  }
  return 0;
}
