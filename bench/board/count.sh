#!/bin/sh
# Instructions executed by one fp32 forward pass on QEMU's Cortex-M boards,
# counted by a TCG plugin (bench/qemu/insncount.c): M4F (scalar) and M55
# (scalar and Helium), shapes (N, M, Dk, Dv) = (16,16,32,32) and (32,32,32,32),
# and one power-on self-test per board and port.
# Each figure is insns(run) - insns(same program, forward call skipped).
# Prints a markdown table and writes it to $OUT/insns.md.
#   bench/board/count.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-bench-board}
mkdir -p "$OUT"
. "$ROOT/bench/board/build.sh"

gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$OUT/libinsncount.so" "$ROOT/bench/qemu/insncount.c"
board_build cortex-m4-bench forward_insns "$OUT/forward_insns_m4.elf"
board_build cortex-m55-bench forward_insns "$OUT/forward_insns_m55.elf"
# GCC 12 at -O2 vectorizes parts of the scalar port with Helium on the M55;
# this build shows the scalar port as plain scalar code.
board_build cortex-m55-bench-novec forward_insns "$OUT/forward_insns_m55novec.elf"

# count ELF MACHINE ARGS... -> instructions executed by the whole run
count() { board_count f32 "$@"; }

# cost BOARD PORT SHAPE [API] -> instructions of the forward call alone
cost() {
  case $1 in m4) machine=mps2-an386 ;; m55*) machine=mps3-an547 ;; esac
  elf="$OUT/forward_insns_$1.elf"
  with=$(count "$elf" "$machine" "$3" "$2" 1 "${4:-fixed}")
  without=$(count "$elf" "$machine" "$3" "$2" 0 "${4:-fixed}")
  echo $((with - without))
}

table="$OUT/insns.md"
{
  echo "| shape (N,M,Dk,Dv) | M4F scalar | M55 scalar | M55 scalar, no auto-vectorization | M55 mve | M55 scalar/mve | M55 plain scalar/mve |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32; do
    m4=$(cost m4 scalar $shape)
    m55s=$(cost m55 scalar $shape)
    m55n=$(cost m55novec scalar $shape)
    m55v=$(cost m55 mve $shape)
    ratio=$(awk -v a="$m55s" -v b="$m55v" 'BEGIN { printf "%.2f", a / b }')
    ratio_plain=$(awk -v a="$m55n" -v b="$m55v" 'BEGIN { printf "%.2f", a / b }')
    case $shape in 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; esac
    echo "| $dims | $m4 | $m55s | $m55n | $m55v | ${ratio}x | ${ratio_plain}x |"
  done
    # The compile-time API (Attention<Shape>, whose dims are checked at
  # compile time) against the run-time forward() of the same shape.
  echo
  echo "| shape (N,M,Dk,Dv) | board, port | forward() | Attention<Shape> | saved per call |"
  echo "|---|---|---:|---:|---:|"
  for shape in 16 32; do
    case $shape in 16) dims="(16,16,32,32)" ;; 32) dims="(32,32,32,32)" ;; esac
    for bp in "m4 scalar" "m55 mve"; do
      # shellcheck disable=SC2086
      set -- $bp
      fixed=$(cost "$1" "$2" $shape)
      runtime=$(cost "$1" "$2" $shape runtime)
      echo "| $dims | $1 $2 | $runtime | $fixed | $((runtime - fixed)) |"
    done
  done
  # The power-on self-test (26 checks, nothing printed), per board and port.
  echo
  echo "| self-test | M4F scalar | M55 scalar | M55 mve |"
  echo "|---|---:|---:|---:|"
  echo "| tinyattn::selftest() | $(cost m4 scalar selftest) | $(cost m55 scalar selftest) | $(cost m55 mve selftest) |"
} >"$table"
cat "$table"

# Where the instructions go: per-function attribution of the (32,32,32,32)
# forward on each board and port, written next to the table.
profile() {
  case $1 in m4) machine=mps2-an386 ;; m55*) machine=mps3-an547 ;; esac
  elf="$OUT/forward_insns_$1.elf"
  for run in 1 0; do
    timeout -k 5 120 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native \
      -plugin "$OUT/libinsncount.so,outfile=$OUT/count.txt,profile=$OUT/profile$run.txt" \
      -kernel "$elf" -append "32 $2 $run" >"$OUT/run.log" 2>&1
  done
  /usr/bin/python3 "$ROOT/bench/qemu/attribute.py" "$elf" "$OUT/profile1.txt" "$OUT/profile0.txt" \
    >"$OUT/profile_$1_$2_32.txt"
}
profile m4 scalar
profile m55 scalar
profile m55 mve
echo "per-function profiles: $OUT/profile_*_32.txt"

# The exp per element: the instructions of the port's exp_shift_sum (exp of
# x - max and the running sum) in the (32,32,32,32) forward, over its 1,024
# query-key pairs.
{
  echo
  echo "| exp_shift_sum, (32,32,32,32) forward | M4F scalar (FPU) | M55 scalar | M55 mve |"
  echo "|---|---:|---:|---:|"
  per() { awk '/exp_shift_sum/ { s += $1 } END { printf "%.1f", s / 1024 }' "$OUT/profile_$1_32.txt"; }
  echo "| instructions per element | $(per m4_scalar) | $(per m55_scalar) | $(per m55_mve) |"
} >>"$table"
tail -n 4 "$table"
