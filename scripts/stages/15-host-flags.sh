# x86-64 host, configured as users do: a plain `cmake -B build` (no preset,
# no options) and the same with -march=native, x86-64-v3 and x86-64-v4, with
# Highway's run-time dispatch (the default) and with static dispatch. Each
# builds the host tool and runs its self-test, which must pass on the
# default port with a SIMD target: a configuration never silently loses SIMD
# (issue "Fast by default"), and the configure step's port line is kept.
. "$TINYATTN_ROOT/scripts/lib.sh"
rc=0
# Whether this CPU can run code built with these flags: an x86-64-v4 (AVX-512)
# or v3 (AVX2, FMA, BMI2) build is still configured, built and checked for its
# Highway target on a CPU without them, but not run there.
cpu_runs() {
  local need
  case $1 in
    *x86-64-v4*) need="avx512f avx512bw avx512cd avx512dq avx512vl" ;;
    *x86-64-v3*) need="avx2 fma bmi2" ;;
    *) return 0 ;;
  esac
  local f
  for f in $need; do grep -qw "$f" /proc/cpuinfo || return 1; done
}
dir=$BUILD_ROOT/host-flags
mkdir -p "$dir"
# name | CXXFLAGS | extra configure arguments | static target the flags must give
configs=(
  "plain||"
  "native|-march=native|"
  "x86-64-v3|-march=x86-64-v3|"
  "x86-64-v4|-march=x86-64-v4|"
  "native static|-march=native|-DTINYATTN_HWY_DYNAMIC=OFF"
  "x86-64-v3 static|-march=x86-64-v3|-DTINYATTN_HWY_DYNAMIC=OFF|AVX2"
  "x86-64-v4 static|-march=x86-64-v4|-DTINYATTN_HWY_DYNAMIC=OFF|AVX3"
)
for cfg in "${configs[@]}"; do
  IFS='|' read -r name flags extra want <<< "$cfg"
  b=$dir/${name// /-}
  log=$b.log
  t=$(ta_now)
  rm -rf "$b"
  # shellcheck disable=SC2086
  if ! { cmake -S "$TINYATTN_ROOT" -B "$b" -DCMAKE_CXX_FLAGS="$flags" $extra -DTINYATTN_BUILD_TESTS=OFF \
           -DTINYATTN_BUILD_BENCH=OFF > "$log" 2>&1 && cmake --build "$b" -j"$JOBS" --target tinyattn_tool >> "$log" 2>&1; }; then
    ta_append_row "x86-64 $name" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: configure/build (log: $log)"
    rc=1
    continue
  fi
  ports=$(sed -n 's/^-- tinyattn ports: //p' "$log")
  hwy=$(sed -n 's/^-- tinyattn highway: //p' "$log")
  if ! cpu_runs "$flags"; then
    if [ -n "$want" ] && [ "$hwy" != "$want (static dispatch)" ]; then
      ta_append_row "x86-64 $name" - - 0 1 0 - "$(ta_seconds "$t")" "FAILED: Highway static target '$hwy', flags allow $want"
      rc=1
    else
      ta_append_row "x86-64 $name" "not run" "$flags" - - - - "$(ta_seconds "$t")" \
        "skipped: built (highway: $hwy), not run: this CPU lacks the instructions $flags allows"
    fi
    continue
  fi
  out=$("$b/tools/tinyattn" selftest --format unity 2>&1)
  head=$(printf '%s\n' "$out" | sed -n 's/^tinyattn selftest: port \([a-z0-9_]*\), simd target \([A-Za-z0-9_.+]*\).*/\1 \2/p')
  port=${head% *} target=${head#* }
  status=ok failed=0
  if ! printf '%s\n' "$out" | grep -q '^OK$'; then status="FAILED: self-test (log: $log)"; failed=1; fi
  case $port:$target in
    scalar:*|*:SCALAR|*:EMU128|:*) status="FAILED: default port $port/$target has no SIMD (ports: $ports)"; failed=1 ;;
  esac
  if [ -n "$want" ] && [ "$hwy" != "$want (static dispatch)" ]; then
    status="FAILED: Highway static target '$hwy', flags allow $want"; failed=1
  fi
  printf '%s\n' "$out" >> "$log"
  ta_append_row "x86-64 $name" "$port (default)" "$target" "$((1 - failed))" "$failed" 0 - "$(ta_seconds "$t")" \
    "$status; highway: $hwy"
  [ "$failed" = 0 ] || rc=1
done
exit $rc
