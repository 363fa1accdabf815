# RV64GC under qemu-riscv64 (no vector extension: see toolchains/riscv64-linux-gnu.cmake).
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests riscv64 "riscv64"
