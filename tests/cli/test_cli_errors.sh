#!/bin/sh
# test_cli_errors.sh GRADFLOW — every bad option: exit code 2, a one-line message naming the problem and
# the fix, no output file left behind.
gf=${1:?usage: test_cli_errors.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {
  out="$tmp/r.json"
  rm -f "$out"
  "$gf" analyze "$@" --json "$out" >/dev/null 2>"$tmp/err"
  rc=$?
  lines=$(grep -c . "$tmp/err")
  if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "fix" "$tmp/err" || [ -e "$out" ] || ls "$tmp" | grep -q "tmp\."; then
    echo "FAIL: analyze $* -> exit $rc, $lines stderr lines: $(cat "$tmp/err")"
    fails=$((fails + 1))
  else
    echo "ok: analyze $* -> $(cat "$tmp/err")"
  fi
}
check --d-model 64 --heads 5
check --layers 0
check --layers -3
check --placement bogus
check --seq-len 0
check --d-model abc
check --init-scale nope
check --init bogus
check --activation tanh
check --norm batchnorm
check --loss l1
check --seq-len 4096 --d-model 1024 --heads 8 --mode explicit
check --seq-len 65536 --d-model 64 --heads 8 --mode auto
check --seq-len 65536 --d-model 64 --heads 8 --gradients-only
check --max-memory 12Q
"$gf" analyze --layers 2 --json /nonexistent-dir/r.json >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q "/nonexistent-dir/r.json" "$tmp/err"; then echo "FAIL: unwritable --json -> exit $rc"; fails=$((fails + 1)); else echo "ok: unwritable --json -> $(cat "$tmp/err")"; fi
exit $fails
