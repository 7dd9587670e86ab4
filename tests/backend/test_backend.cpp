// test_backend.cpp — the backend seam (include/gradflow/backend/backend.hpp): the CPU backend's operations against
// direct Eigen/LAPACK computations, and the factory's refusal of a backend that was not built. One body per
// operation; a device backend adds itself to kBuilt below and runs the same checks against the CPU's results.
#include <catch2/catch.hpp>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/linalg/top_singular.hpp"
#include "gradflow/core/rng.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using gradflow::test::kCrossTol;

namespace {

Mat random_mat(Index r, Index c, const std::string& stream) {
  Mat m(r, c);
  Rng(11, stream).fill_normal(m, 1.0);
  return m;
}

const std::vector<BackendKind> kBuilt = {BackendKind::Cpu};

}  // namespace

TEST_CASE("backend: P·B with a token-wise or dense B equals the dense product", "[backend]") {
  const Index n = 3, d = 4, N = n * d;
  std::vector<Mat> blocks;
  for (Index i = 0; i < n; ++i) blocks.push_back(random_mat(d, d, "block" + std::to_string(i)));
  const Jacobian Bt = Jacobian::tokenwise(blocks);
  const Jacobian Bd = Jacobian::dense(random_mat(N, N, "dense"), n);
  const Mat P = random_mat(N, N, "P");
  for (BackendKind k : kBuilt) {
    INFO(to_string(k));
    const auto be = make_backend(k);
    for (const Jacobian* B : {&Bt, &Bd}) {
      const Mat want = P * B->to_dense();
      const Mat got = be->multiply(be->upload(P), *B)->to_host();
      CHECK((got - want).norm() <= kCrossTol * want.norm());
      CHECK(be->densify(Jacobian(*B))->to_host() == B->to_dense());
    }
  }
}

TEST_CASE("backend: norms and singular values are the linear-algebra routines' own", "[backend]") {
  const Mat A = random_mat(12, 12, "A");
  Mat AmI = A;
  AmI.diagonal().array() -= 1.0;
  for (BackendKind k : kBuilt) {
    INFO(to_string(k));
    const auto be = make_backend(k);
    const auto buf = be->upload(A);
    CHECK(buf->rows() == 12);
    CHECK(be->all_finite(*buf));
    CHECK(be->frobenius_norm(*buf) == frobenius_norm(A));
    CHECK(be->spectral_norm(*buf) == spectral_norm(A));
    const IdentityDistance dist = be->minus_identity_norms(*buf);
    CHECK(dist.spectral == spectral_norm(AmI));
    CHECK(dist.frobenius == frobenius_norm(AmI));
    CHECK(be->singular_values(*buf) == singular_values(A));
    Mat bad = A;
    bad(3, 4) = std::numeric_limits<double>::quiet_NaN();
    CHECK(!be->all_finite(*be->upload(bad)));
  }
}

TEST_CASE("backend: --device cuda without a CUDA build or without a GPU is a one-line error with the fix", "[backend]") {
  // a CPU build: "built without the CUDA backend"; a CUDA build on a machine without a GPU: "no CUDA GPU is visible"
  // (any cudaGetDeviceCount failure); with a GPU the backend is made and the [cuda] tests check it
  try {
    make_backend(BackendKind::Cuda);
#ifndef GRADFLOW_HAVE_CUDA
    FAIL("no error");
#endif
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(e.exit_code() == 2);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find("--device cpu") != std::string::npos);
#ifdef GRADFLOW_HAVE_CUDA
    CHECK(msg.find("no CUDA GPU is visible") != std::string::npos);
#else
    CHECK(msg.find("GRADFLOW_CUDA") != std::string::npos);
#endif
  }
}
