#!/bin/sh
# Instructions executed by one fp32 forward pass on QEMU's Cortex-M boards,
# counted by a TCG plugin (bench/qemu/insncount.c): M4F, M7 and M33 with
# FPU (scalar and DSP ports), M33 without FPU (soft float; scalar and DSP ports) and M55
# (scalar and Helium), shapes (N, M, Dk, Dv) = (16,16,32,32), (32,32,32,32)
# and (64,64,64,64), and one power-on self-test per board and port.
# Each figure is one warm call: insns(2 calls) - insns(1 call), the first call
# a warm-up, identical inputs for every board and port.
# Prints markdown tables and writes them to $OUT/insns.md.
#   bench/board/count.sh [OUT_DIR]   (default build-bench-board)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/board/build.sh"

board_plugin
board_build cortex-m4-bench forward_insns "$OUT/forward_insns_m4.elf"
board_build cortex-m7-bench forward_insns "$OUT/forward_insns_m7.elf"
board_build cortex-m33-bench forward_insns "$OUT/forward_insns_m33.elf"
board_build cortex-m33f-bench forward_insns "$OUT/forward_insns_m33f.elf"
board_build cortex-m55-bench forward_insns "$OUT/forward_insns_m55.elf"
# GCC 12 at -O2 vectorizes parts of the scalar port with Helium on the M55;
# this build shows the scalar port as plain scalar code.
board_build cortex-m55-bench-novec forward_insns "$OUT/forward_insns_m55novec.elf"

# count ELF MACHINE ARGS... -> instructions executed by the whole run
count() { board_count f32 "$@"; }

# machine_of BOARD -> the QEMU machine of a board tag
machine_of() {
  case $1 in
    m4) echo mps2-an386 ;;
    m7) echo mps2-an500 ;;
    m33*) echo mps2-an505 ;;
    m55*) echo mps3-an547 ;;
  esac
}

# cost BOARD PORT SHAPE [API] -> instructions of the forward call alone
cost() {
  machine=$(machine_of "$1")
  elf="$OUT/forward_insns_$1.elf"
  with=$(count "$elf" "$machine" "$3" "$2" 2 "${4:-fixed}")
  without=$(count "$elf" "$machine" "$3" "$2" 1 "${4:-fixed}")
  echo $((with - without))
}

# ratio A B -> A / B to two decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# dims SHAPE -> the shape as (N,M,Dk,Dv)
dims() { echo "($1,$1,$(($1 < 32 ? 32 : $1)),$(($1 < 32 ? 32 : $1)))"; }

table="$OUT/insns.md"
{
  # Armv7E-M and Armv8-M mainline: the scalar port and the DSP port (the
  # default there; on the M33 without FPU its fp32 table is the scalar one).
  # The plain C reference (scores, expf, P.V per row; M4F, the same compiler
  # and flags, counted once: 117,621 / 468,753 / 3,318,206 instructions) is
  # the reference of the "/ plain C" columns.
  echo "| fp32 forward (N,M,Dk,Dv) | M4F scalar | M4F dsp | M4F scalar/dsp | M4F dsp / plain C | M7 scalar | M7 dsp | M7 scalar/dsp | M33 scalar | M33 dsp | M33 scalar/dsp | M33 dsp / plain C | M33 no FPU, scalar | M33 no FPU, dsp |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    case $shape in 16) plain=117621 ;; 32) plain=468753 ;; 64) plain=3318206 ;; esac
    m4=$(cost m4 scalar $shape)
    m4d=$(cost m4 dsp $shape)
    m7=$(cost m7 scalar $shape)
    m7d=$(cost m7 dsp $shape)
    m33f=$(cost m33f scalar $shape)
    m33fd=$(cost m33f dsp $shape)
    m33=$(cost m33 scalar $shape)
    m33d=$(cost m33 dsp $shape)
    echo "| $(dims $shape) | $m4 | $m4d | $(ratio "$m4" "$m4d")x | $(ratio "$m4d" "$plain")x | $m7 | $m7d | $(ratio "$m7" "$m7d")x | $m33f | $m33fd | $(ratio "$m33f" "$m33fd")x | $(ratio "$m33fd" "$plain")x | $m33 | $m33d |"
  done
  echo
  echo "| fp32 forward (N,M,Dk,Dv), M55 | scalar | scalar, no auto-vectorization | mve | scalar/mve | plain scalar/mve |"
  echo "|---|---:|---:|---:|---:|---:|"
  for shape in 16 32 64; do
    m55s=$(cost m55 scalar $shape)
    m55n=$(cost m55novec scalar $shape)
    m55v=$(cost m55 mve $shape)
    echo "| $(dims $shape) | $m55s | $m55n | $m55v | $(ratio "$m55s" "$m55v")x | $(ratio "$m55n" "$m55v")x |"
  done
  # The power-on self-test (nothing printed), per board and port.
  echo
  echo "| self-test | M4F scalar | M4F dsp | M7 dsp | M33 dsp | M55 scalar | M55 mve |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  echo "| tinyattn::selftest() | $(cost m4 scalar selftest) | $(cost m4 dsp selftest) | $(cost m7 dsp selftest) | $(cost m33f dsp selftest) | $(cost m55 scalar selftest) | $(cost m55 mve selftest) |"
} >"$table"
# The compile-time API (Attention<Shape>, whose dims are checked at compile
# time) against the run-time forward() of the same shape.
"$ROOT/bench/board/count_api.sh" "$OUT" >/dev/null
{
  echo
  cat "$OUT/insns_api.md"
} >>"$table"
cat "$table"

