// precision_compare.cpp — see precision_compare.hpp.
#include "gradflow/run/precision_compare.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/kernels/precision_kernels.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/model/backward_by_block.hpp"
#include "gradflow/model/block_weights.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/report/gradient_profile.hpp"
#include "gradflow/report/number_text.hpp"

namespace gradflow {
namespace {

using Json = nlohmann::ordered_json;

// The loss scales a dynamic search tries: 2^k for k in [-kMaxScaleExponent, kMaxScaleExponent] (float32's and
// bfloat16's range is 2^±128: beyond it every scale under- or overflows everything)
constexpr int kMaxScaleExponent = 128;

// ‖a/s − b‖ / ‖b‖ (a the stored low-precision values, s the loss scale); 0 when both are zero, NaN (null in the
// report) when only b is. Without temporaries (these are gradients of the size of the weights): each sum of squares
// taken relative to its largest term, so nothing over- or underflows
double relative_error(const Mat& a, double s, const Mat& b) {
  const Index count = b.size();
  const double* x = a.data();
  const double* y = b.data();
  double max_d = 0, max_b = 0;
  for (Index i = 0; i < count; ++i) {
    max_d = std::max(max_d, std::abs(x[i] / s - y[i]));
    max_b = std::max(max_b, std::abs(y[i]));
  }
  if (max_b == 0) return max_d == 0 ? 0.0 : NAN;
  if (max_d == 0) return 0.0;
  double sd = 0, sb = 0;
  for (Index i = 0; i < count; ++i) {
    const double d = (x[i] / s - y[i]) / max_d, e = y[i] / max_b;
    sd += d * d;
    sb += e * e;
  }
  return max_d / max_b * std::sqrt(sd / sb);
}

// The low-precision model: the float64 model's parameters rounded to the type (autocast: to float32, the master
// weights; a model whose weight matrices are held per block draws them as the float64 run does and rounds them when
// a pass reaches the block).
class LowPrecisionModel {
 public:
  LowPrecisionModel(const Model& ref, Precision p, bool autocast, const InitConfig& init, bool per_block)
      : p_(stored_type(p, autocast)),
        kernels_(make_model_kernels(p, autocast, ref.kernels())),
        model_(ref.config(), *kernels_.main, per_block ? WeightResidency::PerBlock : WeightResidency::Resident,
               kernels_.branch.get()),
        of_block_(static_cast<size_t>(ref.layers())) {
    auto& dst = model_.params().all();
    const auto& src = ref.params().all();
    for (size_t i = 0; i < src.size(); ++i) {
      if (src[i].held) {
        dst[i].value = src[i].value;
        round_in_place(p_, dst[i].value);
      }
      const Index l = model_.block_of_param(static_cast<int>(i));
      (l >= 0 ? of_block_[static_cast<size_t>(l)] : outside_).push_back(static_cast<int>(i));
    }
    if (per_block) weights_.emplace(model_, init);
    hook_ = [this](Index l, bool done) {
      if (!weights_) return;
      weights_->hook()(l, done);
      if (!done)
        for (int i : of_block_[static_cast<size_t>(l)]) round_in_place(p_, model_.params()[i]);
    };
  }
  const Model& model() const { return model_; }
  Precision stored() const { return p_; }  // the type of the parameters, their .grad, the model's input and output
  const Model::BlockHook& hook() const { return hook_; }
  const std::vector<int>& params_of_block(Index l) const { return of_block_[static_cast<size_t>(l)]; }
  const std::vector<int>& params_outside() const { return outside_; }

