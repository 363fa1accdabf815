# Cortex-M4F bare metal on QEMU's mps2-an386 board (FPv4-SP, hard float).
# -mfp16-format=ieee: __fp16 with software conversions (the M4 has none).
set(TINYATTN_BOARD mps2_an386)
set(TINYATTN_QEMU_MACHINE mps2-an386)
set(TINYATTN_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard -mfp16-format=ieee")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
