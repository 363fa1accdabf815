# ARMv7-A hard float, NEON-VFPv4, under qemu-arm.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests armv7 "armv7-a NEON"
