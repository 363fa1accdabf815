#!/bin/sh
# Builds and runs the whole bench on this machine, then writes the
# performance page from this one run (bench/report.py):
#   1. host: tinyattn's ports against a triple loop, Eigen 3.4 and oneDNN on
#      one pinned core (bench/peers/), with the FMA peak at the widest vectors
#      the CPU has, softmax rows and decode/prefill scaling (on an AVX-512 CPU
#      the forward and softmax tables once more with everything limited to
#      AVX2, peers_bench --avx2-cpu, into $OUT/avx2/); and the layer
#      shapes of tiny transformers, prefill and KvCache decode
#      (bench/models_bench.cc);
#   2. boards: instructions per forward on QEMU's Cortex-M4F and Cortex-M55
#      (bench/board/count.sh; the fp16 forward, widened vs native fp16
#      products: bench/board/count_f16.sh; the int8 forward, scalar and Helium
#      ports: bench/board/count_i8.sh), the tiny transformers' layer shapes
#      on the M4F and M55 (bench/board/count_models.sh) and the code size
#      (bench/board/size.sh);
#   3. Arm Linux under qemu-user: GFLOP/s ratios to the scalar port, NEON and
#      SVE (bench/qemu/arm_ratio.sh); emulated, so not performance; and the
#      instructions of a warm fp32 forward with NEON against the scalar port
#      and Eigen (bench/qemu/neon_count.sh);
#   4. the compile time of tinyattn/tinyattn.h (scripts/umbrella-compile-time).
# Records the machine, compilers, libraries and tree in $OUT/machine.txt and
# writes $OUT/performance.md with its plot, $OUT/performance-forward-gflops.svg.
#   bench/run.sh [--quick] [--update-docs]      OUT defaults to build-bench/
#   --quick        5 repetitions instead of 11 on the host
#   --update-docs  also rewrite docs/performance.md and its plot from this run
# Needs libeigen3-dev, libdnnl-dev, gcc-arm-none-eabi, qemu-system-arm,
# g++-aarch64-linux-gnu, g++-arm-linux-gnueabihf, qemu-user, python3.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-bench}
peers_args=
update_docs=
for arg in "$@"; do
  case $arg in
    --quick) peers_args=--quick ;;
    --update-docs) update_docs=1 ;;
    *)
      echo "usage: bench/run.sh [--quick] [--update-docs]" >&2
      exit 2
      ;;
  esac
done
mkdir -p "$OUT"

# -march=haswell (+ AES, PCLMUL, which Highway requires for its AVX2 target):
# the baseline every implementation is compiled for (Eigen's vectors);
# Highway still dispatches at run time to AVX-512 where the CPU has it, and
# oneDNN picks its own ISA.
# The xsimd port too (the standalone bench project leaves it off otherwise).
cmake -S "$ROOT/bench/peers" -B "$OUT/host" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTINYATTN_WITH_XSIMD=ON \
  "-DCMAKE_CXX_FLAGS=-march=haswell -maes -mpclmul" >/dev/null
ninja -C "$OUT/host" -j2 peers_bench models_bench

# first_line COMMAND... -> the first line it prints, or "not found"
first_line() { "$@" 2>/dev/null | head -n 1 || true; }
tool_version() {
  if command -v "$1" >/dev/null 2>&1; then first_line "$@"; else echo "$1: not found"; fi
}
# header_version INCLUDE_DIR HEADER EXPR -> EXPR after including HEADER, as the host compiler sees it
host_cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$OUT/host/CMakeCache.txt")
header_version() {
  printf '#include <%s>\n%s\n' "$2" "$3" | "$host_cxx" ${1:+"-I$1"} -E -P -x c++ - 2>/dev/null | tail -n 1 | tr -d ' '
}
cpuinfo() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -n 1; }
{
  echo "run: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  if git -C "$ROOT" --no-optional-locks diff --quiet HEAD -- 2>/dev/null; then
    echo "tree: as committed"
  else
    echo "tree: with uncommitted changes"
  fi
  echo "cpu: $(cpuinfo 'model name')"
  echo "cpu family/model: $(cpuinfo 'cpu family') / $(cpuinfo model)"
  echo "cpus: $(getconf _NPROCESSORS_ONLN)"
  echo "vector flags: $(cpuinfo flags | tr ' ' '\n' | grep -E '^(avx2|fma|avx512(f|bw|dq|vl|_vnni|_bf16|_fp16))$' | tr '\n' ' ' | sed 's/ $//')"
  echo "hypervisor: $(grep -qw hypervisor /proc/cpuinfo && echo yes || echo no)"
  echo "os: $(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release 2>/dev/null), Linux $(uname -r)"
  echo "host compiler: $(first_line "$host_cxx" --version)"
  echo "host flags: -O3 (Release) -march=haswell -maes -mpclmul"
  echo "arm-none-eabi: $(tool_version arm-none-eabi-g++ --version)"
  echo "riscv: $(tool_version riscv64-unknown-elf-g++ --version)"
  echo "aarch64-linux-gnu: $(tool_version aarch64-linux-gnu-g++ --version)"
  echo "arm-linux-gnueabihf: $(tool_version arm-linux-gnueabihf-g++ --version)"
  echo "qemu-system: $(tool_version qemu-system-arm --version)"
  echo "qemu-user: $(tool_version qemu-aarch64 --version)"
  echo "eigen: $(header_version /usr/include/eigen3 Eigen/Core EIGEN_WORLD_VERSION.EIGEN_MAJOR_VERSION.EIGEN_MINOR_VERSION)"
  echo "onednn: $(header_version '' oneapi/dnnl/dnnl_version.h DNNL_VERSION_MAJOR.DNNL_VERSION_MINOR.DNNL_VERSION_PATCH)"
  echo "highway: $(header_version '' hwy/highway.h HWY_MAJOR.HWY_MINOR.HWY_PATCH)"
  echo "xsimd: $(header_version '' xsimd/config/xsimd_config.hpp XSIMD_VERSION_MAJOR.XSIMD_VERSION_MINOR.XSIMD_VERSION_PATCH)"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

# shellcheck disable=SC2086 # peers_args: zero or one argument
OMP_NUM_THREADS=1 "$OUT/host/peers_bench" --out "$OUT" $peers_args
# On an AVX-512 CPU, the CPU most users have as well: everything limited to AVX2.
if grep -qw avx512f /proc/cpuinfo; then
  mkdir -p "$OUT/avx2"
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$OUT/host/peers_bench" --avx2-cpu --out "$OUT/avx2" $peers_args
fi
# shellcheck disable=SC2086
"$OUT/host/models_bench" --out "$OUT" $peers_args

"$ROOT/bench/board/count.sh" "$OUT/board"
"$ROOT/bench/board/count_f16.sh" "$OUT/board"
"$ROOT/bench/board/count_i8.sh" "$OUT/board"
"$ROOT/bench/board/count_models.sh" "$OUT/board"
"$ROOT/bench/board/size.sh" "$OUT/board"
"$ROOT/bench/qemu/arm_ratio.sh" "$OUT/arm"
"$ROOT/bench/qemu/neon_count.sh" "$OUT/arm"
{
  "$ROOT/scripts/umbrella-compile-time"
  if command -v clang++ >/dev/null 2>&1; then CXX=clang++ "$ROOT/scripts/umbrella-compile-time"; fi
} >"$OUT/compile_time.txt"
cat "$OUT/compile_time.txt"

python3 "$ROOT/bench/report.py" "$OUT"
if [ -n "$update_docs" ]; then
  python3 "$ROOT/bench/report.py" "$OUT" --out "$ROOT/docs"
fi
