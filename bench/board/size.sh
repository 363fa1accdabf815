#!/bin/sh
# Code size of one forward shape on Cortex-M4F and Cortex-M55 (-Os,
# --gc-sections), per port: text of an image calling
# Attention<Shape<16, 16, 32, 32>> (fp32), AttentionI8<Shape<16, 16, 32, 32>>
# (int8) or AttentionI8<..., Int8Mode::kTflite> (the TFLite mode alone) minus
# the text of the same image without the call, built once per
# default port (-DTINYATTN_DEFAULT_PORT=...). Those calls take no Options, so
# they reach the default port's tables alone (the fp32 call the one of its
# extent, default_kernels_f32_extent; default_kernels_i8): each image links
# one port's kernels. Also lists the largest library functions of
# the M4F's DSP fp32 image.
# Prints markdown tables and writes them to $OUT/size.md.
#   bench/board/size.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

text() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }

# sizes BOARD PRESET PORT -> "fp32 int8 tflite": the bytes the fp32 call, the
# int8 call and the int8 call in the TFLite mode alone add with PORT as the
# default port (the images stay in $OUT for nm).
sizes() {
  board=$1 preset=$2 port=$3
  for img in size_forward size_empty size_forward_i8 size_empty_i8 size_forward_tflite; do
    BOARD_TREE=$port BOARD_CMAKE_ARGS=-DTINYATTN_DEFAULT_PORT=$port \
      board_build "$preset" "$img" "$OUT/${img}_${board}_$port.elf"
  done
  f32=$(($(text "$OUT/size_forward_${board}_$port.elf") - $(text "$OUT/size_empty_${board}_$port.elf")))
  i8=$(($(text "$OUT/size_forward_i8_${board}_$port.elf") - $(text "$OUT/size_empty_i8_${board}_$port.elf")))
  tfl=$(($(text "$OUT/size_forward_tflite_${board}_$port.elf") - $(text "$OUT/size_empty_i8_${board}_$port.elf")))
  echo "$f32 $i8 $tfl"
}

# port_bytes ELF NAMESPACE -> bytes of the functions and tables of one port in an image
port_bytes() {
  arm-none-eabi-nm -C -S -t d "$1" | awk -v ns="tinyattn::$2::" '$3 ~ /[tTrRwW]/ && index($0, ns) { s += $2 } END { print s + 0 }'
}

table="$OUT/size.md"
{
  echo "| -Os, --gc-sections, .text bytes of one shape (16,16,32,32) | fp32 forward | of which the port's kernels | int8 forward | of which the port's kernels | int8 forward, TFLite mode alone | of which the port's kernels |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  for bp in "m4 cortex-m4-size scalar" "m4 cortex-m4-size dsp" "m55 cortex-m55-size scalar" "m55 cortex-m55-size dsp" "m55 cortex-m55-size mve"; do
    # shellcheck disable=SC2086
    set -- $bp
    # shellcheck disable=SC2046
    set -- "$@" $(sizes "$1" "$2" "$3")
    case $1 in m4) core="Cortex-M4F" ;; m55) core="Cortex-M55" ;; esac
    # the port's own functions (the scalar port's live in tinyattn::scalar)
    k32=$(port_bytes "$OUT/size_forward_${1}_$3.elf" "$3")
    k8=$(port_bytes "$OUT/size_forward_i8_${1}_$3.elf" "$3")
    kt=$(port_bytes "$OUT/size_forward_tflite_${1}_$3.elf" "$3")
    echo "| $core, $3 port | $4 | $k32 | $5 | $k8 | $6 | $kt |"
  done
  # The Helium fused block's fixed-extent entries, part of the mve fp32 kernels.
  fixed=$(arm-none-eabi-nm -C -S -t d "$OUT/size_forward_m55_mve.elf" |
    awk '$3 ~ /[tT]/ && /attend_full<[1-9]/ { s += $2; n += 1 } END { printf "%d bytes in %d entries", s, n }')
  echo
  echo "Of the Cortex-M55 mve port's fp32 kernels, the fused block's fixed-extent entries: $fixed."
  echo
  echo "Largest functions the Cortex-M4F's fp32 call brings in with the DSP port (bytes):"
  echo
  echo '```'
  arm-none-eabi-nm -C --size-sort -S -t d "$OUT/size_forward_m4_dsp.elf" | awk '$3 ~ /[tTwW]/' >"$OUT/with.syms"
  arm-none-eabi-nm -C --size-sort -S "$OUT/size_empty_m4_dsp.elf" | awk '$3 ~ /[tTwW]/ { print $4 }' >"$OUT/without.names"
  awk 'NR == FNR { seen[$0] = 1; next } { name = $4; for (i = 5; i <= NF; ++i) name = name " " $i; if (!(name in seen)) printf "%6d %s\n", $2 + 0, name }' \
    "$OUT/without.names" "$OUT/with.syms" | sort -rn | head -12
  echo '```'
} >"$table"
cat "$table"

# The int16 path beside int8: AttentionI16 of the same shape in each mode
# alone, on offline plans, per default port; written to $OUT/size_i16.md.
table16="$OUT/size_i16.md"
{
  echo "| -Os, --gc-sections, .text bytes of one shape (16,16,32,32) | int8 forward | int8 TFLite mode alone | int16 forward | int16 TFLite 16x8 mode alone |"
  echo "|---|---:|---:|---:|---:|"
  for bp in "m4 cortex-m4-size scalar" "m4 cortex-m4-size dsp" "m55 cortex-m55-size mve"; do
    # shellcheck disable=SC2086
    set -- $bp
    for img in size_forward_i16 size_empty_i16 size_forward_tflite16; do
      BOARD_TREE=$3 BOARD_CMAKE_ARGS=-DTINYATTN_DEFAULT_PORT=$3 board_build "$2" "$img" "$OUT/${img}_${1}_$3.elf"
    done
    e8=$(text "$OUT/size_empty_i8_${1}_$3.elf")
    e16=$(text "$OUT/size_empty_i16_${1}_$3.elf")
    case $1 in m4) core="Cortex-M4F" ;; m55) core="Cortex-M55" ;; esac
    echo "| $core, $3 port | $(($(text "$OUT/size_forward_i8_${1}_$3.elf") - e8)) |" \
      "$(($(text "$OUT/size_forward_tflite_${1}_$3.elf") - e8)) |" \
      "$(($(text "$OUT/size_forward_i16_${1}_$3.elf") - e16)) |" \
      "$(($(text "$OUT/size_forward_tflite16_${1}_$3.elf") - e16)) |"
  done
} >"$table16"
cat "$table16"
