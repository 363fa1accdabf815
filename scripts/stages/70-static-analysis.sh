# Static analysis of lib/ and ports/: the library built with GCC and with
# clang under the project's warnings (-Wall -Wextra -Wshadow -Wconversion
# -Werror on lib/ and ports/, cmake/TinyattnWarnings.cmake), clang-tidy with
# the committed .clang-tidy, and cppcheck with the committed suppressions
# (scripts/cppcheck-suppressions.txt, each with its reason). One row each.
. "${TINYATTN_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/scripts/hardening.sh"
harden_need_packages clang-14 clang-tidy-14 cppcheck || true  # a missing tool then fails its row
dir=$BUILD_ROOT/hardening/static
mkdir -p "$dir"
fail=0
R=$TINYATTN_ROOT

row() {  # row <tool> <rc> <start> <log>
  if [ "$2" -eq 0 ]; then
    ta_append_row "x86-64 host" "$1" - 1 0 0 - "$(ta_seconds "$3")" ok
  else
    ta_append_row "x86-64 host" "$1" - 0 1 0 - "$(ta_seconds "$3")" "FAILED (log: $4)"
    fail=1
  fi
}

cxx=$(command -v clang++-14 || command -v clang++ || true)
cc=$(command -v clang-14 || command -v clang || true)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)

# The library targets only (lib/ and ports/); the test suites have their own stages.
lib_targets="tinyattn tinyattn_reference"

# 1. GCC, warnings as errors.
t=$(ta_now)
rc=0
{ harden_configure "$dir/gcc" -DCMAKE_BUILD_TYPE=Release -DTINYATTN_WERROR=ON -DTINYATTN_BUILD_TESTS=OFF \
    -DTINYATTN_BUILD_TOOLS=OFF &&
  ninja -C "$dir/gcc" -j"$JOBS" $lib_targets > "$dir/gcc.log" 2>&1; } || rc=1
row "GCC -Werror (lib, ports)" "$rc" "$t" "$dir/gcc.log"

# 2. clang, warnings as errors; its compile_commands.json feeds clang-tidy.
t=$(ta_now)
rc=0
if [ -z "$cxx" ]; then
  ta_append_row "x86-64 host" "clang -Werror (lib, ports)" - - - - - 0 "FAILED: clang not installed"
  fail=1
else
  { harden_configure "$dir/clang" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
      -DTINYATTN_WERROR=ON -DTINYATTN_BUILD_TESTS=OFF -DTINYATTN_BUILD_TOOLS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON &&
    ninja -C "$dir/clang" -j"$JOBS" $lib_targets > "$dir/clang.log" 2>&1; } || rc=1
  row "clang -Werror (lib, ports)" "$rc" "$t" "$dir/clang.log"
fi

# 3. clang-tidy over every lib/ and ports/ translation unit of that build.
t=$(ta_now)
rc=0
if [ -z "$tidy" ] || [ ! -f "$dir/clang/compile_commands.json" ]; then
  echo "clang-tidy or the clang build's compile_commands.json is missing" > "$dir/clang-tidy.log"
  rc=1
else
  files=$(/usr/bin/python3 -c '
import json, sys
root = sys.argv[2]
seen = set()
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if f.startswith((root + "/lib/", root + "/ports/")) and f not in seen:
        seen.add(f)
        print(f)' "$dir/clang/compile_commands.json" "$R")
  # shellcheck disable=SC2086
  "$tidy" -p "$dir/clang" --quiet $files > "$dir/clang-tidy.log" 2>&1 || rc=1
  grep -q -E '(warning|error):' "$dir/clang-tidy.log" && rc=1
fi
row "clang-tidy (lib, ports)" "$rc" "$t" "$dir/clang-tidy.log"

# 4. cppcheck.
t=$(ta_now)
rc=0
(cd "$R" && cppcheck --enable=warning,style,performance,portability --std=c++17 --language=c++ --inline-suppr \
   --suppressions-list=scripts/cppcheck-suppressions.txt --error-exitcode=1 -q \
   -I lib/include -I lib/contract/include -I lib/ref/include -I ports lib/src lib/ref ports) > "$dir/cppcheck.log" 2>&1 || rc=1
row "cppcheck (lib, ports)" "$rc" "$t" "$dir/cppcheck.log"

exit "$fail"
