# Shell functions shared by scripts/test-all and the stages in scripts/stages/.
# Sourced, not executed. See scripts/README.md for the stage interface.
#
# Environment (exported by test-all; defaults here so a stage also runs alone):
#   TINYATTN_ROOT  repository root
#   BUILD_ROOT     build trees, one per preset (default $TINYATTN_ROOT/build/matrix)
#   RESULTS        TSV file the stages append rows to (see ta_append_row)
#   JOBS           parallel jobs for ninja and ctest (default 2)

: "${TINYATTN_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${BUILD_ROOT:=$TINYATTN_ROOT/build/matrix}"
: "${RESULTS:=$BUILD_ROOT/results.tsv}"
: "${JOBS:=2}"
export TINYATTN_ROOT BUILD_ROOT RESULTS JOBS

# Columns of $RESULTS, tab-separated, one row per (target, port, SIMD target):
#   target  port  simd  passed  failed  ignored  size  wall_s  status
# size is "text/data/bss" for board images, "-" otherwise; status is "ok",
# "FAILED ...", or "skipped: <reason>" for a variant that cannot run here.
TA_RESULT_COLUMNS="target	port	simd	passed	failed	ignored	size	wall_s	status"

ta_say() { printf '==> %s\n' "$*" >&2; }

ta_now() { date +%s.%N; }

# ta_seconds <start> [end]: elapsed seconds, one decimal.
ta_seconds() { awk -v a="$1" -v b="${2:-$(ta_now)}" 'BEGIN { printf "%.1f", b - a }'; }

# ta_append_row <target> <port> <simd> <passed> <failed> <ignored> <size> <wall_s> <status>
ta_append_row() {
  mkdir -p "$(dirname "$RESULTS")"
  [ -s "$RESULTS" ] || printf '%s\n' "$TA_RESULT_COLUMNS" > "$RESULTS"
  local IFS=$'\t'
  printf '%s\n' "$*" >> "$RESULTS"
}

