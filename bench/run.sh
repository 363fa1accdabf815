#!/bin/sh
# Builds and runs the whole bench on this machine:
#   1. host: tinyattn's ports against a triple loop, Eigen 3.4 and oneDNN on
#      one pinned core (bench/peers/), with the FMA peak at the widest vectors
#      the CPU has, softmax rows and decode/prefill scaling;
#   2. boards: instructions per forward on QEMU's Cortex-M4F and Cortex-M55
#      (bench/board/count.sh; the fp16 forward, widened vs native fp16
#      products: bench/board/count_f16.sh; the int8 forward, scalar and Helium
#      ports: bench/board/count_i8.sh) and the code size (bench/board/size.sh);
#   3. Arm Linux under qemu-user: GFLOP/s ratios to the scalar port, NEON and
#      SVE (bench/qemu/arm_ratio.sh); emulated, so not performance.
# Writes $OUT/report.md (the tables) and $OUT/forward_gflops.svg.
#   bench/run.sh [--quick]      OUT defaults to build-bench/
# Needs libeigen3-dev, libdnnl-dev, gcc-arm-none-eabi, qemu-system-arm,
# g++-aarch64-linux-gnu, g++-arm-linux-gnueabihf, qemu-user.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-bench}
mkdir -p "$OUT"

# -march=haswell (+ AES, PCLMUL, which Highway requires for its AVX2 target):
# the baseline every implementation is compiled for (Eigen's vectors);
# Highway still dispatches at run time to AVX-512 where the CPU has it, and
# oneDNN picks its own ISA.
# The xsimd port too (the standalone bench project leaves it off otherwise).
cmake -S "$ROOT/bench/peers" -B "$OUT/host" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTINYATTN_WITH_XSIMD=ON \
  "-DCMAKE_CXX_FLAGS=-march=haswell -maes -mpclmul" >/dev/null
ninja -C "$OUT/host" -j2 peers_bench
OMP_NUM_THREADS=1 "$OUT/host/peers_bench" --out "$OUT" "$@"

"$ROOT/bench/board/count.sh" "$OUT/board"
"$ROOT/bench/board/count_f16.sh" "$OUT/board"
"$ROOT/bench/board/count_i8.sh" "$OUT/board"
"$ROOT/bench/board/size.sh" "$OUT/board"
"$ROOT/bench/qemu/arm_ratio.sh" "$OUT/arm"

{
  echo "## Host (x86-64, one core)"
  echo
  cat "$OUT/peers.md"
  echo
  echo "## Cortex-M under QEMU: instructions per fp32 forward"
  echo
  cat "$OUT/board/insns.md"
  echo
  cat "$OUT/board/insns_f16.md"
  echo
  echo "## Cortex-M under QEMU: instructions per int8 forward"
  echo
  cat "$OUT/board/insns_i8.md"
  echo
  echo "## Code size"
  echo
  cat "$OUT/board/size.md"
  echo
  echo "## Arm Linux under qemu-user: fp32 forward, ratio to the scalar port (emulated; not performance)"
  echo
  cat "$OUT/arm/arm.md"
} >"$OUT/report.md"
echo "wrote $OUT/report.md and $OUT/forward_gflops.svg"
