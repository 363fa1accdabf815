# Firmware projects outside the tree, on boards the tree does not ship, from
# an install of tinyattn built with toolchains/cortex-m-generic.cmake (no
# board folder, so no tests or benches in those builds):
#  * Cortex-M7 (QEMU mps2-an500): tests/firmware, in C with its own memory
#    map, found with find_package, configured with -DCMAKE_C_FLAGS (which
#    must add to the toolchain's core flags, not replace them): the
#    self-test's Unity transcript, an fp32 and an int8 forward checked on the
#    board, the image check (no heap, exception or RTTI symbols), the stack
#    check's high-water mark. The installed runtime's default output is the
#    board's UART: these images run under QEMU without semihosting
#    (toolchains/qemu-board-serial.sh), as shipped firmware does; only the
#    micro:bit's int8 image opts in to semihosting (the runtime has no
#    driver for its nRF51 UART);
#  * cores without FPU: Cortex-M3 (QEMU mps2-an385, soft-float ABI), and
#    Armv6-M code (-mcpu=cortex-m0) on the mps2-an385 and on the micro:bit
#    (16 KB of RAM): tests/firmware/int8, int8 only on a plan printed by the
#    host tool (`tinyattn plan`), after the integer-only int8 self-test
#    (which must pass): its image must hold no floating-point code
#    (no soft-float helper), and its output bytes must equal the same
#    program's built for the host;
#  * RISC-V rv32imac (QEMU virt, -bios none), installed with
#    toolchains/riscv32-elf.cmake (picolibc, no C++ standard library): the
#    same C firmware (self-test, fp32 and int8 checks, image check), and the
#    same int8-only firmware (no soft-float helper in its image, output bytes
#    equal the host's; the fp32 firmware's image must show helpers, so the
#    check is known to see them);
#  * docs/firmware.md's size table: tests/firmware/size (fp32, int8, each
#    with and without its self-test) on the installs of the four cores at
#    -Os (the installs above) and -O2 (four more), flash, static RAM and the
#    worst stack from main() (scripts/firmware_size_table.py); printed, and
#    written to $BUILD_ROOT/firmware/size-table.md.
. "$TINYATTN_ROOT/scripts/lib.sh"
R=$TINYATTN_ROOT
dir=$BUILD_ROOT/firmware
rm -rf "$dir"
mkdir -p "$dir"
tc=$R/toolchains/cortex-m-generic.cmake
rv_tc=$R/toolchains/riscv32-elf.cmake
rv_flags="-march=rv32imac -mabi=ilp32"
rv_map=$R/tests/firmware/riscv_virt.ld
status=0
# Soft-float helpers by their Arm ABI names (__aeabi_fadd, __aeabi_i2d, ...)
# and libgcc's (__addsf3, __floatsidf, __fixsfsi, __extendsfdf2, ...).
float_re_arm=' (__aeabi_(f|d)[a-z0-9]*|__aeabi_[a-z]+2[fd]|__[a-z]+[sd]f[0-9]?)$'
float_re_riscv=' (__[a-z]+[sdt]f[0-9]?|__fix(uns)?[sdt]f[sdt]i|__float(un)?[sdt]i[sdt]f)$'
# run_serial MACHINE ELF: QEMU without semihosting, the board's UART on
# stdout, the image's exit status from the runtime's exit line ("virt": the
# RISC-V board).
run_serial() {
  QEMU_TIMEOUT=120 "$R/toolchains/qemu-board-serial.sh" "$@"
}
# stack_ok LOG STACK_SIZE: the stack check's report at exit is plausible:
# some stack used, less than the memory map's reservation.
stack_ok() {
  local used size
  read -r used size < <(sed -n 's/^tinyattn board: stack high water \([0-9]*\) of \([0-9]*\) bytes$/\1 \2/p' "$1")
  [ -n "$used" ] && [ "$used" -gt 0 ] && [ "$used" -lt "$size" ] && [ "$size" -eq "$2" ]
}
# A user's -DCMAKE_C_FLAGS / -DCMAKE_CXX_FLAGS on a firmware configure.
user_flags=(-DCMAKE_C_FLAGS=-DFIRMWARE_USER_FLAG -DCMAKE_CXX_FLAGS=-DFIRMWARE_USER_FLAG)

# -fstack-usage and the call graphs (no change to the code) for the size table's stack column.
su="-fstack-usage -fcallgraph-info=su"
opt_flags=(-DCMAKE_C_FLAGS_MINSIZEREL="-Os -DNDEBUG $su" -DCMAKE_CXX_FLAGS_MINSIZEREL="-Os -DNDEBUG $su"
           -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG $su" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG $su")

