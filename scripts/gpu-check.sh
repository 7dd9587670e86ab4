#!/bin/bash
# gpu-check.sh — the CUDA backend on a lent GPU, in one run of at most ~8 minutes (docs/cuda.md, ../shared/GPU.md).
# Runs the programs that scripts/gpu-build.sh collected into a carry folder (default .gpu), not a build tree: ctest's
# files hold the build machine's paths. Every step is time-boxed and the run continues after a failed step, so one
# run gives every diagnostic; all of it goes to one results file, $OUT/gpu-check.txt (with the JSON reports beside).
# Without a GPU it stops after the first device step with a clear message (exit 1), in seconds.
#   device tool:  run  command "scripts/gpu-check.sh .gpu"  carry [".gpu"]  timeout_s 480
#   here:         scripts/gpu-check.sh .gpu            (the CPU dry run: fails fast, OUT defaults to /tmp/gpu-check)
set -u
cd "$(dirname "$0")/.."
CARRY=${1:-.gpu}
OUT=${OUT:-/tmp/gpu-check}
BUDGET=${GPU_CHECK_BUDGET:-450}  # seconds for all steps together (the device tool's limit is 480 per command)
mkdir -p "$OUT"
RESULTS="$OUT/gpu-check.txt"
: > "$RESULTS"
START=$(date +%s)
FAILED=0
log() { echo "$*" | tee -a "$RESULTS"; }

# step NAME CAP_SECONDS COMMAND...: runs COMMAND with a timeout of min(CAP, what is left of BUDGET), output into the
# results file, and records its exit code and wall time; never stops the script.
step() {
  local name=$1 cap=$2
  shift 2
  local left=$((BUDGET - ($(date +%s) - START)))
  local t=$((cap < left ? cap : left))
  if [ "$t" -lt 5 ]; then
    log "=== $name: SKIPPED (time budget of ${BUDGET} s spent)"
    FAILED=$((FAILED + 1))
    return 99
  fi
  log "=== $name (timeout ${t} s): $*"
  local s0 rc
  s0=$(date +%s.%N)
  timeout -k 5 "$t" "$@" >> "$RESULTS" 2>&1
  rc=$?
  log "=== $name: exit ${rc}, $(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s$([ $rc -eq 124 ] && echo ' (TIMED OUT)')"
  [ $rc -ne 0 ] && FAILED=$((FAILED + 1))
  return $rc
}

log "gpu-check: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname), carry folder $CARRY (commit $(cat "$CARRY/commit" 2>/dev/null || echo unknown))"
if [ ! -x "$CARRY/bin/gradflow" ] || [ ! -x "$CARRY/bin/test_backend" ]; then
  log "gpu-check: $CARRY/bin/gradflow or $CARRY/bin/test_backend is missing; fix: run scripts/gpu-build.sh on the build machine and carry $CARRY"
  exit 1
fi

# --- the device and its CUDA libraries -------------------------------------------------------------------------------
log "--- nvidia-smi -L"
timeout 20 nvidia-smi -L >> "$RESULTS" 2>&1 || log "(nvidia-smi -L failed or is absent)"
timeout 20 nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,clocks.max.sm --format=csv >> "$RESULTS" 2>&1 || true
# cuBLAS/cuSOLVER and their dependencies: the toolkit's lib64 folders, then PyTorch's nvidia/*/lib wheels
NEEDED="libcublas.so.13 libcublasLt.so.13 libcusolver.so.12 libcusparse.so.12 libnvJitLink.so.13"
DIRS=""
CANDIDATES="/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $(ls -d /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib 2>/dev/null)"
for py in python3 python; do
  if command -v "$py" > /dev/null; then
    CANDIDATES="$CANDIDATES $("$py" -c 'import site,glob; print(" ".join(d for p in site.getsitepackages() for d in glob.glob(p + "/nvidia/*/lib") + glob.glob(p + "/nvidia/*/*/lib")))' 2>/dev/null)"
    break
  fi
done
for lib in $NEEDED; do
  found=""
  for d in $CANDIDATES; do
    if [ -e "$d/$lib" ]; then found=$d; break; fi
  done
  if [ -z "$found" ]; then
    found=$(find / -xdev -name "$lib" -not -path '*/proc/*' 2>/dev/null | head -1 | xargs -r dirname)
  fi
  log "--- $lib: ${found:-NOT FOUND}"
  [ -n "$found" ] && case ":$DIRS:" in *":$found:"*) ;; *) DIRS="${DIRS:+$DIRS:}$found" ;; esac
