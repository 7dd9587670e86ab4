"""dgemm_ceiling.py — what every benchmark of docs/benchmarks.md reports beside its times (issue 14, goal 4): the
machine's DGEMM rate measured in the same run, and the flop count of the workload, so that a row gives its ceiling
(flops / DGEMM rate: the time the workload would take if all of it ran at the rate of one large matrix product) and
the fraction of that rate it reached (ceiling / measured time).

The rate is bench_jacobians' (2048, 2048)·(2048, 2048) product (best of 3), built next to gradflow; a benchmark
measures it at its start and again at its end and keeps the better one (other work on the machine only lowers it).
The flop counts are the GEMM flops of each workload (2·m·k·n per product; element-wise work, norms and softmax are
not counted), so the fraction is an upper bound on how far from the limit the time is, never flattering.
"""
import json
import os
import subprocess


class DgemmRate:
    """The DGEMM rate of one benchmark run (flop/s): measure() at the start and at the end, best() in between."""

    def __init__(self, build, threads=2):
        self.exe = os.path.join(build, "bench_jacobians")
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        self.threads = threads
        self.rates = []

    def measure(self):
        r = subprocess.run([self.exe, "2", "3"], capture_output=True, text=True, env=self.env, check=True)
        self.rates.append(json.loads(r.stdout)["dgemm_gflops"] * 1e9)
        return self.rates[-1]

    def best(self):
        return max(self.rates)

    def describe(self):
        parts = " and ".join(f"{r / 1e9:.1f}" for r in self.rates)
        return (f"DGEMM {self.best() / 1e9:.1f} GFLOP/s on {self.threads} thread(s) in this run "
                f"(the better of {parts} GFLOP/s)")

    def fraction(self, flops, seconds):
        """The fraction of this run's DGEMM rate that `flops` in `seconds` reached."""
        return flops / seconds / self.best()

    def ceiling(self, flops):
        """Seconds `flops` would take at this run's DGEMM rate."""
        return flops / self.best()


def forward_flops(layers, n, d, d_ff):
    """GEMM flops of one sequence's forward pass through `layers` blocks: the Q/K/V projection (2n·d·3d), the scores
    and the weighted sum (2·2n²d over all heads), the output projection (2n·d²) and the feed-forward unit
    (2·2n·d·d_ff)."""
    return layers * (2 * n * d * 3 * d + 2 * 2 * n * n * d + 2 * n * d * d + 2 * 2 * n * d * d_ff)


def forward_backward_flops(layers, n, d, d_ff):
    """One forward + backward: the backward counted as twice the forward (input and weight gradients)."""
    return 3 * forward_flops(layers, n, d, d_ff)


def block_pass_flops(n, d, d_ff):
    """One cotangent's (or tangent's) pass through one block: gradflow's own cost model (src/run/time_estimate.cpp,
    block_vjp_flops), 2n(4d² + 2d·d_ff) + 8n²d."""
    return 2 * n * (4 * d * d + 2 * d * d_ff) + 8 * n * n * d


def block_jacobian_flops(n, d, h, d_ff):
    """GEMM flops of gradflow's explicit block Jacobian (N = n·d): the attention Jacobian's slabs (one (n, 2h)(2h, d)
    product per output row), the FFN's token-wise Jacobians, and three token-wise (d, d) times dense (d, N) products
    (the norm after attention, the feed-forward unit, and the product with the identity dx_0/dx_0 the chain starts
    from)."""
    N = n * d
    return N * 2 * n * 2 * h * d + n * 2 * d * d_ff * d + 3 * n * 2 * d * d * N


def explicit_flops(N, layers):
    """Explicit mode with every spectrum: L − 1 products P_l = P_(l+1)·B_l (2N³ each) and L bidiagonalizations of
    (N, N) matrices (8N³/3 each, the SVD's leading term), as bench_headline_svd counts them."""
    return 2.0 * N ** 3 * (layers - 1) + 8.0 * N ** 3 / 3.0 * layers


def matrix_free_flops(report):
    """The block passes a matrix-free report says it made — every Lanczos operation (lanczos.operations ×
    products_per_operation: one JVP and one VJP per block of the chain) and the Hutchinson sweeps (K probes through
    every block, for P_l and again for B_l) — at block_pass_flops each, plus the forward + backward."""
    c = report["config"]
    n, d, L = c["seq_len"], c["d_model"], c["layers"]
    per_pass = block_pass_flops(n, d, c["d_ff"])
    passes = 0
    for layer in report["layers"]:
        for key in ("block_jacobian", "product_jacobian"):
            j = layer.get(key) or {}
            lz = j.get("lanczos")
            if lz:
                passes += lz["operations"] * lz["products_per_operation"]
            if key == "block_jacobian" and j.get("minus_identity_lanczos"):
                passes += j["minus_identity_lanczos"]["operations"] * 2
            passes += j.get("hutchinson_probes", 0) or 0  # K probes through this layer's block
    return passes * per_pass + forward_backward_flops(L, n, d, c["d_ff"])


def train_update_flops(layers, n, d, d_ff, vocab, batch):
    """One training update of a language model: forward + backward of `batch` sequences through the blocks and the
    output projection (2n·d·V forward); the optimizer's element-wise work is not counted."""
    return batch * (forward_backward_flops(layers, n, d, d_ff) + 3 * 2 * n * d * vocab)
