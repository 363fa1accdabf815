#!/bin/sh
# Instructions executed by one int8 forward pass on QEMU's Cortex-M and RISC-V boards,
# counted by the TCG plugin (bench/qemu/insncount.c): M4F, M7 and M33 without
# FPU (scalar and DSP ports), Armv6-M code on the Cortex-M3 of mps2-an385
# (scalar port, the only one it builds), RISC-V rv32imac on QEMU's virt board
# (scalar port) and M55 (scalar and Helium ports),
# shapes (N, M, Dk, Dv) =
# (16,16,32,32), (32,32,32,32) and (64,64,64,64). Each figure is
# one warm call: insns(2 calls) - insns(1 call), the first a warm-up (the
# quantization of the CMSIS-NN reference below). Prints a markdown table and writes it to $OUT/insns_i8.md, with
# per-function profiles of the (32,32,32,32) call next to it.
#   bench/board/count_i8.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

board_plugin
board_build cortex-m4-bench forward_i8_insns "$OUT/forward_i8_insns_m4.elf"
board_build cortex-m7-bench forward_i8_insns "$OUT/forward_i8_insns_m7.elf"
board_build cortex-m33-bench forward_i8_insns "$OUT/forward_i8_insns_m33.elf"
board_build cortex-m0-bench forward_i8_insns "$OUT/forward_i8_insns_m0.elf"
board_build riscv32-bench forward_i8_insns "$OUT/forward_i8_insns_rv32.elf"
board_build cortex-m55-bench forward_i8_insns "$OUT/forward_i8_insns_m55.elf"
# GCC 12 at -O2 vectorizes parts of the scalar port with Helium on the M55;
# this build shows the scalar port as plain scalar code.
board_build cortex-m55-bench-novec forward_i8_insns "$OUT/forward_i8_insns_m55novec.elf"

# count ELF MACHINE ARGS... -> instructions executed by the whole run
count() { board_count i8 "$@"; }

# machine_of BOARD -> the QEMU machine of a board tag
machine_of() {
  case $1 in
    m4) echo mps2-an386 ;;
    m7) echo mps2-an500 ;;
    m33) echo mps2-an505 ;;
    m0) echo mps2-an385 ;;
    rv32) echo virt ;;
    m55*) echo mps3-an547 ;;
  esac
}

# ratio A B -> A / B to two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# checksum BOARD PORT SHAPE [tflite] -> the output checksum the run printed
checksum() {
  machine=$(machine_of "$1")
  count "$OUT/forward_i8_insns_$1.elf" "$machine" "$3" "$2" 1 ${4:+"$4"} >/dev/null
  sed -n 's/^checksum //p' "$OUT/run_i8.log"
}

# cost BOARD PORT SHAPE [tflite] -> instructions of the forward call alone
cost() {
  machine=$(machine_of "$1")
  elf="$OUT/forward_i8_insns_$1.elf"
  with=$(count "$elf" "$machine" "$3" "$2" 2 ${4:+"$4"})
  without=$(count "$elf" "$machine" "$3" "$2" 1 ${4:+"$4"})
  echo $((with - without))
}

