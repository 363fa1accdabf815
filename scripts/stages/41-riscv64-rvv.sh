# RV64GCV under qemu-riscv64 (clang-16: toolchains/riscv64-rvv-clang.cmake).
# One build, every suite at four vector lengths: the rvv port is vector-length
# agnostic, so the same binaries run at VLEN 128, 256, 512 and 1024 (about 30 s
# each here, after a one-minute build).
. "$TINYATTN_ROOT/scripts/lib.sh"
rc=0
for vlen in 128 256 512 1024; do
  run_preset_tests riscv64-rvv "riscv64 RVV VLEN$vlen" QEMU_CPU=rv64,v=true,vlen=$vlen,vext_spec=v1.0 || rc=1
done
exit $rc
