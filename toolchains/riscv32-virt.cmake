# RISC-V rv32imac bare metal on QEMU's virt board (qemu-system-riscv32 -M virt
# -bios none, semihosting): the board of the suites (preset riscv32). The
# board folder is outside ports/targets/ (tests/boards/riscv_virt, an
# absolute TINYATTN_BOARD); compiler, flags and C library are those of
# toolchains/riscv32-elf.cmake.
set(TINYATTN_BOARD ${CMAKE_CURRENT_LIST_DIR}/../tests/boards/riscv_virt)
get_filename_component(TINYATTN_BOARD "${TINYATTN_BOARD}" ABSOLUTE)
include(${CMAKE_CURRENT_LIST_DIR}/riscv32-elf.cmake)
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/qemu-riscv32-virt.sh")
