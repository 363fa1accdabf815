# Firmware without CMake: the source manifest and the recipe scripts/sources.py
# prints from it (docs/firmware.md, "Without CMake").
#  * sources.json against the tree (`sources.py check`: every .cc listed, the
#    ports and their columns those of tinyattn/port_list.h, the recipe that
#    docs/firmware.md shows the one it prints), and the recipe
#    refusing a port that does not apply to the flags (DSP for Armv6-M);
#  * tests/firmware/make, a plain Makefile: the library compiled from the
#    recipe with -ffunction-sections -fdata-sections and linked with
#    --gc-sections, on a Cortex-M4F (QEMU mps2-an386, ports scalar + dsp) and
#    on rv32imac (QEMU virt, picolibc, scalar). Each run must pass the fp32
#    and int8 self-tests, print the default port (dsp on the M4: the
#    recipe's TINYATTN_DEFAULT_PORT reached the registry), check an fp32
#    forward() against attention in double and a forward_i8() against its
#    known output bytes, and end with its OK line; the M4 image must hold the
#    DSP port's int8 kernels, and both boards must print the same int8 bytes.
. "$TINYATTN_ROOT/scripts/lib.sh"
R=$TINYATTN_ROOT
dir=$BUILD_ROOT/make
rm -rf "$dir"
mkdir -p "$dir"
status=0

t=$(ta_now)
manifest() {
  python3 "$R/scripts/sources.py" check > "$dir/check.log" 2>&1 || { echo "sources.py check (log: $dir/check.log)"; return 1; }
  if python3 "$R/scripts/sources.py" defines --ports dsp --check-with "arm-none-eabi-g++ -mcpu=cortex-m0 -mthumb" \
       > "$dir/check-with.log" 2>&1; then
    echo "the recipe accepted the DSP port for Armv6-M (log: $dir/check-with.log)"
    return 1
  fi
}
ta_say "[sources.json] against the tree and tinyattn/port_list.h"
if why=$(manifest); then
  ta_append_row "sources.json" - - 2 0 0 - "$(ta_seconds "$t")" "ok: $(cat "$dir/check.log")"
else
  ta_append_row "sources.json" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
  status=1
fi

# make_on <board> <qemu machine>: builds tests/firmware/make for the board
# into $dir/<board> and runs it; the log is $dir/<board>/run.log.
make_on() {
  local board=$1 d=$dir/$1
  make -C "$R/tests/firmware/make" -j"$JOBS" "BOARD=$board" "BUILD=$d" > "$dir/$board.log" 2>&1 ||
    { echo "make (log: $dir/$board.log)"; return 1; }
  make -C "$R/tests/firmware/make" "BOARD=$board" "BUILD=$d" run > "$d/run.log" 2>&1 ||
    { echo "run: exit status $? (log: $d/run.log)"; return 1; }
  grep -q '^make_firmware: OK$' "$d/run.log" || { echo "no OK line (log: $d/run.log)"; return 1; }
  [ "$(grep -cE '^[0-9]+ Tests 0 Failures 0 Ignored$' "$d/run.log")" = 2 ] ||
    { echo "not two passing self-test summaries (log: $d/run.log)"; return 1; }
}

for spec in "mps2-an386|cortex-m4 (mps2-an386), plain Makefile|dsp|arm-none-eabi" \
            "riscv-virt|rv32imac (qemu virt), plain Makefile|scalar|riscv64-unknown-elf"; do
  IFS='|' read -r board label port cross <<< "$spec"
  t=$(ta_now)
  ta_say "[$label] tests/firmware/make, ports $port"
  check_board() {
    make_on "$board" || return 1
    local log=$dir/$board/run.log
    grep -qx "make_firmware: default port $port" "$log" ||
      { echo "the default port is not $port: $(grep 'default port' "$log")"; return 1; }
    grep -qx "tinyattn selftest_int8: port $port, simd target $( [ "$port" = dsp ] && echo DSP || echo scalar)" "$log" ||
      { echo "the int8 self-test did not run the $port kernels (log: $log)"; return 1; }
    if [ "$port" = dsp ]; then
      "$cross-nm" -C "$dir/$board/make_firmware.elf" | grep -q 'tinyattn::dsp::.*kKernelsI8' ||
        { echo "no DSP int8 kernel table in the image"; return 1; }
    fi
  }
  if why=$(check_board); then
    summary=$(grep -E '^[0-9]+ Tests' "$dir/$board/run.log" | awk '{ n += $1 } END { print n }')
    size=$("$cross-size" "$dir/$board/make_firmware.elf" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }')
    ta_append_row "$label" "$port" - "$((summary + 1))" 0 0 "$size" "$(ta_seconds "$t")" \
      "ok: sources from scripts/sources.py, --gc-sections, self-tests passed, fp32 and int8 checked"
  else
    ta_append_row "$label" "$port" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
    status=1
  fi
done

# The int8 output bytes are the same on every port and board.
t=$(ta_now)
m4=$(grep '^make_firmware: int8 forward' "$dir/mps2-an386/run.log" 2>/dev/null)
rv=$(grep '^make_firmware: int8 forward' "$dir/riscv-virt/run.log" 2>/dev/null)
if [ -n "$m4" ] && [ "$m4" = "$rv" ]; then
  ta_append_row "plain Makefile: int8 bytes, dsp = scalar" - - 1 0 0 - "$(ta_seconds "$t")" "ok: ${m4#make_firmware: }"
else
  ta_append_row "plain Makefile: int8 bytes, dsp = scalar" - - 0 1 0 - "$(ta_seconds "$t")" \
    "FAILED: Cortex-M4 '$m4', rv32imac '$rv'"
  status=1
fi
exit "$status"
