# RISC-V rv32imafc with Zve32f (32-bit vector lanes, fp32: the vector profile
# of microcontrollers) bare metal on QEMU virt: clang-16 compiles, the
# riscv64-unknown-elf GCC links with picolibc (toolchains/riscv32-zve32f-clang.cmake);
# board folder tests/boards/riscv_virt, the rvv port the default. The
# binaries run at any VLEN; every suite takes about 90 s per VLEN here
# (qemu-system-riscv32 emulates the vector and float instructions more
# slowly than qemu-user), so CI runs VLEN 128 only:
# TINYATTN_ZVE32F_VLENS="128 256 512" runs more from the same build.
. "$TINYATTN_ROOT/scripts/lib.sh"
rc=0
for vlen in ${TINYATTN_ZVE32F_VLENS:-128}; do
  run_preset_tests riscv32-zve32f "riscv32 Zve32f VLEN$vlen" "QEMU_CPU=rv32,Zve32f=true,vlen=$vlen,elen=32,vext_spec=v1.0" || rc=1
done
exit $rc
