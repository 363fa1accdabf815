#!/bin/sh
# qemu-system-riscv32 on the virt board with a Zve32f core: the
# CMAKE_CROSSCOMPILING_EMULATOR of toolchains/riscv32-zve32f-clang.cmake
# (qemu-riscv32-virt.sh: semihosting) and, with --serial, its serial runner
# (qemu-board-serial.sh virt: the UART only).
#   qemu-riscv32-zve32f.sh [--serial] ELF
# QEMU's rv32 CPU has no vector unit by default; QEMU_CPU picks another
# (default rv32,Zve32f=true,vlen=128,elen=32,vext_spec=v1.0: elen=32 makes
# QEMU refuse 64-bit elements, as a Zve32f core does; stage
# 62-riscv32-zve32f runs other VLENs).
set -eu
here=$(dirname "$0")
QEMU_EXTRA_ARGS="-cpu ${QEMU_CPU:-rv32,Zve32f=true,vlen=128,elen=32,vext_spec=v1.0} ${QEMU_EXTRA_ARGS:-}"
export QEMU_EXTRA_ARGS
if [ "${1:-}" = --serial ]; then
  shift
  exec "$here/qemu-board-serial.sh" virt "$@"
fi
exec "$here/qemu-riscv32-virt.sh" "$@"
