// One int8 forward pass on a board, for instruction counting under QEMU
// (bench/board/count_i8.sh). The program always prepares the same inputs and
// plan and prints the same checksum line; with run=0 it skips the forward
// call, so insns(run=1) - insns(run=0) is the cost of the call alone.
//
//   forward_i8_insns <shape: 16|32|64> <port: scalar|dsp|mve> <run: 0|1> [tflite]
//   16 -> (N, M, Dk, Dv) = (16, 16, 32, 32);  32 -> (32, 32, 32, 32);  64 -> (64, 64, 64, 64)
//   Zero points on every tensor (below), so every zero-point correction runs.
//   No weights. `tflite`: the plan of Int8Mode::kTflite on the same tensors
//   (the int8 score tensor at scale 1/4, zero point 0).
#include <cstdint>
#include <cstring>

#include "tinyattn/quant.h"

#include "board_io.h"

namespace {

using Small = tinyattn::AttentionI8<tinyattn::Shape<16, 16, 32, 32>>;
using Large = tinyattn::AttentionI8<tinyattn::Shape<32, 32, 32, 32>>;
using Huge = tinyattn::AttentionI8<tinyattn::Shape<64, 64, 64, 64>>;

Huge::Q q;
Huge::K k;
Huge::V v;
Huge::Y y;
// forward_i8() takes Options (the port), so the program brings its own
// scratch (the largest shape's covers the others), with room for the TFLite
// mode's exp table (forward_i8_tflite_workspace_bytes).
alignas(tinyattn::kWorkspaceAlign) unsigned char workspace[tinyattn::forward_i8_tflite_workspace_bytes(Huge::dims)];

// int8 inputs from a fixed linear congruential sequence.
void fill(int8_t* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<int8_t>(static_cast<int32_t>(seed >> 24) - 128);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // argv[0] is the image path (QEMU's semihosting command line)
  if (argc < 4) {
    board_write("usage: forward_i8_insns 16|32|64 scalar|dsp|mve CALLS [tflite]\n");
    return 2;
  }
  const bool tflite = argc > 4 && std::strcmp(argv[4], "tflite") == 0;
  const int size = std::strcmp(argv[1], "16") == 0 ? 16 : (std::strcmp(argv[1], "64") == 0 ? 64 : 32);
  const tinyattn::Port port = board_port(argv[2]);
  const int calls = board_calls(argv[3]);

  fill(q.data(), q.size(), 1);
  fill(k.data(), k.size(), 2);
  fill(v.data(), v.size(), 3);
  std::memset(y.data(), 0, sizeof y);

  // Planning (floating point, once) is setup, outside the counted call.
  // The per-tensor quantization of the CMSIS-NN composition issue 18 measured
  // (Q, K, V scale 0.025, zero points 3, -5, 7; Y scale 0.02, zero point -1).
  static const float s_in = 0.025f, s_y = 0.02f;
  static const int32_t zq = 3, zk = -5, zv = 7, zy = -1;
  tinyattn::Int8Scheme scheme;
  scheme.q = {&s_in, &zq, 1};
  scheme.k = {&s_in, &zk, 1};
  scheme.v = {&s_in, &zv, 1};
  scheme.y = {&s_y, &zy, 1};
  static const float s_scores = 0.25f;
  static const int32_t z_scores = 0;
  if (tflite) {
    scheme.mode = tinyattn::Int8Mode::kTflite;
    scheme.scores = {&s_scores, &z_scores, 1};
  }
  // Planned into the objects' plans (one head each); forward_i8() runs either mode.
  static tinyattn::Int8HeadPlan plan[1];
  const tinyattn::Dims dims = size == 16 ? Small::dims : size == 64 ? Huge::dims : Large::dims;
  tinyattn::Status status = tinyattn::plan_int8(dims, scheme, plan, 1);
  const tinyattn::Int8Plan plans{plan, 1};

  // The smaller shapes read the leading parts of the same buffers.
  const tinyattn::ForwardIoI8 io{q.data(), k.data(), v.data(), y.data()};
  const tinyattn::Workspace ws{workspace, sizeof workspace};
  for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call)
    status = tinyattn::forward_i8(dims, io, plans, ws, {}, tinyattn::Options{{}, port});
  uint32_t sum = 0;
  for (int8_t b : y) sum = (sum << 1 | sum >> 31) ^ static_cast<uint8_t>(b);
  write_hex("checksum ", sum);
  return status == tinyattn::Status::kOk ? 0 : 1;
}