# Where the instructions go: per-function attribution of the (32,32,32,32)
# forward on each board and port, written next to the table.
profile() {
  machine=$(machine_of "$1")
  elf="$OUT/forward_insns_$1.elf"
  for run in 2 1; do
    timeout -k 5 120 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native \
      -plugin "$OUT/libinsncount.so,outfile=$OUT/count.txt,profile=$OUT/profile$run.txt" \
      -kernel "$elf" -append "32 $2 $run" >"$OUT/run.log" 2>&1
  done
  /usr/bin/python3 "$ROOT/bench/qemu/attribute.py" "$elf" "$OUT/profile2.txt" "$OUT/profile1.txt" \
    >"$OUT/profile_$1_$2_32.txt"
}
profile m4 scalar
profile m4 dsp
profile m7 dsp
profile m33f dsp
profile m55 scalar
profile m55 mve
echo "per-function profiles: $OUT/profile_*_32.txt"

# The exp per element: the instructions of the port's exp_shift_sum (exp of
# x - max and the running sum; the DSP port's runs its exp_row) in the
# (32,32,32,32) forward, over its 1,024
# query-key pairs; and the products per multiply-add: the instructions of the
# block kernels (scores_block and weighted_sum_block, the driver's calls for
# every block of four rows, with the DSP port's tile functions they call)
# over the forward's 2 * 32 * 32 * 32 = 65,536 multiply-adds. The Helium
# forward runs its fused block kernel instead of those three (0 there).
{
  echo
  echo "| (32,32,32,32) forward | M4F scalar (FPU) | M4F dsp | M7 dsp | M33 dsp | M55 scalar | M55 mve |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  per() {
    awk '/exp_shift_sum|dsp::\(anonymous namespace\)::exp_row\(float const\*/ { s += $1 } END { printf "%.1f", s / 1024 }' \
      "$OUT/profile_$1_32.txt"
  }
  mac() { awk '/scores_(block|tile)|weighted_sum_(block|tile)/ { s += $1 } END { printf "%.2f", s / 65536 }' "$OUT/profile_$1_32.txt"; }
  echo "| exp_shift_sum, instructions per element | $(per m4_scalar) | $(per m4_dsp) | $(per m7_dsp) | $(per m33f_dsp) | $(per m55_scalar) | $(per m55_mve) |"
  echo "| block kernels, instructions per multiply-add | $(mac m4_scalar) | $(mac m4_dsp) | $(mac m7_dsp) | $(mac m33f_dsp) | $(mac m55_scalar) | $(mac m55_mve) |"
  # The Helium fused block (attend_full, reached through attend_fixed):
  # scores, softmax and P.V in one function, so per multiply-add with the
  # softmax included.
  fused() { awk '/attend_full|attend_fixed</ { s += $1 } END { printf "%.2f", s / 65536 }' "$OUT/profile_$1_32.txt"; }
  echo "| fused block kernel with its softmax, instructions per multiply-add | - | - | - | - | - | $(fused m55_mve) |"
} >>"$table"
tail -n 5 "$table"
