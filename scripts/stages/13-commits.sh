# Commit messages (docs/DEVELOPING.md): a subject under 72 characters and a
# body that says why, for every commit from the one that added this check to
# HEAD (earlier history is as it was written). One row; skipped outside a git
# checkout or where the history is cut short.
. "$TINYATTN_ROOT/scripts/lib.sh"
t=$(ta_now)
cd "$TINYATTN_ROOT" || exit 1
if ! git rev-parse --git-dir > /dev/null 2>&1; then
  ta_append_row "repository" "commit messages" - - - - - "$(ta_seconds "$t")" "skipped: not a git checkout"
  exit 0
fi
first=$(git log --diff-filter=A --format=%H -- scripts/stages/13-commits.sh | tail -n 1)
if [ -z "$first" ]; then
  ta_append_row "repository" "commit messages" - - - - - "$(ta_seconds "$t")" \
    "skipped: the commit that added this check is not in the history here"
  exit 0
fi
passed=0
bad=()
for c in $(git rev-list "$first^..HEAD" 2> /dev/null || git rev-list HEAD); do
  subject=$(git log -1 --format=%s "$c")
  body=$(git log -1 --format=%b "$c" | grep -c '[^[:space:]]')
  if [ "${#subject}" -ge 72 ]; then
    bad+=("$(git log -1 --format=%h "$c"): subject of ${#subject} characters")
  elif [ "$body" -eq 0 ]; then
    bad+=("$(git log -1 --format=%h "$c"): no body")
  else
    passed=$((passed + 1))
  fi
done
if [ "${#bad[@]}" -eq 0 ]; then
  ta_append_row "repository" "commit messages" - "$passed" 0 0 - "$(ta_seconds "$t")" "ok"
  exit 0
fi
printf '%s\n' "${bad[@]}" >&2
ta_append_row "repository" "commit messages" - "$passed" "${#bad[@]}" 0 - "$(ta_seconds "$t")" \
  "FAILED: $(printf '%s; ' "${bad[@]}" | head -c 300 | sed 's/; $//')"
exit 1
