// One int16 forward pass on a board, for instruction counting under QEMU
// (bench/board/count_i16.sh). The program always prepares the same inputs and
// plan and prints the same checksum line; with run=0 it skips the forward
// call, so insns(run=1) - insns(run=0) is the cost of the call alone.
//
//   forward_i16_insns <shape: 16|32|64> <port: scalar|dsp|mve> <calls> [native|tflite]
//   16 -> (N, M, Dk, Dv) = (16, 16, 32, 32);  32 -> (32, 32, 32, 32);  64 -> (64, 64, 64, 64)
//   Inputs over the whole int16 range, symmetric scales. No weights.
//   tflite: Int16Mode::kTflite (TFLite's 16x8 graph) on the same inputs.
#include <cstdint>
#include <cstring>

#include "tinyattn/quant_i16.h"

#include "board_io.h"

namespace {

using Small = tinyattn::AttentionI16<tinyattn::Shape<16, 16, 32, 32>>;
using Large = tinyattn::AttentionI16<tinyattn::Shape<32, 32, 32, 32>>;
using Huge = tinyattn::AttentionI16<tinyattn::Shape<64, 64, 64, 64>>;

Huge::Q q;
Huge::K k;
Huge::V v;
Huge::Y y;
// forward_i16() takes Options (the port), so the program brings its own
// scratch (the largest shape's covers the others).
alignas(tinyattn::kWorkspaceAlign) unsigned char workspace[tinyattn::forward_i16_workspace_bytes(Huge::dims)];

// int16 inputs from a fixed linear congruential sequence.
void fill(int16_t* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<int16_t>(static_cast<int32_t>(seed >> 16) - 32768);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // argv[0] is the image path (QEMU's semihosting command line)
  if (argc < 4) {
    board_write("usage: forward_i16_insns 16|32|64 scalar|dsp|mve CALLS [native|tflite]\n");
    return 2;
  }
  const int size = std::strcmp(argv[1], "16") == 0 ? 16 : (std::strcmp(argv[1], "64") == 0 ? 64 : 32);
  const tinyattn::Port port = board_port(argv[2]);
  const int calls = board_calls(argv[3]);
  const bool tflite = argc > 4 && std::strcmp(argv[4], "tflite") == 0;

  fill(q.data(), q.size(), 1);
  fill(k.data(), k.size(), 2);
  fill(v.data(), v.size(), 3);
  std::memset(y.data(), 0, sizeof y);

  // Planning (floating point, once) is setup, outside the counted call.
  // Real values in [-2, 2): logits of a few units, a softmax neither flat
  // nor one-hot.
  static const float s_in = 1.0f / 16384, s_y = 1.0f / 16384;
  tinyattn::Int16Scheme scheme;
  scheme.q = {&s_in, nullptr, 1};
  scheme.k = {&s_in, nullptr, 1};
  scheme.v = {&s_in, nullptr, 1};
  scheme.y = {&s_y, nullptr, 1};
  // The score tensor's range: |q.k| <= 2 * 2 * Dk real units, Dk <= 64.
  static const float s_scores = 256.0f / 32768;
  if (tflite) {
    scheme.mode = tinyattn::Int16Mode::kTflite;
    scheme.scores = {&s_scores, nullptr, 1};
  }
  static tinyattn::Int16HeadPlan plan[1];
  const tinyattn::Dims dims = size == 16 ? Small::dims : size == 64 ? Huge::dims : Large::dims;
  tinyattn::Status status = tinyattn::plan_int16(dims, scheme, plan, 1);
  const tinyattn::Int16Plan plans{plan, 1};

  // The smaller shapes read the leading parts of the same buffers.
  const tinyattn::ForwardIoI16 io{q.data(), k.data(), v.data(), y.data()};
  const tinyattn::Workspace ws{workspace, sizeof workspace};
  for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call)
    status = tinyattn::forward_i16(dims, io, plans, ws, {}, tinyattn::Options{{}, port});
  uint32_t sum = 0;
  for (int16_t b : y) sum = (sum << 1 | sum >> 31) ^ static_cast<uint16_t>(b);
  write_hex("checksum ", sum);
  return status == tinyattn::Status::kOk ? 0 : 1;
}
