# RV64GCV Linux under qemu-riscv64: clang 16 (Debian's clang-16 has the RVV
# 1.0 intrinsics; GCC 12 has no riscv_vector.h) with the GCC cross sysroot,
# libraries and binutils of riscv64-linux-gnu. Builds the rvv port; the
# binaries run at any VLEN (toolchains/qemu-riscv64-rvv.sh, QEMU_CPU).
set(TINYATTN_CROSS_TRIPLE riscv64-linux-gnu)
set(TINYATTN_CROSS_PROCESSOR riscv64)
set(TINYATTN_CROSS_FLAGS "-march=rv64gcv -mabi=lp64d")
# No autovectorization: the rvv port's vectors are its intrinsics, and the
# other ports stay the plain code they are on every target (the scalar
# port is the baseline rvv is measured against). qemu 7.2 also aborts
# translating the float-to-int vfncvt.rtz clang's vectorizer emits in the
# tests ("decode_save_opc: Assertion `ctx->insn_start != NULL' failed",
# fixed in qemu 8). After -O2: clang 16 lets a later -O2 turn them on again.
# (Set before linux-cross.cmake, whose Release defaults then stand aside.)
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG -fno-vectorize -fno-slp-vectorize" CACHE STRING "C flags for Release builds")
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG -fno-vectorize -fno-slp-vectorize" CACHE STRING "C++ flags for Release builds")
set(TINYATTN_QEMU qemu-riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
set(CMAKE_C_COMPILER clang-16)
set(CMAKE_CXX_COMPILER clang++-16)
set(CMAKE_C_COMPILER_TARGET ${TINYATTN_CROSS_TRIPLE})
set(CMAKE_CXX_COMPILER_TARGET ${TINYATTN_CROSS_TRIPLE})
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/qemu-riscv64-rvv.sh)
