# The firmware ecosystems' packages (docs/packages.md), generated from
# sources.json by scripts/packaging/make_packages.py into $BUILD_ROOT/packages:
#  * each package's manifest checked against its format's published rules
#    (scripts/packaging/validate_packages.py: pykwalify, jsonschema, kconfiglib,
#    xmllint, the Arduino library specification);
#  * each package's sources built the way its framework builds them, by
#    stand-in (none of these frameworks can be installed here): Zephyr's and
#    ESP-IDF's CMake functions (scripts/packaging/standin/*.cmake) over the
#    module's and component's CMakeLists.txt, their Kconfig resolved with
#    kconfiglib; the Arduino, PlatformIO and CMSIS-Pack file lists by each
#    builder's rules as a Makefile (standin/recipe.py);
#  * the same firmware (scripts/packaging/firmware/main.c: default port,
#    known-answer forward, self-test) linked over each build with tinyattn's
#    board runtime from an install, run on a Cortex-M4 (QEMU mps2-an386) and
#    on RISC-V rv32imac (QEMU virt); the installed library itself is never
#    linked (the map files are checked);
#  * the port choice: the DSP port by default on the M4 (scalar for ESP-IDF,
#    whose chips have no Arm extension), scalar on RV32; on a Cortex-M55 the
#    Zephyr Kconfig and the pack's conditions pick Helium (configuration only).
. "$TINYATTN_ROOT/scripts/lib.sh"
R=$TINYATTN_ROOT
P=$R/scripts/packaging
PY=/usr/bin/python3
dir=$BUILD_ROOT/packages
out=$dir/out
rm -rf "$dir"
mkdir -p "$dir"
status=0
kinds="zephyr esp-idf platformio arduino cmsis-pack"

# ---- generate and validate
t=$(ta_now)
ta_say "[packages] make_packages.py, validate_packages.py"
if ! $PY "$P/make_packages.py" --out "$out" > "$dir/generate.log" 2>&1; then
  ta_append_row "packages: generate" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: make_packages.py (log: $dir/generate.log)"
  exit 1
fi
$PY "$P/validate_packages.py" "$out" > "$dir/validate.log" 2>&1 || status=1
grep '^FAILED' "$dir/validate.log" >&2 || true
declare -A tools=([zephyr]="pykwalify module schema, kconfiglib" [esp-idf]="jsonschema, kconfiglib"
                  [platformio]="jsonschema" [arduino]="library specification rev. 2.2, archive"
                  [cmsis-pack]="xmllint --schema, files and conditions")
for kind in $kinds; do
  read -r n f < <(sed -n "s/^$kind: \([0-9]*\) checks, \([0-9]*\) failed$/\1 \2/p" "$dir/validate.log")
  if [ -z "${n:-}" ]; then
    ta_append_row "$kind package: manifest" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: no result (log: $dir/validate.log)"
    status=1
  elif [ "$f" -eq 0 ]; then
    ta_append_row "$kind package: manifest" - - "$n" 0 0 - "$(ta_seconds "$t")" "ok: ${tools[$kind]}"
  else
    ta_append_row "$kind package: manifest" - - "$((n - f))" "$f" 0 - "$(ta_seconds "$t")" "FAILED: $f checks (log: $dir/validate.log)"
  fi
  t=$(ta_now)
done

# ---- the port choice on a Cortex-M55 (configuration only: no image)
t=$(ta_now)
m55() {
  local z c
  z=$($PY "$P/standin/configure.py" zephyr "$out/zephyr/tinyattn" --board m55 --out "$dir/m55/zephyr-config" 2>&1) ||
    { echo "Zephyr Kconfig: $z"; return 1; }
  case " $z " in *" TINYATTN_DEFAULT_PORT_MVE=y "*" TINYATTN_PORT_DSP=y "*) ;;
    *) echo "Zephyr Kconfig on a Cortex-M55 chose: $z"; return 1 ;; esac
  c=$($PY "$P/standin/recipe.py" cmsis-pack "$out/cmsis-pack/tinyattn" --device m55 --out "$dir/m55/cmsis-pack" 2>&1) ||
    { echo "pack conditions: $c"; return 1; }
  case $c in *"Port mve"*) ;; *) echo "pack conditions on a Cortex-M55 chose: $c"; return 1 ;; esac
  grep -q 'RTE_ML_TINYATTN_PORT_MVE' "$dir/m55/cmsis-pack/RTE/RTE_Components.h" || { echo "no Helium in RTE_Components.h"; return 1; }
}
if why=$(m55); then
  ta_append_row "packages: port choice, cortex-m55" mve - 2 0 0 - "$(ta_seconds "$t")" \
    "ok: Zephyr Kconfig and the pack's conditions choose Helium (configuration only)"
