// RoPE on a board, for instruction counting under QEMU (bench/board/count_rope.sh):
// one call rotates 8 query rows of one 64-wide head (positions 1000..1007),
// computed (apply_rope) or from a RopeTable filled before the calls, so
// insns(2 calls) - insns(1 call) is one warm call of 8 rows.
//
//   rope_insns <computed|table> <calls: 0..9>
#include <cstdint>
#include <cstring>

#include "board_io.h"
#include "tinyattn/rope.h"

namespace {

constexpr size_t kDim = 64, kRows = 8, kFirst = 1000;
tinyattn::RopeTable<kDim, kFirst + kRows> table;  // 258 KB
float x[kRows * kDim];

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    board_write("usage: rope_insns computed|table CALLS\n");
    return 2;
  }
  const bool use_table = std::strcmp(argv[1], "table") == 0;
  const int calls = board_calls(argv[2]);
  uint32_t seed = 1;
  for (float& f : x) {
    seed = seed * 1664525u + 1013904223u;
    f = static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
  }
  const tinyattn::Rope rope;
  tinyattn::Status status = use_table ? table.init(rope) : tinyattn::Status::kOk;
  for (int call = 0; call < calls && status == tinyattn::Status::kOk; ++call)
    status = use_table ? table.apply(x, 1, kRows, kDim, kFirst) : tinyattn::apply_rope(rope, x, 1, kRows, kDim, kFirst);
  uint32_t sum = 0;
  for (float f : x) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    sum = (sum << 1 | sum >> 31) ^ bits;
  }
  write_hex("checksum ", sum);
  return status == tinyattn::Status::kOk ? 0 : 1;
}
