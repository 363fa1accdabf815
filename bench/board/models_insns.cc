// The attention of tiny transformers' layers on a board, for instruction
// counting under QEMU (bench/board/count_models.sh): one prefill forward or
// one decode step of a KvCache. The program always prepares the same inputs
// and prints the same checksum line; it calls what it measures CALLS times,
// so insns(2 calls) - insns(1 call) is one warm call.
//
// Prefill image (no TINYATTN_MODELS_CACHE): shapes at run time, in one arena
// the fp32 or int8 tensors share (each run uses one of them):
//   models_insns f32|i8 PORT CALLS HQ HKV N D CAUSAL(0|1)
//   N queries over N keys, Dk = Dv = D; exit status 3 and "does not fit"
//   when the tensors do not fit the arena.
// Decode image (TINYATTN_MODELS_CACHE=0 float, 1 KvInt8<>, 2 int8_t, with
// TINYATTN_MODELS_HQ, _HKV, _D and _CTX): a static KvCache of that shape:
//   models_insns PORT CALLS FILLED
//   FILLED - 1 tokens appended, then 1 more, then CALLS attends of the last
//   token's queries (the append is setup, outside the counted calls).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tinyattn/attention.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/quant.h"

#include "board_io.h"

namespace {

// Inputs in [-1, 1) from a fixed linear congruential sequence. (Each image
// uses some of these helpers.)
[[maybe_unused]] void fill(float* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
  }
}

[[maybe_unused]] void fill(int8_t* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<int8_t>(static_cast<int32_t>(seed >> 24) - 128);
  }
}

[[maybe_unused]] uint32_t checksum(const float* y, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &y[i], sizeof bits);
    sum = (sum << 1 | sum >> 31) ^ bits;
  }
  return sum;
}

[[maybe_unused]] uint32_t checksum(const int8_t* y, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum = (sum << 1 | sum >> 31) ^ static_cast<uint8_t>(y[i]);
  return sum;
}

// The per-tensor quantization of bench/board/forward_i8_insns.cc.
const float kScaleIn = 0.025f, kScaleY = 0.02f;
const int32_t kZeroQ = 3, kZeroK = -5, kZeroV = 7, kZeroY = -1;

[[maybe_unused]] tinyattn::Int8Scheme scheme() {
  tinyattn::Int8Scheme s;
  s.q = {&kScaleIn, &kZeroQ, 1};
  s.k = {&kScaleIn, &kZeroK, 1};
  s.v = {&kScaleIn, &kZeroV, 1};
  s.y = {&kScaleY, &kZeroY, 1};
  return s;
}

// A decimal argument (no <cstdlib> on every board's C++ library).
size_t arg_size(const char* s) {
  size_t x = 0;
  for (; *s >= '0' && *s <= '9'; ++s) x = 10 * x + static_cast<size_t>(*s - '0');
  return x;
}

#ifndef TINYATTN_MODELS_CACHE

// 3.75 MiB: what the 4 MiB boards leave beside the 64 KiB stack and the rest.
constexpr size_t kArenaBytes = size_t{15} << 18;
union Arena {
  float f[kArenaBytes / sizeof(float)];
  int8_t i8[kArenaBytes];
};
Arena arena;
// Room for the fp32 forward's scratch at these shapes (no weights output:
// the tiled path past 256 keys) and for forward_i8's.
constexpr size_t kWorkspaceBytes = 32 * 1024;
alignas(tinyattn::kWorkspaceAlign) unsigned char workspace[kWorkspaceBytes];
constexpr size_t kMaxHeads = 16;
tinyattn::Int8HeadPlan plans[kMaxHeads];

#else

constexpr size_t kHq = TINYATTN_MODELS_HQ, kHkv = TINYATTN_MODELS_HKV, kD = TINYATTN_MODELS_D;
#if TINYATTN_MODELS_CACHE == 0
using Storage = float;
#elif TINYATTN_MODELS_CACHE == 1
using Storage = tinyattn::KvInt8<>;
#else
using Storage = int8_t;
#endif
using Cache = tinyattn::KvCache<Storage, kHq, kHkv, kD, kD, TINYATTN_MODELS_CTX>;
using Value = Cache::Value;
Cache cache;
Value q[kHq * kD], y[kHq * kD], k[kHkv * kD], v[kHkv * kD];
#if TINYATTN_MODELS_CACHE == 2
tinyattn::Int8HeadPlan plans[kHq];
#endif

