# Cortex-M55 + MVE bare metal on QEMU mps3-an547.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests cortex-m55 "cortex-m55 (mps3-an547)"