done
export LD_LIBRARY_PATH="$(cd "$CARRY/lib" && pwd)${DIRS:+:$DIRS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log "--- LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
log "--- ldd $CARRY/bin/gradflow"
ldd "$CARRY/bin/gradflow" >> "$RESULTS" 2>&1
if ldd "$CARRY/bin/gradflow" | grep -q "not found"; then log "gpu-check: WARNING: a library of gradflow was not found (above)"; fi
G="$CARRY/bin/gradflow"
MODEL="--d-model 512 --heads 8 --d-ff 2048"

# --- 1. the device answers (a tiny explicit run on it); without a GPU the script stops here ---------------------------
if ! step "smoke: --device cuda on a tiny model" 60 "$G" analyze --layers 2 --d-model 8 --heads 2 --seq-len 4 --mode explicit --device cuda -q --json "$OUT/smoke.json"; then
  if grep -q "no CUDA GPU is visible\|error while loading shared libraries" "$RESULTS"; then
    log "gpu-check: FAILED: no usable GPU (above: the CUDA libraries found, and the smoke run's one-line error); nothing else run"
    exit 1
  fi
fi

# --- 2. the backend tests, CPU reference vs CUDA (tests/backend, tags [backend] and [cuda]) -----------------------------
step "tests: test_backend [cuda] (CUDA vs CPU, kBackendTol = 1e-10)" 180 "$CARRY/bin/test_backend" "[cuda]" -d yes
# a failed test may be a kernel's out-of-bounds access: compute-sanitizer's memcheck (the device's own; it reads the
# hardware on Firecracker machines) on a tiny streamed and a tiny explicit run, only then (it is slow)
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2> /dev/null | head -1)
log "--- compute-sanitizer: ${SANITIZER:-NOT FOUND}"
TINY="analyze --layers 2 --d-model 8 --heads 2 --d-ff 16 --seq-len 4 --device cuda -q"
if [ "$FAILED" -gt 0 ]; then
  if [ -n "$SANITIZER" ]; then
    step "compute-sanitizer memcheck: tiny streamed run" 60 "$SANITIZER" --tool memcheck --print-limit 10 "$G" $TINY --mode streamed
    step "compute-sanitizer memcheck: tiny explicit run" 60 "$SANITIZER" --tool memcheck --print-limit 10 "$G" $TINY --mode explicit
  fi
fi

# --- 3. streamed exact norms (the VJP chain on the GPU's kernels, matrix_free/device_chain.hpp) --------------------------
# N = 4096 over 4 layers on both (every ||P_l||_F and ||B_l||_F): agreement to kBackendTol; then the article's full scale
# agreement.py CPU.json CUDA.json LABEL [TOL]: every norm (and sigma_min, rank) of both reports side by side (a file,
# so that `step`'s timeout can run it)
cat > "$OUT/agreement.py" << 'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = 0.0
print("layer  part              quantity                       cpu                      cuda                     rel")
for l, (la, lb) in enumerate(zip(a["layers"], b["layers"])):
    for part in ("block_jacobian", "product_jacobian"):
        for key in ("spectral_norm", "frobenius_norm", "minus_identity_spectral_norm", "min_singular_value", "numerical_rank"):
            x, y = la[part].get(key), lb[part].get(key)
            if x is None or y is None:  # absent, or null (streamed mode has no spectral norms)
                continue
            r = abs(x - y) / abs(x) if x else abs(y)
            if key not in ("min_singular_value", "numerical_rank"):
                worst = max(worst, r)
            print(f"{l:5d}  {part:16s}  {key:29s}  {x:<23.16g}  {y:<23.16g}  {r:.2e}")
tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-10  # kBackendTol; Lanczos: kLanczosTol 1e-8
print(f"{sys.argv[3]}: worst relative difference of the norms {worst:.2e} (tolerance {tol:g})")
for k in ("timing_seconds", "elapsed_seconds"):
    print(k, "cpu", a.get(k), "cuda", b.get(k))
sys.exit(0 if worst <= tol else 1)
EOF
step "streamed N=4096 L=4 on the GPU" 60 "$G" analyze $MODEL --seq-len 8 --layers 4 --mode streamed --stream-rows 512 --device cuda -q --json "$OUT/st_cuda_n8_L4.json"
step "streamed N=4096 L=4 on the CPU" 120 "$G" analyze $MODEL --seq-len 8 --layers 4 --mode streamed --stream-rows 512 --device cpu -q --json "$OUT/st_cpu_n8_L4.json"
if command -v python3 > /dev/null && [ -f "$OUT/st_cuda_n8_L4.json" ] && [ -f "$OUT/st_cpu_n8_L4.json" ]; then
  step "agreement table, streamed N=4096" 30 python3 "$OUT/agreement.py" "$OUT/st_cpu_n8_L4.json" "$OUT/st_cuda_n8_L4.json" "streamed N=4096"
