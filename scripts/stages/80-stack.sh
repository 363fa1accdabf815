# Worst-case stack of each public entry point on the boards (Cortex-M4F,
# Cortex-M55, Cortex-M33 with soft float, Cortex-M7 with the double FPU and
# Armv6-M code with soft float), from -fstack-usage and -fcallgraph-info=su (GCC), against the
# bound stated in docs/hardening.md (STACK_BOUND bytes). The library sources
# of the ports a board build compiles, as sources.json lists them, are
# compiled directly with each board's CPU flags at -O3 (the Release build);
# scripts/stack_report.py walks the call graphs. One row per board; the
# report lands in $BUILD_ROOT/hardening/stack/<board>.md.
. "${TINYATTN_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/scripts/hardening.sh"
harden_need_packages gcc-arm-none-eabi libnewlib-arm-none-eabi || true  # a missing tool then fails its row
: "${STACK_BOUND:=1024}"
# The self-test runs whole known-answer forward passes inside its own frames
# (and soft-double helpers on the M4F): its own, larger bound.
: "${STACK_BOUND_SELFTEST:=2048}"
dir=$BUILD_ROOT/hardening/stack
mkdir -p "$dir"
fail=0
R=$TINYATTN_ROOT

if ! command -v arm-none-eabi-g++ > /dev/null; then
  ta_append_row "stack" "-" - - - - - 0 "skipped: arm-none-eabi-g++ not installed"
  exit 1
fi

# Third-party headers through a folder of links, as the CMake build does
# (never the whole host /usr/include in a cross build).
mkdir -p "$dir/include"
[ -e /usr/include/hwy ] && ln -sfn /usr/include/hwy "$dir/include/hwy"

for board in cortex-m4 cortex-m55 cortex-m33 cortex-m7 cortex-m0; do
  t=$(ta_now)
  case $board in
    cortex-m4) cpu="-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard" ;;
    cortex-m55) cpu="-mcpu=cortex-m55 -mthumb -mfloat-abi=hard" ;;
    cortex-m33) cpu="-mcpu=cortex-m33+nofp -mthumb -mfloat-abi=soft" ;;  # soft float: the deepest frames
    cortex-m7) cpu="-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard -mfp16-format=ieee" ;;  # Highway needs __fp16 where the FPU has fp16 conversions
    cortex-m0) cpu="-mcpu=cortex-m0 -mthumb -mfloat-abi=soft" ;;  # Armv6-M: 8 low registers, more spills
  esac
  out=$dir/$board
  rm -rf "$out"
  mkdir -p "$out"
  # The ports a board build compiles: Highway (static dispatch) on all but
  # the Armv6-M build (its preset leaves Highway out), Helium on the M55, the
  # DSP port on every one of these cores but Armv6-M (the M4's, M7's and
  # M33's default port). Their sources, defines (the registry's
  # TINYATTN_PORTS_BUILT and TINYATTN_DEFAULT_PORT, TINYATTN_BUILT_FUSED_BLOCKS),
  # include directories and flags come from sources.json, as a build
  # without CMake takes them (scripts/sources.py); --check-with stops on a
  # port the core does not have.
  ports=scalar
  if [ "$board" != cortex-m0 ] && [ -e "$dir/include/hwy" ]; then
    ports=$ports,highway
  fi
  if [ "$board" = cortex-m55 ]; then
    ports=$ports,mve
  fi
  if [ "$board" != cortex-m0 ]; then
    ports=$ports,dsp
  fi
  recipe=(--ports "$ports" --arch arm)
  if ! mapfile -t sources < <(python3 "$R/scripts/sources.py" files "${recipe[@]}" --check-with "arm-none-eabi-g++ $cpu" 2> "$out/recipe.log") ||
     [ "${#sources[@]}" -eq 0 ]; then
    cp "$out/recipe.log" "$dir/$board.md"
    ta_append_row "$board" "stack" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: the recipe of sources.json ($out/recipe.log)"
    fail=1
    continue
  fi
  read -ra defs <<< "$(python3 "$R/scripts/sources.py" defines "${recipe[@]}")"
  read -ra incs <<< "$(python3 "$R/scripts/sources.py" includes "${recipe[@]}")"
  read -ra lang <<< "$(python3 "$R/scripts/sources.py" flags "${recipe[@]}")"
  declare -A file_flags=()
  while IFS=$'\t' read -r f flags; do
    file_flags[$f]=$flags
  done < <(python3 "$R/scripts/sources.py" file-flags "${recipe[@]}")
  rc=0
  for src in "${sources[@]}"; do
    obj=$out/$(echo "${src#"$R"/}" | tr / _).o
    # shellcheck disable=SC2086
    arm-none-eabi-g++ -O3 -DNDEBUG $cpu "${lang[@]}" ${file_flags[$src]:-} \
      -fstack-usage -fcallgraph-info=su "${defs[@]}" "${incs[@]}" -isystem "$dir/include" \
      -c "$src" -o "$obj" >> "$out/compile.log" 2>&1 || { rc=1; echo "FAILED: $src" >> "$out/compile.log"; }
  done
  if [ "$rc" -eq 0 ]; then
    /usr/bin/python3 "$R/scripts/stack_report.py" "$out" "$board" "$STACK_BOUND" --bound-for selftest="$STACK_BOUND_SELFTEST" \
      --tsv "$out/stack.tsv" \
      > "$dir/$board.md" 2>&1 || rc=$?
  else
    cp "$out/compile.log" "$dir/$board.md"
  fi
  cat "$dir/$board.md" >&2
  entries=$(grep -c '^| `' "$dir/$board.md" || true)
  over=$(grep -c 'OVER BOUND' "$dir/$board.md" || true)
  worst=$(awk -F'\t' '$2 !~ /selftest/ && $4 != "unbounded" && $4 > m { m = $4 } END { print m + 0 }' "$out/stack.tsv" 2>/dev/null)
  worst_st=$(awk -F'\t' '$2 ~ /selftest/ && $4 != "unbounded" && $4 > m { m = $4 } END { print m + 0 }' "$out/stack.tsv" 2>/dev/null)
  if [ "$rc" -eq 0 ]; then
    ta_append_row "$board" "stack" - "$entries" 0 0 - "$(ta_seconds "$t")" \
      "ok (worst ${worst} B <= ${STACK_BOUND} B; selftest ${worst_st} B <= ${STACK_BOUND_SELFTEST} B)"
  else
    ta_append_row "$board" "stack" - "$((entries - over))" "$((over > 0 ? over : 1))" 0 - "$(ta_seconds "$t")" \
      "FAILED (report: $dir/$board.md)"
    fail=1
  fi
done
exit "$fail"
