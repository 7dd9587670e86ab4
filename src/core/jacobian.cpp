// jacobian.cpp — structured Jacobian algebra (see jacobian.hpp). Loops over tokens are OpenMP-parallel
// with disjoint outputs, so results do not depend on the thread count.
#include "gradflow/core/jacobian.hpp"

#include "gradflow/core/error.hpp"

namespace gradflow {

Jacobian Jacobian::tokenwise(std::vector<Mat> blocks) {
  Jacobian j;
  j.tokenwise_ = true;
  j.n_ = static_cast<Index>(blocks.size());
  j.blocks_ = std::move(blocks);
  return j;
}

Jacobian Jacobian::dense(Mat m, Index n_tokens) {
  Jacobian j;
  j.tokenwise_ = false;
  j.n_ = n_tokens;
  j.dense_ = std::move(m);
  return j;
}

Jacobian Jacobian::identity(Index n_tokens, Index d) {
  return tokenwise(std::vector<Mat>(static_cast<size_t>(n_tokens), Mat::Identity(d, d)));
}

Jacobian Jacobian::streams(const std::vector<std::vector<const Jacobian*>>& q, Index n, Index d) {
  const Index R = static_cast<Index>(q.size()), C = R ? static_cast<Index>(q[0].size()) : 0;
  bool tw = true;
  for (const auto& row : q)
    for (const Jacobian* j : row) {
      if (!j) continue;
      if (j->tokens() != n || j->rows() != n * d || j->cols() != n * d)
        throw Error("internal: a stream quadrant is not (n·d, n·d)", ErrorKind::Internal);
      tw = tw && j->is_tokenwise();
    }
  if (tw) {
    std::vector<Mat> blocks(static_cast<size_t>(n), Mat::Zero(R * d, C * d));
    for (Index r = 0; r < R; ++r)
      for (Index c = 0; c < C; ++c)
        if (const Jacobian* j = q[static_cast<size_t>(r)][static_cast<size_t>(c)])
          for (Index i = 0; i < n; ++i) blocks[static_cast<size_t>(i)].block(r * d, c * d, d, d) = j->blocks_[static_cast<size_t>(i)];
    return tokenwise(std::move(blocks));
  }
  // dense: entry (token i, stream r, feature a; token j, stream c, feature b) at (i·R·d + r·d + a, j·C·d + c·d + b)
  Mat m = Mat::Zero(n * R * d, n * C * d);
  for (Index r = 0; r < R; ++r)
    for (Index c = 0; c < C; ++c) {
      const Jacobian* j = q[static_cast<size_t>(r)][static_cast<size_t>(c)];
      if (!j) continue;
      if (j->is_tokenwise()) {
        for (Index i = 0; i < n; ++i) m.block(i * R * d + r * d, i * C * d + c * d, d, d) = j->blocks_[static_cast<size_t>(i)];
        continue;
      }
#pragma omp parallel for schedule(static)
      for (Index i = 0; i < n; ++i)
        for (Index k = 0; k < n; ++k) m.block(i * R * d + r * d, k * C * d + c * d, d, d) = j->dense_.block(i * d, k * d, d, d);
    }
  return dense(std::move(m), n);
}

Index Jacobian::rows() const { return tokenwise_ ? (n_ ? n_ * blocks_[0].rows() : 0) : dense_.rows(); }
Index Jacobian::cols() const { return tokenwise_ ? (n_ ? n_ * blocks_[0].cols() : 0) : dense_.cols(); }

Mat Jacobian::to_dense() && {
  if (!tokenwise_) return std::move(dense_);  // no copy of the (N, N) matrix
  return static_cast<const Jacobian&>(*this).to_dense();
}

Mat Jacobian::to_dense() const& {
  if (!tokenwise_) return dense_;
  const Index ro = blocks_[0].rows(), co = blocks_[0].cols();
  Mat m = Mat::Zero(rows(), cols());
  for (Index i = 0; i < n_; ++i) m.block(i * ro, i * co, ro, co) = blocks_[static_cast<size_t>(i)];
  return m;
}

Jacobian& Jacobian::scale(double s) {
  if (s == 1.0) return *this;
  if (tokenwise_) {
    for (auto& b : blocks_) b *= s;
  } else {
    dense_ *= s;
  }
  return *this;
}

Jacobian& Jacobian::add_diagonal(const RowVec& a) {
  const Index d = a.size();
  if (rows() != cols() || rows() != n_ * d) throw Error("internal: add_diagonal on a non-square Jacobian", ErrorKind::Internal);
  if (tokenwise_) {
    for (auto& b : blocks_) b.diagonal() += a.transpose();
  } else {
    for (Index i = 0; i < n_; ++i) dense_.block(i * d, i * d, d, d).diagonal() += a.transpose();
  }
  return *this;
}

Jacobian& Jacobian::add_identity(double s) {
  const Index d = rows() / n_;
  return add_diagonal(RowVec::Constant(d, s));
}

Jacobian& Jacobian::add(const Jacobian& o) {
  if (o.rows() != rows() || o.cols() != cols()) throw Error("internal: Jacobian shapes differ in add", ErrorKind::Internal);
  if (tokenwise_ && o.tokenwise_) {
    for (size_t i = 0; i < blocks_.size(); ++i) blocks_[i] += o.blocks_[i];
    return *this;
  }
  if (tokenwise_) {  // this becomes dense
    Mat m = o.dense_;
    const Index ro = blocks_[0].rows(), co = blocks_[0].cols();
    for (Index i = 0; i < n_; ++i) m.block(i * ro, i * co, ro, co) += blocks_[static_cast<size_t>(i)];
    *this = dense(std::move(m), n_);
    return *this;
  }
  if (o.tokenwise_) {
    const Index ro = o.blocks_[0].rows(), co = o.blocks_[0].cols();
    for (Index i = 0; i < n_; ++i) dense_.block(i * ro, i * co, ro, co) += o.blocks_[static_cast<size_t>(i)];
  } else {
    dense_ += o.dense_;
  }
  return *this;
}

Jacobian operator*(const Jacobian& a, const Jacobian& b) {
  if (a.cols() != b.rows() || a.n_ != b.n_)
    throw Error("internal: Jacobian shapes do not compose", ErrorKind::Internal);
  const Index n = a.n_;
  if (a.tokenwise_ && b.tokenwise_) {
    std::vector<Mat> out(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) out[static_cast<size_t>(i)].noalias() = a.blocks_[static_cast<size_t>(i)] * b.blocks_[static_cast<size_t>(i)];
    return Jacobian::tokenwise(std::move(out));
  }
  if (a.tokenwise_) {  // block row i of the result = A_i · (block row i of b)
    const Index ro = a.blocks_[0].rows(), ci = a.blocks_[0].cols();
    Mat m(n * ro, b.cols());
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i)
      m.middleRows(i * ro, ro).noalias() = a.blocks_[static_cast<size_t>(i)] * b.dense_.middleRows(i * ci, ci);
    return Jacobian::dense(std::move(m), n);
  }
  if (b.tokenwise_) {  // block column j of the result = (block column j of a) · B_j
    const Index ro = b.blocks_[0].rows(), co = b.blocks_[0].cols();
    Mat m(a.rows(), n * co);
#pragma omp parallel for schedule(static)
    for (Index j = 0; j < n; ++j)
      m.middleCols(j * co, co).noalias() = a.dense_.middleCols(j * ro, ro) * b.blocks_[static_cast<size_t>(j)];
    return Jacobian::dense(std::move(m), n);
  }
  Mat m(a.rows(), b.cols());
  m.noalias() = a.dense_ * b.dense_;
  return Jacobian::dense(std::move(m), n);
}

