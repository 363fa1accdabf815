# Helpers for the hardening stages (scripts/stages/55-sanitizers.sh,
# 65-fuzz.sh, 70-static-analysis.sh, 80-stack.sh). Sourced, not executed.
# Uses scripts/lib.sh (the stage interface) when present; otherwise defines
# the few functions the stages need, with the same row format:
#   target  port  simd  passed  failed  ignored  size  wall_s  status
: "${TINYATTN_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
if [ -f "$TINYATTN_ROOT/scripts/lib.sh" ]; then
  # shellcheck source=scripts/lib.sh
  . "$TINYATTN_ROOT/scripts/lib.sh"
else
  : "${BUILD_ROOT:=$TINYATTN_ROOT/build/matrix}"
  : "${RESULTS:=$BUILD_ROOT/results.tsv}"
  : "${JOBS:=2}"
  export TINYATTN_ROOT BUILD_ROOT RESULTS JOBS
  ta_say() { printf '==> %s\n' "$*" >&2; }
  ta_now() { date +%s.%N; }
  ta_seconds() { awk -v a="$1" -v b="${2:-$(ta_now)}" 'BEGIN { printf "%.1f", b - a }'; }
  ta_append_row() {
    mkdir -p "$(dirname "$RESULTS")"
    [ -s "$RESULTS" ] || printf 'target\tport\tsimd\tpassed\tfailed\tignored\tsize\twall_s\tstatus\n' > "$RESULTS"
    local IFS=$'\t'
    printf '%s\n' "$*" >> "$RESULTS"
  }
fi

# Absolute, so paths compared with ctest's (absolute) commands match.
BUILD_ROOT=$(mkdir -p "$BUILD_ROOT" && cd "$BUILD_ROOT" && pwd)

# Sums the Unity summaries ("N Tests F Failures I Ignored") of a log; prints
# "passed failed ignored". A test program that crashed without a summary is
# caught by the caller's exit status.
harden_unity_totals() {
  # Only summary lines (after ctest -V's "N: " prefix), not text quoting one.
  awk '/^([0-9]+: )?[0-9]+ Tests [0-9]+ Failures [0-9]+ Ignored/ {
         sub(/^[0-9]+: /, ""); t += $1; f += $3; g += $5
       } END { printf "%d %d %d\n", t - f - g, f, g }' "$1"
}

# harden_row <label> <tool> <log> <rc> <start>: one row from a ctest-style log.
harden_row() {
  local label=$1 tool=$2 log=$3 rc=$4 start=$5 passed failed ignored status
  read -r passed failed ignored < <(harden_unity_totals "$log")
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  status=ok
  [ "$rc" -eq 0 ] || status="FAILED (log: $log)"
  ta_append_row "$label" "$tool" - "$passed" "$failed" "$ignored" - "$(ta_seconds "$start")" "$status"
}

# harden_configure <dir> [cmake args...]: configures a host build with the
# options every hardening build shares (no benchmarks, no install rules).
harden_configure() {
  local dir=$1; shift
  local extra=()
  # The host tool joins these builds once its folder exists.
  [ -f "$TINYATTN_ROOT/tools/CMakeLists.txt" ] || extra+=(-DTINYATTN_BUILD_TOOLS=OFF)
  mkdir -p "$(dirname "$dir")"
  cmake -S "$TINYATTN_ROOT" -B "$dir" -G Ninja -DTINYATTN_BUILD_BENCH=OFF -DTINYATTN_INSTALL=OFF "${extra[@]}" "$@" \
    > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; return 1; }
}

# harden_need_packages <package>...: installs the Debian packages a stage
# needs when they are missing (as root, like scripts/test-all); returns
# non-zero when one is missing and cannot be installed. Names here are the
# hardening tools' own: clang-14 (compiler), libclang-rt-14-dev (the libFuzzer
# and sanitizer runtimes), clang-tidy-14, cppcheck, valgrind.
harden_need_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    ta_say "missing packages (run as root to install them): ${missing[*]}"
    return 1
  fi
  ta_say "installing: ${missing[*]}"
  apt-get update > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" > /dev/null
}
