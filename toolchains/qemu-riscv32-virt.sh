#!/bin/sh
# Runs a bare-metal RV32 ELF on QEMU's virt board (-bios none: the image's
# own crt0 starts at 0x80000000); the CMAKE_CROSSCOMPILING_EMULATOR of
# toolchains/riscv32-virt.cmake.
#   qemu-riscv32-virt.sh ELF [ARGS...]
# The firmware's semihosting exit status (picolibc's exit through
# SYS_EXIT_EXTENDED) becomes this script's status; a firmware that hangs is
# killed after QEMU_TIMEOUT seconds (default 300), status 124.
# ARGS reach main() as argv[1..]: picolibc's crt0 takes the whole semihosting
# command line as arguments (argv[0] is its own), so the command line is
# given as arg= options (an empty one when there are none), never QEMU's
# default of the image's file name.
set -eu
elf=$1
shift
args=
for a in "$@"; do
  args="$args,arg=$a"
done
# shellcheck disable=SC2086
exec timeout -k 5 "${QEMU_TIMEOUT:-300}" qemu-system-riscv32 -M virt -bios none \
  -nographic -monitor none -serial none \
  -semihosting-config "enable=on,target=native${args:-,arg=}" \
  ${QEMU_EXTRA_ARGS:-} \
  -kernel "$elf"
