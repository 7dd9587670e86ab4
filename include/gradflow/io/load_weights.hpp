// load_weights.hpp — a PyTorch nn.TransformerEncoder state_dict (as read by read_safetensors) turned into
// gradflow's model: the sizes it fixes (L from the `layers.{i}.` names, d and d_ff from the shapes, a final
// norm iff `norm.*` tensors exist) and every parameter copied by name with its shape checked.
// Names: ../shared/REFERENCES.md; rules and messages: docs/formats.md ("Loading a checkpoint").
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gradflow/io/safetensors.hpp"
#include "gradflow/model/config.hpp"
#include "gradflow/core/params.hpp"

namespace gradflow {

// What a state_dict says about the model's sizes (heads, placement, activation, causality it cannot say).
struct CheckpointSizes {
  Index layers = 0;         // 1 + the largest i among the `layers.{i}.` names, e.g. 6
  Index d_model = 0;        // layers.0.self_attn.in_proj_weight is (3d, d), e.g. 64
  Index d_ff = 0;           // layers.0.linear1.weight is (d_ff, d), e.g. 256
  bool final_norm = false;  // some tensor is named norm.* (norm.weight, norm.bias)
};

// Throws Error naming `path` and the tensor when the names or shapes do not describe an encoder.
CheckpointSizes checkpoint_sizes(const std::vector<SafeTensor>& tensors, const std::string& path);

// The size options the user gave explicitly (unset: the files decide). Checked against the files.
struct GivenSizes {
  std::optional<Index> layers;     // --layers
  std::optional<Index> d_model;    // --d-model
  std::optional<Index> d_ff;       // --d-ff
  std::optional<Index> seq_len;    // --seq-len (checked against --input)
  std::optional<bool> final_norm;  // --no-final-norm => false
};

// Sets cfg.layers, d_model, d_ff and final_norm from `s`. An explicitly given size that differs is an Error
// naming the option, both values and the file: "--layers 4 contradicts the 6 layers of 'ckpt.safetensors' ...".
void apply_checkpoint_sizes(const CheckpointSizes& s, const GivenSizes& given, const std::string& path,
                            ModelConfig& cfg);

// Copies every parameter of `store` from the tensor of the same name (PyTorch shape must equal Param::shape;
// a 0-d tensor fills a shape-[1] parameter). A missing tensor or a wrong shape throws Error naming `path` and
// the tensor. Returns the names of the tensors the store has no parameter for (the caller warns), file order.
// `sources` (a Hugging Face checkpoint's) names the checkpoint's own tensor(s) behind each name in the messages.
std::vector<std::string> load_params(ParamStore& store, const std::vector<SafeTensor>& tensors,
                                     const std::string& path,
                                     const std::map<std::string, std::string>* sources = nullptr);

}  // namespace gradflow
