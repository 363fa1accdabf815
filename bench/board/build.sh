#!/bin/sh
# Builds the bench images for QEMU's Cortex-M and RISC-V boards with CMake, from the
# board targets the tests use (ports/targets/: startup code, linker script),
# and runs one under QEMU's instruction-counting plugin. Sourced, once ROOT
# is set, by count.sh, count_i8.sh, count_f16.sh, count_api.sh and size.sh;
# OUT is the script's first argument (a sourced file sees the script's
# arguments), default build-bench-board.
#   board_build PRESET IMAGE OUT_ELF
#   PRESET: cortex-m4-bench | cortex-m7-bench | cortex-m33-bench | cortex-m33f-bench |
#           cortex-m0-bench | riscv32-bench | cortex-m55-bench | cortex-m55-bench-novec (-O2),
#           cortex-m4-size | cortex-m55-size (-Os), see CMakePresets.json
#   IMAGE:  a target of bench/board/CMakeLists.txt (forward_insns, size_empty, ...)
#   BOARD_CMAKE_ARGS (optional): more cache settings, e.g. -DTINYATTN_WITH_DSP=OFF,
#   built in a tree of their own (BOARD_TREE names it).
OUT=${1:-$ROOT/build-bench-board}
mkdir -p "$OUT"

board_build() {
  preset=$1 image=$2 out=$3
  dir="$OUT/cmake-$preset${BOARD_TREE:+-$BOARD_TREE}"
  log="$OUT/configure-$preset${BOARD_TREE:+-$BOARD_TREE}.log"
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    # shellcheck disable=SC2086 # BOARD_CMAKE_ARGS is a list of arguments
    (cd "$ROOT" && cmake --preset "$preset" -B "$dir" ${BOARD_CMAKE_ARGS:-}) >"$log" 2>&1 || {
      echo "configure failed: preset $preset" >&2
      cat "$log" >&2
      return 1
    }
  fi
  cmake --build "$dir" --target "$image" -j "${JOBS:-2}" >"$OUT/build-$preset.log" 2>&1 || {
    echo "build failed: $image (preset $preset)" >&2
    cat "$OUT/build-$preset.log" >&2
    return 1
  }
  cp "$dir/bench/board/$image.elf" "$out"
}

# board_plugin: builds the counting plugin, $OUT/libinsncount.so.
board_plugin() {
  gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$OUT/libinsncount.so" "$ROOT/bench/qemu/insncount.c"
}

# board_count TAG ELF MACHINE ARGS... -> instructions executed by the whole run
# (needs $OUT/libinsncount.so, bench/qemu/insncount.c; TAG names the log files).
# MACHINE virt is QEMU's RISC-V virt board (qemu-system-riscv32), whose images
# get the arguments as semihosting arguments (picolibc's crt0 puts its own
# program name before them, as argv[0]).
board_count() {
  tag=$1 elf=$2 machine=$3
  shift 3
  if [ "$machine" = virt ]; then
    semihosting=enable=on,target=native
    for arg in "$@"; do semihosting="$semihosting,arg=$arg"; done
    set -- qemu-system-riscv32 -M virt -bios none -semihosting-config "$semihosting"
  else
    set -- qemu-system-arm -M "$machine" -semihosting-config enable=on,target=native -append "$*"
  fi
  timeout -k 5 120 "$@" -nographic -monitor none -serial none \
    -plugin "$OUT/libinsncount.so,outfile=$OUT/count_$tag.txt" \
    -kernel "$elf" >"$OUT/run_$tag.log" 2>&1 || {
    echo "run failed: $elf ($*)" >&2
    cat "$OUT/run_$tag.log" >&2
    exit 1
  }
  sed -n 's/^insns: //p' "$OUT/count_$tag.txt"
}
