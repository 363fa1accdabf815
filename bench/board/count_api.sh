#!/bin/sh
# The run-time forward() against the compile-time Attention<Shape> on its
# std::arrays: instructions per fp32 call on QEMU's Cortex-M4F (scalar and
# DSP ports) and Cortex-M55 (scalar and Helium), shapes (N, M, Dk, Dv) =
# (8,8,16,16), (16,16,32,32) and (32,32,32,32), counted as count.sh counts
# (one warm call: insns(2 calls) - insns(1 call), bench/qemu/insncount.c).
# Prints the markdown table and writes it to $OUT/insns_api.md (count.sh
# appends it to insns.md).
#   bench/board/count_api.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

board_plugin
board_build cortex-m4-bench forward_insns "$OUT/forward_insns_m4.elf"
board_build cortex-m55-bench forward_insns "$OUT/forward_insns_m55.elf"
# The same images with the build's own default port (the bench presets pin
# scalar), for the calls a user writes without Options.
for board in m4 m55; do
  (BOARD_TREE=best BOARD_CMAKE_ARGS=-DTINYATTN_DEFAULT_PORT=best
    board_build "cortex-$board-bench" forward_insns "$OUT/forward_insns_$board-best.elf")
done
default_port() { sed -n 's/.*tinyattn ports: .*(default \(.*\))$/\1/p' "$OUT/configure-cortex-$1-bench-best.log"; }

# cost BOARD PORT SHAPE API -> instructions of the forward call alone
cost() {
  case $1 in m4*) machine=mps2-an386 ;; *) machine=mps3-an547 ;; esac
  with=$(board_count api "$OUT/forward_insns_$1.elf" "$machine" "$3" "$2" 2 "$4")
  without=$(board_count api "$OUT/forward_insns_$1.elf" "$machine" "$3" "$2" 1 "$4")
  echo $((with - without))
}

table="$OUT/insns_api.md"
{
  echo "| shape (N,M,Dk,Dv) | board, port | forward() | Attention<Shape> | saved per call | Attention<Shape> / forward() |"
  echo "|---|---|---:|---:|---:|---:|"
  for shape in 8 16 32; do
    case $shape in 8) dims="(8,8,16,16)" ;; 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; esac
    # "default": the calls as a user writes them (attn(q, k, v, y) and
    # forward(dims, io, ws), no Options) on the board's default port.
    for bp in "m4 scalar" "m4 dsp" "m4-best default" "m55 scalar" "m55 mve" "m55-best default"; do
      # shellcheck disable=SC2086
      set -- $bp
      fixed=$(cost "$1" "$2" $shape fixed)
      runtime=$(cost "$1" "$2" $shape runtime)
      case $1 in *-best) label="${1%-best} default ($(default_port "${1%-best}")), no Options" ;; *) label="$1 $2" ;; esac
      echo "| $dims | $label | $runtime | $fixed | $((runtime - fixed)) | $(awk -v a="$fixed" -v b="$runtime" 'BEGIN { printf "%.3f", a / b }') |"
    done
  done
} >"$table"
cat "$table"
