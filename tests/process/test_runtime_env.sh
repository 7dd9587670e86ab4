#!/bin/sh
# test_runtime_env.sh GRADFLOW BLAS — the start-up settings (src/process/runtime_env.cpp) change speed, not results: a
# run with them and one with GRADFLOW_NO_TUNE=1 (libgomp's and OpenBLAS's own defaults) agree to rounding; a user's
# own OPENBLAS_CORETYPE is kept (OpenBLAS reports the core it uses with OPENBLAS_VERBOSE=2).
# BLAS (from tests/CMakeLists.txt) is "openblas" when gradflow links OpenBLAS: then OpenBLAS must report the core
# the user chose, and saying nothing fails. The user's core is Prescott (SSE3, on every x86-64 CPU): it is also
# OpenBLAS's fallback, which gradflow replaces when it chooses by itself, so keeping it shows the user's value won.
gf=${1:?usage: test_runtime_env.sh PATH/TO/gradflow openblas|other}
blas=${2:?usage: test_runtime_env.sh PATH/TO/gradflow openblas|other}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args="analyze --placement post --layers 4 --d-model 16 --heads 2 --seq-len 6 -q"
"$gf" $args --json "$tmp/tuned.json" || exit 1
GRADFLOW_NO_TUNE=1 "$gf" $args --json "$tmp/plain.json" || exit 1
# tuned vs untuned: the same operations with other thread counts and BLAS kernels, so rounding only; relative,
# as tests/tolerances.hpp's kCrossTol
rounding_tol=1e-12
/usr/bin/python3 - "$tmp/tuned.json" "$tmp/plain.json" "$rounding_tol" <<'PY' || exit 1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
tol = float(sys.argv[3])
worst = 0.0
for la, lb in zip(a["layers"], b["layers"]):
    pairs = [(la["grad_norm"], lb["grad_norm"]), (la["product_jacobian"]["spectral_norm"], lb["product_jacobian"]["spectral_norm"])]
    pairs += [(v, lb["param_grad_norms"][k]) for k, v in la["param_grad_norms"].items()]
    worst = max(worst, max(abs(x - y) / abs(x) for x, y in pairs))
print(f"tuned vs GRADFLOW_NO_TUNE=1: worst relative difference {worst:.2e}")
sys.exit(0 if worst <= tol else 1)
PY
# the heap's transparent huge pages (glibc.malloc.hugetlb=1) are set by the start-up re-execution, and a user's own
# GLIBC_TUNABLES is kept: read from /proc/PID/environ of a run long enough to be caught (polled until re-executed)
env_of_run() {  # prints the GLIBC_TUNABLES a run ended up with
  "$gf" analyze --placement post --layers 12 --d-model 64 --heads 4 --seq-len 32 --mode explicit -q \
    --json "$tmp/env.json" >/dev/null 2>&1 &
  pid=$!
  found=""
  for i in $(seq 1 200); do
    e=$(tr '\0' '\n' < /proc/$pid/environ 2>/dev/null)
    case "$e" in *GOMP_SPINCOUNT=*) found=$(printf '%s\n' "$e" | sed -n 's/^GLIBC_TUNABLES=//p'); break ;; esac
    sleep 0.01
  done
  wait $pid
  printf '%s' "$found"
}
got=$(unset GLIBC_TUNABLES GOMP_SPINCOUNT OMP_WAIT_POLICY; env_of_run)
if [ "$got" != "glibc.malloc.hugetlb=1" ]; then
  echo "FAIL: the re-executed run has GLIBC_TUNABLES='$got', expected glibc.malloc.hugetlb=1"
  exit 1
fi
got=$(unset GOMP_SPINCOUNT OMP_WAIT_POLICY; GLIBC_TUNABLES=glibc.malloc.check=0; export GLIBC_TUNABLES; env_of_run)
if [ "$got" != "glibc.malloc.check=0" ]; then
  echo "FAIL: a user's GLIBC_TUNABLES=glibc.malloc.check=0 became '$got'"
  exit 1
fi
echo "ok: huge pages for the heap set at start-up; a user's GLIBC_TUNABLES kept"
if [ "$blas" != openblas ]; then
  echo "ok: not an OpenBLAS build ($blas): no core to check"
  exit 0
fi
case $(uname -m) in
  x86_64|amd64) ;;
  *) echo "ok: OPENBLAS_CORETYPE check is x86-only (the core names are x86's); $(uname -m) here"; exit 0 ;;
esac
core=$(OPENBLAS_VERBOSE=2 OPENBLAS_CORETYPE=Prescott "$gf" --version 2>&1 >/dev/null | sed -n 's/^Core: //p' | tail -n 1)
if [ -z "$core" ]; then
  echo "FAIL: OpenBLAS printed no 'Core: ...' line with OPENBLAS_VERBOSE=2 (is gradflow linked to OpenBLAS?)"
  exit 1
fi
if [ "$core" != "Prescott" ]; then
  echo "FAIL: OPENBLAS_CORETYPE=Prescott given, OpenBLAS runs $core"
  exit 1
fi
echo "ok: user's OPENBLAS_CORETYPE kept (OpenBLAS reports Core: $core)"
