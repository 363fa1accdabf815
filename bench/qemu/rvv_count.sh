#!/bin/sh
# Instructions of one forward at (64,64,64,64), fp32 and int8, rvv port
# against the scalar port, at VLEN 128, 256, 512 and 1024: the riscv64-rvv
# preset's library (clang-16, -march=rv64gcv, no autovectorization) under
# qemu-riscv64 with the TCG plugin (bench/qemu/insncount.c). Each count is
# insns(1 call) - insns(0 calls) of bench/qemu/rvv_insns.cc; the int8
# outputs must be the same bytes on both ports at every VLEN.
# Prints markdown and writes it to $OUT/rvv.md.
#   bench/qemu/rvv_count.sh [OUT_DIR]   (default build-bench-rvv)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-bench-rvv}
mkdir -p "$OUT"

(cd "$ROOT" && cmake --preset riscv64-rvv -B "$OUT/lib" -DTINYATTN_BUILD_TESTS=OFF -DTINYATTN_BUILD_TOOLS=OFF \
  --no-warn-unused-cli >/dev/null)
ninja -C "$OUT/lib" -j2 tinyattn >/dev/null
clang++-16 --target=riscv64-linux-gnu -march=rv64gcv -mabi=lp64d -O2 -fno-vectorize -fno-slp-vectorize -std=c++17 \
  -fno-exceptions -fno-rtti -Wall -Wextra -Werror -I"$ROOT/lib/include" "$ROOT/bench/qemu/rvv_insns.cc" \
  "$OUT/lib/lib/libtinyattn.a" -static -o "$OUT/rvv_insns"
gcc -O2 -shared -fPIC -o "$OUT/libinsncount.so" "$ROOT/bench/qemu/insncount.c"

# count VLEN DTYPE PORT CALLS: instructions of the whole program
count() {
  qemu-riscv64 -cpu "rv64,v=true,vlen=$1,vext_spec=v1.0" -plugin "$OUT/libinsncount.so,outfile=$OUT/count.txt" \
    "$OUT/rvv_insns" "$2" "$3" "$4" >"$OUT/run.txt"
  sed -n 's/^insns: //p' "$OUT/count.txt"
}
cost() { echo $(($(count "$1" "$2" "$3" 1) - $(count "$1" "$2" "$3" 0))); }
checksum() {
  count "$1" "$2" "$3" 1 >/dev/null
  sed 's/.*checksum //' "$OUT/run.txt"
}

{
  echo "| VLEN | fp32 scalar | fp32 rvv | fp32 scalar/rvv | int8 scalar | int8 rvv | int8 scalar/rvv |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  for vlen in 128 256 512 1024; do
    ref=$(checksum "$vlen" i8 scalar)
    got=$(checksum "$vlen" i8 rvv)
    [ "$got" = "$ref" ] || {
      echo "int8 checksum mismatch at VLEN $vlen: rvv $got, scalar $ref" >&2
      exit 1
    }
    fs=$(cost "$vlen" f32 scalar)
    fr=$(cost "$vlen" f32 rvv)
    is=$(cost "$vlen" i8 scalar)
    ir=$(cost "$vlen" i8 rvv)
    echo "| $vlen | $fs | $fr | $(awk -v a="$fs" -v b="$fr" 'BEGIN { printf "%.2f", a / b }')x | $is | $ir | $(awk -v a="$is" -v b="$ir" 'BEGIN { printf "%.2f", a / b }')x |"
  done
} >"$OUT/rvv.md"
cat "$OUT/rvv.md"
