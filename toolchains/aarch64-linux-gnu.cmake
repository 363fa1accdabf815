# ARMv8-A Linux (NEON baseline) under qemu-aarch64. SVE/SVE2 code is compiled
# by the Highway port's dynamic dispatch (per-function target attributes), so
# one binary runs NEON, SVE, SVE2, SVE_256 and SVE2_128 depending on the CPU
# qemu emulates (QEMU_CPU, see CMakePresets.json).
set(TINYATTN_CROSS_TRIPLE aarch64-linux-gnu)
set(TINYATTN_CROSS_PROCESSOR aarch64)
set(TINYATTN_CROSS_FLAGS "")
set(TINYATTN_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