table="$OUT/insns_i8.md"
{
  echo "| int8 forward (N,M,Dk,Dv) | M4F scalar | M4F dsp | M4F scalar/dsp | M55 scalar | M55 scalar, no auto-vectorization | M55 mve | M55 scalar/mve | M55 plain scalar/mve |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    # The int8 path is bit-exact: every board and port must print the same bytes.
    ref=$(checksum m4 scalar $shape)
    for run in "m4 dsp" "m7 scalar" "m7 dsp" "m33 scalar" "m33 dsp" "m0 scalar" "rv32 scalar" "m55 scalar" "m55 mve"; do
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
  # The other M-profile cores, and each DSP column beside CMSIS-NN's int8
  # composition on the M4F, counted once (arm_batch_matmul_s8,
  # arm_softmax_s8, arm_transpose_s8, arm_batch_matmul_s8; same compiler and
  # flags; 214,557 / 786,747 / 3,632,988 instructions; CMSIS-NN is not built
  # here). Armv6-M code has no DSP port: its column is the scalar one.
  echo
  echo "| int8 forward (N,M,Dk,Dv) | M4F dsp | M4F dsp / CMSIS-NN M4F | M7 scalar | M7 dsp | M7 scalar/dsp | M7 dsp / CMSIS-NN M4F | M33 no FPU, scalar | M33 no FPU, dsp | M33 scalar/dsp | M33 dsp / CMSIS-NN M4F | Armv6-M scalar | Armv6-M / CMSIS-NN M4F | RV32 scalar | RV32 / CMSIS-NN M4F |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    case $shape in 16) cmsis=214557 ;; 32) cmsis=786747 ;; 64) cmsis=3632988 ;; esac
    case $shape in 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; 64) dims="(64,64,64,64)" ;; esac
    m4d=$(cost m4 dsp $shape)
    m7=$(cost m7 scalar $shape)
    m7d=$(cost m7 dsp $shape)
    m33=$(cost m33 scalar $shape)
    m33d=$(cost m33 dsp $shape)
    m0=$(cost m0 scalar $shape)
    rv32=$(cost rv32 scalar $shape)
    echo "| $dims | $m4d | $(ratio "$m4d" "$cmsis")x | $m7 | $m7d | $(ratio "$m7" "$m7d")x | $(ratio "$m7d" "$cmsis")x | $m33 | $m33d | $(ratio "$m33" "$m33d")x | $(ratio "$m33d" "$cmsis")x | $m0 | $(ratio "$m0" "$cmsis")x | $rv32 | $(ratio "$rv32" "$cmsis")x |"
  done
  # The TFLite-compatible mode (Int8Mode::kTflite) on the same tensors beside
  # the native mode, on the DSP and Helium ports; its bytes too are the same
  # on every port.
  echo
  echo "| int8 forward (N,M,Dk,Dv) | M4F dsp native | M4F dsp TFLite mode | TFLite/native | TFLite / CMSIS-NN M4F | M55 mve native | M55 mve TFLite mode | TFLite/native |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    case $shape in 16) cmsis=214557 ;; 32) cmsis=786747 ;; 64) cmsis=3632988 ;; esac
    case $shape in 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; 64) dims="(64,64,64,64)" ;; esac
    ref=$(checksum m4 scalar $shape tflite)
    for run in "m4 dsp" "m55 scalar" "m55 mve"; do
      # shellcheck disable=SC2086
      got=$(checksum $run $shape tflite)
      [ "$got" = "$ref" ] || {
        echo "TFLite-mode checksum mismatch at shape $shape: $run gives $got, M4F scalar $ref" >&2
        exit 1
      }
    done
    m4d=$(cost m4 dsp $shape)
    m4t=$(cost m4 dsp $shape tflite)
    m55v=$(cost m55 mve $shape)
    m55t=$(cost m55 mve $shape tflite)
    echo "| $dims | $m4d | $m4t | $(ratio "$m4t" "$m4d")x | $(ratio "$m4t" "$cmsis")x | $m55v | $m55t | $(ratio "$m55t" "$m55v")x |"
  done
} >"$table"
cat "$table"

# Where the instructions go: per-function attribution of the (32,32,32,32)
# int8 forward on each board and port, written next to the table.
profile() {
  machine=$(machine_of "$1")
  elf="$OUT/forward_i8_insns_$1.elf"
  for run in 2 1; do
    timeout -k 5 120 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native \
      -plugin "$OUT/libinsncount.so,outfile=$OUT/count_i8.txt,profile=$OUT/profile_i8_$run.txt" \
      -kernel "$elf" -append "32 $2 $run" >"$OUT/run_i8.log" 2>&1
  done
  /usr/bin/python3 "$ROOT/bench/qemu/attribute.py" "$elf" "$OUT/profile_i8_2.txt" "$OUT/profile_i8_1.txt" \
    >"$OUT/profile_i8_$1_$2_32.txt"
}
profile m4 scalar
profile m4 dsp
profile m7 dsp
profile m33 dsp
profile m0 scalar
profile m55 scalar
profile m55 mve
echo "per-function profiles: $OUT/profile_i8_*_32.txt"
