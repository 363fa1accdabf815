// One fp16 forward pass on the Cortex-M55 board, for instruction counting
// under QEMU (bench/board/count_f16.sh): the default widening compute against
// the native fp16 products (F16Compute::kNativeF16Products). With run=0 the
// call is skipped, so insns(run=1) - insns(run=0) is the cost of the call alone.
//
//   forward_f16_insns <compute: widen|native> <port: scalar|mve> <run: CALLS>
//   shape (N, M, Dk, Dv) = (16, 16, 32, 32), weights not requested
#include <cstdint>
#include <cstring>

#include "tinyattn/forward_f16.h"

#include "board_io.h"

namespace {

using Attn = tinyattn::AttentionF16<tinyattn::Shape<16, 16, 32, 32>>;

Attn attn;
Attn::Q q;
Attn::K k;
Attn::V v;
Attn::Y y;

// Inputs in [-1, 1) from a fixed linear congruential sequence, stored as fp16.
void fill(tinyattn::half* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = tinyattn::to_half(static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) /
                             static_cast<float>(1 << 23));
  }
}

}  // namespace

int main(int argc, char** argv) {
  // argv[0] is the image path (QEMU's semihosting command line)
  if (argc < 4) {
    board_write("usage: forward_f16_insns widen|native scalar|mve CALLS\n");
    return 2;
  }
  tinyattn::OptionsF16 options;
  options.compute = std::strcmp(argv[1], "native") == 0 ? tinyattn::F16Compute::kNativeF16Products
                                                          : tinyattn::F16Compute::kWidenToF32;
  options.port = board_port(argv[2]);
  const int calls = board_calls(argv[3]);

  fill(q.data(), q.size(), 1);
  fill(k.data(), k.size(), 2);
  fill(v.data(), v.size(), 3);
  y.fill(tinyattn::half{});

  tinyattn::Status status = tinyattn::Status::kOk;
  for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call)
    status = attn(q, k, v, y, {}, nullptr, options);
  uint32_t sum = 0;
  for (tinyattn::half h : y) sum = (sum << 1 | sum >> 31) ^ h.bits;
  write_hex("checksum ", sum);
  return status == tinyattn::Status::kOk ? 0 : 1;
}