 private:
  Precision p_;  // what the parameters are stored as
  ModelKernels kernels_;
  Model model_;
  std::vector<std::vector<int>> of_block_;
  std::vector<int> outside_;
  std::optional<BlockWeights> weights_;
  Model::BlockHook hook_;
};

// One backward pass of the low-precision model from the cotangent dy (already scaled and rounded): dL/dx_l as
// stored, and each parameter's gradient (rounded to the stored type: the .grad) handed to `take(i, grad)` block by
// block, then freed. Returns whether every value was finite.
bool backward(const LowPrecisionModel& lp, const Trace& t, const Mat& dy, std::vector<Mat>& dx,
              const std::function<void(int, Mat&)>& take) {
  const Precision p = lp.stored();
  const Model& m = lp.model();
  ParamGrads grads(m.params(), false);
  bool finite = true;
  backward_by_block(m, t, dy, grads, &dx, &lp.hook(), [&](int i, Mat& g) {
    round_in_place(p, g);
    finite = finite && all_finite(g);
    take(i, g);
  });
  for (const Mat& g : dx) finite = finite && all_finite(g);
  return finite;
}

// The cotangent at precision for loss scale s: s·dL/dy rounded to the type
Mat scaled_cotangent(Precision p, const Mat& dy, double s) {
  Mat g = s * dy;
  round_in_place(p, g);
  return g;
}

Json layer_stats(const Mat& stored, double scale, const Mat& exact, const PrecisionLimits& lim) {
  Index zero = 0, under = 0, sub = 0;
  double max_abs = 0;
  for (Index i = 0; i < stored.size(); ++i) {
    const double v = stored.data()[i], a = std::abs(v), e = exact.data()[i];
    if (v == 0 && e != 0) {
      ++zero;
      if (std::abs(scale * e) < lim.min_normal) ++under;  // lost to the range, not to a cancellation
    }
    if (a != 0 && a < lim.min_normal) ++sub;
    if (!(a <= max_abs)) max_abs = a;  // NaN stays
  }
  const double count = static_cast<double>(std::max<Index>(stored.size(), 1));
  Json j;
  const bool finite = all_finite(stored);
  j[fields::kGradNorm] = finite ? finite_or_null(frobenius_norm(stored) / scale) : Json(nullptr);
  j[fields::kGradRelError] = finite ? finite_or_null(relative_error(stored, scale, exact)) : Json(nullptr);
  j[fields::kZeroFraction] = static_cast<double>(zero) / count;
  j[fields::kUnderflowFraction] = static_cast<double>(under) / count;
  j[fields::kSubnormalFraction] = static_cast<double>(sub) / count;
  j[fields::kMaxAbsGrad] = finite_or_null(max_abs);
  j["overflow"] = !finite;
  return j;
}

}  // namespace

void add_precision_comparison(const AnalysisContext& ref, const InitConfig& init, bool weights_per_block,
                              const Mat& x0, const std::function<double(const Mat& y, Mat& dL_dy)>* output_loss,
                              Json& body) {
  const Precision p = ref.opts.precision;
  const bool autocast = ref.opts.autocast;
  const Precision wide = stored_type(p, autocast);  // the input, the cotangent, the stream under autocast
  const std::string flag = precision_option(ref.opts) + " ", name = to_string(p), option = flag + name;
  const PrecisionLimits lim = limits(p);
  const Model& model = ref.model;
  const Index L = model.layers();
  const auto& params = model.params().all();
  for (size_t i = 0; i < params.size(); ++i)
    if (ref.grads[static_cast<int>(i)].size() == 0)
      throw Error("internal: a --precision comparison without the float64 run's gradient of " + params[i].name,
                  ErrorKind::Internal);
  const LowPrecisionModel lp(model, p, autocast, init, weights_per_block);

  // the forward pass on the input rounded to the type (autocast: float32, the embedding's type)
  Mat x = x0;
  round_in_place(wide, x);
  const Trace t = lp.model().forward(x, &lp.hook());
  for (Index l = 1; l <= L; ++l)
    if (!all_finite(t.x[static_cast<size_t>(l)]))
      throw Error("at " + option + " the forward pass overflows (Inf/NaN) at the output of layer " +
                      std::to_string(l - 1) + " (the largest finite " + name + " is " + number_text(lim.max_finite) +
                      "); fix: use " + flag + "bf16 (float32's range) or a smaller --init-scale",
                  ErrorKind::Numeric);
  if (!all_finite(t.y))
    throw Error("at " + option + " the final norm's output has Inf/NaN; fix: use " + flag + "bf16",
                ErrorKind::Numeric);

  // the cotangent: --loss dot's g as in float64; half-sq and lm from the low-precision output (in float64, then
  // rounded: a loss computed in float32 and stored in the type)
  Mat dy;
  double loss = 0;
  if (ref.opts.loss == "dot") {
    dy = ref.dL_dy;
    loss = dy.cwiseProduct(t.y).sum();
  } else if (ref.opts.loss == "half-sq") {
    dy = t.y;
    loss = 0.5 * t.y.squaredNorm();
  } else {
    if (!output_loss) throw Error("internal: --loss lm without its loss", ErrorKind::Internal);
    loss = (*output_loss)(t.y, dy);
  }

  // the loss scale: as given, or the largest power of two whose backward pass stays finite
  double scale = ref.opts.loss_scale.value;
  std::vector<Mat> dx;
  const auto ignore = [](int, Mat&) {};
  if (ref.opts.loss_scale.dynamic) {
    const auto clean = [&](int k) {
      const double s = std::ldexp(1.0, k);
      return backward(lp, t, scaled_cotangent(wide, dy, s), dx, ignore);
    };
    int lo = -kMaxScaleExponent, hi = kMaxScaleExponent;
    if (!clean(lo))
      throw Error("at " + option + " the backward pass overflows even with loss scale 2^-" +
                      std::to_string(kMaxScaleExponent) + "; fix: use " + flag + "bf16 or a smaller --init-scale",
                  ErrorKind::Numeric);
    if (clean(hi)) {
      lo = hi;
    } else {
      while (hi - lo > 1) {  // clean(lo), not clean(hi)
        const int mid = lo + (hi - lo) / 2;
        (clean(mid) ? lo : hi) = mid;
      }
    }
    scale = std::ldexp(1.0, lo);
  }

  std::vector<double> rel_by_param(params.size(), NAN);  // each parameter gradient's, unscaled
  // per block: its parameter-gradient entries, and those zero where float64's is not and S times it is below the
  // type's smallest normal (lost to the range; under autocast the matrix products' weight gradients are of the type)
  std::vector<Index> param_entries(static_cast<size_t>(L), 0), param_under(static_cast<size_t>(L), 0);
  const bool finite = backward(lp, t, scaled_cotangent(wide, dy, scale), dx, [&](int i, Mat& g) {
    rel_by_param[static_cast<size_t>(i)] = all_finite(g) ? relative_error(g, scale, ref.grads[i]) : NAN;
    const Index l = lp.model().block_of_param(i);
    if (l < 0) return;
    const Mat& e = ref.grads[i];
    for (Index j = 0; j < g.size(); ++j)
      if (g.data()[j] == 0 && e.data()[j] != 0 && std::abs(scale * e.data()[j]) < lim.min_normal)
        ++param_under[static_cast<size_t>(l)];
    param_entries[static_cast<size_t>(l)] += g.size();
  });

  Json& layers = body[fields::kLayers];
  std::vector<double> norms;
  Json underflow_layers = Json::array(), param_underflow_layers = Json::array();
  double max_rel = 0;
  for (Index l = 0; l < L; ++l) {
    // dL/dx_l is stored in the stream's type: float32 under autocast
    Json s = layer_stats(dx[static_cast<size_t>(l)], scale, ref.dx[static_cast<size_t>(l)], limits(wide));
    const auto entries = param_entries[static_cast<size_t>(l)], under = param_under[static_cast<size_t>(l)];
    s["param_underflow_fraction"] = static_cast<double>(under) / static_cast<double>(std::max<Index>(entries, 1));
    if (under > 0) param_underflow_layers.push_back(l);
    const std::string prefix = Model::layer_prefix(l);
    Json pe = Json::object();
    for (int i : lp.params_of_block(l))
      pe[params[static_cast<size_t>(i)].name.substr(prefix.size())] = finite_or_null(rel_by_param[static_cast<size_t>(i)]);
    s[fields::kParamGradRelErrors] = std::move(pe);
    norms.push_back(s[fields::kGradNorm].is_number() ? s[fields::kGradNorm].get<double>() : NAN);
    if (s[fields::kUnderflowFraction].get<double>() > 0) underflow_layers.push_back(l);
    if (s[fields::kGradRelError].is_number()) max_rel = std::max(max_rel, s[fields::kGradRelError].get<double>());
    else max_rel = NAN;
    layers[static_cast<size_t>(l)][fields::kPrecision] = std::move(s);
  }
  Json head = Json::object();
  for (int i : lp.params_outside()) head[params[static_cast<size_t>(i)].name] = finite_or_null(rel_by_param[static_cast<size_t>(i)]);

  Json& out = body[fields::kPrecision];
  out["type"] = name;
  out["regime"] = autocast ? "autocast" : "cast";  // CUDA autocast's op lists, or the model cast (model.to(dtype))
  out[fields::kLossScale] = scale;
  out["loss_scale_dynamic"] = ref.opts.loss_scale.dynamic;
  out["max_finite"] = lim.max_finite;
  out["min_normal"] = lim.min_normal;
  out["min_subnormal"] = lim.min_subnormal;
  out[fields::kLoss] = finite_or_null(loss);
  out["head_" + std::string(fields::kParamGradRelErrors)] = std::move(head);
  Json& s = out[fields::kSummary];
  s[fields::kBottomToTopGradRatio] = finite_or_null(bottom_to_top_ratio(norms));
  s["max_grad_rel_error"] = finite_or_null(max_rel);
  s["underflow_layers"] = std::move(underflow_layers);
  s["param_underflow_layers"] = std::move(param_underflow_layers);
  s["overflow"] = !finite;
}

}  // namespace gradflow
