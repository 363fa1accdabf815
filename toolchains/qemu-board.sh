#!/bin/sh
# Runs a bare-metal ELF on a QEMU board (the boards' CMAKE_CROSSCOMPILING_EMULATOR).
#   qemu-board.sh MACHINE ELF [ARGS...]
# The firmware's semihosting exit status (SYS_EXIT_EXTENDED) becomes this
# script's status; a firmware that hangs is killed after QEMU_TIMEOUT seconds
# (default 300) and reported as status 124. ARGS reach main() through -append
# and SYS_GET_CMDLINE. QEMU_EXTRA_ARGS adds options (e.g. "-icount shift=5").
set -eu
machine=$1
elf=$2
shift 2
# shellcheck disable=SC2086
exec timeout -k 5 "${QEMU_TIMEOUT:-300}" qemu-system-arm -M "$machine" \
  -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native \
  ${QEMU_EXTRA_ARGS:-} \
  -kernel "$elf" -append "$*"
