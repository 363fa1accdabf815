#!/bin/sh
# Instructions executed by one fp16 forward pass at (N, M, Dk, Dv) =
# (16, 16, 32, 32) on QEMU's Cortex-M55 board (mps3-an547), counted by the
# TCG plugin (bench/qemu/insncount.c): the default widening compute against
# the native fp16 products, with the scalar and the Helium port for the fp32
# softmax. Each figure is one warm call: insns(2 calls) - insns(1 call).
# Prints a markdown table and writes it to $OUT/insns_f16.md.
#   bench/board/count_f16.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

board_plugin
board_build cortex-m55-bench forward_f16_insns "$OUT/forward_f16_insns_m55.elf"

# count ARGS... -> instructions executed by the whole run
count() { board_count f16 "$OUT/forward_f16_insns_m55.elf" mps3-an547 "$@"; }

# cost COMPUTE PORT -> instructions of the forward call alone
cost() { echo $(($(count "$1" "$2" 2) - $(count "$1" "$2" 1))); }

table="$OUT/insns_f16.md"
{
  echo "| fp16 forward (16,16,32,32), M55 | softmax port | widen to fp32 | native fp16 products | widen/native |"
  echo "|---|---|---:|---:|---:|"
  for port in scalar mve; do
    w=$(cost widen $port)
    n=$(cost native $port)
    echo "| no weights | $port | $w | $n | $(awk -v a="$w" -v b="$n" 'BEGIN { printf "%.2f", a / b }')x |"
  done
} >"$table"
cat "$table"
