#!/bin/sh
# Instructions executed by one int8 forward pass on QEMU's Cortex-M boards,
# counted by the TCG plugin (bench/qemu/insncount.c): M4F (scalar and DSP
# ports) and M55 (scalar and Helium ports), shapes (N, M, Dk, Dv) =
# (16,16,32,32), (32,32,32,32) and (64,64,64,64). Each figure is
# insns(run) - insns(same program, forward call skipped). Prints a markdown table and writes it to $OUT/insns_i8.md, with
# per-function profiles of the (32,32,32,32) call next to it.
#   bench/board/count_i8.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-bench-board}
mkdir -p "$OUT"
. "$ROOT/bench/board/build.sh"

gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$OUT/libinsncount.so" "$ROOT/bench/qemu/insncount.c"
board_build cortex-m4-bench forward_i8_insns "$OUT/forward_i8_insns_m4.elf"
board_build cortex-m55-bench forward_i8_insns "$OUT/forward_i8_insns_m55.elf"
# GCC 12 at -O2 vectorizes parts of the scalar port with Helium on the M55;
# this build shows the scalar port as plain scalar code.
board_build cortex-m55-bench-novec forward_i8_insns "$OUT/forward_i8_insns_m55novec.elf"

# count ELF MACHINE ARGS... -> instructions executed by the whole run
count() { board_count i8 "$@"; }

# checksum BOARD PORT SHAPE -> the output checksum the run printed
checksum() {
  case $1 in m4) machine=mps2-an386 ;; m55*) machine=mps3-an547 ;; esac
  count "$OUT/forward_i8_insns_$1.elf" "$machine" "$3" "$2" 1 >/dev/null
  sed -n 's/^checksum //p' "$OUT/run_i8.log"
}

# cost BOARD PORT SHAPE -> instructions of the forward call alone
cost() {
  case $1 in m4) machine=mps2-an386 ;; m55*) machine=mps3-an547 ;; esac
  elf="$OUT/forward_i8_insns_$1.elf"
  with=$(count "$elf" "$machine" "$3" "$2" 1)
  without=$(count "$elf" "$machine" "$3" "$2" 0)
  echo $((with - without))
}

table="$OUT/insns_i8.md"
{
  echo "| int8 forward (N,M,Dk,Dv) | M4F scalar | M4F dsp | M4F scalar/dsp | M55 scalar | M55 scalar, no auto-vectorization | M55 mve | M55 scalar/mve | M55 plain scalar/mve |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    # The int8 path is bit-exact: every board and port must print the same bytes.
    ref=$(checksum m4 scalar $shape)
    for run in "m4 dsp" "m55 scalar" "m55 mve"; do
      # shellcheck disable=SC2086
      got=$(checksum $run $shape)
      [ "$got" = "$ref" ] || {
        echo "checksum mismatch at shape $shape: $run gives $got, M4F scalar $ref" >&2
        exit 1
      }
    done
    m4=$(cost m4 scalar $shape)
    m4d=$(cost m4 dsp $shape)
    ratio_m4=$(awk -v a="$m4" -v b="$m4d" 'BEGIN { printf "%.2f", a / b }')
    m55s=$(cost m55 scalar $shape)
    m55n=$(cost m55novec scalar $shape)
    m55v=$(cost m55 mve $shape)
    ratio=$(awk -v a="$m55s" -v b="$m55v" 'BEGIN { printf "%.2f", a / b }')
    ratio_plain=$(awk -v a="$m55n" -v b="$m55v" 'BEGIN { printf "%.2f", a / b }')
    case $shape in 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; 64) dims="(64,64,64,64)" ;; esac
    echo "| $dims | $m4 | $m4d | ${ratio_m4}x | $m55s | $m55n | $m55v | ${ratio}x | ${ratio_plain}x |"
  done
} >"$table"
cat "$table"

# Where the instructions go: per-function attribution of the (32,32,32,32)
# int8 forward on each board and port, written next to the table.
profile() {
  case $1 in m4) machine=mps2-an386 ;; m55*) machine=mps3-an547 ;; esac
  elf="$OUT/forward_i8_insns_$1.elf"
  for run in 1 0; do
    timeout -k 5 120 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native \
      -plugin "$OUT/libinsncount.so,outfile=$OUT/count_i8.txt,profile=$OUT/profile_i8_$run.txt" \
      -kernel "$elf" -append "32 $2 $run" >"$OUT/run_i8.log" 2>&1
  done
  /usr/bin/python3 "$ROOT/bench/qemu/attribute.py" "$elf" "$OUT/profile_i8_1.txt" "$OUT/profile_i8_0.txt" \
    >"$OUT/profile_i8_$1_$2_32.txt"
}
profile m4 scalar
profile m4 dsp
profile m55 scalar
profile m55 mve
echo "per-function profiles: $OUT/profile_i8_*_32.txt"
