// checkpoint_format.hpp — which format a --weights checkpoint is in (private to src/io; read by checkpoint.cpp):
// --weights-format when given (checked against config.json's model_type), else config.json's model_type, else
// the tensor names (torch-encoder's layers.{i}.*, then each Hugging Face layout's, prefixed names first); and the
// prefix ("", "bert.", "transformer.", ...) a layout's names carry.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "io/checkpoint_files.hpp"
#include "io/hf_layouts.hpp"

namespace gradflow::io_detail {

// The format of the checkpoint at `path` ("torch-encoder" or a layout's): `format` ("auto" or a --weights-format
// value) and `config` (config.json, or null) as said above. Error naming what contradicts what, or listing the
// layouts gradflow reads when the names fit none.
std::string choose_format(const std::string& path, const std::string& format, const CheckpointFiles& f,
                          const nlohmann::json* config);

// The prefix of `layout` the names of `f` use; Error listing the names' roots and the layouts gradflow reads when
// no tensor has the layout's names.
std::string layout_prefix(const HfLayout& layout, const CheckpointFiles& f, const std::string& path);

}  // namespace gradflow::io_detail
