#!/bin/sh
# Builds one bench program for a QEMU Cortex-M board, straight with
# arm-none-eabi-g++ (the bench links its own small start-up, not the test
# harness), and runs one under QEMU's instruction-counting plugin. Sourced by
# count.sh, count_i8.sh, count_f16.sh and size.sh.
#   board_build BOARD OPT OUT_ELF PROGRAM.cc [extra compiler flags...]
#   BOARD: m4 (mps2-an386, Cortex-M4F, scalar + dsp) | m55 (mps3-an547, Cortex-M55, scalar + dsp + mve)
board_build() {
  board=$1 opt=$2 out=$3 prog=$4
  shift 4
  case $board in
    m4) cpu="-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard" mve=0 ;;
    m55) cpu="-mcpu=cortex-m55 -mthumb -mfloat-abi=hard" mve=1 ;;
    *) echo "unknown board $board" >&2; return 2 ;;
  esac
  srcs="$ROOT/lib/src/*.cc $ROOT/ports/registry.cc $ROOT/ports/registry_i8.cc"
  srcs="$srcs $ROOT/ports/backends/scalar/scalar.cc $ROOT/ports/backends/scalar/scalar_i8.cc"
  built=kScalar  # the registry's TINYATTN_PORTS_BUILT (ports/registry.h)
  # Both boards have the DSP extension.
  srcs="$srcs $ROOT/ports/backends/dsp/dsp.cc $ROOT/ports/backends/dsp/dsp_i8.cc"
  built=$built,kDsp
  if [ "$mve" = 1 ]; then
    srcs="$srcs $ROOT/ports/backends/mve/mve.cc $ROOT/ports/backends/mve/mve_i8.cc"
    built=$built,kMve
  fi
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $cpu $opt -Wall -Wextra -Werror -c "$ROOT/bench/board/startup.c" -o "$out.startup.o"
  # shellcheck disable=SC2086
  arm-none-eabi-g++ $cpu $opt -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections -fdata-sections \
    -Wall -Wextra -Werror -Wno-psabi \
    -DTINYATTN_PORTS_BUILT=$built -DTINYATTN_DEFAULT_PORT=kScalar -DTINYATTN_BUILT_FUSED_BLOCKS=0 \
    -I"$ROOT/lib/include" -I"$ROOT/lib/contract/include" -I"$ROOT/ports" "$@" \
    $srcs "$prog" "$out.startup.o" \
    --specs=nano.specs --specs=nosys.specs -nostartfiles -Wl,--gc-sections \
    -L"$ROOT/bench/board" -T"$ROOT/bench/board/$board.ld" -lm -o "$out"
}

# board_count TAG ELF MACHINE ARGS... -> instructions executed by the whole run
# (needs $OUT/libinsncount.so, bench/qemu/insncount.c; TAG names the log files).
board_count() {
  tag=$1 elf=$2 machine=$3
  shift 3
  timeout -k 5 120 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native \
    -plugin "$OUT/libinsncount.so,outfile=$OUT/count_$tag.txt" \
    -kernel "$elf" -append "$*" >"$OUT/run_$tag.log" 2>&1 || {
    echo "run failed: $elf $*" >&2
    cat "$OUT/run_$tag.log" >&2
    exit 1
  }
  sed -n 's/^insns: //p' "$OUT/count_$tag.txt"
}
