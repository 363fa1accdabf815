#!/bin/sh
# Code size of one forward shape on Cortex-M4F (-Os, --gc-sections): text of
# an image calling Attention<Shape<16, 16, 32, 32>> (fp32) or
# AttentionI8<Shape<16, 16, 32, 32>> (int8) minus the text of the same image
# without the call; both images also on the Cortex-M55, where they link the
# Helium kernels next to the scalar ones. Also lists the largest library
# functions of the fp32 image.
# Prints a markdown table and writes it to $OUT/size.md.
#   bench/board/size.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-bench-board}
mkdir -p "$OUT"
. "$ROOT/bench/board/build.sh"

board_build cortex-m4-size size_forward "$OUT/size_forward_m4.elf"
board_build cortex-m4-size size_empty "$OUT/size_empty_m4.elf"
text() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }
with=$(text "$OUT/size_forward_m4.elf")
without=$(text "$OUT/size_empty_m4.elf")
board_build cortex-m4-size size_forward_i8 "$OUT/size_forward_i8_m4.elf"
board_build cortex-m4-size size_empty_i8 "$OUT/size_empty_i8_m4.elf"
board_build cortex-m55-size size_forward_i8 "$OUT/size_forward_i8_m55.elf"
board_build cortex-m55-size size_empty_i8 "$OUT/size_empty_i8_m55.elf"
i8_m4=$(($(text "$OUT/size_forward_i8_m4.elf") - $(text "$OUT/size_empty_i8_m4.elf")))
# The same with the scalar port alone (-DTINYATTN_WITH_DSP=OFF), as a build
# without the DSP port would link it.
BOARD_TREE=scalar BOARD_CMAKE_ARGS=-DTINYATTN_WITH_DSP=OFF board_build cortex-m4-size size_forward_i8 "$OUT/size_forward_i8_m4_scalar.elf"
BOARD_TREE=scalar BOARD_CMAKE_ARGS=-DTINYATTN_WITH_DSP=OFF board_build cortex-m4-size size_empty_i8 "$OUT/size_empty_i8_m4_scalar.elf"
BOARD_TREE=scalar BOARD_CMAKE_ARGS=-DTINYATTN_WITH_DSP=OFF board_build cortex-m4-size size_forward "$OUT/size_forward_m4_scalar.elf"
i8_m4_scalar=$(($(text "$OUT/size_forward_i8_m4_scalar.elf") - $(text "$OUT/size_empty_i8_m4_scalar.elf")))
f32_m4_scalar=$(($(text "$OUT/size_forward_m4_scalar.elf") - without))
# The DSP int8 kernels alone: the dsp port's functions in the default image.
dsp_i8=$(arm-none-eabi-nm -C -S -t d "$OUT/size_forward_i8_m4.elf" |
  awk '$3 ~ /[tTrR]/ && /tinyattn::dsp::/ { s += $2 } END { print s + 0 }')
i8_m55=$(($(text "$OUT/size_forward_i8_m55.elf") - $(text "$OUT/size_empty_i8_m55.elf")))
# The fp32 forward on the M55 (its default port, Helium, beside the scalar
# port), and the Helium fp32 kernels in it (the fused block and its
# fixed-extent entries included).
board_build cortex-m55-size size_forward "$OUT/size_forward_m55.elf"
board_build cortex-m55-size size_empty "$OUT/size_empty_m55.elf"
f32_m55=$(($(text "$OUT/size_forward_m55.elf") - $(text "$OUT/size_empty_m55.elf")))
mve_f32=$(arm-none-eabi-nm -C -S -t d "$OUT/size_forward_m55.elf" |
  awk '$3 ~ /[tTrR]/ && /tinyattn::mve::/ { s += $2 } END { print s + 0 }')
mve_fixed=$(arm-none-eabi-nm -C -S -t d "$OUT/size_forward_m55.elf" |
  awk '$3 ~ /[tT]/ && /attend_full<[1-9]/ { s += $2; n += 1 } END { printf "%d in %d entries", s, n }')
# The Helium int8 table alone: its functions in the M55 image.
mve_i8=$(arm-none-eabi-nm -C -S -t d "$OUT/size_forward_i8_m55.elf" |
  awk '$3 ~ /[tTrR]/ && /tinyattn::mve::.*(scores|exp_row|probabilities|weighted_sum|requantize|kExp2Table|kKernelsI8|kernels_i8)/ &&
       !/float/ { s += $2 } END { print s + 0 }')

table="$OUT/size.md"
{
  echo "| Cortex-M4F, -Os, --gc-sections | .text bytes |"
  echo "|---|---:|"
  echo "| image with Attention<Shape<16,16,32,32>> (fp32) | $with |"
  echo "| same image without the call | $without |"
  echo "| **fp32 forward, one shape** | **$((with - without))** |"
  echo "| fp32 forward, one shape, scalar port alone (-DTINYATTN_WITH_DSP=OFF) | $f32_m4_scalar |"
  echo "| **int8 forward, one shape** (AttentionI8, plan given as integers; scalar and DSP int8 kernels both linked) | **$i8_m4** |"
  echo "| of which the DSP int8 kernels | $dsp_i8 |"
  echo "| int8 forward, one shape, scalar port alone (-DTINYATTN_WITH_DSP=OFF) | $i8_m4_scalar |"
  echo
  echo "| Cortex-M55, -Os, --gc-sections | .text bytes |"
  echo "|---|---:|"
  echo "| **fp32 forward, one shape** (Attention<Shape<16,16,32,32>>; scalar and Helium fp32 kernels both linked) | **$f32_m55** |"
  echo "| of which the Helium fp32 kernels | $mve_f32 |"
  echo "| of which the Helium fixed-extent kernels | $mve_fixed |"
  echo "| **int8 forward, one shape** (scalar and Helium int8 kernels both linked) | **$i8_m55** |"
  echo "| of which the Helium int8 kernels | $mve_i8 |"
  echo
  echo "Largest functions the fp32 call brings in (bytes):"
  echo
  echo '```'
  arm-none-eabi-nm -C --size-sort -S -t d "$OUT/size_forward_m4.elf" | awk '$3 ~ /[tTwW]/' >"$OUT/with.syms"
  arm-none-eabi-nm -C --size-sort -S "$OUT/size_empty_m4.elf" | awk '$3 ~ /[tTwW]/ { print $4 }' >"$OUT/without.names"
  awk 'NR == FNR { seen[$0] = 1; next } { name = $4; for (i = 5; i <= NF; ++i) name = name " " $i; if (!(name in seen)) printf "%6d %s\n", $2 + 0, name }' \
    "$OUT/without.names" "$OUT/with.syms" | sort -rn | head -12
  echo '```'
} >"$table"
cat "$table"
