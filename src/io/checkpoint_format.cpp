// checkpoint_format.cpp — the format of a --weights checkpoint and its layout's prefix (see checkpoint_format.hpp).
#include "io/checkpoint_format.hpp"

#include <optional>
#include <set>

#include "io/checkpoint_errors.hpp"

namespace gradflow::io_detail {

namespace {

using json = nlohmann::json;

// The prefix of `layout` the names use ("transformer." ...), or nullopt. Only non-empty prefixes when
// `prefixed_only`.
std::optional<std::string> prefix_of(const HfLayout& layout, const std::vector<SafeTensor>& headers,
                                     bool prefixed_only) {
  for (const std::string& p : layout.prefixes) {
    if (prefixed_only && p.empty()) continue;
    for (const SafeTensor& t : headers)
      if (layer_of(t.name, p + layout.layer_stem, nullptr) >= 0) return p;
  }
  return std::nullopt;
}

bool looks_like_torch_encoder(const std::vector<SafeTensor>& headers) {
  for (const SafeTensor& t : headers)
    if (layer_of(t.name, "layers.", nullptr) >= 0) return true;
  return false;
}

std::string known_layouts() {
  std::string s = "torch-encoder (layers.{i}.self_attn.in_proj_weight, ...)";
  for (const HfLayout& l : hf_layouts())
    s += ", " + l.format + " (" + (l.prefixes.size() > 1 ? "[" + l.prefixes[1] + "]" : "") + l.layer_stem + "{i}.*)";
  return s;
}

// The distinct first components of the names ("bert", "cls", ...), at most 8, for an error message.
std::string name_roots(const std::vector<SafeTensor>& headers) {
  std::set<std::string> roots;
  for (const SafeTensor& t : headers) roots.insert(printable(t.name.substr(0, t.name.find('.')), 40));
  std::string s;
  size_t k = 0;
  for (const std::string& r : roots) {
    if (k == 8) return s + ", ...";
    s += (k++ ? ", '" : "'") + r + ".*'";
  }
  return s.empty() ? "no tensors" : s;
}

}  // namespace

std::string choose_format(const std::string& path, const std::string& format, const CheckpointFiles& f,
                          const json* config) {
  std::string by_config;
  if (config && config->contains("model_type")) {
    const json& mt = (*config)["model_type"];
    const std::string type = mt.is_string() ? mt.get<std::string>() : mt.dump();
    for (const HfLayout& l : hf_layouts())
      if (l.config.model_type == type) by_config = l.format;
    if (by_config.empty() && (format == "auto" || format != "torch-encoder")) {
      std::string known;
      for (const HfLayout& l : hf_layouts()) known += (known.empty() ? "'" : ", '") + l.config.model_type + "'";
      if (format == "auto")
        fail("config.json " + in_quotes(f.config), "model_type " + in_quotes(type) + " is not one gradflow reads (" + known + " are)",
             "gradflow analyzes these model types; for another model, save its blocks as an nn.TransformerEncoder "
             "state_dict");
    }
  }
  if (format != "auto") {
    if (!by_config.empty() && by_config != format)
      fail("--weights-format " + format, "contradicts config.json " + in_quotes(f.config) + " (model_type of " + by_config + ")",
           "drop --weights-format (config.json decides) or pass --weights-format " + by_config);
    return format;
  }
  if (!by_config.empty()) return by_config;
  if (looks_like_torch_encoder(f.headers)) return "torch-encoder";
  for (bool prefixed_only : {true, false})
    for (const HfLayout& l : hf_layouts())
      if (prefix_of(l, f.headers, prefixed_only)) return l.format;
  fail("--weights " + in_quotes(path), "no known layout: the tensor names start with " + name_roots(f.headers),
       "pass --weights-format; gradflow reads " + known_layouts());
}

std::string layout_prefix(const HfLayout& l, const CheckpointFiles& f, const std::string& path) {
  const std::optional<std::string> prefix = prefix_of(l, f.headers, false);
  if (!prefix)
    fail("--weights " + in_quotes(path), "no tensor is named " + l.layer_stem + "{i}.* (with an optional " +
                                          (l.prefixes.size() > 1 ? in_quotes(l.prefixes[1]) : std::string("")) +
                                          " prefix) as " + l.format + " needs; the names start with " +
                                          name_roots(f.headers),
         "pass the right --weights-format; gradflow reads " + known_layouts());
  return *prefix;
}

}  // namespace gradflow::io_detail
