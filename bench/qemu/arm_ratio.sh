#!/bin/sh
# Arm Linux under qemu-user: bench/port_ratio.cc (fp32 forward, GFLOP/s per
# port and the ratio to the scalar port, with the SIMD target that runs) from
# the aarch64 and armv7 presets' builds, on an aarch64 CPU without SVE (NEON),
# with 256-bit SVE, and on ARMv7 (NEON). Emulation times are not
# performance: the table checks that the SIMD paths are the ones executing.
# Prints markdown and writes it to $OUT/arm.md.
#   bench/qemu/arm_ratio.sh [OUT_DIR]   (default build-bench-arm)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build-bench-arm}
mkdir -p "$OUT"

for preset in aarch64 armv7; do
  (cd "$ROOT" && cmake --preset "$preset" -B "$OUT/$preset" -DTINYATTN_BUILD_TESTS=OFF \
    -DTINYATTN_BUILD_TOOLS=OFF --no-warn-unused-cli >/dev/null)
  ninja -C "$OUT/$preset" -j2 port_ratio
done

# run TITLE EMULATOR... : one table under a heading
run() {
  title=$1
  shift
  echo "#### $title"
  echo
  "$@" --reps 5
  echo
}

{
  run "aarch64, qemu-aarch64 -cpu neoverse-n1 (NEON)" \
    env QEMU_CPU=neoverse-n1 qemu-aarch64 "$OUT/aarch64/bench/port_ratio"
  run "aarch64, qemu-aarch64 -cpu max with 256-bit SVE" \
    env QEMU_CPU=max,sve-default-vector-length=32 qemu-aarch64 "$OUT/aarch64/bench/port_ratio"
  run "ARMv7-A, qemu-arm (NEON-VFPv4)" qemu-arm "$OUT/armv7/bench/port_ratio"
} >"$OUT/arm.md"
cat "$OUT/arm.md"