fi
# full scale (d=512, h=8, d_ff=2048, n=128, L=24; N=65536): every exact ||P_l||_F on the GPU (goal: <= 3 minutes),
# then the CPU's Hutchinson estimates with 64 probes, which every exact value must lie within 4 standard errors of
step "full scale N=65536 L=24 streamed ||P_l||_F on the GPU" 200 "$G" analyze $MODEL --seq-len 128 --layers 24 --mode streamed --stream-blocks off --stream-rows 1024 --device cuda -q --json "$OUT/st_cuda_full.json"
step "full scale N=65536 L=24 Hutchinson (64 probes) on the CPU" 150 "$G" analyze $MODEL --seq-len 128 --layers 24 --mode matrix-free --spectral-layers none --hutchinson-probes 64 -q --json "$OUT/mf_cpu_full.json"
# the same 64 probes through the GPU's chain: the same estimates to kBackendTol, timed
step "full scale N=65536 L=24 Hutchinson (64 probes) on the GPU" 60 "$G" analyze $MODEL --seq-len 128 --layers 24 --mode matrix-free --spectral-layers none --hutchinson-probes 64 --device cuda -q --json "$OUT/mf_cuda_full.json"
if command -v python3 > /dev/null && [ -f "$OUT/mf_cuda_full.json" ] && [ -f "$OUT/mf_cpu_full.json" ]; then
  step "agreement table, Hutchinson full scale" 30 python3 "$OUT/agreement.py" "$OUT/mf_cpu_full.json" "$OUT/mf_cuda_full.json" "Hutchinson full scale"
fi
if command -v python3 > /dev/null && [ -f "$OUT/st_cuda_full.json" ] && [ -f "$OUT/mf_cpu_full.json" ]; then
  step "full scale: exact (GPU) vs Hutchinson (CPU), in standard errors" 30 python3 - "$OUT/st_cuda_full.json" "$OUT/mf_cpu_full.json" << 'EOF'
import json, sys
g, c = (json.load(open(p)) for p in sys.argv[1:3])
zs = []
for l, (lg, lc) in enumerate(zip(g["layers"], c["layers"])):
    for part in ("product_jacobian", "block_jacobian"):
        x, e, se = lg[part].get("frobenius_norm"), lc[part].get("frobenius_norm"), lc[part].get("frobenius_std_error")
        if x is None or e is None or not se:
            continue
        z = abs(e - x) / se
        zs.append(z)
        print(f"layer {l:2d} {part:16s} exact {x:.10g} hutchinson {e:.10g} +- {se:.3g}  z {z:.2f}")
print(f"{len(zs)} comparisons, max z {max(zs) if zs else float('nan'):.2f}, {sum(z > 4 for z in zs)} beyond 4")
print("timing_seconds gpu", g.get("timing_seconds"), "cpu", c.get("timing_seconds"))
sys.exit(0 if zs and all(z <= 4 for z in zs) else 1)
EOF
fi

# --- 4. the explicit engine at the article's width, CPU vs GPU (agreement and timings) --------------------------------
# N = n·d = 4096 over 4 layers on both; N = 8192 over 2 layers on the GPU only (the largest N of this run)
step "explicit N=4096 L=4 on the GPU" 90 "$G" analyze $MODEL --seq-len 8 --layers 4 --mode explicit --device cuda -q --json "$OUT/cuda_n8_L4.json"
step "explicit N=4096 L=4 on the CPU" 150 "$G" analyze $MODEL --seq-len 8 --layers 4 --mode explicit --device cpu -q --json "$OUT/cpu_n8_L4.json"
if command -v python3 > /dev/null && [ -f "$OUT/cuda_n8_L4.json" ] && [ -f "$OUT/cpu_n8_L4.json" ]; then
  step "agreement table, explicit N=4096 (relative |cuda - cpu| / |cpu|)" 30 python3 "$OUT/agreement.py" "$OUT/cpu_n8_L4.json" "$OUT/cuda_n8_L4.json" "explicit N=4096"
fi
step "explicit N=8192 L=2 on the GPU" 150 "$G" analyze $MODEL --seq-len 16 --layers 2 --mode explicit --device cuda -q --json "$OUT/cuda_n16_L2.json"

# --- 5. full scale (d=512, h=8, d_ff=2048, n=128, L=24; N=65536): the explicit products do not fit one GPU ----------
# (5 matrices of N² doubles = 160 GiB > the H200's 139 GiB): the run must refuse with the sizes, before any product
step "full scale N=65536 L=24 explicit on the GPU: the refusal" 60 "$G" analyze $MODEL --seq-len 128 --layers 24 --mode explicit --device cuda --max-memory 1000G -q

