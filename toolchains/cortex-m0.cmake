# Armv6-M code (-mcpu=cortex-m0, soft float) on QEMU's mps2-an385 board,
# whose Cortex-M3 executes it with 4 MiB of RAM. No DSP, no hardware divide,
# no 64-bit multiply: the scalar port is the default (the dsp port does not
# build), divisions are libgcc calls.
set(TINYATTN_BOARD mps2_an385)
set(TINYATTN_QEMU_MACHINE mps2-an385)
set(TINYATTN_CPU_FLAGS "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft -mfp16-format=ieee")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
