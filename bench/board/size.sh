#!/bin/sh
# Code size of one fp32 forward shape on Cortex-M4F (-Os, --gc-sections):
# text of an image calling Attention<Shape<16, 16, 32, 32>> minus the text of
# the same image without the call. Also lists the largest library functions.
# Prints a markdown table and writes it to $OUT/size.md.
#   bench/board/size.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-bench-board}
mkdir -p "$OUT"
. "$ROOT/bench/board/build.sh"

board_build m4 -Os "$OUT/size_forward_m4.elf" "$ROOT/bench/board/forward_size.cc"
board_build m4 -Os "$OUT/size_empty_m4.elf" "$ROOT/bench/board/forward_size.cc" -DTINYATTN_SIZE_EMPTY
text() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }
with=$(text "$OUT/size_forward_m4.elf")
without=$(text "$OUT/size_empty_m4.elf")

table="$OUT/size.md"
{
  echo "| Cortex-M4F, -Os, --gc-sections | .text bytes |"
  echo "|---|---:|"
  echo "| image with Attention<Shape<16,16,32,32>> (fp32) | $with |"
  echo "| same image without the call | $without |"
  echo "| **fp32 forward, one shape** | **$((with - without))** |"
  echo
  echo "Largest functions the call brings in (bytes):"
  echo
  echo '```'
  arm-none-eabi-nm -C --size-sort -S -t d "$OUT/size_forward_m4.elf" | awk '$3 ~ /[tT]/' >"$OUT/with.syms"
  arm-none-eabi-nm -C --size-sort -S "$OUT/size_empty_m4.elf" | awk '$3 ~ /[tT]/ { print $4 }' >"$OUT/without.names"
  awk 'NR == FNR { seen[$0] = 1; next } { name = $4; for (i = 5; i <= NF; ++i) name = name " " $i; if (!(name in seen)) printf "%6d %s\n", $2 + 0, name }' \
    "$OUT/without.names" "$OUT/with.syms" | sort -rn | head -12
  echo '```'
} >"$table"
cat "$table"
