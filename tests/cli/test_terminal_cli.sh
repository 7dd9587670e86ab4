#!/bin/sh
# test_terminal_cli.sh GRADFLOW — issue 38's terminal items: bars on a terminal by default, `--bars` into a file or
# pipe, `--no-bars` never; `--narrow` keeps every line within 80 characters; a compare's bars put its placements side
# by side on one scale; `-q` prints no table whatever the bar flags; the flags are not recorded in a report's spec;
# the "\r" progress line only on a terminal (a log file gets none). The terminal is faked with script(1)
# (bsdutils, essential in Debian); its cases are skipped where script is missing.
gf=${1:?usage: test_terminal_cli.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
A="--placement post --layers 4 --d-model 8 --heads 2 --seq-len 4"
C="--placements post,pre --layers 2,4 --d-model 8 --heads 2 --seq-len 4 --seeds 2 --gradients-only"
bars() { grep -c '#####' "$1"; }

"$gf" analyze $A > "$tmp/pipe.txt" || fail "analyze exited $?"
[ "$(bars "$tmp/pipe.txt")" = 0 ] && ok "no bars into a file by default" || fail "bars into a file by default"
"$gf" analyze $A --bars > "$tmp/forced.txt" || fail "analyze --bars exited $?"
[ "$(bars "$tmp/forced.txt")" = 4 ] && ok "--bars: a bar per layer into a file" || fail "--bars: $(bars "$tmp/forced.txt") bar rows"
"$gf" analyze $A --bars -q > "$tmp/quiet.txt" || fail "analyze --bars -q exited $?"
[ ! -s "$tmp/quiet.txt" ] && ok "-q prints nothing, --bars or not" || fail "-q --bars printed: $(head -2 "$tmp/quiet.txt")"

# --narrow: every line of analyze's and compare's output within 80 characters (counted as characters, not bytes)
"$gf" analyze $A --bars --narrow > "$tmp/narrow_a.txt" || fail "analyze --narrow exited $?"
"$gf" compare $C --bars --narrow > "$tmp/narrow_c.txt" 2> /dev/null || fail "compare --narrow exited $?"
/usr/bin/python3 - "$tmp/narrow_a.txt" "$tmp/narrow_c.txt" "$tmp/pipe.txt" <<'PY' || fail "--narrow: a line over 80 characters"
import sys
for p in sys.argv[1:3]:
    lines = open(p, encoding="utf-8").read().splitlines()
    assert lines and max(len(l) for l in lines) <= 80, (p, max(lines, key=len))
assert max(len(l) for l in open(sys.argv[3], encoding="utf-8").read().splitlines()) > 80  # the default is wider
PY
[ $? = 0 ] && ok "--narrow: within 80 columns"
"$gf" train-sweep --placements post,pre --layers 2 --warmup 0,5 --lr 1e-3 --seeds 1 --d-model 8 --heads 2 \
  --seq-len 4 --steps 10 --batch 4 --eval-size 8 --narrow > "$tmp/narrow_t.txt" 2> /dev/null || fail "train-sweep --narrow exited $?"
/usr/bin/python3 -c "import sys; l = open(sys.argv[1], encoding='utf-8').read().splitlines(); assert l and max(map(len, l)) <= 80" \
  "$tmp/narrow_t.txt" && ok "train-sweep --narrow: within 80 columns" || fail "train-sweep --narrow: a line over 80"

# a compare's bars: one block per depth, the placements side by side, one scale (its line says so)
"$gf" compare $C --bars --json "$tmp/c.json" > "$tmp/c.txt" 2> /dev/null || fail "compare --bars exited $?"
grep -q "one scale for every group" "$tmp/c.txt" && grep -q "^layer Post-LN  *Pre-LN" "$tmp/c.txt" &&
  [ "$(grep -c '^L = ' "$tmp/c.txt")" = 2 ] && ok "compare --bars: Post-LN beside Pre-LN, a block per depth" ||
  fail "compare --bars: $(cat "$tmp/c.txt")"
# a sweep over a flag: its columns named by what the flag means, on two lines where one is too narrow
"$gf" sweep --placement pre,sandwich --layers 2 --param no-final-norm --values false,true --d-model 8 --heads 2 \
  --seq-len 4 --seeds 1 --gradients-only --bars --narrow > "$tmp/flag.txt" 2> /dev/null || fail "sweep over a flag exited $?"
grep -q "^layer Pre-LN,  *Pre-LN, no final norm" "$tmp/flag.txt" && grep -q "^      with final norm" "$tmp/flag.txt" &&
  ok "a swept flag named by its meaning" || fail "swept flag columns: $(grep -A1 '^layer' "$tmp/flag.txt")"
"$gf" compare $C --json "$tmp/c2.json" > "$tmp/c2.txt" 2> /dev/null
[ "$(bars "$tmp/c2.txt")" = 0 ] && ok "compare: no bars into a file by default" || fail "compare: bars into a file"
/usr/bin/python3 - "$tmp/c.json" <<'PY' && ok "the spec records no terminal flags" || fail "a terminal flag in the spec"
import json, sys
opts = json.load(open(sys.argv[1]))["spec"]["options"]
assert not {"bars", "no-bars", "narrow"} & set(opts), opts
PY

# a log file gets no "\r" progress line (this analyze runs about 2 s, past the progress line's first second)
L="--placement post --layers 16 --d-model 48 --heads 4 --seq-len 24"
"$gf" analyze $L > /dev/null 2> "$tmp/log.txt" || fail "the long analyze exited $?"
if tr -d '\n' < "$tmp/log.txt" | od -c | grep -q '\\r'; then fail "a carriage return in the log: $(od -c "$tmp/log.txt" | head -3)"
else ok "no carriage return in a log file"; fi

if command -v script > /dev/null; then
  script -qc "'$gf' analyze $A" /dev/null > "$tmp/tty.txt" 2>&1
  [ "$(bars "$tmp/tty.txt")" = 4 ] && ok "bars on a terminal by default" || fail "on a terminal: $(bars "$tmp/tty.txt") bar rows"
  script -qc "'$gf' analyze $A --no-bars" /dev/null > "$tmp/tty_no.txt" 2>&1
  [ "$(bars "$tmp/tty_no.txt")" = 0 ] && ok "--no-bars on a terminal" || fail "--no-bars drew bars on a terminal"
  script -qc "'$gf' analyze $L > /dev/null" /dev/null > "$tmp/tty_progress.txt" 2>&1
  grep -q "elapsed" "$tmp/tty_progress.txt" && ok "the progress line on a terminal" ||
    fail "no progress line on a terminal: $(head -c 200 "$tmp/tty_progress.txt")"
else
  echo "skip: no script(1) to fake a terminal"
fi

[ $fails = 0 ] && echo "test_terminal_cli: all passed" || echo "test_terminal_cli: $fails failed"
exit $((fails > 0))
