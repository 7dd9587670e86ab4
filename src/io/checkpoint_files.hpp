// checkpoint_files.hpp — the files a --weights checkpoint is made of, and every tensor's header (private to src/io;
// read by checkpoint.cpp): a folder (config.json, and model.safetensors or model.safetensors.index.json with its
// shards), an index file, or one .safetensors file. Also the small JSON files among them (config.json, the index),
// read as objects.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/io/safetensors.hpp"

namespace gradflow::io_detail {

struct CheckpointFiles {
  std::string config;                                // config.json or ""
  std::vector<std::string> shards;                   // safetensors files
  std::vector<SafeTensor> headers;                   // every tensor (no data), all files
  std::unordered_map<std::string, size_t> shard_of;  // tensor name -> index into shards
};

// The files of the checkpoint at `path` and the headers of all its tensors (never their data). Error naming the
// file: a folder without model.safetensors or an index, an index naming a missing shard or a tensor its shard does
// not hold (or not naming one it does), a tensor in two shards.
CheckpointFiles find_checkpoint_files(const std::string& path);

// A small JSON file (config.json, the shard index) as an object; Error naming the file otherwise.
nlohmann::json read_json_object(const std::string& path, const std::string& what);

}  // namespace gradflow::io_detail
