# Cortex-M33 with its single-precision FPU (FPv5-SP-D16) on QEMU's
# mps2-an505 board: Armv8-M mainline with the DSP extension, hard float --
# the configuration most M33 parts ship (the FPU-less build is
# cortex-m33-nofp.cmake). Same board, memory map and startup: the startup
# code enables CP10/CP11 whenever the build uses the FPU.
set(TINYATTN_BOARD mps2_an505)
set(TINYATTN_QEMU_MACHINE mps2-an505)
set(TINYATTN_CPU_FLAGS "-mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard -mfp16-format=ieee")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