# ta_parse_ctest_log <log> <row label> <extra wall seconds> <size>
# Reads a `ctest -V` log and appends one row per group of tests that executed
# the same thing: the default run (all ports, best SIMD target) and one group
# per forced Highway target (TINYATTN_HWY_TARGET) or xsimd architecture
# (TINYATTN_XSIMD_ARCH). Counts come from the Unity summaries
# ("N Tests F Failures I Ignored", printed by doctest's unity reporter and by
# the board runner alike); a ctest test that failed without reporting a Unity
# failure (crash, timeout, bad exit status) adds one failure. Skipped ctest
# tests (a target this CPU cannot run) become "skipped: <reason>" rows.
ta_parse_ctest_log() {
  local log=$1 label=$2 extra_wall=$3 size=$4
  awk -v label="$label" -v extra="$extra_wall" -v size="$size" -F'\t' '
    function group_of(n) { return (n in sel) ? sel[n] : "default" }
    /^[0-9]+: / {
      n = $0; sub(/:.*/, "", n); line = substr($0, length(n) + 3)
      if (line ~ /^tinyattn ports: /) {
        ports[n] = substr(line, 17); sub(/ \(default [a-z]+\)$/, "", ports[n])
      } else if (line ~ /^  port: /) {                       # firmware example
        example_port[n] = substr(line, 9)
      } else if (match(line, /^tinyattn: TINYATTN_(HWY_TARGET|XSIMD_ARCH)=/)) {
        port = (line ~ /HWY_TARGET/) ? "highway" : "xsimd"
        want = line; sub(/^[^=]*=/, "", want); sub(/ -> .*/, "", want)
        got = line; sub(/.* -> /, "", got)
        sel[n] = port "\t" ((got == "not available") ? want : got)
      } else if (line ~ /cannot run it|not compiled into this build/) {
        reason[n] = line; sub(/^tinyattn: /, "", reason[n])
      } else if (line ~ /^[0-9]+ Tests [0-9]+ Failures [0-9]+ Ignored/) {
        split(line, f, " "); tests[n] += f[1]; fails[n] += f[3]; ign[n] += f[5]; summary[n] = 1
      }
      next
    }
    /Test +#[0-9]+: / {
      n = $0; sub(/.*Test +#/, "", n); sub(/:.*/, "", n)
      secs = $0; if (match(secs, /[0-9.]+ sec/)) { secs = substr(secs, RSTART, RLENGTH - 4) } else secs = 0
      time[n] = secs
      if ($0 ~ /\*\*\*Skipped|Not Run.*Disabled/) status[n] = "skipped"
      else if ($0 ~ / Passed /) status[n] = "passed"
      else status[n] = "failed"
      if (n + 0 > maxn) maxn = n + 0
    }
    END {
      for (n = 1; n <= maxn; ++n) {   # ctest test number order: rows in registration order
        if (!(n in status)) continue
        g = group_of(n)
        if (!(g in seen)) { seen[g] = 1; groups[++ng] = g }
        wall[g] += time[n]
        if (status[n] == "skipped") { skipped[g]++; if (reason[n] != "") why[g] = reason[n]; continue }
        ran[g]++
        P[g] += tests[n] - fails[n] - ign[n]; F[g] += fails[n]; I[g] += ign[n]
        if (status[n] == "failed" && fails[n] == 0) { F[g] += 1; broken[g]++ }
        if (g == "default" && ports[n] != "" && !(g in desc)) desc[g] = ports[n]
        if (g == "default" && example_port[n] != "" && fallback == "") fallback = example_port[n]
      }
      for (k = 1; k <= ng; ++k) {
        g = groups[k]
        if (g == "default") {
          d = (g in desc) ? desc[g] : fallback; pn = ""; sn = ""
          m = split(d, parts, " ")
          for (j = 1; j <= m; ++j) {
            split(parts[j], ps, "/"); pn = pn (pn == "" ? "" : "+") ps[1]; sn = sn (sn == "" ? "" : "+") ps[2]
          }
          if (pn == "") { pn = "-"; sn = "-" }
          col = pn "\t" sn; w = wall[g] + extra; sz = size
        } else {
          col = g; w = wall[g]; sz = "-"
        }
        if (ran[g] == 0) {
          st = "skipped: " ((g in why) ? why[g] : "not runnable here")
          printf "%s\t%s\t-\t-\t-\t%s\t%.1f\t%s\n", label, col, sz, w, st
          continue
        }
        st = (F[g] > 0) ? "FAILED" : "ok"
        if (broken[g] > 0) st = st " (" broken[g] " test programs crashed or exited non-zero)"
        if (skipped[g] > 0) st = st " (" skipped[g] " skipped)"
        printf "%s\t%s\t%d\t%d\t%d\t%s\t%.1f\t%s\n", label, col, P[g], F[g], I[g], sz, w, st
      }
    }' "$log" | while IFS= read -r row; do
      mkdir -p "$(dirname "$RESULTS")"
      [ -s "$RESULTS" ] || printf '%s\n' "$TA_RESULT_COLUMNS" > "$RESULTS"
      printf '%s\n' "$row" >> "$RESULTS"
    done
}

# ta_board_size <build dir>: "text/data/bss" of the firmware example image.
ta_board_size() {
  local f
  f=$(find "$1" -name 'firmware_example.elf.size' -print -quit 2>/dev/null)
  if [ -n "$f" ]; then
    awk 'NR == 2 { printf "%s/%s/%s", $1, $2, $3 }' "$f"
  else
    printf -- '-'
  fi
}