step "tests: test_backend [backend] (the CPU bodies)" 60 "$CARRY/bin/test_backend" "[backend]"
# with what is left: every ||B_l||_F too at full scale (twice the work)
step "full scale N=65536 L=24 streamed ||P_l||_F and ||B_l||_F on the GPU" 200 "$G" analyze $MODEL --seq-len 128 --layers 24 --mode streamed --stream-rows 1024 --device cuda -q --json "$OUT/st_cuda_full_blocks.json"
# matrix-free Lanczos and Hutchinson on the GPU's operators: N = 4096 L = 4 against the CPU (kLanczosTol),
# then sigma_max of P_0 and of every B_l at full scale, timed, against the CPU's
step "matrix-free N=4096 L=4 on the GPU" 60 "$G" analyze $MODEL --seq-len 8 --layers 4 --mode matrix-free --spectral-layers all --hutchinson-probes 16 --device cuda -q --json "$OUT/mf_cuda_n8_L4.json"
step "matrix-free N=4096 L=4 on the CPU" 60 "$G" analyze $MODEL --seq-len 8 --layers 4 --mode matrix-free --spectral-layers all --hutchinson-probes 16 --device cpu -q --json "$OUT/mf_cpu_n8_L4.json"
if command -v python3 > /dev/null && [ -f "$OUT/mf_cuda_n8_L4.json" ] && [ -f "$OUT/mf_cpu_n8_L4.json" ]; then
  step "agreement table, matrix-free N=4096" 30 python3 "$OUT/agreement.py" "$OUT/mf_cpu_n8_L4.json" "$OUT/mf_cuda_n8_L4.json" "matrix-free N=4096" 1e-8
fi
step "full scale sigma_max(P_0), every B_l: matrix-free on the GPU" 120 "$G" analyze $MODEL --seq-len 128 --layers 24 --mode matrix-free --spectral-layers bottom --hutchinson-probes 0 --device cuda -q --json "$OUT/mf_cuda_full_sigma.json"
step "full scale sigma_max(P_0), every B_l: matrix-free on the CPU" 150 "$G" analyze $MODEL --seq-len 128 --layers 24 --mode matrix-free --spectral-layers bottom --hutchinson-probes 0 --device cpu -q --json "$OUT/mf_cpu_full_sigma.json"
if command -v python3 > /dev/null && [ -f "$OUT/mf_cuda_full_sigma.json" ] && [ -f "$OUT/mf_cpu_full_sigma.json" ]; then
  step "agreement table, matrix-free full scale" 30 python3 "$OUT/agreement.py" "$OUT/mf_cpu_full_sigma.json" "$OUT/mf_cuda_full_sigma.json" "matrix-free full scale" 1e-8
fi

# the placements whose device chain has sublayer norms or two streams (HybridNorm's per-head Q/K/V norms through
# copy_2d, ResiDual's split stacks): streamed N = 2048 L = 2 on GPU and CPU, every exact norm to kBackendTol
for pl in hybridnorm resi-dual; do
  step "$pl streamed N=2048 L=2 on the GPU" 30 "$G" analyze --placement $pl --d-model 256 --heads 4 --d-ff 1024 --seq-len 8 --layers 2 --mode streamed --device cuda -q --json "$OUT/st_cuda_$pl.json"
  step "$pl streamed N=2048 L=2 on the CPU" 60 "$G" analyze --placement $pl --d-model 256 --heads 4 --d-ff 1024 --seq-len 8 --layers 2 --mode streamed --device cpu -q --json "$OUT/st_cpu_$pl.json"
  if command -v python3 > /dev/null && [ -f "$OUT/st_cuda_$pl.json" ] && [ -f "$OUT/st_cpu_$pl.json" ]; then
    step "agreement table, $pl streamed" 30 python3 "$OUT/agreement.py" "$OUT/st_cpu_$pl.json" "$OUT/st_cuda_$pl.json" "$pl streamed N=2048"
  fi
done

# last, with what is left: memcheck over a tiny matrix-free run (Lanczos and Hutchinson on the device's chain)
if [ -n "$SANITIZER" ]; then
  step "compute-sanitizer memcheck: tiny matrix-free run" 60 "$SANITIZER" --tool memcheck --print-limit 10 "$G" $TINY --mode matrix-free --spectral-layers all --hutchinson-probes 4
fi
log "gpu-check: done in $(($(date +%s) - START)) s, ${FAILED} step(s) with a non-zero exit (the full-scale refusal is expected: exit 2)"
ls -la "$OUT" >> "$RESULTS"
exit 0
