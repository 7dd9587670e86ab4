#!/bin/sh
# test_findings_tables_drift.sh ROOT — scripts/findings_tables.py check passes on the committed findings.md and fails
# on a generated table edited by hand (a digit changed inside a block).
root=${1:?usage: test_findings_tables_drift.sh PROJECT_ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
script="$root/scripts/findings_tables.py"
/usr/bin/python3 "$script" check "$root/docs/findings.md" >/dev/null || fail "the committed findings.md does not check"
# change the first digit after the first '| Post-LN |' inside a block
/usr/bin/python3 - "$root/docs/findings.md" "$tmp/edited.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
start = text.index("<!-- table: decoder_schemes -->")
row = text.index("| Post-LN |", start)
digit = re.compile(r"\d").search(text, row + len("| Post-LN |"))
i = digit.start()
open(sys.argv[2], "w").write(text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:])
PY
/usr/bin/python3 "$script" check "$tmp/edited.md" >"$tmp/out" 2>&1 && fail "a table edited by hand passes the check"
grep -q "differ" "$tmp/out" || fail "the check's message: $(tail -1 "$tmp/out")"
echo "ok: findings tables"
