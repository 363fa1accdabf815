# Cortex-M7 with the double-precision FPU (FPv5-D16) on QEMU's mps2-an500
# board: Armv7E-M with DSP, hard float. The board folder is outside
# ports/targets/ (tests/boards/mps2_an500, an absolute TINYATTN_BOARD).
set(TINYATTN_BOARD ${CMAKE_CURRENT_LIST_DIR}/../tests/boards/mps2_an500)
get_filename_component(TINYATTN_BOARD "${TINYATTN_BOARD}" ABSOLUTE)
set(TINYATTN_QEMU_MACHINE mps2-an500)
set(TINYATTN_CPU_FLAGS "-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard -mfp16-format=ieee")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
