// run_inputs.hpp — the one way `analyze`, `jacobian` and `export` build what a run needs from a RunConfig:
// the sizes fixed by --weights and --input, the model's parameters (loaded from --weights, or drawn by --init
// and then Admin's profiling on x_0), the input x_0 (--input, or seeded N(0,1)) and the output cotangent g
// (--cotangent, or none: AnalysisContext then draws the seeded g of --loss dot).
#pragma once
#include <optional>

#include "gradflow/run/analyze.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "gradflow/run/lm_loss.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/report/atomic_file.hpp"

namespace gradflow {

struct RunInputs {
  Mat x0;                        // (n, d) the network input
  std::optional<Mat> cotangent;  // (n, d) dL/dy from --cotangent
  OutputLoss lm_loss;            // --loss lm: the tied-head next-token loss on y (empty otherwise)
  const Mat* cotangent_or_null() const { return cotangent ? &*cotangent : nullptr; }
  const OutputLoss* lm_loss_or_null() const { return lm_loss ? &lm_loss : nullptr; }
};

// The files a run reads, named by their options (--weights, --input, --cotangent, --token-ids FILE.npy), for
// check_outputs: no output may overwrite one of them.
std::vector<NamedPath> run_input_paths(const RunConfig& rc);

// Reads rc.weights, rc.input and rc.cotangent (those named) once; returns rc.files when it already holds these paths.
std::shared_ptr<const RunFiles> load_run_files(const RunConfig& rc);

// Reads the sizes the files fix into rc (reading them first when rc.files does not hold them): L, d, d_ff and the final norm from rc.weights; n (and d, when neither
// --weights nor --d-model fixes it) from rc.input. An explicitly given size that differs is an Error naming
// both values. Also refuses --cotangent without --loss dot. Call before rc.model.validate().
// A Hugging Face checkpoint also fixes the placement, causality, heads, activation and LayerNorm eps (checked
// against `arch`, the options given).
void apply_file_sizes(RunConfig& rc, const GivenSizes& given, const GivenArch& arch = {});

// Fills `model` (constructed from rc.model) with its parameters and returns its input and cotangent. Unknown
// tensors of the checkpoint are named in a warning on stderr. Errors name the file and the tensor.
RunInputs prepare_run(const RunConfig& rc, Model& model);

}  // namespace gradflow
