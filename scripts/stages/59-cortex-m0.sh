# Armv6-M code (-mcpu=cortex-m0, soft float) bare metal on QEMU mps2-an385,
# whose Cortex-M3 executes it with 4 MiB of RAM.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests cortex-m0 "cortex-m0 code (mps2-an385)"
