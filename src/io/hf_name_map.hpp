// hf_name_map.hpp — a Hugging Face checkpoint's tensors mapped onto gradflow's names by its layout's entry
// (hf_layouts.hpp; private to src/io, read by checkpoint.cpp): every tensor name classified (block, final norm,
// outside the stack, or an error), then only the block stack's tensors (and the embeddings when asked) read and
// built into gradflow's tensors (q, k, v stacked, Conv1D weights transposed).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "gradflow/io/checkpoint.hpp"
#include "io/checkpoint_files.hpp"
#include "io/hf_layouts.hpp"

namespace gradflow::io_detail {

struct MappedNames {
  std::vector<std::string> needed;   // the checkpoint's tensors to read
  std::vector<std::string> outside;  // not part of the block stack
  Index layers = 0;
  bool final_norm = false;
};

// Every name is a block tensor of some rule, an ignored buffer, a final-norm tensor, or outside the stack (any
// name not under the layer stem). A name under the layer stem that no rule uses is an error: the block has
// something gradflow's block has not.
MappedNames classify_names(const HfLayout& l, const std::string& prefix, const CheckpointFiles& f,
                           const std::string& path);

// The embedding tensors (role -> the checkpoint's name), each required to exist; Error otherwise. With `with_head`
// and an untied head (`tied` false), the LM head too (role "head").
std::map<std::string, std::string> embedding_names(const HfLayout& l, const std::string& prefix,
                                                   const CheckpointFiles& f, const std::string& path,
                                                   bool with_head = false, bool tied = false);

// Reads the tensors `m` needs (and ck.embedding_names') from f's shards and fills ck.tensors (gradflow's names, in
// the layout's order, layer by layer; a rule marked optional and wholly absent is skipped), ck.source_names and
// ck.embeddings. Needs ck.arch (GPT-NeoX's regrouping reads its heads). Error naming the tensor that is missing
// or has a wrong shape.
void map_hf(Checkpoint& ck, const HfLayout& l, const std::string& prefix, const CheckpointFiles& f,
            const MappedNames& m);

}  // namespace gradflow::io_detail