else
  ta_append_row "packages: port choice, cortex-m55" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: $why"
  status=1
fi

# ---- build and run, per target
# run_target <name> <label> <toolchain file> <cpu flags> <Makefile cpu flags> <cross prefix>
#            <memory map> <run command> <default port expected (ESP-IDF's: scalar)>
run_target() {
  local name=$1 label=$2 toolchain=$3 flags=$4 mkflags=$5 cross=$6 map=$7 run=$8 arm_port=$9
  local d=$dir/$name prefix=$dir/$name/install t kind
  t=$(ta_now)
  mkdir -p "$d"
  ta_say "[packages, $label] tinyattn installed (the board runtime), the stand-in builds"
  if ! { cmake -S "$R" -B "$d/lib" -G Ninja --toolchain "$toolchain" "-DTINYATTN_CPU_FLAGS=$flags" \
           -DCMAKE_BUILD_TYPE=MinSizeRel &&
         cmake --build "$d/lib" -j"$JOBS" && cmake --install "$d/lib" --prefix "$prefix"; } > "$d/install.log" 2>&1; then
    for kind in $kinds; do
      ta_append_row "$kind package, $label" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: install of the board runtime (log: $d/install.log)"
    done
    return 1
  fi
  local device=$name archives="" freestanding=""
  [ -d "$prefix/include/tinyattn_freestanding" ] && freestanding="-isystem $prefix/include/tinyattn_freestanding"
  declare -A why=()
  $PY "$P/standin/configure.py" zephyr "$out/zephyr/tinyattn" --board "$device" --out "$d/zephyr-config" \
    > "$d/zephyr-config.log" 2>&1 || why[zephyr]="Kconfig (log: $d/zephyr-config.log)"
  $PY "$P/standin/configure.py" idf "$out/esp-idf/tinyattn" --out "$d/idf-config" \
    > "$d/idf-config.log" 2>&1 || why[esp-idf]="Kconfig (log: $d/idf-config.log)"
  for kind in arduino platformio cmsis-pack; do
    local pkg=$out/$kind/tinyattn inc=$out/$kind/tinyattn/src
    [ "$kind" = cmsis-pack ] && inc=$pkg/lib/include
    if ! $PY "$P/standin/recipe.py" "$kind" "$pkg" --device "$device" --out "$d/$kind" > "$d/$kind.log" 2>&1; then
      why[$kind]="recipe (log: $d/$kind.log)"
      continue
    fi
    if [ ! -s "$d/$kind/sources.txt" ]; then
      continue  # nothing for this core (the pack on RV32): its row says so below
    fi
    if ! make -C "$d/$kind" -j"$JOBS" "CC=${cross}gcc" "CXX=${cross}g++" "AR=${cross}ar" "CPU_FLAGS=$mkflags" \
           "SYSTEM_INCLUDES=$freestanding" >> "$d/$kind.log" 2>&1; then
      why[$kind]="Makefile recipe build (log: $d/$kind.log)"
      continue
    fi
    archives+="${archives:+;}$kind=$d/$kind/libpackage.a=$inc"
  done
  local opts=()
  [ -z "${why[zephyr]:-}" ] && opts+=("-DZEPHYR_CONFIG=$d/zephyr-config")
  [ -z "${why[esp-idf]:-}" ] && opts+=("-DIDF_COMPONENT=$out/esp-idf/tinyattn" "-DIDF_CONFIG=$d/idf-config")
  if ! { cmake -S "$P/standin" -B "$d/standin" -G Ninja --toolchain "$toolchain" "-DTINYATTN_CPU_FLAGS=$flags" \
           -DCMAKE_BUILD_TYPE=MinSizeRel "-DCMAKE_PREFIX_PATH=$prefix" "-DMEMORY_MAP=$map" "-DARCHIVES=$archives" \
           "${opts[@]}" &&
         cmake --build "$d/standin" -j"$JOBS" -- -k 0; } > "$d/standin.log" 2>&1; then
    grep -E 'error' "$d/standin.log" | head -n 20 >&2
  fi
  local build_s
  build_s=$(ta_seconds "$t")
  for kind in $kinds; do
    t=$(ta_now)
    local elf=$d/standin/fw_$kind.elf log=$d/run-$kind.log want=scalar
    if [ "$kind" = cmsis-pack ] && [ "$name" = rv32 ] && [ -z "${why[$kind]:-}" ]; then
      # CMSIS-Packs describe Arm cores: on RV32 the conditions must leave every component out.
      if [ ! -s "$d/$kind/sources.txt" ]; then
        ta_append_row "$kind package, $label" - - 1 0 0 - "$(ta_seconds "$t")" \
          "ok: not applicable (CMSIS-Packs describe Arm cores): the conditions select no component"
      else
        ta_append_row "$kind package, $label" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: components selected for a non-Arm core"
        status=1
      fi
      continue
    fi
    if [ -n "${why[$kind]:-}" ]; then
      ta_append_row "$kind package, $label" - - 0 1 0 - "$build_s" "FAILED: ${why[$kind]}"
      status=1
      continue
    fi
    if [ ! -f "$elf" ]; then
      ta_append_row "$kind package, $label" - - 0 1 0 - "$build_s" "FAILED: stand-in build (log: $d/standin.log)"
      status=1
      continue
    fi
    [ "$kind" != esp-idf ] && want=$arm_port
    local rc=0
    $run "$elf" > "$log" 2>&1 || rc=$?
    local port summary n f i passed failed size note
    port=$(sed -n 's/^tinyattn-package: default port //p' "$log")
    summary=$(grep -E '^[0-9]+ Tests [0-9]+ Failures [0-9]+ Ignored' "$log" | tail -n 1)
    read -r n _ f _ i _ <<< "${summary:-0 Tests 1 Failures 0 Ignored}"
    passed=$((n - f - i)) failed=$f
    if grep -q '^tinyattn-package: known answer' "$log" && ! grep -q 'FAILED: known answer' "$log"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
    fi
    note=""
    if [ "$rc" -ne 0 ] || ! grep -q '^tinyattn-package: OK$' "$log"; then
      note="exit status $rc, no OK line"
    elif [ "$port" != "$want" ]; then
      note="default port $port, expected $want"
    elif grep -q "$prefix/lib/libtinyattn.a" "$elf.map"; then
      note="the installed library was linked"
    fi
    [ -n "$note" ] && [ "$failed" -eq 0 ] && failed=1
    size=$("${cross}size" "$elf" | awk 'NR == 2 { print $1 "/" $2 "/" $3 }')
    if [ -z "$note" ] && [ "$failed" -eq 0 ]; then
      ta_append_row "$kind package, $label" "${port:--}" - "$passed" 0 "$i" "$size" "$(ta_seconds "$t")" \
        "ok: stand-in build, known answer and self-test"
    else
      ta_append_row "$kind package, $label" "${port:--}" - "$passed" "$failed" "$i" "$size" "$(ta_seconds "$t")" \
        "FAILED: ${note:-checks failed} (log: $log)"
      status=1
    fi
  done
}

m4_flags="-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard"
run_target m4 "cortex-m4 (mps2-an386)" "$R/toolchains/cortex-m-generic.cmake" "$m4_flags" "$m4_flags" \
  arm-none-eabi- "$R/ports/targets/mps2_an386/board.ld" "$R/toolchains/qemu-board.sh mps2-an386" dsp || status=1
rv_flags="-march=rv32imac -mabi=ilp32"
run_target rv32 "rv32imac (qemu virt)" "$R/toolchains/riscv32-elf.cmake" "$rv_flags" "$rv_flags --specs=picolibc.specs" \
  riscv64-unknown-elf- "$R/tests/firmware/riscv_virt.ld" "$R/toolchains/qemu-riscv32-virt.sh" scalar || status=1
exit "$status"
