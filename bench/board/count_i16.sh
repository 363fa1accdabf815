#!/bin/sh
# Instructions executed by one int16 forward pass (AttentionI16's shapes) on
# QEMU's Cortex-M4F (scalar and DSP ports) and Cortex-M55 (scalar and Helium
# ports), counted by the TCG plugin (bench/qemu/insncount.c), beside the
# int8 forward of the same shapes from the same build (count_i8.sh's
# program), shapes (N, M, Dk, Dv) = (16,16,32,32), (32,32,32,32) and
# (64,64,64,64). Each figure is one warm call: insns(2 calls) - insns(1 call).
# Prints two markdown tables (the native modes; the four modes on the DSP
# and Helium ports: int8 and int16, native and TFLite) and writes them to
# $OUT/insns_i16.md, with per-function profiles of the (32,32,32,32) call.
#   bench/board/count_i16.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

board_plugin
for board in m4 m55; do
  board_build "cortex-$board-bench" forward_i16_insns "$OUT/forward_i16_insns_$board.elf"
  board_build "cortex-$board-bench" forward_i8_insns "$OUT/forward_i8_insns_$board.elf"
done

# machine_of BOARD -> the QEMU machine of a board tag
machine_of() {
  case $1 in
    m4) echo mps2-an386 ;;
    m55) echo mps3-an547 ;;
  esac
}

# ratio A B -> A / B to two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# checksum BOARD PORT SHAPE [tflite] -> the int16 output checksum the run printed
checksum() {
  board_count i16 "$OUT/forward_i16_insns_$1.elf" "$(machine_of "$1")" "$3" "$2" 1 ${4:-} >/dev/null
  sed -n 's/^checksum //p' "$OUT/run_i16.log"
}

# cost DTYPE BOARD PORT SHAPE [tflite] -> instructions of the forward call alone
cost() {
  machine=$(machine_of "$2")
  elf="$OUT/forward_$1_insns_$2.elf"
  with=$(board_count "$1" "$elf" "$machine" "$4" "$3" 2 ${5:-})
  without=$(board_count "$1" "$elf" "$machine" "$4" "$3" 1 ${5:-})
  echo $((with - without))
}

# check_bytes SHAPE [tflite]: the int16 path is bit-exact, so every board and
# port must print the same output bytes.
check_bytes() {
  ref=$(checksum m4 scalar "$1" ${2:-})
  for run in "m4 dsp" "m55 scalar" "m55 mve"; do
    # shellcheck disable=SC2086
    got=$(checksum $run "$1" ${2:-})
    [ "$got" = "$ref" ] || {
      echo "checksum mismatch at shape $1 ${2:-native}: $run gives $got, M4F scalar $ref" >&2
      exit 1
    }
  done
}

table="$OUT/insns_i16.md"
{
  echo "| forward (N,M,Dk,Dv) | M4F int16 scalar | M4F int16 dsp | M4F int8 dsp | M4F int16/int8 | M55 int16 scalar | M55 int16 mve | M55 int8 mve | M55 int16/int8 |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    check_bytes $shape
    m4s=$(cost i16 m4 scalar $shape)
    m4d=$(cost i16 m4 dsp $shape)
    m4i8=$(cost i8 m4 dsp $shape)
    m55s=$(cost i16 m55 scalar $shape)
    m55v=$(cost i16 m55 mve $shape)
    m55i8=$(cost i8 m55 mve $shape)
    case $shape in 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; 64) dims="(64,64,64,64)" ;; esac
    echo "| $dims | $m4s | $m4d | $m4i8 | $(ratio "$m4d" "$m4i8")x | $m55s | $m55v | $m55i8 | $(ratio "$m55v" "$m55i8")x |"
  done
  echo
  # The TFLite modes (Int8Mode::kTflite, Int16Mode::kTflite) on the same
  # tensors, beside the native ones, on the DSP and Helium ports.
  echo "| forward (N,M,Dk,Dv) | M4F int8 | M4F int8 TFLite | M4F int16 | M4F int16 TFLite | M55 int8 | M55 int8 TFLite | M55 int16 | M55 int16 TFLite |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    check_bytes $shape tflite
    set -- "$(cost i8 m4 dsp $shape)" "$(cost i8 m4 dsp $shape tflite)" "$(cost i16 m4 dsp $shape)" \
      "$(cost i16 m4 dsp $shape tflite)" "$(cost i8 m55 mve $shape)" "$(cost i8 m55 mve $shape tflite)" \
      "$(cost i16 m55 mve $shape)" "$(cost i16 m55 mve $shape tflite)"
    case $shape in 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; 64) dims="(64,64,64,64)" ;; esac
    echo "| $dims | $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 |"
  done
} >"$table"
cat "$table"

# Where the instructions go: per-function attribution of the (32,32,32,32)
# int16 forward on each board and port, written next to the table.
profile() {
  machine=$(machine_of "$1")
  elf="$OUT/forward_i16_insns_$1.elf"
  for run in 2 1; do
    timeout -k 5 120 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native \
      -plugin "$OUT/libinsncount.so,outfile=$OUT/count_i16.txt,profile=$OUT/profile_i16_$run.txt" \
      -kernel "$elf" -append "32 $2 $run" >"$OUT/run_i16.log" 2>&1
  done
  /usr/bin/python3 "$ROOT/bench/qemu/attribute.py" "$elf" "$OUT/profile_i16_2.txt" "$OUT/profile_i16_1.txt" \
    >"$OUT/profile_i16_$1_$2_32.txt"
}
profile m4 scalar
profile m4 dsp
profile m55 scalar
profile m55 mve
echo "per-function profiles: $OUT/profile_i16_*_32.txt"
