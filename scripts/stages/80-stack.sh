# Worst-case stack of each public entry point on the boards (Cortex-M4F,
# Cortex-M55, Cortex-M33 with soft float, Cortex-M7 with the double FPU and
# Armv6-M code with soft float), from -fstack-usage and -fcallgraph-info=su (GCC), against the
# bound stated in docs/hardening.md (STACK_BOUND bytes). The library sources
# (lib/src, ports/registry.cc and the ports a board build compiles) are
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
  sources=("$R"/lib/src/*.cc "$R/ports/registry.cc" "$R/ports/registry_i8.cc" "$R"/ports/backends/scalar/*.cc)
  defs=()
  built=kScalar  # the registry's TINYATTN_PORTS_BUILT (ports/registry.h)
  fused=0        # TINYATTN_BUILT_FUSED_BLOCKS: whether a built port's fused column in tinyattn/port_list.h is 1
  # The SIMD ports a board build compiles: Highway (static dispatch) on all
  # but the Armv6-M build (its preset leaves Highway out), Helium on the M55.
  # (the kernel files only: the boards use static dispatch, so no dispatch
  # runtime, and the folders' probe/test-hook programs are not the library)
  if [ "$board" != cortex-m0 ] && [ -f "$R/ports/backends/highway/highway_kernels.cc" ] && [ -e "$dir/include/hwy" ]; then
    sources+=("$R/ports/backends/highway/highway_kernels.cc" "$R/ports/backends/highway/highway_kernels_i8.cc")
    built=$built,kHighway
    fused=1
  fi
  if [ "$board" = cortex-m55 ] && [ -f "$R/ports/backends/mve/mve.cc" ]; then
    sources+=("$R/ports/backends/mve/mve.cc" "$R/ports/backends/mve/mve_i8.cc")
    built=$built,kMve
    fused=1
  fi
  # The DSP port: every one of these cores but Armv6-M has the DSP extension
  # (the M4's, M7's and M33's default port).
  if [ "$board" != cortex-m0 ] && [ -f "$R/ports/backends/dsp/dsp.cc" ]; then
    sources+=("$R/ports/backends/dsp/dsp.cc" "$R/ports/backends/dsp/dsp_i8.cc")
    built=$built,kDsp
  fi
  defs+=(-DTINYATTN_PORTS_BUILT=$built -DTINYATTN_BUILT_FUSED_BLOCKS=$fused)
  rc=0
  for src in "${sources[@]}"; do
    obj=$out/$(echo "${src#"$R"/}" | tr / _).o
    # shellcheck disable=SC2086
    arm-none-eabi-g++ -std=c++17 -O3 -DNDEBUG $cpu -fno-exceptions -fno-rtti -ffunction-sections \
      -fstack-usage -fcallgraph-info=su "${defs[@]}" -I"$R/lib/include" -I"$R/lib/contract/include" -I"$R/ports" -isystem "$dir/include" \
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
