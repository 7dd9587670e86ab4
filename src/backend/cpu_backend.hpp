// cpu_backend.hpp — the CPU backend (OpenBLAS, LAPACK, Eigen), private to src/backend/.
#pragma once
#include "gradflow/backend/backend.hpp"

namespace gradflow {

// A host matrix.
class CpuBuffer final : public DenseBuffer {
 public:
  explicit CpuBuffer(Mat m) : m_(std::move(m)) {}
  Index rows() const override { return m_.rows(); }
  Index cols() const override { return m_.cols(); }
  Mat to_host() const override { return m_; }
  const Mat* host_view() const override { return &m_; }
  const Mat& mat() const { return m_; }
  Mat& mat() { return m_; }

 private:
  Mat m_;
};

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace gradflow
