// arch_presets.hpp — `--arch`: the blocks of today's open models as values of the model options (issue 32). A preset
// sets each of its options that the command line (or spec) did not give: an option given explicitly wins, wherever it
// stands. The report's config lists every resulting option (report/config_json.cpp), not the preset's name.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gradflow/run/model_settings.hpp"

namespace gradflow {

struct ArchPreset {
  std::string name;  // --arch NAME
  std::string note;  // the model family, and what of it gradflow does not model
  std::vector<std::pair<std::string, std::string>> options;  // option name (no dashes) -> value ("true" for a flag)
};

// classic, llama, qwen2, qwen3, olmo2, gemma2, neox (docs/placements.md, "Decoder blocks").
const std::vector<ArchPreset>& arch_presets();
// The preset `name`, or Error listing the known names.
const ArchPreset& find_arch(const std::string& name);
// Sets every option of the preset s.arch that s.given lacks (without marking it given).
void apply_arch(ModelSettings& s);

}  // namespace gradflow