# install_for <name> <cpu flags> [build type] [toolchain file]: configure, build and install
# tinyattn for a core (MinSizeRel, i.e. -Os, unless told; Release is -O2; the
# generic Cortex-M toolchain file unless told).
install_for() {
  mkdir -p "$dir/$1"
  { cmake -S "$R" -B "$dir/$1/lib" -G Ninja --toolchain "${4:-$tc}" "-DTINYATTN_CPU_FLAGS=$2" \
      -DCMAKE_BUILD_TYPE="${3:-MinSizeRel}" "${opt_flags[@]}" &&
    cmake --build "$dir/$1/lib" -j"$JOBS" &&
    cmake --install "$dir/$1/lib" --prefix "$dir/$1/prefix"; } > "$dir/$1/lib.log" 2>&1
}

# ---- Cortex-M7: the C firmware of docs/firmware.md
label="cortex-m7 (mps2-an500), installed"
flags="-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard"
t=$(ta_now)
mkdir -p "$dir/m7"
m7() {
  ta_say "[$label] tinyattn installed, then tests/firmware from the install"
  install_for m7 "$flags" || { echo "library build or install (log: $dir/m7/lib.log)"; return 1; }
  { cmake -S "$R/tests/firmware" -B "$dir/m7/fw" -G Ninja --toolchain "$tc" "-DTINYATTN_CPU_FLAGS=$flags" \
      -DCMAKE_BUILD_TYPE=MinSizeRel "-DCMAKE_PREFIX_PATH=$dir/m7/prefix" "${user_flags[@]}" \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON &&
    cmake --build "$dir/m7/fw"; } > "$dir/m7/fw.log" 2>&1 || { echo "firmware build (log: $dir/m7/fw.log)"; return 1; }
  # The user's flag and the core's flags both reached the compiler (and the
  # hard-float link above succeeded).
  grep '"command".*main\.c' "$dir/m7/fw/compile_commands.json" | grep -- -DFIRMWARE_USER_FLAG |
    grep -q -- -mfloat-abi=hard || { echo "-DCMAKE_C_FLAGS replaced the core's flags (see $dir/m7/fw/compile_commands.json)"; return 1; }
  elf=$dir/m7/fw/attention_firmware.elf
  cmake -DNM=arm-none-eabi-nm "-DIMAGE=$elf" -DNAME=attention_firmware \
    -P "$R/ports/targets/cortex_m/check_image.cmake" > "$dir/m7/image.log" 2>&1 ||
    { echo "image check (log: $dir/m7/image.log)"; return 1; }
  run_serial mps2-an500 "$elf" > "$dir/m7/run.log" 2>&1 || { echo "exit status $? (log: $dir/m7/run.log)"; return 1; }
  grep -q '^attention_firmware: OK$' "$dir/m7/run.log" || { echo "no OK line (log: $dir/m7/run.log)"; return 1; }
  stack_ok "$dir/m7/run.log" 16384 || { echo "no plausible stack high-water line (log: $dir/m7/run.log)"; return 1; }
}
if why=$(m7); then
  summary=$(grep -E '^[0-9]+ Tests [0-9]+ Failures' "$dir/m7/run.log" | tail -n 1)
  size=$(arm-none-eabi-size "$dir/m7/fw/attention_firmware.elf" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }')
  # The self-test's checks, plus the firmware's own run as one.
  ta_append_row "$label" "default" - "$(($(awk '{ print $1 - $3 }' <<< "$summary") + 1))" 0 0 "$size" \
    "$(ta_seconds "$t")" "ok: outside C firmware, find_package from the install, its own memory map, -DCMAKE_C_FLAGS added to the core's, UART output without semihosting, $(sed -n 's/^tinyattn board: //p' "$dir/m7/run.log" | grep '^stack')"
else
  ta_append_row "$label" "default" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
  status=1
fi

