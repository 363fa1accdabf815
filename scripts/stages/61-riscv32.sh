# RISC-V rv32imac bare metal (riscv64-unknown-elf GCC, picolibc, no C++
# standard library: the library's freestanding subset) on QEMU virt
# (-bios none, semihosting); board folder tests/boards/riscv_virt.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests riscv32 "riscv32 rv32imac (qemu virt)"
