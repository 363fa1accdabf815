#!/bin/sh
# Instructions executed per RoPE row (one 64-wide head, positions 1000..1007)
# on QEMU's Cortex-M4F (mps2-an386) and Armv6-M code on the Cortex-M3 of
# mps2-an385, counted by the TCG plugin
# (bench/qemu/insncount.c): computed (apply_rope) and from a RopeTable.
# Each figure is one warm call of 8 rows, insns(2 calls) - insns(1 call), / 8.
# Prints a markdown table and writes it to $OUT/insns_rope.md.
#   bench/board/count_rope.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

board_plugin
board_build cortex-m4-bench rope_insns "$OUT/rope_insns_m4.elf"
board_build cortex-m0-bench rope_insns "$OUT/rope_insns_m0.elf"

# per_row BOARD MACHINE MODE -> instructions per row
per_row() {
  with=$(board_count rope "$OUT/rope_insns_$1.elf" "$2" "$3" 2)
  without=$(board_count rope "$OUT/rope_insns_$1.elf" "$2" "$3" 1)
  echo $(((with - without) / 8))
}

{
  echo "| board | computed (apply_rope) | RopeTable |"
  echo "|---|---:|---:|"
  for b in "m4 mps2-an386 Cortex-M4F" "m0 mps2-an385 Armv6-M"; do
    # shellcheck disable=SC2086 # board, machine and name, split
    set -- $b
    echo "| $3 | $(per_row "$1" "$2" computed) | $(per_row "$1" "$2" table) |"
  done
} | tee "$OUT/insns_rope.md"