# The tree's C++ firmware example (the README's starting point) from the same
# install alone: it must build and pass on the M7 with only what is installed.
label="cortex-m7 (mps2-an500), installed: C++ example"
t=$(ta_now)
m7_example() {
  [ -d "$dir/m7/prefix" ] || { echo "no install (stage's M7 row)"; return 1; }
  { cmake -S "$R/tests/firmware/example" -B "$dir/m7/example" -G Ninja --toolchain "$tc" "-DTINYATTN_CPU_FLAGS=$flags" \
      -DCMAKE_BUILD_TYPE=MinSizeRel "-DCMAKE_PREFIX_PATH=$dir/m7/prefix" \
      "-DEXAMPLE_SOURCE=$R/ports/targets/cortex_m/example/firmware.cc" &&
    cmake --build "$dir/m7/example"; } > "$dir/m7/example.log" 2>&1 ||
    { echo "example build (log: $dir/m7/example.log)"; return 1; }
  run_serial mps2-an500 "$dir/m7/example/example_firmware.elf" > "$dir/m7/example-run.log" 2>&1 ||
    { echo "exit status $? (log: $dir/m7/example-run.log)"; return 1; }
  grep -q '^example: PASS$' "$dir/m7/example-run.log" || { echo "no PASS line (log: $dir/m7/example-run.log)"; return 1; }
}
if why=$(m7_example); then
  size=$(arm-none-eabi-size "$dir/m7/example/example_firmware.elf" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }')
  ta_append_row "$label" "default" - 1 0 0 "$size" "$(ta_seconds "$t")" \
    "ok: ports/targets/cortex_m/example/firmware.cc from the install alone"
else
  ta_append_row "$label" "default" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
  status=1
fi

# ---- RISC-V rv32imac: the same C firmware, from an install made with
# toolchains/riscv32-elf.cmake, with the virt board's memory map
label="rv32imac (qemu virt), installed"
t=$(ta_now)
mkdir -p "$dir/rv"
rv() {
  ta_say "[$label] tinyattn installed, then tests/firmware from the install"
  install_for lib-rv "$rv_flags" MinSizeRel "$rv_tc" || { echo "library build or install (log: $dir/lib-rv/lib.log)"; return 1; }
  { cmake -S "$R/tests/firmware" -B "$dir/rv/fw" -G Ninja --toolchain "$rv_tc" "-DTINYATTN_CPU_FLAGS=$rv_flags" \
      -DCMAKE_BUILD_TYPE=MinSizeRel "-DCMAKE_PREFIX_PATH=$dir/lib-rv/prefix" "-DFIRMWARE_MEMORY_MAP=$rv_map" &&
    cmake --build "$dir/rv/fw"; } > "$dir/rv/fw.log" 2>&1 || { echo "firmware build (log: $dir/rv/fw.log)"; return 1; }
  elf=$dir/rv/fw/attention_firmware.elf
  cmake -DNM=riscv64-unknown-elf-nm "-DIMAGE=$elf" -DNAME=attention_firmware \
    -P "$R/ports/targets/cortex_m/check_image.cmake" > "$dir/rv/image.log" 2>&1 ||
    { echo "image check (log: $dir/rv/image.log)"; return 1; }
  # rv32imac has no FPU: this fp32 image must show soft-float helpers, or the
  # int8 image's check below could not see them either.
  riscv64-unknown-elf-nm "$elf" | grep -E "$float_re_riscv" > "$dir/rv/float_symbols.txt" ||
    { echo "no soft-float helper found in the fp32 image: the int8 check's pattern is wrong"; return 1; }
  run_serial virt "$elf" > "$dir/rv/run.log" 2>&1 || { echo "exit status $? (log: $dir/rv/run.log)"; return 1; }
  grep -q '^attention_firmware: OK$' "$dir/rv/run.log" || { echo "no OK line (log: $dir/rv/run.log)"; return 1; }
  stack_ok "$dir/rv/run.log" 16384 || { echo "no plausible stack high-water line (log: $dir/rv/run.log)"; return 1; }
}
if why=$(rv); then
  summary=$(grep -E '^[0-9]+ Tests [0-9]+ Failures' "$dir/rv/run.log" | tail -n 1)
  size=$(riscv64-unknown-elf-size "$dir/rv/fw/attention_firmware.elf" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }')
  ta_append_row "$label" "default" - "$(($(awk '{ print $1 - $3 }' <<< "$summary") + 1))" 0 0 "$size" \
    "$(ta_seconds "$t")" "ok: outside C firmware, find_package from the install, no C++ standard library, $(wc -l < "$dir/rv/float_symbols.txt") soft-float helpers in the fp32 image, UART output without semihosting, $(sed -n 's/^tinyattn board: //p' "$dir/rv/run.log" | grep '^stack')"
else
  ta_append_row "$label" "default" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
  status=1
fi

