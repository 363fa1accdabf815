// One forward at (N, M, Dk, Dv) = (64, 64, 64, 64), fp32 or int8, on a named
// port, for instruction counting under qemu-riscv64 with the TCG plugin
// (bench/qemu/rvv_count.sh). The program always prepares the same inputs and
// prints the same checksum; with calls=0 it skips the forward, so
// insns(calls=1) - insns(calls=0) is the cost of the call alone.
//
//   rvv_insns f32|i8 <port name> <calls>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tinyattn/quant.h"
#include "tinyattn/tinyattn.h"

namespace {

using Huge = tinyattn::Attention<tinyattn::Shape<64, 64, 64, 64>>;
using HugeI8 = tinyattn::AttentionI8<tinyattn::Shape<64, 64, 64, 64>>;
constexpr tinyattn::Dims kDims = Huge::dims;
constexpr size_t kElems = 64 * 64;

float q[kElems], k[kElems], v[kElems], y[kElems];
int8_t q8[kElems], k8[kElems], v8[kElems], y8[kElems];
HugeI8 plan_i8;
alignas(tinyattn::kWorkspaceAlign) unsigned char workspace[tinyattn::forward_workspace_bytes(kDims) +
                                                           tinyattn::forward_i8_workspace_bytes(kDims)];

uint32_t next(uint32_t& seed) { return seed = seed * 1664525u + 1013904223u; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: rvv_insns f32|i8 PORT CALLS\n");
    return 2;
  }
  const bool i8 = std::strcmp(argv[1], "i8") == 0;
  tinyattn::Port port = tinyattn::Port::kDefault;
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (std::strcmp(tinyattn::port_name(p), argv[2]) == 0) port = p;
  if (!tinyattn::port_compiled(port) || std::strcmp(tinyattn::port_name(port), argv[2]) != 0) {
    std::fprintf(stderr, "port %s is not compiled in\n", argv[2]);
    return 2;
  }
  const int calls = std::atoi(argv[3]);
  uint32_t seed = 1;
  for (size_t i = 0; i < kElems; ++i) {
    q[i] = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 16384.0f;
    k[i] = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 16384.0f;
    v[i] = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 16384.0f;
    q8[i] = static_cast<int8_t>(static_cast<int32_t>(next(seed) >> 24) - 128);
    k8[i] = static_cast<int8_t>(static_cast<int32_t>(next(seed) >> 24) - 128);
    v8[i] = static_cast<int8_t>(static_cast<int32_t>(next(seed) >> 24) - 128);
  }
  // Asymmetric zero points, so every zero-point correction runs.
  static const float s_in = 0.025f, s_y = 0.02f;
  static const int32_t zq = 3, zk = -5, zv = 7, zy = -1;
  tinyattn::Int8Scheme scheme;
  scheme.q = {&s_in, &zq, 1};
  scheme.k = {&s_in, &zk, 1};
  scheme.v = {&s_in, &zv, 1};
  scheme.y = {&s_y, &zy, 1};
  tinyattn::Status status = plan_i8.configure(scheme);
  const tinyattn::Workspace ws{workspace, sizeof workspace};
  for (int c = 0; c < calls && status == tinyattn::Status::kOk; ++c) {
    if (i8)
      status = tinyattn::forward_i8(kDims, tinyattn::ForwardIoI8{q8, k8, v8, y8}, plan_i8.plan(), ws, {},
                                    tinyattn::Options{{}, port});
    else
      status = tinyattn::forward(kDims, tinyattn::ForwardIo{q, k, v, y, nullptr, nullptr}, ws, {},
                                 tinyattn::Options{{}, port});
  }
  if (status != tinyattn::Status::kOk) return 1;
  uint64_t sum = 0;
  for (size_t i = 0; i < kElems; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &y[i], 4);
    sum = sum * 31 + (i8 ? static_cast<uint8_t>(y8[i]) : bits);
  }
  std::printf("%s %s %s checksum %016llx\n", argv[1], argv[2], tinyattn::port_simd_target(port),
              static_cast<unsigned long long>(sum));
  return 0;
}
