#!/bin/sh
# qemu-riscv64 with the vector extension: the CMAKE_CROSSCOMPILING_EMULATOR of
# toolchains/riscv64-rvv-clang.cmake. qemu 7.2's default CPU has no V, so
# without QEMU_CPU this runs the CPU of VLEN 128; QEMU_CPU picks another
# (rv64,v=true,vlen=N,vext_spec=v1.0: stage 41-riscv64-rvv runs several).
exec qemu-riscv64 -cpu "${QEMU_CPU:-rv64,v=true,vlen=128,vext_spec=v1.0}" -L /usr/riscv64-linux-gnu "$@"
