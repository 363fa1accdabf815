# Host suite under AddressSanitizer+UndefinedBehaviorSanitizer (ctest), under
# valgrind (Release build: every test program once, --error-exitcode=1), and
# the threads suite under ThreadSanitizer. One row each.
. "${TINYATTN_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/scripts/hardening.sh"
harden_need_packages valgrind || true  # a missing tool then fails its row
dir=$BUILD_ROOT/hardening
mkdir -p "$dir"
fail=0

# 1. ASan+UBSan (GCC), every hosted suite through ctest.
t=$(ta_now)
ta_say "ASan+UBSan build"
rc=0
{ harden_configure "$dir/asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTINYATTN_SANITIZE=ON &&
  ninja -C "$dir/asan" -j"$JOBS" > "$dir/asan.build.log" 2>&1 &&
  (cd "$dir/asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest -V -j"$JOBS" > "$dir/asan.log" 2>&1); } || rc=$?
[ -f "$dir/asan.log" ] || cp "$dir/asan.build.log" "$dir/asan.log" 2>/dev/null || : > "$dir/asan.log"
harden_row "x86-64 host" "ASan+UBSan" "$dir/asan.log" "$rc" "$t"
[ "$rc" -eq 0 ] || fail=1

# 2. valgrind memcheck over the Release test programs (not the ASan ones:
# the two do not mix). Highway's dynamic dispatch (the default on hosted
# builds) would pick AVX-512 where the CPU has it and link libhwy.so, whose
# start-up code valgrind cannot decode either, so this build asks for static
# dispatch.
t=$(ta_now)
ta_say "valgrind"
rc=0
log=$dir/valgrind.log
: > "$log"
if harden_configure "$dir/release" -DCMAKE_BUILD_TYPE=Release -DTINYATTN_HWY_DYNAMIC=OFF && ninja -C "$dir/release" -j"$JOBS" > "$dir/release.build.log" 2>&1; then
  # Each test program once, with its ctest arguments (the replay programs take their corpus folders).
  (cd "$dir/release" && ctest --show-only=json-v1) > "$dir/tests.json"
  # Only the project's own test programs (not the compilers, cmake or python
  # that some tests drive), once each; not the allocation suite, which
  # replaces malloc itself and so cannot run under valgrind's allocator.
  /usr/bin/python3 - "$dir/tests.json" "$dir/release" > "$dir/valgrind.commands" <<'PY'
import json, shlex, sys
build = sys.argv[2].rstrip("/") + "/"
seen = set()
for t in json.load(open(sys.argv[1]))["tests"]:
    cmd = t.get("command") or []
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if not cmd or not cmd[0].startswith(build) or cmd[0] in seen or "ENVIRONMENT" in props:
        continue
    if "alloc" in (props.get("LABELS") or []):
        continue
    seen.add(cmd[0])
    print(" ".join(shlex.quote(c) for c in cmd))
PY
  while IFS= read -r cmd; do
    echo "### valgrind $cmd" >> "$log"
    eval "valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --quiet $cmd" >> "$log" 2>&1 ||
      { rc=1; echo "### FAILED: $cmd" >> "$log"; }
  done < "$dir/valgrind.commands"
else
  rc=1
  cat "$dir/release.build.log" >> "$log" 2>/dev/null
fi
harden_row "x86-64 host" "valgrind" "$log" "$rc" "$t"
[ "$rc" -eq 0 ] || fail=1

# 3. ThreadSanitizer: the threads suite (concurrent forward() calls).
t=$(ta_now)
ta_say "ThreadSanitizer"
rc=0
{ harden_configure "$dir/tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTINYATTN_BUILD_TOOLS=OFF \
    -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread &&
  ninja -C "$dir/tsan" -j"$JOBS" threads > "$dir/tsan.build.log" 2>&1 &&
  TSAN_OPTIONS=halt_on_error=1:exitcode=66 "$dir/tsan/tests/threads" --reporters=unity > "$dir/tsan.log" 2>&1; } || rc=$?
[ -f "$dir/tsan.log" ] || cp "$dir/tsan.build.log" "$dir/tsan.log" 2>/dev/null || : > "$dir/tsan.log"
harden_row "x86-64 host" "TSan (threads)" "$dir/tsan.log" "$rc" "$t"
[ "$rc" -eq 0 ] || fail=1

exit "$fail"
