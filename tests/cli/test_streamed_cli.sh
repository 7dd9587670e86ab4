#!/bin/sh
# test_streamed_cli.sh GRADFLOW — `analyze --mode streamed` writes exact Frobenius norms with method
# "exact (streamed)" in every layer's block_jacobian and product_jacobian, equal to --mode explicit's; bad
# --stream-rows and --stream-rows without --mode streamed are one-line errors with exit 2.
gf=${1:?usage: test_streamed_cli.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
args="--layers 3 --d-model 8 --heads 2 --seq-len 4 --placement pre -q"
"$gf" analyze $args --mode streamed --stream-rows 5 --json "$tmp/s.json" || fail "streamed run exit $?"
"$gf" analyze $args --mode explicit --json "$tmp/e.json" || fail "explicit run exit $?"
n=$(grep -c '"method": "exact (streamed)"' "$tmp/s.json")
[ "$n" -eq 6 ] || fail "expected 6 'method: exact (streamed)' (3 layers x B_l, P_l), found $n"
grep -q '"mode": "streamed"' "$tmp/s.json" || fail "config.mode is not streamed"
# every frobenius_norm equal to explicit's to 1e-12 relative
python3 - "$tmp/s.json" "$tmp/e.json" <<'PY' || fail "streamed and explicit Frobenius norms differ"
import json, sys
s, e = (json.load(open(p)) for p in sys.argv[1:3])
for a, b in zip(s["layers"], e["layers"]):
    for g in ("block_jacobian", "product_jacobian"):
        x, y = a[g]["frobenius_norm"], b[g]["frobenius_norm"]
        assert abs(x - y) <= 1e-12 * y, (g, x, y)
PY
for bad in "--mode streamed --stream-rows 0" "--mode streamed --stream-rows -2" "--mode explicit --stream-rows 8" \
           "--stream-rows 8" "--mode streamed --spectrum" "--mode streamed --top-k 2"; do
  "$gf" analyze $args $bad >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 2 ] || [ "$(grep -c . "$tmp/err")" -ne 1 ] || ! grep -q "fix" "$tmp/err"; then
    fail "analyze $bad -> exit $rc: $(cat "$tmp/err")"
  else
    echo "ok: analyze $bad -> $(cat "$tmp/err")"
  fi
done
exit $fails
