# libFuzzer under ASan+UBSan (clang): each fuzz target runs for a bounded time
# (FUZZ_SECONDS each, default 45; $JOBS targets at once, so the eight take
# four rounds, about 3 min),
# starting from its committed corpus (tests/fuzz/corpus/<name>/) plus the
# regression inputs (tests/fuzz/regressions/<name>/). New inputs go to the
# build tree, never into the repository. A crash fails the stage and leaves
# its input in $BUILD_ROOT/hardening/fuzz/artifacts/<name>/: add it to
# tests/fuzz/regressions/<name>/ with the fix, and ctest replays it from then
# on (fuzz_replay_<name>, every host build).
. "${TINYATTN_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/scripts/hardening.sh"
harden_need_packages clang-14 libclang-rt-14-dev || true  # a missing tool then fails its row
: "${FUZZ_SECONDS:=45}"
# A fixed seed makes the test command reproducible: a slower machine runs a
# shorter prefix of the same input sequence, so a green run here is green in
# CI. FUZZ_SEED=0 lets libFuzzer pick a new seed each run (exploration).
: "${FUZZ_SEED:=1}"
dir=$BUILD_ROOT/hardening/fuzz
mkdir -p "$dir"
fail=0

cxx=$(command -v clang++-14 || command -v clang++ || true)
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cxx" ]; then
  ta_append_row "x86-64 host" "libFuzzer" - - - - - 0 "skipped: clang not installed"
  exit 1
fi

# The fuzz targets this build defines: one per tests/fuzz/<name>_fuzz.cc
# whose suite.cmake entry could be built here (its libraries exist).
harden_fuzz_targets() {
  local all f name
  all=$(ninja -C "$1" -t targets all 2>/dev/null)
  for f in "$TINYATTN_ROOT"/tests/fuzz/*_fuzz.cc; do
    name=$(basename "$f" .cc)
    if grep -q -E "^(tests/)?$name: " <<< "$all"; then echo "$name"; fi
  done
  return 0
}

t=$(ta_now)
# Every port the host preset builds (xsimd is off by default), so the
# differential target compares them all.
if ! { harden_configure "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
         -DCMAKE_C_COMPILER="$cc" -DTINYATTN_FUZZ=ON -DTINYATTN_BUILD_TESTS=ON -DTINYATTN_WITH_XSIMD=ON &&
       targets=$(harden_fuzz_targets "$dir/build") &&
       [ -n "$targets" ] &&
       ninja -C "$dir/build" -j"$JOBS" $targets > "$dir/build.log" 2>&1; }; then
  ta_append_row "x86-64 host" "libFuzzer" - 0 1 0 - "$(ta_seconds "$t")" "FAILED: build (log: $dir/build.log)"
  exit 1
fi

# One target: its run, then its row, written to $dir/<short>.row (the rows go
# to $RESULTS in target order once all have run).
fuzz_one() {
  local name=$1 short=${1%_fuzz} bin work art seeds t rc runs crash why hex row
  bin=$(find "$dir/build" -type f -name "$name" -perm -u+x | head -n 1)
  work=$dir/corpus/$short
  art=$dir/artifacts/$short
  mkdir -p "$work" "$art"
  seeds=("$TINYATTN_ROOT/tests/fuzz/corpus/$short")
  [ -d "$TINYATTN_ROOT/tests/fuzz/regressions/$short" ] && seeds+=("$TINYATTN_ROOT/tests/fuzz/regressions/$short")
  t=$(ta_now)
  ta_say "fuzzing $short for ${FUZZ_SECONDS}s"
  rc=0
  "$bin" -seed="$FUZZ_SEED" -max_total_time="$FUZZ_SECONDS" -max_len=512 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$art/" "$work" "${seeds[@]}" > "$dir/$short.log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$short.log")
  if [ "$rc" -eq 0 ]; then
    row=("x86-64 host" "libFuzzer $short" - 1 0 0 - "$(ta_seconds "$t")" "ok (${runs:-?} runs)")
  else
    crash=$(ls "$art" 2>/dev/null | head -n 1)
    # The row carries what a remote log cannot: the harness's own message
    # and the failing input in hex, enough to rebuild it as a regression.
    why=$(grep -m 1 -E "^(differential|fuzz_require): |ERROR: |SUMMARY: " "$dir/$short.log" | tr '|' '/')
    hex=$( [ -n "$crash" ] && od -An -v -tx1 "$art/$crash" | tr -d ' \n')
    row=("x86-64 host" "libFuzzer $short" - 0 1 0 - "$(ta_seconds "$t")"
         "FAILED: ${why:-see log} (log: $dir/$short.log; input: ${hex:-none})")
  fi
  (IFS=$'\t'; printf '%s\n' "${row[*]}") > "$dir/$short.row"
}

# libFuzzer runs one thread: the targets run $JOBS at a time, each for its
# full FUZZ_SECONDS.
rm -f "$dir"/*.row
running=0
for name in $targets; do
  fuzz_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
for name in $targets; do
  short=${name%_fuzz}
  if [ -s "$dir/$short.row" ]; then
    IFS=$'\t' read -r -a row < "$dir/$short.row"
    ta_append_row "${row[@]}"
    [[ ${row[8]} == ok* ]] || fail=1
  else
    ta_append_row "x86-64 host" "libFuzzer $short" - 0 1 0 - - "FAILED: no result (log: $dir/$short.log)"
    fail=1
  fi
done
exit "$fail"