# ---- Cores without FPU: int8 only, no floating point in the image
host_tool() {
  ta_say "[firmware] host tool and library (scalar only), the offline plan"
  { cmake -S "$R" -B "$dir/host" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTINYATTN_BUILD_TESTS=OFF \
      -DTINYATTN_BUILD_BENCH=OFF -DTINYATTN_WITH_HIGHWAY=OFF -DTINYATTN_WITH_XSIMD=OFF &&
    cmake --build "$dir/host" -j"$JOBS" --target tinyattn_tool; } > "$dir/host.log" 2>&1 || return 1
  "$dir/host/tools/tinyattn" plan --dk 16 --heads 2,1 --qparams "q=0.02:1/0.025,k=0.03:-2,v=0.04,y=0.01:3" \
    --name int8_plan --out "$dir/int8_plan.h" >> "$dir/host.log" 2>&1 || return 1
  # The same program on the host: the line every board must print.
  { gcc -std=c99 -pedantic -Wall -Wextra -Werror -DTINYATTN_FIRMWARE_HOSTED -I"$R/lib/include" -I"$dir" \
      -c "$R/tests/firmware/int8/main.c" -o "$dir/int8_host.o" &&
    g++ "$dir/int8_host.o" "$dir/host/lib/libtinyattn.a" -o "$dir/int8_host" &&
    "$dir/int8_host" > "$dir/int8_host.txt"; } >> "$dir/host.log" 2>&1
}

# int8_on <name> <library> <cpu flags> <qemu machine> <memory map>: tinyattn
# installed for the core (once per <library>), tests/firmware/int8 from the
# install, its symbols, its run. Machine "virt" is the RISC-V one; the
# micro:bit's image talks over semihosting, the others over the UART.
int8_on() {
  local name=$1 lib=$2 flags=$3 machine=$4 map=$5 d=$dir/$1
  local toolchain=$tc nm=arm-none-eabi-nm float_re=$float_re_arm semihosting=OFF
  if [ "$machine" = virt ]; then
    toolchain=$rv_tc nm=riscv64-unknown-elf-nm float_re=$float_re_riscv
  fi
  if [ "$machine" = microbit ]; then
    semihosting=ON
  fi
  mkdir -p "$d" "$dir/$lib"
  if [ ! -d "$dir/$lib/prefix" ]; then
    install_for "$lib" "$flags" MinSizeRel "$toolchain" || { echo "library build or install (log: $dir/$lib/lib.log)"; return 1; }
  fi
  { cmake -S "$R/tests/firmware/int8" -B "$d/fw" -G Ninja --toolchain "$toolchain" "-DTINYATTN_CPU_FLAGS=$flags" \
      -DCMAKE_BUILD_TYPE=MinSizeRel "-DCMAKE_PREFIX_PATH=$dir/$lib/prefix" "-DINT8_PLAN_HEADER=$dir/int8_plan.h" \
      "-DFIRMWARE_MEMORY_MAP=$map" "-DFIRMWARE_SEMIHOSTING=$semihosting" &&
    cmake --build "$d/fw"; } > "$d/fw.log" 2>&1 || { echo "firmware build (log: $d/fw.log)"; return 1; }
  local elf=$d/fw/int8_firmware.elf
  "$nm" "$elf" | grep -E "$float_re" > "$d/float_symbols.txt" &&
    { echo "floating-point code in the int8 image: $(tr '\n' ' ' < "$d/float_symbols.txt")"; return 1; }
  if [ "$semihosting" = ON ]; then
    timeout -k 5 120 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native -kernel "$elf" > "$d/run.log" 2>&1 ||
      { echo "exit status $? (log: $d/run.log)"; return 1; }
  else
    run_serial "$machine" "$elf" > "$d/run.log" 2>&1 || { echo "exit status $? (log: $d/run.log)"; return 1; }
  fi
  # The integer-only self-test ran first and passed (the program exits 1 otherwise).
  grep -qE '^[0-9]+ Tests 0 Failures 0 Ignored$' "$d/run.log" ||
    { echo "no passing int8 self-test summary (log: $d/run.log)"; return 1; }
  local board_line host_line
  board_line=$(grep '^int8 checksum' "$d/run.log")
  host_line=$(grep '^int8 checksum' "$dir/int8_host.txt")
  [ -n "$board_line" ] && [ "$board_line" = "$host_line" ] || { echo "board printed '$board_line', host '$host_line'"; return 1; }
}