#endif

}  // namespace

int main(int argc, char** argv) {
  // argv[0] is the image path (QEMU's semihosting command line)
#ifndef TINYATTN_MODELS_CACHE
  if (argc < 9) {
    board_write("usage: models_insns f32|i8 PORT CALLS HQ HKV N D CAUSAL\n");
    return 2;
  }
  const bool int8 = std::strcmp(argv[1], "i8") == 0;
  tinyattn::Options options;
  options.port = board_port(argv[2]);
  const int calls = board_calls(argv[3]);
  const size_t hq = arg_size(argv[4]), hkv = arg_size(argv[5]), n = arg_size(argv[6]), d = arg_size(argv[7]);
  const tinyattn::Mask mask = argv[8][0] == '1' ? tinyattn::Mask::causal_top_left() : tinyattn::Mask{};
  const tinyattn::Dims dims{n, n, d, d, hq, hkv};
  const size_t elems = dims.q_elems() + dims.k_elems() + dims.v_elems() + dims.y_elems();
  if (elems * (int8 ? 1 : sizeof(float)) > kArenaBytes || hq > kMaxHeads) {
    board_write("does not fit\n");
    return 3;
  }
  const tinyattn::Workspace ws{workspace, sizeof workspace};
  tinyattn::Status status = tinyattn::Status::kOk;
  uint32_t sum = 0;
  if (int8) {
    int8_t* q8 = arena.i8;
    int8_t* k8 = q8 + dims.q_elems();
    int8_t* v8 = k8 + dims.k_elems();
    int8_t* y8 = v8 + dims.v_elems();
    fill(q8, dims.q_elems(), 1);
    fill(k8, dims.k_elems(), 2);
    fill(v8, dims.v_elems(), 3);
    // Planning (floating point, once) is setup, outside the counted calls.
    status = tinyattn::plan_int8(dims, scheme(), plans, kMaxHeads);
    const tinyattn::Int8Plan plan{plans, hq};
    for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call)
      status = tinyattn::forward_i8(dims, {q8, k8, v8, y8, nullptr, nullptr}, plan, ws, mask, options);
    sum = checksum(y8, dims.y_elems());
  } else {
    float* q = arena.f;
    float* k = q + dims.q_elems();
    float* v = k + dims.k_elems();
    float* y = v + dims.v_elems();
    fill(q, dims.q_elems(), 1);
    fill(k, dims.k_elems(), 2);
    fill(v, dims.v_elems(), 3);
    for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call)
      status = tinyattn::forward(dims, {q, k, v, y, nullptr, nullptr}, ws, mask, options);
    sum = checksum(y, dims.y_elems());
  }
#else
  if (argc < 4) {
    board_write("usage: models_insns PORT CALLS FILLED\n");
    return 2;
  }
  tinyattn::Options options;
  options.port = board_port(argv[1]);
  const int calls = board_calls(argv[2]);
  const size_t filled = arg_size(argv[3]);
  tinyattn::Status status = filled >= 1 ? tinyattn::Status::kOk : tinyattn::Status::kBadDimension;
  for (size_t t = 0; t < filled && status == tinyattn::Status::kOk; ++t) {
    fill(k, kHkv * kD, static_cast<uint32_t>(2 * t + 2));
    fill(v, kHkv * kD, static_cast<uint32_t>(2 * t + 3));
    status = cache.append(k, v, 1);
  }
  fill(q, kHq * kD, 1);
#if TINYATTN_MODELS_CACHE == 2
  if (status == tinyattn::Status::kOk) status = tinyattn::plan_int8(Cache::dims, scheme(), plans, kHq);
  const tinyattn::Int8Plan plan{plans, kHq};
  for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call)
    status = cache.attend(q, y, 1, plan, options);
#else
  for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call) status = cache.attend(q, y, 1, options);
#endif
  const uint32_t sum = checksum(y, kHq * kD);
#endif
  write_hex("checksum ", sum);
  return status == tinyattn::Status::kOk ? 0 : 1;
}
