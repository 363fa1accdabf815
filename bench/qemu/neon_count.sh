#!/bin/sh
# Instructions of one warm fp32 forward on AArch64 NEON: the scalar,
# Highway (NEON target) and xsimd (neon64) ports against Eigen 3.4, at
# (64,64,64,64), (128,128,64,64) and (256,256,64,64). The aarch64 preset's
# library and flags (aarch64-linux-gnu-g++, -O2) under qemu-aarch64 -cpu
# neoverse-n1 (NEON, no SVE) with the TCG plugin (bench/qemu/insncount.c).
# Each count is insns(2 calls) - insns(1 call) of bench/qemu/neon_insns.cc
# (same inputs, the first call warms up); every output must be within 1e-5
# of a double-precision reference. Per multiply-add: the forward's
# N*M*(Dk+Dv) multiply-adds.
# Prints markdown and writes it to $OUT/neon.md.
#   bench/qemu/neon_count.sh [OUT_DIR]   (default build-bench-arm)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-bench-arm}
mkdir -p "$OUT"

# The library in arm_ratio.sh's build directory (same preset and options).
(cd "$ROOT" && cmake --preset aarch64 -B "$OUT/aarch64" -DTINYATTN_BUILD_TESTS=OFF -DTINYATTN_BUILD_TOOLS=OFF \
  --no-warn-unused-cli >/dev/null)
ninja -C "$OUT/aarch64" -j2 tinyattn >/dev/null
# The preset's Release flags (toolchains/linux-cross.cmake); Eigen from the host's headers.
aarch64-linux-gnu-g++ -O2 -DNDEBUG -std=c++17 -fno-exceptions -fno-rtti -Wall -Wextra -Werror \
  -I"$ROOT/lib/include" -isystem /usr/include/eigen3 "$ROOT/bench/qemu/neon_insns.cc" \
  "$OUT/aarch64/lib/libtinyattn.a" -static -o "$OUT/neon_insns"
gcc -O2 -shared -fPIC -o "$OUT/libinsncount.so" "$ROOT/bench/qemu/insncount.c"

# count PORT N M DK DV CALLS: instructions of the whole program
count() {
  qemu-aarch64 -cpu neoverse-n1 -plugin "$OUT/libinsncount.so,outfile=$OUT/count.txt" \
    "$OUT/neon_insns" "$@" >"$OUT/run.txt"
  awk '{ if ($NF > 1e-5) { print "error " $NF " on " $1 > "/dev/stderr"; exit 1 } }' "$OUT/run.txt"
  sed -n 's/^insns: //p' "$OUT/count.txt"
}
cost() { echo $(($(count "$@" 2) - $(count "$@" 1))); }

{
  echo "| shape | port | SIMD target | instructions | per multiply-add | scalar / port | Eigen / port |"
  echo "|---|---|---|---:|---:|---:|---:|"
  for shape in "64 64 64 64" "128 128 64 64" "256 256 64 64"; do
    # shellcheck disable=SC2086 # shape: four arguments
    set -- $shape
    : >"$OUT/costs.txt"
    for port in scalar highway xsimd eigen; do
      n=$(cost "$port" "$@")
      # run.txt is the last run's "PORT TARGET... max_error E": the SIMD target that ran
      echo "$n $(sed 's/ max_error.*//' "$OUT/run.txt")" >>"$OUT/costs.txt"
    done
    awk -v shape="($1,$2,$3,$4)" -v macs=$(($1 * $2 * ($3 + $4))) '
      {
        n[NR] = $1; port[NR] = $2; t = $0; sub(/^[^ ]+ [^ ]+ /, "", t); target[NR] = t
        if ($2 == "scalar") scalar = $1
        if ($2 == "eigen") eigen = $1
      }
      END {
        for (i = 1; i <= NR; ++i)
          printf "| %s | %s | %s | %d | %.2f | %.2fx | %.2fx |\n", shape, port[i], target[i], n[i], n[i] / macs,
            scalar / n[i], eigen / n[i]
      }' "$OUT/costs.txt"
  done
} >"$OUT/neon.md"
cat "$OUT/neon.md"
