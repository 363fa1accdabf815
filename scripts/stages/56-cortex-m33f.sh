# Cortex-M33 with its single-precision FPU (hard float) bare metal on QEMU
# mps2-an505: the DSP port's fp32 block kernels on Armv8-M mainline.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests cortex-m33f "cortex-m33f (mps2-an505)"
