# Cortex-M33 without FPU on QEMU's mps2-an505 board: Armv8-M mainline with
# the DSP extension, soft-float ABI (every float operation is a libgcc call).
# -mfp16-format=ieee: __fp16 with software conversions, as on the M4.
set(TINYATTN_BOARD mps2_an505)
set(TINYATTN_QEMU_MACHINE mps2-an505)
set(TINYATTN_CPU_FLAGS "-mcpu=cortex-m33+nofp -mthumb -mfloat-abi=soft -mfp16-format=ieee")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