t=$(ta_now)
host_ok=1
host_tool || host_ok=0
# Armv6-M code runs on the mps2-an385's Cortex-M3 with 4 MB of RAM, and on
# the micro:bit's Cortex-M0 with 16 KB.
for spec in "m3|lib-m3|cortex-m3 (mps2-an385), installed, soft float|-mcpu=cortex-m3 -mthumb -mfloat-abi=soft|mps2-an385|$R/tests/firmware/mps2_an500.ld" \
            "m0|lib-m0|cortex-m0 code (mps2-an385), installed, Armv6-M|-mcpu=cortex-m0 -mthumb -mfloat-abi=soft|mps2-an385|$R/tests/firmware/mps2_an500.ld" \
            "m0mb|lib-m0|cortex-m0 (microbit, 16 KB RAM), installed|-mcpu=cortex-m0 -mthumb -mfloat-abi=soft|microbit|$R/tests/firmware/microbit.ld" \
            "rv8|lib-rv|rv32imac (qemu virt), installed, int8 only|$rv_flags|virt|$rv_map"; do
  IFS='|' read -r name lib label flags machine map <<< "$spec"
  ta_say "[$label] tinyattn installed, then tests/firmware/int8 from the install"
  if [ "$host_ok" = 0 ]; then
    why="the host tool or the host build of the int8 program (log: $dir/host.log)"
  elif why=$(int8_on "$name" "$lib" "$flags" "$machine" "$map"); then
    size=$(size "$dir/$name/fw/int8_firmware.elf" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }')
    ta_append_row "$label" "default" - 2 0 0 "$size" "$(ta_seconds "$t")" \
      "ok: int8 only, offline plan, int8 self-test passed, no floating-point code, output bytes equal the host's"
    t=$(ta_now)
    continue
  fi
  ta_append_row "$label" "default" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
  status=1
  t=$(ta_now)
done

# ---- docs/firmware.md's size table: every core at -Os and -O2
t=$(ta_now)
size_table() {
  local specs=() spec name flags lib build opt toolchain map
  for spec in "m7|cortex-m7, hard float (FPv5-D16)|-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard|$tc|$R/tests/firmware/mps2_an500.ld" \
              "lib-m3|cortex-m3, soft float|-mcpu=cortex-m3 -mthumb -mfloat-abi=soft|$tc|$R/tests/firmware/mps2_an500.ld" \
              "lib-m0|cortex-m0 (Armv6-M), soft float|-mcpu=cortex-m0 -mthumb -mfloat-abi=soft|$tc|$R/tests/firmware/mps2_an500.ld" \
              "lib-rv|rv32imac, soft float (picolibc)|$rv_flags|$rv_tc|$rv_map"; do
    IFS='|' read -r name label flags toolchain map <<< "$spec"
    for build in MinSizeRel Release; do
      opt=-Os lib=$name
      if [ "$build" = Release ]; then
        opt=-O2 lib=$name-O2
      fi
      if [ ! -d "$dir/$lib/prefix" ]; then
        mkdir -p "$dir/$lib"
        install_for "$lib" "$flags" "$build" "$toolchain" || { echo "library build or install (log: $dir/$lib/lib.log)"; return 1; }
      fi
      { cmake -S "$R/tests/firmware/size" -B "$dir/$lib/size" -G Ninja --toolchain "$toolchain" "-DTINYATTN_CPU_FLAGS=$flags" \
          -DCMAKE_BUILD_TYPE=$build "${opt_flags[@]}" "-DCMAKE_PREFIX_PATH=$dir/$lib/prefix" \
          "-DINT8_PLAN_HEADER=$dir/int8_plan.h" "-DFIRMWARE_MEMORY_MAP=$map" &&
        cmake --build "$dir/$lib/size" -j"$JOBS"; } > "$dir/$lib/size.log" 2>&1 ||
        { echo "size images (log: $dir/$lib/size.log)"; return 1; }
      specs+=("$label|$opt|$dir/$lib/lib|$dir/$lib/size")
    done
  done
  /usr/bin/python3 "$R/scripts/firmware_size_table.py" "${specs[@]}" > "$dir/size-table.md" ||
    { echo "size table: an image is missing or a stack is unbounded ($dir/size-table.md)"; return 1; }
}
ta_say "[firmware size table] fp32 / int8 with and without the self-test, -Os and -O2"
if [ "$host_ok" = 0 ]; then
  ta_append_row "firmware size table" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: no offline plan (log: $dir/host.log)"
  status=1
elif why=$(size_table); then
  echo "docs/firmware.md size table (flash = text+data, static RAM = data+bss, stack = worst from main(), bytes):" >&2
  cat "$dir/size-table.md" >&2
  # The doc quotes one run's table: say whether this run still prints it
  # (sizes move with the code and the compiler, so a difference is news, not a failure).
  doc_note="docs/firmware.md's table matches this run"
  while IFS= read -r row; do
    grep -qxF "$row" "$R/docs/firmware.md" || { doc_note="docs/firmware.md's table differs from this run: update it"; break; }
  done < <(grep -E '^\| (cortex|rv32)' "$dir/size-table.md")
  ta_say "[firmware size table] $doc_note"
  ta_append_row "firmware size table" - - 1 0 0 - "$(ta_seconds "$t")" "ok: $dir/size-table.md; $doc_note"
else
  ta_append_row "firmware size table" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
  status=1
fi
exit "$status"
