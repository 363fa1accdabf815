#!/bin/sh
# Runs a bare-metal ELF on a QEMU board without semihosting: the board's
# UART on stdout (-serial stdio), and QEMU stopped when the runtime's exit
# line appears ("tinyattn board: exit <status>", printed by the default
# tinyattn_board_exit: these boards have no device that powers QEMU off).
#   qemu-board-serial.sh MACHINE ELF
# MACHINE: a qemu-system-arm machine (mps2-an386, mps3-an547, ...), or
# "virt" for qemu-system-riscv32 -M virt -bios none.
# Exit status: the one the line names; 124 when QEMU_TIMEOUT seconds
# (default 300) pass without it; QEMU's own status when it ends first (a
# lockup, for instance). QEMU_EXTRA_ARGS adds options.
set -eu
machine=$1
elf=$2
if [ "$machine" = virt ]; then
  set -- qemu-system-riscv32 -M virt -bios none
else
  set -- qemu-system-arm -M "$machine"
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/out"
# shellcheck disable=SC2086
timeout -k 5 "${QEMU_TIMEOUT:-300}" "$@" -nographic -monitor none -serial stdio \
  ${QEMU_EXTRA_ARGS:-} -kernel "$elf" < /dev/null > "$dir/out" 2>&1 &
pid=$!
status=
while IFS= read -r line; do
  printf '%s\n' "$line"
  case $line in
    *"tinyattn board: exit "*)
      status=${line##*tinyattn board: exit }
      break
      ;;
  esac
done < "$dir/out"
if [ -z "$status" ]; then
  rc=0
  wait "$pid" || rc=$?
  exit "$rc"
fi
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
case $status in
  '' | *[!0-9-]* | ?*-*) exit 1 ;;
esac
exit $((status & 255))
