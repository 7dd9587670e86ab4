// optim.cpp — see optim.hpp; the arithmetic follows torch/optim/adam.py (_single_tensor_adam) line by line.
#include "gradflow/train/optim.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "gradflow/core/error.hpp"

namespace gradflow {

Adam::Adam(const std::vector<Mat*>& params, AdamOptions opts, std::vector<AdamScale> scales)
    : params_(params), scales_(std::move(scales)), o_(opts) {
  if (scales_.empty()) scales_.assign(params_.size(), AdamScale{});
  require(scales_.size() == params_.size(), "Adam: one scale per parameter; fix: internal error");
  for (const Mat* p : params_) {
    m_.push_back(Mat::Zero(p->rows(), p->cols()));
    v_.push_back(Mat::Zero(p->rows(), p->cols()));
  }
}

void Adam::step(const std::vector<const Mat*>& grads, double lr, std::vector<double>* delta_sq) {
  require(grads.size() == params_.size(), "Adam: gradient count differs from parameter count; fix: internal error");
  ++t_;
  const double b1 = o_.beta1, b2 = o_.beta2;
  const double bias_correction1 = 1.0 - std::pow(b1, static_cast<double>(t_));
  const double bias_correction2 = 1.0 - std::pow(b2, static_cast<double>(t_));
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  if (delta_sq) delta_sq->assign(params_.size(), 0.0);
  for (size_t i = 0; i < params_.size(); ++i) {
    const AdamScale& s = scales_[i];  // the param group's lr, eps, weight_decay (× 1 under sp: the same values)
    const double step_size = (lr * s.lr) / bias_correction1;
    const double eps = o_.eps * s.eps, weight_decay = o_.weight_decay * s.weight_decay;
    Mat& p = *params_[i];
    Mat& m = m_[i];
    Mat& v = v_[i];
    const Mat& graw = *grads[i];
    double dsq = 0;
    const Precision st = o_.storage;
    const auto store = [st](double x) { return st == Precision::F64 ? x : round_to(st, x); };
    for (Index r = 0; r < p.rows(); ++r)
      for (Index c = 0; c < p.cols(); ++c) {
        const double g = weight_decay != 0 ? store(graw(r, c) + weight_decay * p(r, c)) : graw(r, c);
        m(r, c) = store(m(r, c) + (1.0 - b1) * (g - m(r, c)));    // exp_avg.lerp_(grad, 1 - beta1)
        v(r, c) = store(v(r, c) * b2 + (1.0 - b2) * (g * g));     // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
        const double denom = std::sqrt(v(r, c)) / bias_correction2_sqrt + eps;
        const double before = p(r, c);
        p(r, c) = store(before + (-step_size) * (m(r, c) / denom));  // param.addcdiv_(exp_avg, denom, value=-step_size)
        const double delta = p(r, c) - before;
        dsq += delta * delta;
      }
    if (delta_sq) (*delta_sq)[i] = dsq;
  }
}

double clip_grad_norm(const std::vector<Mat*>& grads, double max_norm) {
  double sq = 0;
  for (const Mat* g : grads) {
    const double n = g->norm();
    sq += n * n;
  }
  const double total = std::sqrt(sq);
  if (max_norm > 0) {
    const double coef = max_norm / (total + 1e-6);
    if (coef < 1.0)
      for (Mat* g : grads) *g *= coef;
  }
  return total;
}

void validate_schedule(const std::string& kind) {
  require(kind == "constant" || kind == "linear" || kind == "inverse-sqrt",
          "unknown --schedule '" + kind + "'; fix: use inverse-sqrt, linear or constant");
}

double scheduled_lr(const std::string& kind, double base, long warmup, long steps, long t) {
  validate_schedule(kind);
  if (warmup > 0 && t <= warmup) return base * static_cast<double>(t) / static_cast<double>(warmup);
  if (kind == "constant") return base;
  if (kind == "linear") {
    const long span = std::max(1L, steps - warmup);
    return base * static_cast<double>(std::max(0L, steps - t)) / static_cast<double>(span);
  }
  return base * std::sqrt(static_cast<double>(std::max(warmup, 1L)) / static_cast<double>(t));
}

}  // namespace gradflow
