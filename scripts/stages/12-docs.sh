# The commands the pages show, as a user types them: every `sh` block of
# README.md and docs/*.md runs verbatim (scripts/doc_commands.py) in a copy
# of the tracked files under $BUILD_ROOT/docs. Among them is the host build
# with CMake's default generator (`cmake -B build && cmake --build build`),
# which the other stages, all on Ninja, would not catch. One row: blocks
# that ran, failed, and were left to the stages they name (the test command
# itself), or need root.
. "$TINYATTN_ROOT/scripts/lib.sh"
dir=$BUILD_ROOT/docs
mkdir -p "$dir"
t=$(ta_now)
rc=0
python3 "$TINYATTN_ROOT/scripts/doc_commands.py" run "$dir" | tee "$dir/summary.txt" || rc=$?
line=$(grep '^doc commands: ' "$dir/summary.txt" | tail -n 1)
ran=$(sed -n 's/^doc commands: \([0-9]*\) ran.*/\1/p' <<< "$line")
failed=$(sed -n 's/.* ran, \([0-9]*\) failed.*/\1/p' <<< "$line")
skipped=$(sed -n 's/.* failed, \([0-9]*\) skipped.*/\1/p' <<< "$line")
if [ "$rc" -eq 0 ]; then
  status="ok"
else
  [ "${failed:-0}" -gt 0 ] || failed=1
  status="FAILED: $(grep -m 3 '^failed' "$dir/summary.txt" | awk '{print $3}' | paste -sd' ') (log: $dir/doc-commands.log)"
fi
ta_append_row "x86-64 host" "doc commands" "-" "${ran:-0}" "${failed:-1}" "${skipped:-0}" - "$(ta_seconds "$t")" "$status"
exit "$rc"
