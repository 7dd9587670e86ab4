// svd.cpp — singular values via LAPACK dgesdd (jobz = 'N') or Eigen's BDCSVD (see svd.hpp).
#include "gradflow/linalg/svd.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gradflow/core/error.hpp"

#ifdef GRADFLOW_HAVE_LAPACK
extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
                        const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork,
                        int* info);
#else
#include <Eigen/SVD>
#endif

namespace gradflow {

Vec singular_values(const Mat& A) {
  if (A.size() == 0) return Vec();
  if (!A.allFinite()) throw Error("singular values requested of a matrix holding NaN or Inf", ErrorKind::Numeric);
#ifdef GRADFLOW_HAVE_LAPACK
  // A row-major (r, c) buffer is Aᵀ column-major (c, r): same singular values.
  Mat a = A;
  const int m = static_cast<int>(A.cols()), n = static_cast<int>(A.rows()), lda = m, one = 1;
  Vec s(std::min(m, n));
  std::vector<int> iwork(8 * static_cast<size_t>(std::min(m, n)));
  double wq = 0;
  int lwork = -1, info = 0;
  double du = 0, dvt = 0;
  dgesdd_("N", &m, &n, a.data(), &lda, s.data(), &du, &one, &dvt, &one, &wq, &lwork, iwork.data(), &info);
  lwork = static_cast<int>(wq) + 1;
  std::vector<double> work(static_cast<size_t>(lwork));
  dgesdd_("N", &m, &n, a.data(), &lda, s.data(), &du, &one, &dvt, &one, work.data(), &lwork, iwork.data(), &info);
  if (info != 0) throw Error("LAPACK dgesdd failed (info " + std::to_string(info) + ")", ErrorKind::Numeric);
  return s;
#else
  Eigen::BDCSVD<Eigen::MatrixXd> svd(A, 0);
  return svd.singularValues();
#endif
}

SpectrumSummary summarize_spectrum(const Vec& sigma, double frobenius) {
  SpectrumSummary s;
  s.size = sigma.size();
  s.frobenius_norm = frobenius;
  if (sigma.size() == 0) return s;
  s.spectral_norm = sigma(0);
  const double threshold = kRankRtol * sigma(0);
  for (Index i = 0; i < sigma.size(); ++i) {
    if (sigma(i) > threshold) {
      s.min_singular_value = sigma(i);
      s.numerical_rank = i + 1;
    }
  }
  return s;
}

double frobenius_norm(const Mat& A) {
  // The plain sum of squares is exact enough (Eigen sums in vectorized blocks) and several times faster than
  // stableNorm; it is trusted unless it overflowed or came so close to underflow that squares of the smallest
  // entries may have been lost (then stableNorm rescales).
  const double s = A.squaredNorm();
  if (std::isfinite(s) && s > 1e-200) return std::sqrt(s);
  return A.stableNorm();
}

}  // namespace gradflow
