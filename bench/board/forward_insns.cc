// One fp32 forward pass on a board, for instruction counting under QEMU
// (bench/board/count.sh). The program always prepares the same inputs and
// prints the same checksum line; with run=0 it skips the forward call, so
// insns(run=1) - insns(run=0) is the cost of the call alone.
//
//   forward_insns <shape: 8|16|32|64|selftest> <port: scalar|dsp|mve|default> <run: 0|1> [api: fixed|runtime]
//   8 -> (N, M, Dk, Dv) = (8, 8, 16, 16);  16 -> (16, 16, 32, 32);  32 -> (32, 32, 32, 32);  64 -> (64, 64, 64, 64);
//   selftest -> one tinyattn::selftest() of that port, printing nothing;
//   api: the compile-time Attention<Shape> on its std::arrays (default) or
//   the run-time tinyattn::forward()
#include <cstdint>
#include <cstring>

#include "tinyattn/selftest.h"
#include "tinyattn/tinyattn.h"

#include "board_io.h"

namespace {

using Tiny = tinyattn::Attention<tinyattn::Shape<8, 8, 16, 16>>;
using Small = tinyattn::Attention<tinyattn::Shape<16, 16, 32, 32>>;
using Large = tinyattn::Attention<tinyattn::Shape<32, 32, 32, 32>>;
using Huge = tinyattn::Attention<tinyattn::Shape<64, 64, 64, 64>>;

Tiny tiny;
Small small;
Large large;
Huge huge;
Huge::Q q;
Huge::K k;
Huge::V v;
Huge::Y y;
// The smaller shapes' arrays hold the leading parts of the largest ones
// (copied in and out in every run, so the copies cancel in the difference).
Large::Q large_q;
Large::K large_k;
Large::V large_v;
Large::Y large_y;
Tiny::Q tiny_q;
Tiny::K tiny_k;
Tiny::V tiny_v;
Tiny::Y tiny_y;
Small::Q small_q;
Small::K small_k;
Small::V small_v;
Small::Y small_y;
tinyattn::SelftestReport report;
// The run-time API's workspace: as large as the compile-time object's.
alignas(tinyattn::kWorkspaceAlign) unsigned char workspace[Huge::workspace_bytes];

// Inputs in [-1, 1) from a fixed linear congruential sequence.
void fill(float* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // argv[0] is the image path (QEMU's semihosting command line)
  if (argc < 4) {
    board_write("usage: forward_insns 8|16|32|64|selftest scalar|dsp|mve|default CALLS [fixed|runtime]\n");
    return 2;
  }
  const bool is_tiny = std::strcmp(argv[1], "8") == 0;
  const bool is_small = std::strcmp(argv[1], "16") == 0;
  const bool is_huge = std::strcmp(argv[1], "64") == 0;
  const bool is_selftest = std::strcmp(argv[1], "selftest") == 0;
  // "default": the calls as a user writes them, without Options (Attention's
  // plain call, attn(q, k, v, y)), on the build's default port.
  const bool default_call = std::strcmp(argv[2], "default") == 0;
  tinyattn::Options options;
  options.port = default_call ? tinyattn::Port::kDefault : board_port(argv[2]);
  const int calls = board_calls(argv[3]);
  const bool runtime_api = argc > 4 && std::strcmp(argv[4], "runtime") == 0;

  fill(q.data(), q.size(), 1);
  fill(k.data(), k.size(), 2);
  fill(v.data(), v.size(), 3);
  std::memset(y.data(), 0, sizeof y);

  std::memcpy(tiny_q.data(), q.data(), sizeof tiny_q);
  std::memcpy(tiny_k.data(), k.data(), sizeof tiny_k);
  std::memcpy(tiny_v.data(), v.data(), sizeof tiny_v);
  std::memset(tiny_y.data(), 0, sizeof tiny_y);
  std::memcpy(small_q.data(), q.data(), sizeof small_q);
  std::memcpy(small_k.data(), k.data(), sizeof small_k);
  std::memcpy(small_v.data(), v.data(), sizeof small_v);
  std::memset(small_y.data(), 0, sizeof small_y);
  std::memcpy(large_q.data(), q.data(), sizeof large_q);
  std::memcpy(large_k.data(), k.data(), sizeof large_k);
  std::memcpy(large_v.data(), v.data(), sizeof large_v);
  std::memset(large_y.data(), 0, sizeof large_y);

  tinyattn::Status status = tinyattn::Status::kOk;
  for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call) {
    if (is_selftest) {
      status = tinyattn::selftest(&report, options.port);
      if (status == tinyattn::Status::kOk && !report.passed()) status = tinyattn::Status::kUnsupported;
    } else if (runtime_api) {
      const tinyattn::Dims dims = is_tiny ? Tiny::dims : is_small ? Small::dims : is_huge ? Huge::dims : Large::dims;
      status = tinyattn::forward(dims, {q.data(), k.data(), v.data(), y.data(), nullptr, nullptr},
                                 {workspace, sizeof workspace}, {}, options);
    } else if (is_tiny) {
      status = default_call ? tiny(tiny_q, tiny_k, tiny_v, tiny_y)
                            : tiny(tiny_q, tiny_k, tiny_v, tiny_y, {}, nullptr, options);
    } else if (is_small) {
      status = default_call ? small(small_q, small_k, small_v, small_y)
                            : small(small_q, small_k, small_v, small_y, {}, nullptr, options);
    } else if (is_huge) {
      status = default_call ? huge(q, k, v, y) : huge(q, k, v, y, {}, nullptr, options);
    } else {
      status = default_call ? large(large_q, large_k, large_v, large_y)
                            : large(large_q, large_k, large_v, large_y, {}, nullptr, options);
    }
  }
  if (is_tiny && !runtime_api) std::memcpy(y.data(), tiny_y.data(), sizeof tiny_y);
  if (is_small && !runtime_api) std::memcpy(y.data(), small_y.data(), sizeof small_y);
  if (!is_tiny && !is_small && !is_huge && !runtime_api) std::memcpy(y.data(), large_y.data(), sizeof large_y);
  uint32_t sum = 0;
  for (float f : y) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    sum = (sum << 1 | sum >> 31) ^ bits;
  }
  write_hex("checksum ", sum);
  return status == tinyattn::Status::kOk ? 0 : 1;
}
