// types.hpp — every Eigen alias gradflow uses, in one place.
// Storage order: ROW-MAJOR throughout, matching PyTorch tensors and safetensors. An activation of n
// tokens of width d is a Mat of shape (n, d); it is flattened row-major, so index i*d + a is token i,
// feature a. A Jacobian dy/dx is (n_out*d_out, n_in*d_in) with J[i*d + a, j*d + b] = dy[i,a]/dx[j,b].
// Tangents and cotangents may hold k stacked copies of an activation: shape (k*n, d), copy c in rows
// [c*n, (c+1)*n). Every jvp/vjp accepts such stacks (so k probes run as one BLAS-3 sweep).
#pragma once
#include <Eigen/Dense>
#include <cstdint>

namespace gradflow {

using Index = Eigen::Index;
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::VectorXd;        // column vector
using RowVec = Eigen::RowVectorXd;  // one token, one bias
using MatRef = Eigen::Ref<Mat>;
using ConstMatRef = Eigen::Ref<const Mat>;
using MatMap = Eigen::Map<Mat>;
using ConstMatMap = Eigen::Map<const Mat>;

}  // namespace gradflow