# run_preset_tests <preset> <row label> [VAR=value ...]
# Configures (cmake --preset <preset>) into $BUILD_ROOT/<preset>, builds with
# $JOBS jobs, runs ctest with the given environment and appends the rows
# parsed from its log to $RESULTS. The log is kept as
# $BUILD_ROOT/<preset>/ctest-<label>.log. Returns non-zero when anything
# failed (the rows say what).
run_preset_tests() {
  local preset=$1 label=$2
  shift 2
  local dir="$BUILD_ROOT/$preset"
  local safe_label
  safe_label=$(printf '%s' "$label" | tr -c 'A-Za-z0-9_.=-' '_')
  local t0 t1
  t0=$(ta_now)
  mkdir -p "$dir"
  ta_say "[$label] configure + build ($preset -> $dir)"
  if ! (cd "$TINYATTN_ROOT" && cmake --preset "$preset" -B "$dir" > "$dir/configure.log" 2>&1); then
    tail -n 30 "$dir/configure.log" >&2
    ta_append_row "$label" - - 0 1 0 - "$(ta_seconds "$t0")" "FAILED: configure (see $dir/configure.log)"
    return 1
  fi
  if ! cmake --build "$dir" -j "$JOBS" > "$dir/build.log" 2>&1; then
    grep -E 'error|Error' "$dir/build.log" | head -n 30 >&2
    ta_append_row "$label" - - 0 1 0 - "$(ta_seconds "$t0")" "FAILED: build (see $dir/build.log)"
    return 1
  fi
  t1=$(ta_now)
  local build_s
  build_s=$(ta_seconds "$t0" "$t1")
  ta_say "[$label] built in ${build_s}s; ctest $*"
  local log="$dir/ctest-$safe_label.log" rc=0
  # Selections from the caller's shell must not leak into the run; a test
  # program that hangs under emulation is stopped after 600 s.
  (cd "$dir" && env -u QEMU_CPU -u TINYATTN_HWY_TARGET -u TINYATTN_XSIMD_ARCH "$@" \
     ctest -V -j "$JOBS" --no-tests=error --timeout 600) > "$log" 2>&1 || rc=$?
  grep -E '^ *[0-9]+/[0-9]+ Test' "$log" | sed 's/^/    /' >&2 || true
  ta_collect_exp_ulp "$log" "$label"
  local before=0 after
  [ -s "$RESULTS" ] && before=$(wc -l < "$RESULTS")
  ta_parse_ctest_log "$log" "$label" "$build_s" "$(ta_board_size "$dir")"
  after=$(wc -l < "$RESULTS")
  if [ "$after" -le "$before" ]; then
    ta_append_row "$label" - - 0 1 0 - "$(ta_seconds "$t0")" "FAILED: no test results in $log"
    return 1
  fi
  if [ "$rc" -ne 0 ]; then
    ta_say "[$label] ctest failed (status $rc), log: $log"
    return 1
  fi
  return 0
}

# ta_print_table <results.tsv>: the per-target table (markdown). A skipped
# row is shown only if that target/port/SIMD target ran nowhere else.
ta_print_table() {
  awk -F'\t' '
    NR == 1 { next }
    { rows[++n] = $0; if ($9 !~ /^skipped/) ran[$2 "/" $3] = 1 }
    END {
      print "| target | port | SIMD target | passed | failed | ignored | image text/data/bss | wall s | status |"
      print "|---|---|---|---:|---:|---:|---|---:|---|"
      for (i = 1; i <= n; ++i) {
        split(rows[i], c, "\t")
        if (c[9] ~ /^skipped/ && ((c[2] "/" c[3]) in ran)) continue
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
      }
    }' "$1"
}

# ta_collect_exp_ulp <ctest log> <label>: the exp suite's accuracy lines
# ("exp ulp: <port>/<target> worst W ulp at x=X over N floats ... (stride S,
# bound B)") appended to $BUILD_ROOT/exp-ulp.tsv, for the per-target table
# test-all prints at the end.
ta_collect_exp_ulp() {
  sed -n 's/^[0-9]*: exp ulp: \([^ ]*\) worst \([0-9.]*\) ulp at x=\([^ ]*\) over \([0-9]*\) floats.*(stride \([0-9]*\), bound \([0-9.]*\)).*/\1\t\2\t\3\t\4\t\5\t\6/p' "$1" |
    sort -u | awk -v label="$2" -F'\t' '{ print label "\t" $0 }' >> "$BUILD_ROOT/exp-ulp.tsv"
}

# ta_print_exp_table <exp-ulp.tsv>: worst exp error per target and port (markdown).
ta_print_exp_table() {
  echo "| target | port/SIMD target | worst ULP | at x | floats checked | stride | bound |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$1"
}

# ta_totals <results.tsv>: prints "<passed> <failed>" summed over all rows.
ta_totals() {
  awk -F'\t' 'NR > 1 && $4 ~ /^[0-9]+$/ { p += $4 } NR > 1 && $5 ~ /^[0-9]+$/ { f += $5 }
              END { printf "%d %d\n", p, f }' "$1"
}
