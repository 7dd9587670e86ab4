// model_files.hpp — the two commands that write a model's own numbers to a file rather than a report, callable
// without the command line: `gradflow jacobian` (the explicit Jacobian dx_to/dx_from at the network's own forward
// pass, .npy or .csv) and `gradflow export` (the parameters, as `analyze` with the same options would use them, as
// safetensors in PyTorch's nn.TransformerEncoder names or a Hugging Face checkpoint folder; docs/formats.md).
#pragma once
#include <optional>
#include <string>

#include "gradflow/core/types.hpp"
#include "gradflow/run/analyze.hpp"  // RunConfig

namespace gradflow {

// dx_to/dx_from, shape (n*d, n*d) row-major (resi-dual: the state is the pair [x_a | x_d], so (n*2d, n*2d) between
// blocks and (n*d, n*2d) to the output; docs/math.md §12); `to` unset: the network output y (m = L). Refused up
// front when the dense Jacobians do not fit in --max-memory; a NaN/Inf is an Error with the fix for where the run's
// numbers came from.
Mat model_jacobian(RunConfig rc, Index from, std::optional<Index> to);

// Writes model_jacobian to `out` as `format` ("npy" | "csv"; "": from the file name, .csv or else npy), refused
// before anything runs when `out` would overwrite one of the run's inputs.
void write_model_jacobian(const RunConfig& rc, Index from, std::optional<Index> to, const std::string& out,
                          const std::string& format);

// Writes the model's parameters to `out`: format "torch-encoder" (one safetensors file) or "hf-bert" | "hf-roberta"
// | "hf-gpt2" (a folder, created when missing, with config.json and model.safetensors). Refused up front when the
// parameters and their copy do not fit in --max-memory, or when a file written would be one of the run's inputs.
void export_model(const RunConfig& rc, const std::string& out, const std::string& format);

}  // namespace gradflow
