// tolerances.hpp — every numeric tolerance of the test suite, named once.
#pragma once

namespace gradflow::test {

// Central finite differences vs analytic derivatives (relative, on the whole matrix/vector).
inline constexpr double kFdTol = 1e-6;
// Step of the central differences (error O(h^2) ~ 1e-10, roundoff O(eps/h) ~ 1e-11).
inline constexpr double kFdStep = 1e-5;
// Two exact forms of the same derivative (J·v vs jvp(v), uᵀJ vs vjp(u)).
inline constexpr double kCrossTol = 1e-12;
// Backward-pass gradient norm vs ||P_lᵀ g|| from the explicit product of Jacobians.
inline constexpr double kProductTol = 1e-10;

}  // namespace gradflow::test
