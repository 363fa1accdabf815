# RV64GC Linux under qemu-riscv64. No vector extension on purpose: with
# -march=rv64gcv Highway picks its RVV target, which GCC 12 cannot compile (no
# riscv_vector.h). The Highway port runs its scalar fallback here; xsimd has
# no RISC-V backend.
set(TINYATTN_CROSS_TRIPLE riscv64-linux-gnu)
set(TINYATTN_CROSS_PROCESSOR riscv64)
set(TINYATTN_CROSS_FLAGS "-march=rv64gc -mabi=lp64d")
set(TINYATTN_QEMU qemu-riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
