# aarch64 under qemu-aarch64. One build (Highway dynamic dispatch), four CPUs:
# a NEON-only core, then SVE2 at 128, 256 and 512-bit vectors. The Highway
# runs per target follow what each CPU offers (SVE2_128 at 128 bit, SVE_256
# at 256 bit; SVE, SVE2 and NEON everywhere SVE is on).
. "$TINYATTN_ROOT/scripts/lib.sh"
rc=0
run_preset_tests aarch64 "aarch64 neoverse-n1" QEMU_CPU=neoverse-n1 || rc=1
run_preset_tests aarch64 "aarch64 SVE VL128" QEMU_CPU=max,sve-default-vector-length=16 || rc=1
run_preset_tests aarch64 "aarch64 SVE VL256" QEMU_CPU=max,sve-default-vector-length=32 || rc=1
run_preset_tests aarch64 "aarch64 SVE VL512" QEMU_CPU=max,sve-default-vector-length=64 || rc=1
exit $rc
