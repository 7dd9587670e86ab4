// analyze_over_training.cpp — see analyze_over_training.hpp.
#include "gradflow/commands/analyze_over_training.hpp"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <map>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"  // printable

namespace gradflow {

namespace fs = std::filesystem;

namespace {

bool is_checkpoint_folder(const fs::path& p) {
  std::error_code ec;
  for (const char* f : {"config.json", "model.safetensors", "model.safetensors.index.json"})
    if (fs::exists(p / f, ec)) return true;
  return false;
}

bool is_checkpoint_file(const fs::path& p) {
  const std::string name = p.filename().string();
  const auto ends = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  return ends(".safetensors") || ends(".safetensors.index.json");
}

bool has_glob(const std::string& v) { return v.find_first_of("*?[") != std::string::npos; }

// The matches of a glob pattern, sorted (glob(3): no shell, no command substitution).
std::vector<std::string> expand_glob(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
  std::vector<std::string> out;
  if (rc == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

TrainingCheckpoint checkpoint_at(const fs::path& p) {
  TrainingCheckpoint c;
  c.path = p.string();
  c.step = step_of(c.path);
  std::error_code ec;
  if (fs::is_regular_file(p, ec) && p.extension() == ".safetensors") {
    const fs::path input = p.parent_path() / (p.stem().string() + ".input.npy");  // train --save-every's x_0
    if (fs::is_regular_file(input, ec)) c.input = input.string();
  }
  return c;
}

// The checkpoints of one value: a checkpoint, or a folder of step-named checkpoints.
void add_value(const std::string& value, std::vector<TrainingCheckpoint>& out) {
  const fs::path p(value);
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    require(is_checkpoint_file(p), "--weights '" + value + "' is not a checkpoint (.safetensors or "
                                   ".safetensors.index.json); fix: name checkpoint files, folders, or a folder of them");
    out.push_back(checkpoint_at(p));
    return;
  }
  require(fs::is_directory(p, ec), "--weights '" + value + "' is neither a file nor a folder" +
                                       (has_glob(value) ? " and its pattern matches nothing" : "") +
                                       "; fix: check the path (a glob goes in quotes: --weights 'ck/step_*.safetensors')");
  if (is_checkpoint_folder(p)) {
    out.push_back(checkpoint_at(p));
    return;
  }
  size_t found = 0;  // a folder of checkpoints: step-named files and folders
  for (const fs::directory_entry& e : fs::directory_iterator(p, ec)) {
    const fs::path q = e.path();
    if (step_of(q.string()) < 0) continue;
    std::error_code sec;
    const fs::file_status st = fs::status(q, sec);  // through links
    // a step-named entry that is no checkpoint is refused by name, never skipped (files beside the checkpoints,
    // e.g. step_000100.input.npy, are not checkpoints by their extension and are skipped)
    if (sec || st.type() == fs::file_type::not_found)
      throw Error("--weights '" + io_detail::printable(value, 200) + "': '" + io_detail::printable(q.filename().string(), 80) + "' " +
                  (sec.value() == ELOOP ? "is a symbolic link loop" : "is a link to nothing (" + sec.message() + ")") +
                  "; fix: remove it, or point it at the checkpoint of that step");
    if (fs::is_directory(st) && !is_checkpoint_folder(q))
      throw Error("--weights '" + io_detail::printable(value, 200) + "': '" + io_detail::printable(q.filename().string(), 80) +
                  "' is step-named but not a checkpoint folder (no config.json with model.safetensors or an index); "
                  "fix: remove it from the folder, or name the checkpoints one by one");
    if ((fs::is_regular_file(st) && q.extension() == ".safetensors") || fs::is_directory(st)) {
      out.push_back(checkpoint_at(q));
      ++found;
    }
  }
  require(found > 0, "--weights '" + value + "' is a folder with neither a checkpoint (config.json, model.safetensors) "
                     "nor step-named checkpoints inside (step_000100.safetensors, step1000/); fix: name the "
                     "checkpoints, or the folder `gradflow train --save-every` wrote");
}

// The config fields that make two checkpoints the same architecture.
const char* const kArchitectureFields[] = {
    "weights_format", "placement", "layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "ffn", "activation",
    "norm", "norm_eps", "norm_offset", "causal", "final_norm", "rope", "rope_theta", "rotary_fraction", "qk_norm",
    "attn_softcap", "attn_scale", "bias", "qkv_bias", "seq_len"};

}  // namespace

long long step_of(const std::string& path) {
  fs::path p(path);
  if (p.filename().empty()) p = p.parent_path();  // "step1000/"
  std::string name = p.filename().string();
  for (const char* ext : {".safetensors.index.json", ".safetensors"})
    if (name.size() > std::string(ext).size() && name.compare(name.size() - std::string(ext).size(), std::string::npos, ext) == 0)
      name.resize(name.size() - std::string(ext).size());
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const size_t at = lower.rfind("step");
  if (at == std::string::npos) return -1;
  size_t k = at + 4;
  while (k < lower.size() && (lower[k] == '_' || lower[k] == '-')) ++k;
  const size_t first = k;
  while (k < lower.size() && std::isdigit(static_cast<unsigned char>(lower[k]))) ++k;
  if (k == first) return -1;
  size_t lead = first;  // leading zeros are padding (step_000100)
  while (lead + 1 < k && lower[lead] == '0') ++lead;
  require(k - lead <= 15, "--weights '" + io_detail::printable(path, 200) + "': its step number has " + std::to_string(k - lead) +
                              " digits, more than the 15 a report holds exactly; fix: name the checkpoint after its "
                              "step with at most 15 digits");
  return std::stoll(lower.substr(lead, k - lead));
}

std::vector<TrainingCheckpoint> training_checkpoints(const std::vector<std::string>& values) {
  std::vector<TrainingCheckpoint> out;
  for (const std::string& v : values) {
    std::error_code ec;
    if (has_glob(v) && !fs::exists(v, ec)) {
      const std::vector<std::string> matches = expand_glob(v);
      require(!matches.empty(), "--weights '" + v + "' matches no file or folder; fix: check the pattern");
      for (const std::string& m : matches) add_value(m, out);
    } else {
      add_value(v, out);
    }
  }
  if (out.size() > 1)
    for (const TrainingCheckpoint& c : out)
      require(c.step >= 0, "--weights '" + c.path + "': its name gives no training step, which orders the " +
                               std::to_string(out.size()) + " checkpoints; fix: name each after its step "
                               "(step_000100.safetensors as `gradflow train --save-every` writes, step1000/)");
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  for (size_t i = 1; i < out.size(); ++i)
    require(out[i].step != out[i - 1].step, "--weights '" + out[i - 1].path + "' and '" + out[i].path +
                                                "' are both step " + std::to_string(out[i].step) +
                                                "; fix: name each checkpoint once");
  return out;
}

bool names_training_checkpoints(const std::vector<std::string>& values) {
  if (values.size() != 1) return values.size() > 1;
  std::error_code ec;
  const std::string& v = values[0];
  if (has_glob(v) && !fs::exists(v, ec)) return true;
  return fs::is_directory(v, ec) && !is_checkpoint_folder(v);
}

nlohmann::ordered_json run_analyze_over_training(const AnalyzeRequest& r,
                                                 const std::vector<TrainingCheckpoint>& checkpoints,
                                                 const std::function<void(RunConfig&)>& rc_hook,
                                                 const std::function<void(size_t, const TrainingCheckpoint&)>& progress) {
  require(!checkpoints.empty(), "internal: no checkpoints to analyze");
  const ModelSettings& m = r.model;
  const bool own_input = m.given.count("input") || m.given.count("token-ids");
  // the same x_0 for every checkpoint: the user's, else the first checkpoint's saved one, else the seeded random one
  std::string input_from;
  std::string saved_input;
  if (m.given.count("input")) input_from = "--input '" + m.rc.input + "'";
  else if (m.given.count("token-ids")) input_from = "--token-ids";
  else if (!checkpoints.front().input.empty()) {
    saved_input = checkpoints.front().input;
    input_from = "'" + saved_input + "', saved beside the first checkpoint (the same x_0 for every step)";
  } else {
    input_from = "the random x_0 of --seed " + std::to_string(m.rc.init.seed);
  }
  nlohmann::ordered_json out;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  nlohmann::ordered_json first_config;
  std::string first_path;
  for (size_t i = 0; i < checkpoints.size(); ++i) {
    const TrainingCheckpoint& c = checkpoints[i];
    if (progress) progress(i, c);
    AnalyzeRequest one = r;
    set_model_option(one.model, "weights", c.path);
    if (!own_input && !saved_input.empty()) set_model_option(one.model, "input", saved_input);
    nlohmann::ordered_json report = run_analyze_request(one, [&](RunConfig& rc) {
      if (rc_hook) rc_hook(rc);
    });
    const nlohmann::ordered_json& cfg = report["config"];
    if (i == 0) {
      first_config = cfg;
      first_path = c.path;
    } else {
      for (const char* k : kArchitectureFields) {
        const bool a = first_config.contains(k), b = cfg.contains(k);
        if (a == b && (!a || first_config[k] == cfg[k])) continue;
        throw Error("--weights '" + c.path + "' (step " + std::to_string(c.step) + ") is another architecture than '" +
                    first_path + "': its " + k + " is " + (b ? cfg[k].dump() : std::string("unset")) + ", not " +
                    (a ? first_config[k].dump() : std::string("unset")) +
                    "; fix: analyze the checkpoints of one run (one architecture) together");
      }
    }
    list.push_back({{"step", c.step}, {"weights", c.path}, {"report", std::move(report)}});
  }
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const TrainingCheckpoint& c : checkpoints) steps.push_back(c.step);
  out["over_training"] = {{"checkpoints", checkpoints.size()}, {"steps", steps}, {"input", input_from}};
  out["config"] = first_config;
  out["checkpoints"] = std::move(list);
  return out;
}

}  // namespace gradflow
