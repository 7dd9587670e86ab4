"""tolerances.py — every numeric tolerance of the tests/pytorch cross-checks, named once (the C++ tests' are in
tests/tolerances.hpp). Both sides compute in float64 from the very same weights, inputs and cotangents; what differs
is the order of the operations (PyTorch's kernels vs gradflow's), so the differences are rounding; the bounds below
leave orders of magnitude over it and still fail on any wrong formula, which moves these numbers by far more."""

# Relative error of every compared quantity (loss, ||dL/dx_l||, parameter-gradient norms, the Jacobian dy/dx_0 in
# Frobenius norm, the per-layer quantities): the bound.
REL_TOL = 1e-9

# Five training steps (weights, losses, gradient norms, update ratios) against torch.optim.Adam: issue 8's bound,
# per tensor ||a - b|| / ||b||.
TRAIN_REL_TOL = 1e-10

# The same five steps with `train --precision f32` against the model and Adam in torch.float32: both sides round every
# stored value to float32 but in different orders (torch's float32 kernels vs gradflow's float64 arithmetic between
# float32 stores, float32 products by OpenBLAS's SGEMM), so each value differs by a few float32 units of roundoff
# (2^-24 = 6e-8) and five Adam steps carry that: measured up to 4.4e-7 (losses and weights), the bound leaves ~20x.
# A missed rounding step (weights or moments left in float64) is caught apart: every saved master weight must be a
# float32 value.
TRAIN_F32_REL_TOL = 1e-5

# A parametrization's initialization against the same seed's sp draw times the table's factor (the very same draws,
# one or two multiplications: a few ulps), and its reported multipliers against the table's closed forms
# (test_parametrization_torch.py; issue 35's 1e-12 "where deterministic").
INIT_REL_TOL = 1e-12

# A quantity that is exactly 0 (HybridNorm's key-norm bias gradient: the softmax cancels it; q, k biases at n = 1):
# both sides are rounding, |value| <= ZERO_REL_TOL times the largest compared quantity; also the floor of the
# relative error's denominator, so an exactly-zero reference does not divide by 0.
ZERO_REL_TOL = 1e-12

# A per-layer quantity whose reference is exactly 0.0 (test_layer_quantities_torch.py): gradflow's value, absolute.
ZERO_ABS_TOL = 1e-15
