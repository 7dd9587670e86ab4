// checkpoint_files.cpp — the files of a --weights checkpoint and its tensors' headers (see checkpoint_files.hpp).
#include "io/checkpoint_files.hpp"

#include <cerrno>
#include <filesystem>
#include <map>

#include "io/checkpoint_errors.hpp"
#include "io/json_nesting.hpp"

namespace gradflow::io_detail {

namespace {

namespace fs = std::filesystem;

// Whether the folder entry `p` is there: false when nothing is; Error when an entry is there but cannot be followed
// (a symbolic link loop, a link to nothing), which must not pass for a missing file (a config.json that is a
// broken link would otherwise be read as no config.json at all).
bool present(const fs::path& p) {
  std::error_code ec;
  const fs::file_status target = fs::status(p, ec);
  if (!ec && target.type() != fs::file_type::not_found) return true;
  const bool loop = ec.value() == ELOOP;
  const fs::file_status entry = fs::symlink_status(p, ec);  // the entry itself, not followed
  if (entry.type() == fs::file_type::not_found || entry.type() == fs::file_type::none) return false;
  fail(in_quotes(p.string()), loop ? "is a symbolic link loop" : "is a symbolic link to nothing",
       "point the link at the file, or remove it");
}
using json = nlohmann::json;

constexpr uint64_t kMaxJsonBytes = 64u << 20;  // config.json and the index are a few kB; refuse garbage early
constexpr int kMaxJsonDepth = 64;               // ... and nest a few levels

void add_headers(CheckpointFiles& f, size_t shard) {
  for (SafeTensor& t : read_safetensors_header(f.shards[shard])) {
    if (!f.shard_of.emplace(t.name, shard).second)
      fail("safetensors file " + in_quotes(f.shards[shard]), "tensor " + in_quotes(t.name) + " is also in " +
                                                              in_quotes(f.shards[f.shard_of[t.name]]),
           "each tensor must be in one shard; re-save the checkpoint");
    f.headers.push_back(std::move(t));
  }
}

// model.safetensors.index.json: {"metadata": {...}, "weight_map": {"tensor name": "shard file name", ...}}.
void read_index(CheckpointFiles& f, const std::string& index_path) {
  const std::string where = "shard index " + in_quotes(index_path);
  const json idx = read_json_object(index_path, "shard index");
  if (!idx.contains("weight_map") || !idx["weight_map"].is_object())
    fail(where, "has no \"weight_map\" object", "restore the model.safetensors.index.json saved with the model");
  const fs::path dir = fs::path(index_path).parent_path();
  std::map<std::string, size_t> shard_index;
  std::map<std::string, std::string> listed;  // tensor -> shard file name
  for (auto it = idx["weight_map"].begin(); it != idx["weight_map"].end(); ++it) {
    if (!it.value().is_string())
      fail(where, "\"weight_map\" entry " + in_quotes(it.key()) + " is not a file name", "restore the index file");
    const std::string shard = it.value().get<std::string>();
    if (shard.empty() || shard == "." || shard == ".." || shard.find('/') != std::string::npos)
      fail(where, "shard name " + in_quotes(shard) + " is not a file name in the index's folder",
           "shards must sit beside the index; restore the index file");
    listed[it.key()] = shard;
    if (shard_index.emplace(shard, shard_index.size()).second) {
      const std::string p = (dir / shard).string();
      if (!present(p))
        fail(where, "names shard " + in_quotes(shard) + " (for tensor " + in_quotes(it.key()) + "), which does not exist",
             "download every shard the index lists into " + in_quotes(dir.empty() ? std::string(".") : dir.string()));
    }
  }
  if (listed.empty()) fail(where, "\"weight_map\" is empty", "restore the index file");
  f.shards.assign(shard_index.size(), "");
  for (const auto& [name, i] : shard_index) f.shards[i] = (dir / name).string();
  for (size_t i = 0; i < f.shards.size(); ++i) add_headers(f, i);
  for (const auto& [tensor, shard] : listed) {
    const auto it = f.shard_of.find(tensor);
    if (it == f.shard_of.end() || f.shards[it->second] != (dir / shard).string())
      fail(where, "maps tensor " + in_quotes(tensor) + " to shard " + in_quotes(shard) + ", which does not hold it",
           "the index and the shards do not belong together; download them again");
  }
  for (const SafeTensor& t : f.headers)
    if (!listed.count(t.name))
      fail(where, "does not list tensor " + in_quotes(t.name) + " of shard " + in_quotes(f.shards[f.shard_of[t.name]]),
           "the index and the shards do not belong together; download them again");
}

}  // namespace

// A small JSON file (config.json, the shard index) as an object; Error naming the file otherwise.
json read_json_object(const std::string& path, const std::string& what) {
  const io_detail::InputFile file(path);
  if (file.size() > kMaxJsonBytes)
    fail(what + " " + in_quotes(path), "file of " + std::to_string(file.size()) + " bytes is too large to be one",
         "check that the file is the model's " + what);
  std::string text(static_cast<size_t>(file.size()), '\0');
  file.read_at(0, text.size(), &text[0]);
  if (json_nesting(text, kMaxJsonDepth) > kMaxJsonDepth)  // a config.json nests 3 or 4 deep
    fail(what + " " + in_quotes(path), "nests deeper than " + std::to_string(kMaxJsonDepth) + " levels",
         "restore the file saved with the model");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(what + " " + in_quotes(path), "not valid JSON (" + printable(e.what(), 120) + ")",
         "restore the file saved with the model");
  }
  if (!j.is_object()) fail(what + " " + in_quotes(path), "not a JSON object", "restore the file saved with the model");
  return j;
}

CheckpointFiles find_checkpoint_files(const std::string& path) {
  CheckpointFiles f;
  std::error_code ec;
  const auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (fs::is_directory(path, ec)) {
    const fs::path dir(path);
    if (present(dir / "config.json")) f.config = (dir / "config.json").string();
    if (present(dir / "model.safetensors")) {
      f.shards = {(dir / "model.safetensors").string()};
      add_headers(f, 0);
    } else if (present(dir / "model.safetensors.index.json")) {
      read_index(f, (dir / "model.safetensors.index.json").string());
    } else {
      const bool bin = fs::exists(dir / "pytorch_model.bin", ec);
      fail("--weights " + in_quotes(path), "the folder has neither model.safetensors nor model.safetensors.index.json" +
                                            std::string(bin ? " (pytorch_model.bin is not read)" : ""),
           bin ? "convert it: safetensors.torch.save_file(torch.load('pytorch_model.bin'), 'model.safetensors')"
               : "name the folder of a Hugging Face checkpoint, or a .safetensors file");
    }
  } else if (ends_with(path, ".index.json")) {
    read_index(f, path);
  } else {
    f.shards = {path};
    add_headers(f, 0);
  }
  return f;
}

}  // namespace gradflow::io_detail
