# Cortex-M33 without FPU (soft float) bare metal on QEMU mps2-an505.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests cortex-m33 "cortex-m33 (mps2-an505)"
