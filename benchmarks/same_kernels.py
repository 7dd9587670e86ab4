"""same_kernels.py — makes a benchmark's PyTorch/NumPy side run on the same OpenBLAS kernels and OpenMP spin
count as gradflow. gradflow may choose both at start-up (src/process/runtime_env.cpp); PyTorch and NumPy read them
when they are imported, so call use_gradflow_kernels() before importing either."""
import os
import subprocess
import sys


def gradflow_openblas_core(exe):
    """The OpenBLAS core gradflow runs with (OPENBLAS_VERBOSE=2 prints one line per load; the last one counts)."""
    r = subprocess.run([exe, "--version"], env=dict(os.environ, OPENBLAS_VERBOSE="2"), capture_output=True, text=True)
    cores = [l.split(":", 1)[1].strip() for l in (r.stdout + r.stderr).splitlines() if l.startswith("Core:")]
    return cores[-1] if cores else None


def use_gradflow_kernels(exe):
    """Sets OPENBLAS_CORETYPE, GOMP_SPINCOUNT and GLIBC_TUNABLES (transparent huge pages for malloc's heap; this
    re-executes the script once) for this process as gradflow sets them for itself; returns
    {"openblas_core": ..., "omp_wait_policy": ...} to record beside the results."""
    if "GLIBC_TUNABLES" not in os.environ:  # read by the dynamic loader: only a re-execution applies it
        os.environ["GLIBC_TUNABLES"] = "glibc.malloc.hugetlb=1"  # gradflow's heap setting, for PyTorch's allocations too
        os.execv(sys.executable, [sys.executable] + sys.argv)
    core = gradflow_openblas_core(exe)
    if core and "OPENBLAS_CORETYPE" not in os.environ:
        os.environ["OPENBLAS_CORETYPE"] = core
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", "3000")
    return {"openblas_core": os.environ.get("OPENBLAS_CORETYPE", core),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default, GOMP_SPINCOUNT=" + os.environ.get("GOMP_SPINCOUNT", "?")),
            "glibc_tunables": os.environ.get("GLIBC_TUNABLES")}