// token-wise a (square blocks) times a dense b given up: block row i of b becomes A_i · (block row i of b)
Jacobian operator*(const Jacobian& a, Jacobian&& b) {
  const bool in_place = a.tokenwise_ && !b.tokenwise_ && a.n_ == b.n_ && a.n_ > 0 && a.cols() == b.rows() &&
                        a.blocks_[0].rows() == a.blocks_[0].cols();
  if (!in_place) return a * static_cast<const Jacobian&>(b);
  const Index n = a.n_, d = a.blocks_[0].rows();
#pragma omp parallel
  {
    Mat row(d, b.cols());
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      row.noalias() = a.blocks_[static_cast<size_t>(i)] * b.dense_.middleRows(i * d, d);
      b.dense_.middleRows(i * d, d) = row;
    }
  }
  return std::move(b);
}

// a dense a given up times a token-wise b (square blocks): block column j of a becomes (block column j of a) · B_j
Jacobian operator*(Jacobian&& a, const Jacobian& b) {
  const bool in_place = !a.tokenwise_ && b.tokenwise_ && a.n_ == b.n_ && b.n_ > 0 && a.cols() == b.rows() &&
                        b.blocks_[0].rows() == b.blocks_[0].cols();
  if (!in_place) return static_cast<const Jacobian&>(a) * b;
  const Index n = b.n_, d = b.blocks_[0].rows();
#pragma omp parallel
  {
    Mat col(a.rows(), d);
#pragma omp for schedule(static)
    for (Index j = 0; j < n; ++j) {
      col.noalias() = a.dense_.middleCols(j * d, d) * b.blocks_[static_cast<size_t>(j)];
      a.dense_.middleCols(j * d, d) = col;
    }
  }
  return std::move(a);
}

Jacobian operator*(Jacobian&& a, Jacobian&& b) {
  if (!b.tokenwise_) return static_cast<const Jacobian&>(a) * std::move(b);
  return std::move(a) * static_cast<const Jacobian&>(b);
}

}  // namespace gradflow
