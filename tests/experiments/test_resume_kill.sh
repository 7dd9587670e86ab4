#!/bin/sh
# test_resume_kill.sh GRADFLOW — kill -9 a sweep midway, restart it with --resume: the finished configurations are
# skipped, no partial file is ever read, and the final CSV is byte-identical to an uninterrupted run (which also
# uses another thread count, so this checks thread-count independence too).
gf=${1:?usage: test_resume_kill.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args="sweep --placement post,pre --layers 8 --d-model 32 --heads 4 --seq-len 8 --param init-scale --values 1,0.5,0.25,inv-sqrt-2L --seeds 4"
total=32
fail() { echo "FAIL: $*"; exit 1; }

"$gf" $args --resume "$tmp/r" --threads 1 -q --csv "$tmp/killed.csv" &
pid=$!
# wait for a few finished configurations (each is a few tenths of a second), then kill mid-run
i=0
while [ "$(ls "$tmp/r" 2>/dev/null | grep -c '\.json$')" -lt 3 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
done_before=$(ls "$tmp/r" | grep -c '\.json$')
echo "killed with $done_before of $total configurations written"
[ "$done_before" -ge 3 ] || fail "no configuration finished before the kill"
[ "$done_before" -lt $total ] || fail "the sweep finished before it could be killed; make it longer"
[ ! -e "$tmp/killed.csv" ] || fail "a killed run left its CSV"
for f in "$tmp"/r/*.json; do
  /usr/bin/env python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$f" 2>/dev/null ||
    grep -q '"summary"' "$f" || fail "partial result file $f"
done

"$gf" $args --resume "$tmp/r" --threads 2 --csv "$tmp/resumed.csv" >/dev/null 2>"$tmp/err" || fail "resume: $(cat "$tmp/err")"
grep -q "$done_before of $total configurations already done" "$tmp/err" || fail "resume did not skip: $(head -2 "$tmp/err")"
computed=$(grep -c '^gradflow: \[' "$tmp/err")
[ "$computed" -eq $((total - done_before)) ] || fail "resume computed $computed configurations, expected $((total - done_before))"

"$gf" $args --threads 1 -q --csv "$tmp/fresh.csv" || fail "fresh run"
cmp -s "$tmp/resumed.csv" "$tmp/fresh.csv" || fail "resumed CSV differs from an uninterrupted run"
echo "ok: resumed $done_before finished configurations, computed $computed, CSV identical to a fresh run"
