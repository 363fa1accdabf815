# x86-64 host, GCC, Release: the scalar port, the Highway port with every
# target this build compiles (one run each: AVX3 is compiled and reported as
# skipped on a CPU without AVX-512) and the xsimd port per architecture.
. "$TINYATTN_ROOT/scripts/lib.sh"
run_preset_tests host "x86-64 (GCC)"
