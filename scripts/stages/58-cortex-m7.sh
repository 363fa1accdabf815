# Cortex-M7 with the double-precision FPU (hard float) bare metal on QEMU
# mps2-an500 (board folder tests/boards/mps2_an500).
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests cortex-m7 "cortex-m7 (mps2-an500)"
