#!/bin/sh
# test_streamed_cli.sh GRADFLOW — `analyze --mode streamed` writes exact Frobenius norms with method
# "exact (streamed)" in every layer's block_jacobian and product_jacobian, equal to --mode explicit's; bad
# --stream-rows, --stream-rows with another --mode, and --max-time outside --mode auto are one-line errors with exit 2;
# --mode auto chooses streamed when explicit does not fit --max-memory and the estimate fits --max-time (the note and
# config.time_estimate say so), matrix-free when it does not.
gf=${1:?usage: test_streamed_cli.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
args="--layers 3 --d-model 8 --heads 2 --seq-len 4 --placement pre -q"
# streamed and explicit Frobenius norms: the same squares summed in another order (tests/tolerances.hpp: kCrossTol,
# the bound tests/matrix_free/test_streamed.cpp holds them to), relative
cross_tol=1e-12
"$gf" analyze $args --mode streamed --stream-rows 5 --json "$tmp/s.json" || fail "streamed run exit $?"
"$gf" analyze $args --mode explicit --json "$tmp/e.json" || fail "explicit run exit $?"
n=$(grep -c '"method": "exact (streamed)"' "$tmp/s.json")
[ "$n" -eq 6 ] || fail "expected 6 'method: exact (streamed)' (3 layers x B_l, P_l), found $n"
grep -q '"mode": "streamed"' "$tmp/s.json" || fail "config.mode is not streamed"
# every frobenius_norm equal to explicit's to cross_tol relative
/usr/bin/python3 - "$tmp/s.json" "$tmp/e.json" "$cross_tol" <<'PY' || fail "streamed and explicit Frobenius norms differ"
import json, sys
s, e = (json.load(open(p)) for p in sys.argv[1:3])
tol = float(sys.argv[3])
for a, b in zip(s["layers"], e["layers"]):
    for g in ("block_jacobian", "product_jacobian"):
        x, y = a[g]["frobenius_norm"], b[g]["frobenius_norm"]
        assert abs(x - y) <= tol * y, (g, x, y)
PY
# --stream-blocks off: the same ‖P_l‖_F bit for bit, ‖B_l‖_F not computed (null, and the method says why)
"$gf" analyze $args --mode streamed --stream-rows 5 --stream-blocks off --json "$tmp/p.json" || fail "P-only exit $?"
/usr/bin/python3 - "$tmp/p.json" "$tmp/s.json" <<'PY' || fail "--stream-blocks off: P_l differs or B_l was computed"
import json, sys
p, s = (json.load(open(f)) for f in sys.argv[1:3])
assert p["config"]["stream_blocks"] is False and s["config"]["stream_blocks"] is True
for a, b in zip(p["layers"], s["layers"]):
    assert a["product_jacobian"]["frobenius_norm"] == b["product_jacobian"]["frobenius_norm"]
    assert a["block_jacobian"]["frobenius_norm"] is None and "stream-blocks off" in a["block_jacobian"]["method"]
assert p["summary"]["per_layer_rms_gain_product"] is None
PY
# auto (no -q: the notes go to stderr): here explicit needs ~286 KiB, streamed with 2 rows per chunk ~100 KiB, so a
# 200 KiB budget leaves streamed (its estimate fits --max-time 1h) or matrix-free (it does not fit 1e-9 s)
auto="--layers 3 --d-model 8 --heads 2 --seq-len 8 --placement pre"
"$gf" analyze $auto --max-memory 1M --stream-rows 8 --json "$tmp/a0.json" >/dev/null 2>"$tmp/note0" || fail "auto exit $?"
grep -q '"mode": "explicit"' "$tmp/a0.json" || fail "auto under 1M did not choose explicit"
grep -q "stream-rows unused: --mode auto chose explicit" "$tmp/note0" || fail "no note for the unused --stream-rows"
"$gf" analyze $auto --mode explicit -q --json "$tmp/e8.json" || fail "explicit (n = 8) exit $?"
"$gf" analyze $auto --max-memory 200K --max-time 1h --stream-rows 2 --json "$tmp/a1.json" >/dev/null 2>"$tmp/note1" ||
  fail "auto streamed exit $?"
grep -q '"mode": "streamed"' "$tmp/a1.json" || fail "auto with --max-time 1h did not choose streamed"
grep -q '"time_estimate"' "$tmp/a1.json" || fail "auto streamed: no config.time_estimate"
grep -q "estimated at .*within --max-time.*so streamed" "$tmp/note1" || fail "auto streamed: no estimate note: $(cat "$tmp/note1")"
/usr/bin/python3 - "$tmp/a1.json" "$tmp/e8.json" "$cross_tol" <<'PY' || fail "auto's streamed norms differ from explicit"
import json, sys
s, e = (json.load(open(p)) for p in sys.argv[1:3])
tol = float(sys.argv[3])
for a, b in zip(s["layers"], e["layers"]):
    x, y = a["product_jacobian"]["frobenius_norm"], b["product_jacobian"]["frobenius_norm"]
    assert abs(x - y) <= tol * y, (x, y)
PY
"$gf" analyze $auto --max-memory 200K --max-time 1e-9 --stream-rows 2 --hutchinson-probes 4 --json "$tmp/a2.json" \
  >/dev/null 2>"$tmp/note2" || fail "auto matrix-free exit $?"
grep -q '"mode": "matrix-free"' "$tmp/a2.json" || fail "auto over --max-time did not choose matrix-free"
grep -q "over --max-time.*so matrix-free" "$tmp/note2" || fail "auto matrix-free: no estimate note: $(cat "$tmp/note2")"
# the thread count does not change a bit (chunks are summed in order; each row's VJP is one BLAS call whose threads
# split the output, not the sums): 1 vs 2 threads at a size where OpenBLAS uses both (N = 1024, chunks of 200 rows)
big="--layers 2 --d-model 64 --heads 4 --seq-len 16 --placement pre --mode streamed --stream-rows 200 -q"
OMP_NUM_THREADS=1 "$gf" analyze $big --json "$tmp/t1.json" || fail "1 thread exit $?"
OMP_NUM_THREADS=2 "$gf" analyze $big --json "$tmp/t2.json" || fail "2 threads exit $?"
/usr/bin/python3 "$(dirname "$0")/../../scripts/compare_reports.py" "$tmp/t1.json" "$tmp/t2.json" >/dev/null ||
  fail "streamed results differ between 1 and 2 threads"
# the token geometry's SVDs at a size where a multithreaded LAPACK call would move last bits (n = 128, d = 512): one
# layer per thread, single-threaded calls, the same report on 1 and 2 threads
wide="--layers 3 --d-model 512 --heads 8 --d-ff 512 --seq-len 128 --gradients-only -q"
OMP_NUM_THREADS=1 "$gf" analyze $wide --json "$tmp/w1.json" || fail "1 thread (wide) exit $?"
OMP_NUM_THREADS=2 "$gf" analyze $wide --json "$tmp/w2.json" || fail "2 threads (wide) exit $?"
/usr/bin/python3 "$(dirname "$0")/../../scripts/compare_reports.py" "$tmp/w1.json" "$tmp/w2.json" >/dev/null ||
  fail "token geometry differs between 1 and 2 threads"
for bad in "--mode streamed --stream-rows 0" "--mode streamed --stream-rows -2" "--mode explicit --stream-rows 8" \
           "--mode explicit --stream-blocks off" "--mode streamed --stream-blocks no" \
           "--mode streamed --spectrum" "--mode streamed --top-k 2" "--mode streamed --max-time 1h" \
           "--gradients-only --max-time 1h" "--max-time 0" "--max-time 5x" "--max-time -3m"; do
  "$gf" analyze $args $bad >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 2 ] || [ "$(grep -c . "$tmp/err")" -ne 1 ] || ! grep -q "fix" "$tmp/err"; then
    fail "analyze $bad -> exit $rc: $(cat "$tmp/err")"
  else
    echo "ok: analyze $bad -> $(cat "$tmp/err")"
  fi
done
exit $fails
