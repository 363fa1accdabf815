#!/bin/sh
# Runs a bare-metal RV32 ELF on QEMU's virt board (-bios none: the image's
# own crt0 starts at 0x80000000); the CMAKE_CROSSCOMPILING_EMULATOR of
# toolchains/riscv32-virt.cmake.
#   qemu-riscv32-virt.sh ELF
# The firmware's semihosting exit status (picolibc's exit through
# SYS_EXIT_EXTENDED) becomes this script's status; a firmware that hangs is
# killed after QEMU_TIMEOUT seconds (default 300), status 124. The images
# use picolibc's hosted crt0, which calls main() without arguments.
# QEMU_EXTRA_ARGS adds options (e.g. "-icount shift=5").
set -eu
elf=$1
# shellcheck disable=SC2086
exec timeout -k 5 "${QEMU_TIMEOUT:-300}" qemu-system-riscv32 -M virt -bios none \
  -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native \
  ${QEMU_EXTRA_ARGS:-} \
  -kernel "$elf"
