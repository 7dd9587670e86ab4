// fields.hpp — the vocabulary of gradflow's outputs: the names of the fields its reports hold and that its tables,
// CSVs and figures read back, each defined once here; and the quantities those outputs label (the metrics), with
// their text label for terminal tables and their label for figures. A producer writes report[fields::kGradNorm];
// the table, the CSV writer and the plot read the same constant. docs/report-schema.md (analyze, train,
// train-sweep) and docs/experiments.md (compare, sweep) describe every field.
#pragma once
#include <string>

namespace gradflow::fields {

// ---- analyze report: top level, layers[l], summary ----------------------------------------------------------
inline constexpr const char* kConfig = "config";
inline constexpr const char* kLayers = "layers";  // analyze: the per-layer array; config, groups, runs: the depth L
inline constexpr const char* kSummary = "summary";
inline constexpr const char* kOutputGradNorm = "output_grad_norm";
inline constexpr const char* kOutputRms = "output_rms";
inline constexpr const char* kLoss = "loss";  // top level: the loss value; config: its kind (dot | half-sq)

inline constexpr const char* kIndex = "index";
inline constexpr const char* kGradNorm = "grad_norm";
// two-stream schemes (ResiDual): ‖dL/dx_a,l‖ and ‖dL/dx_d,l‖ beside grad_norm, the pair's; input_grad_norm ‖dL/dx_0‖
inline constexpr const char* kGradNormStreamA = "grad_norm_x_a";
inline constexpr const char* kGradNormStreamD = "grad_norm_x_d";
inline constexpr const char* kInputGradNorm = "input_grad_norm";
inline constexpr const char* kParamGradNorms = "param_grad_norms";
inline constexpr const char* kActivationRms = "activation_rms";
// --precision (run/precision_compare.hpp): top level and layers[l] "precision" objects; the gradient at that
// precision against float64's
inline constexpr const char* kPrecision = "precision";
inline constexpr const char* kGradRelError = "grad_rel_error";        // ‖g_p − g‖ / ‖g‖, g_p unscaled
inline constexpr const char* kZeroFraction = "zero_fraction";            // entries 0 at precision, not in float64
inline constexpr const char* kUnderflowFraction = "underflow_fraction";  // those whose float64 value (times the loss
                                                                         // scale) is below the type's smallest normal
inline constexpr const char* kSubnormalFraction = "subnormal_fraction";  // entries below the type's smallest normal
inline constexpr const char* kMaxAbsGrad = "max_abs_grad";             // max |entry| as stored (times the loss scale)
inline constexpr const char* kParamGradRelErrors = "param_grad_rel_errors";
inline constexpr const char* kLossScale = "loss_scale";
inline constexpr const char* kBlockJacobian = "block_jacobian";
inline constexpr const char* kProductJacobian = "product_jacobian";
inline constexpr const char* kSpectralNorm = "spectral_norm";
inline constexpr const char* kMinSingularValue = "min_singular_value";
inline constexpr const char* kFrobeniusNorm = "frobenius_norm";  // exact (explicit, streamed) or a string (matrix-free)
inline constexpr const char* kSpectrum = "spectrum";
inline constexpr const char* kSingularValues = "singular_values";

// Token geometry of x_l and of y (analyses/token_geometry.cpp, docs/math.md §10).
inline constexpr const char* kTokenGeometry = "token_geometry";
inline constexpr const char* kOutputTokenGeometry = "output_token_geometry";
inline constexpr const char* kMeanCosine = "mean_cosine";
inline constexpr const char* kMinusIdentityRelativeFrobenius = "minus_identity_relative_frobenius";  // ‖B_l − I‖_F/√N
// the report of a run's checkpoints (analyze --weights A B ...): checkpoints[] = {step, weights, report}
inline constexpr const char* kCheckpoints = "checkpoints";
inline constexpr const char* kOverTraining = "over_training";
inline constexpr const char* kReport = "report";
inline constexpr const char* kRankOneDistance = "rank_one_distance";
inline constexpr const char* kStableRank = "stable_rank";
// Attention probabilities of block l (analyses/attention_entropy.cpp): means over heads, and per head in kHeads.
inline constexpr const char* kAttention = "attention";  // also branch_ratio's key of the attention unit
inline constexpr const char* kEntropy = "entropy";
inline constexpr const char* kMaxEntropy = "max_entropy";
inline constexpr const char* kSelfAttention = "self_attention";
// ‖c·b‖_F / ‖s ⊙ x‖_F of each residual unit of block l (analyses/branch_ratios.cpp), keyed by its branch kind.
inline constexpr const char* kBranchRatio = "branch_ratio";
inline constexpr const char* kFeedForward = "feed_forward";
// The attention weights' gradient norms of block l (analyses/attention_gradients.cpp): kQuery, kKey, kValue, kOut.
inline constexpr const char* kAttentionGradNorms = "attention_grad_norms";
inline constexpr const char* kQuery = "query";
inline constexpr const char* kKey = "key";
inline constexpr const char* kOut = "out";
inline constexpr const char* kQkGradShare = "qk_grad_share";

inline constexpr const char* kBottomToTopGradRatio = "bottom_to_top_grad_ratio";  // also a train log field
inline constexpr const char* kGradGrowthRatePerLayer = "grad_growth_rate_per_layer";
inline constexpr const char* kGradGrowthFactorPerLayer = "grad_growth_factor_per_layer";
inline constexpr const char* kBottomProductRmsGain = "bottom_product_rms_gain";
inline constexpr const char* kPerLayerRmsGainProduct = "per_layer_rms_gain_product";

// The parameter whose gradient Xiong et al.'s Theorem 1 bounds: the FFN's second weight W_2.
inline constexpr const char* kFfnOutWeight = "linear2.weight";

// Output sensitivity to parameters (analyses/output_sensitivity.cpp, docs/math.md §11): top-level object.
inline constexpr const char* kOutputSensitivity = "output_sensitivity";
inline constexpr const char* kFirstOrder = "first_order";
inline constexpr const char* kFirstOrderStderr = "first_order_stderr";
inline constexpr const char* kFiniteDifference = "finite_difference";
inline constexpr const char* kFiniteDifferenceStderr = "finite_difference_stderr";
inline constexpr const char* kSensitivityProbes = "sensitivity_probes";  // config
inline constexpr const char* kSensitivitySize = "sensitivity_size";      // config

// ---- config (the run configuration every report carries) ------------------------------------------------------
inline constexpr const char* kPlacement = "placement";
inline constexpr const char* kDModel = "d_model";
inline constexpr const char* kHeads = "heads";  // config: the head count; layers[l].attention: the per-head array
inline constexpr const char* kDFf = "d_ff";
inline constexpr const char* kSeqLen = "seq_len";
inline constexpr const char* kNorm = "norm";
inline constexpr const char* kActivation = "activation";
inline constexpr const char* kInit = "init";
inline constexpr const char* kInitScale = "init_scale";
inline constexpr const char* kResidualScale = "residual_scale";
inline constexpr const char* kCausal = "causal";
inline constexpr const char* kMode = "mode";
inline constexpr const char* kSeed = "seed";

// ---- compare / sweep report (experiments/experiment.hpp) ------------------------------------------------------
inline constexpr const char* kExperiment = "experiment";  // "compare" | "sweep"
inline constexpr const char* kSpec = "spec";
inline constexpr const char* kSeeds = "seeds";
inline constexpr const char* kRepetitions = "repetitions";
inline constexpr const char* kBaseSeed = "base_seed";
inline constexpr const char* kPlacements = "placements";
inline constexpr const char* kParam = "param";  // the swept option
inline constexpr const char* kValues = "values";
inline constexpr const char* kValue = "value";  // a group's swept value, as given; attention_grad_norms: W_v
inline constexpr const char* kX = "x";          // that value as a number (the axis of fits and figures)
inline constexpr const char* kParam2 = "param2";    // a 2-D sweep's second swept option, its values, a group's
inline constexpr const char* kValues2 = "values2";  // value as given and as a number
inline constexpr const char* kValue2 = "value2";
inline constexpr const char* kX2 = "x2";
inline constexpr const char* kAt = "at";  // a 2-D sweep's fit: {the other option: its value held fixed}
inline constexpr const char* kGroups = "groups";
inline constexpr const char* kScalars = "scalars";
inline constexpr const char* kPerLayer = "per_layer";
inline constexpr const char* kRatios = "ratios";
inline constexpr const char* kNumerator = "numerator";
inline constexpr const char* kDenominator = "denominator";
inline constexpr const char* kMetrics = "metrics";
inline constexpr const char* kRatioOfMeans = "ratio_of_means";
inline constexpr const char* kPaired = "paired";            // a ratio's paired comparison (statistics.hpp)
inline constexpr const char* kVerdict = "verdict";          // its verdict: greater | less | equal | undetermined
inline constexpr const char* kComparisons = "comparisons";  // pairs of one placement along one other axis
inline constexpr const char* kAxis = "axis";
inline constexpr const char* kStatistics = "statistics";    // the report's statement of its intervals
inline constexpr const char* kVerdicts = "verdicts";        // a claims spec's statements decided (claim_verdicts.hpp)
inline constexpr const char* kFits = "fits";
inline constexpr const char* kXValues = "x_values";
inline constexpr const char* kExponent = "exponent";
inline constexpr const char* kExponentOfMeans = "exponent_of_means";
// A statistic over seeds (experiments/aggregate.hpp stat_json).
inline constexpr const char* kMean = "mean";
inline constexpr const char* kStd = "std";
inline constexpr const char* kN = "n";
// Scopes of the scalar metrics: the first and last layer's per-layer metrics ("bottom.grad_norm").
inline constexpr const char* kBottom = "bottom";
inline constexpr const char* kTop = "top";

// ---- train report (train/train.hpp): log[] entries, task, final ------------------------------------------------
inline constexpr const char* kLog = "log";
inline constexpr const char* kStep = "step";
inline constexpr const char* kTrainLoss = "train_loss";
inline constexpr const char* kEvalLoss = "eval_loss";
inline constexpr const char* kLr = "lr";
inline constexpr const char* kAccuracy = "accuracy";
inline constexpr const char* kTrainAccuracy = "train_accuracy";
inline constexpr const char* kGradNormTotal = "grad_norm_total";
inline constexpr const char* kFinalNormInputRms = "final_norm_input_rms";
inline constexpr const char* kUpdateRatios = "update_ratios";  // per parameter group
inline constexpr const char* kUpdateRatio = "update_ratio";    // per layer
inline constexpr const char* kNormInputRms = "norm_input_rms";
inline constexpr const char* kTask = "task";
inline constexpr const char* kName = "name";
inline constexpr const char* kLossFloor = "loss_floor";
inline constexpr const char* kFinal = "final";
inline constexpr const char* kDiverged = "diverged";  // null, or {step, layer, quantity}
inline constexpr const char* kWarmup = "warmup";
inline constexpr const char* kSchedule = "schedule";

// ---- train-sweep report (train/sweep.hpp) ---------------------------------------------------------------------
inline constexpr const char* kGrid = "grid";
inline constexpr const char* kRuns = "runs";
inline constexpr const char* kFinalEvalLoss = "final_eval_loss";
inline constexpr const char* kFinalTrainLoss = "final_train_loss";
inline constexpr const char* kConverged = "converged";
inline constexpr const char* kCurve = "curve";
inline constexpr const char* kGradNorms = "grad_norms";
inline constexpr const char* kCells = "cells";
inline constexpr const char* kDivergenceRate = "divergence_rate";
inline constexpr const char* kFinalEvalLossMean = "final_eval_loss_mean";
inline constexpr const char* kFinalEvalLossStd = "final_eval_loss_std";
inline constexpr const char* kMeanEvalCurve = "mean_eval_curve";
inline constexpr const char* kSmallestConvergingWarmup = "smallest_converging_warmup";
inline constexpr const char* kLargestStableLr = "largest_stable_lr";
inline constexpr const char* kLargestNonDivergingLr = "largest_non_diverging_lr";
inline constexpr const char* kPair = "pair";
inline constexpr const char* kSmallestConvergingWarmupRatio = "smallest_converging_warmup_ratio";
inline constexpr const char* kLargestStableLrRatio = "largest_stable_lr_ratio";

// ---- CSV columns that are not report fields ---------------------------------------------------------------------
namespace csv {
inline constexpr const char* kDepth = "depth";    // compare/sweep: a group's layers
inline constexpr const char* kLayer = "layer";    // a layer's index; empty for scalar metrics
inline constexpr const char* kMetric = "metric";
inline constexpr const char* kValue = "value";    // train: the metric's value at that step
inline constexpr const char* kDivergedStep = "diverged_step";
inline constexpr const char* kParamGradNorm = "param_grad_norm";  // train: metric "param_grad_norm:<parameter>"
}  // namespace csv

// ---- metrics: the quantities tables and figures label ------------------------------------------------------------
// A metric's name is its path in a report, joined with dots: a per-layer field ("grad_norm",
// "block_jacobian.spectral_norm") or a compare/sweep scalar metric ("summary.bottom_to_top_grad_ratio",
// "top.param_grad_norms.linear2.weight"; experiments/aggregate.hpp).
struct Metric {
  const char* scope;  // "" (a per-layer field or a top-level number), kSummary, kBottom or kTop
  const char* field;
  const char* key;    // "" or the field's own key (spectral_norm of block_jacobian, a parameter of param_grad_norms)
  const char* text;   // label in terminal tables (ASCII)
  const char* plot;   // label on figures (gnuplot enhanced text: italic symbols as in docs/math.md)
};

namespace metrics {
// Per-layer quantities (analyze's table and the per-layer figures).
inline constexpr Metric kLayerGradNorm{"", kGradNorm, "", "||dL/dx_l||",
                                       "‖∂{/:Italic L}/∂{/:Italic x}_{/:Italic l}‖"};
inline constexpr Metric kBlockSpectralNorm{"", kBlockJacobian, kSpectralNorm, "||B_l||_2", "‖{/:Italic B_l}‖_2"};
inline constexpr Metric kProductSpectralNorm{"", kProductJacobian, kSpectralNorm, "||P_l||_2", "‖{/:Italic P_l}‖_2"};
inline constexpr Metric kBlockMinusIdentity{"", kBlockJacobian, kMinusIdentityRelativeFrobenius, "||B_l - I||_F/sqrt(N)",
                                            "‖{/:Italic B_l} − {/:Italic I}‖_F / √{/:Italic N}"};
inline constexpr Metric kBlockFrobeniusNorm{"", kBlockJacobian, kFrobeniusNorm, "||B_l||_F", "‖{/:Italic B_l}‖_F"};
inline constexpr Metric kProductFrobeniusNorm{"", kProductJacobian, kFrobeniusNorm, "||P_l||_F", "‖{/:Italic P_l}‖_F"};
inline constexpr Metric kProductMinSingularValue{"", kProductJacobian, kMinSingularValue, "smin(P_l)",
                                                 "σ_{min}({/:Italic P_l})"};
// Scalar metrics of compare/sweep reports (the comparison table and the sensitivity and claims figures).
inline constexpr Metric kBottomGradNorm{kBottom, kGradNorm, "", "||dL/dx_0||", "‖∂{/:Italic L}/∂{/:Italic x}_0‖"};
inline constexpr Metric kTopGradNorm{kTop, kGradNorm, "", "||dL/dx_top||",
                                     "‖∂{/:Italic L}/∂{/:Italic x}_{{/:Italic L}-1}‖"};
inline constexpr Metric kGradRatio{kSummary, kBottomToTopGradRatio, "", "bottom/top",
                                   "‖∂{/:Italic L}/∂{/:Italic x}_0‖ / ‖∂{/:Italic L}/∂{/:Italic x}_{{/:Italic L}-1}‖"};
inline constexpr Metric kGrowthFactor{kSummary, kGradGrowthFactorPerLayer, "", "factor/layer",
                                      "‖∂{/:Italic L}/∂{/:Italic x}_{/:Italic l}‖ factor per layer"};
inline constexpr Metric kGrowthRate{kSummary, kGradGrowthRatePerLayer, "", "rate/layer",
                                    "slope of ln‖∂{/:Italic L}/∂{/:Italic x}_{/:Italic l}‖ per layer"};
inline constexpr Metric kTopW2GradNorm{kTop, kParamGradNorms, kFfnOutWeight, "top ||dL/dW2||",
                                       "‖∂{/:Italic L}/∂{/:Italic W}_2‖, top layer"};
inline constexpr Metric kBottomW2GradNorm{kBottom, kParamGradNorms, kFfnOutWeight, "bottom ||dL/dW2||",
                                          "‖∂{/:Italic L}/∂{/:Italic W}_2‖, bottom layer"};
inline constexpr Metric kTopActivationRms{kTop, kActivationRms, "", "rms(x_top)", "RMS of {/:Italic x}_{{/:Italic L}-1}"};
inline constexpr Metric kBottomProductRmsGain{kSummary, fields::kBottomProductRmsGain, "", "rms gain P_0",
                                              "RMS gain of {/:Italic P}_0"};
inline constexpr Metric kPerLayerRmsGainProduct{kSummary, fields::kPerLayerRmsGainProduct, "", "prod rms B_l",
                                                "Π_{/:Italic l} RMS gain of {/:Italic B_l}"};
inline constexpr Metric kOutputGradNorm{"", fields::kOutputGradNorm, "", "||dL/dy||", "‖∂{/:Italic L}/∂{/:Italic y}‖"};
inline constexpr Metric kOutputRms{"", fields::kOutputRms, "", "rms(y)", "RMS of {/:Italic y}"};
// Token geometry of each block input x_l (per layer), of the top block's input and of the output (rank collapse).
inline constexpr Metric kLayerTokenCosine{"", kTokenGeometry, kMeanCosine, "token cos(x_l)",
                                          "mean token cosine of {/:Italic x_l}"};
inline constexpr Metric kLayerRankOneDistance{"", kTokenGeometry, kRankOneDistance, "rank-1 dist(x_l)",
                                              "distance of {/:Italic x_l} to rank one"};
inline constexpr Metric kLayerStableRank{"", kTokenGeometry, kStableRank, "stable rank(x_l)",
                                         "stable rank of {/:Italic x_l}"};
inline constexpr Metric kTopTokenCosine{kTop, kTokenGeometry, kMeanCosine, "top token cos",
                                        "mean token cosine of {/:Italic x}_{{/:Italic L}-1}"};
inline constexpr Metric kTopRankOneDistance{kTop, kTokenGeometry, kRankOneDistance, "top rank-1 dist",
                                            "distance of {/:Italic x}_{{/:Italic L}-1} to rank one"};
inline constexpr Metric kTopStableRank{kTop, kTokenGeometry, kStableRank, "top stable rank",
                                       "stable rank of {/:Italic x}_{{/:Italic L}-1}"};
inline constexpr Metric kOutputTokenCosine{"", kOutputTokenGeometry, kMeanCosine, "output token cos",
                                           "mean token cosine of {/:Italic y}"};

inline constexpr const Metric* kAll[] = {
    &kLayerGradNorm,    &kBlockSpectralNorm, &kProductSpectralNorm, &kProductMinSingularValue,
    &kBottomGradNorm,   &kTopGradNorm,       &kGradRatio,           &kGrowthFactor,
    &kGrowthRate,       &kTopW2GradNorm,     &kBottomW2GradNorm,    &kTopActivationRms,
    &kBottomProductRmsGain, &kPerLayerRmsGainProduct, &kOutputGradNorm, &kOutputRms,
    &kTopTokenCosine,   &kTopRankOneDistance, &kTopStableRank,      &kOutputTokenCosine,
    &kLayerTokenCosine, &kLayerRankOneDistance, &kLayerStableRank, &kBlockMinusIdentity,
};
}  // namespace metrics

// "top.param_grad_norms.linear2.weight": scope, field and key joined with dots (empty parts left out).
inline std::string metric_name(const Metric& m) {
  std::string s = m.scope;
  for (const char* part : {m.field, m.key})
    if (*part) s += (s.empty() ? "" : ".") + std::string(part);
  return s;
}

// The metric of that name, or nullptr when it has no labels here.
inline const Metric* find_metric(const std::string& name) {
  for (const Metric* m : metrics::kAll)
    if (metric_name(*m) == name) return m;
  return nullptr;
}

}  // namespace gradflow::fields
