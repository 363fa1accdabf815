# Cortex-M4F bare metal on QEMU mps2-an386: the suites through the heap-free
# runner, the image checks and the firmware example.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests cortex-m4 "cortex-m4 (mps2-an386)"
