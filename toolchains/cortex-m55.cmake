# Cortex-M55 bare metal with MVE (Helium, integer + float) on QEMU's
# mps3-an547 board. -mcpu=cortex-m55 enables MVE-F and the FPv5 FPU
# (__ARM_FEATURE_MVE == 3), so arm_mve.h intrinsics are available.
set(TINYATTN_BOARD mps3_an547)
set(TINYATTN_QEMU_MACHINE mps3-an547)
set(TINYATTN_CPU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -mfp16-format=ieee")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
