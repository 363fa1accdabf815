# A firmware project outside the tree on a board the tree does not ship:
# tinyattn configured for a Cortex-M7 with toolchains/cortex-m-generic.cmake
# (no board folder, so no tests or benches), installed, then tests/firmware
# (C, its own memory map for QEMU's mps2-an500) built against the install
# with find_package(tinyattn) and run under QEMU: the self-test's Unity
# transcript, an fp32 and an int8 forward checked on the board, and the
# image check (no heap, exception or RTTI symbols).
. "$TINYATTN_ROOT/scripts/lib.sh"
dir=$BUILD_ROOT/firmware-m7
rm -rf "$dir"
mkdir -p "$dir"
flags="-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard"
tc=$TINYATTN_ROOT/toolchains/cortex-m-generic.cmake
t=$(ta_now)
fail() {
  ta_append_row "cortex-m7 (mps2-an500), installed" "default" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $1 (log: $dir/$2)"
  exit 1
}
ta_say "[cortex-m7 firmware] tinyattn: configure, build, install"
{ cmake -S "$TINYATTN_ROOT" -B "$dir/lib" -G Ninja --toolchain "$tc" "-DTINYATTN_CPU_FLAGS=$flags" \
    -DCMAKE_BUILD_TYPE=MinSizeRel &&
  cmake --build "$dir/lib" -j"$JOBS" &&
  cmake --install "$dir/lib" --prefix "$dir/prefix"; } > "$dir/lib.log" 2>&1 || fail "library build or install" lib.log
ta_say "[cortex-m7 firmware] the outside project, from the install"
{ cmake -S "$TINYATTN_ROOT/tests/firmware" -B "$dir/fw" -G Ninja --toolchain "$tc" "-DTINYATTN_CPU_FLAGS=$flags" \
    -DCMAKE_BUILD_TYPE=MinSizeRel "-DCMAKE_PREFIX_PATH=$dir/prefix" &&
  cmake --build "$dir/fw"; } > "$dir/fw.log" 2>&1 || fail "firmware build" fw.log
elf=$dir/fw/attention_firmware.elf
cmake -DNM=arm-none-eabi-nm "-DIMAGE=$elf" -DNAME=attention_firmware \
  -P "$TINYATTN_ROOT/ports/targets/cortex_m/check_image.cmake" > "$dir/image.log" 2>&1 || fail "image check" image.log
rc=0
timeout -k 5 120 qemu-system-arm -M mps2-an500 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$elf" > "$dir/run.log" 2>&1 || rc=$?
summary=$(grep -E '^[0-9]+ Tests [0-9]+ Failures' "$dir/run.log" | tail -n 1)
passed=$(awk '{ print $1 - $3 }' <<< "${summary:-0 Tests 0 Failures}")
if [ "$rc" -ne 0 ] || ! grep -q '^attention_firmware: OK$' "$dir/run.log"; then
  ta_append_row "cortex-m7 (mps2-an500), installed" "default" - "$passed" 1 0 - "$(ta_seconds "$t")" \
    "FAILED: exit $rc (log: $dir/run.log)"
  exit 1
fi
size=$(arm-none-eabi-size "$elf" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }')
# The self-test's checks, plus the firmware's own run counted as one.
ta_append_row "cortex-m7 (mps2-an500), installed" "default" - "$((passed + 1))" 0 0 "$size" "$(ta_seconds "$t")" \
  "ok: outside C firmware, find_package from the install, its own memory map"
