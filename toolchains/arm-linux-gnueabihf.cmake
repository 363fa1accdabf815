# ARMv7-A Linux, hard float, NEON-VFPv4, under qemu-arm.
# Debian's compiler defaults to VFPv3-D16 without NEON, hence -mfpu.
# -mfp16-format=ieee: __fp16 storage and conversions (Highway's NEON target
# needs it on ARMv7). -Wno-psabi: GCC's notes about a 7.1 ABI change in
# passing vector/struct arguments, which say nothing about this code.
set(TINYATTN_CROSS_TRIPLE arm-linux-gnueabihf)
set(TINYATTN_CROSS_PROCESSOR armv7l)
set(TINYATTN_CROSS_FLAGS "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee -Wno-psabi")
set(TINYATTN_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
