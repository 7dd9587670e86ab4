// precision_compare.hpp — `--precision f32|bf16|f16`: the analyzed model cast to that type (every stored value rounded
// to it, products in float32: kernels/precision_kernels.hpp), run on the same weights, input and cotangent as the
// float64 run, and its gradients measured against float64's, layer by layer and parameter by parameter
// (docs/report-schema.md "precision", docs/math.md §16). The float64 report around it is unchanged.
#pragma once
#include <functional>

#include <nlohmann/json.hpp>

#include "gradflow/model/config.hpp"
#include "gradflow/run/context.hpp"

namespace gradflow {

// ref: the float64 run, whose context kept its parameter gradients (opts.keep_param_grads) and whose opts give the
// precision and loss scale; init: the weights a model held per block draws (weights_per_block: as ref's model);
// output_loss: --loss lm's, as for ref. Writes body["precision"] and every body["layers"][l]["precision"].
// An overflow of the low-precision forward pass is an Error (Numeric) naming the layer; one of the backward pass is
// reported (the layers' "overflow"), as PyTorch's GradScaler would see it.
void add_precision_comparison(const AnalysisContext& ref, const InitConfig& init, bool weights_per_block,
                              const Mat& x0, const std::function<double(const Mat& y, Mat& dL_dy)>* output_loss,
                              nlohmann::ordered_json& body);

}  // namespace gradflow
