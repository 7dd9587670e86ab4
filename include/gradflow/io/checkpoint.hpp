// checkpoint.hpp — what `--weights PATH [--weights-format F]` names, read into gradflow's own tensor names:
// a PyTorch nn.TransformerEncoder state_dict (torch-encoder, names as they are), or a Hugging Face checkpoint (a
// folder with config.json and model.safetensors or model.safetensors.index.json and its shards, or one .safetensors
// file) mapped block by block onto gradflow's block: BERT, RoBERTa (Post-LN), GPT-2 (Pre-LN causal), and the
// decoders Llama, Mistral, Qwen2, Qwen3, OLMo-2, Gemma-2 and GPT-NeoX/Pythia, whose config.json fixes every block
// option (grouped-query heads, RoPE, QK-norm, soft-caps, gated feed-forward, RMSNorm, parallel residual).
// Name maps: src/io/hf_layouts.cpp, hf_decoder_layouts.cpp; rules and messages: docs/formats.md.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gradflow/io/load_weights.hpp"
#include "gradflow/io/safetensors.hpp"
#include "gradflow/model/config.hpp"

namespace gradflow {

// What a checkpoint fixes besides the sizes its tensors show (unset: not fixed; the options decide).
struct CheckpointArch {
  std::string placement;                   // "post" (BERT, RoBERTa) | "pre" (GPT-2); "" for torch-encoder
  std::optional<bool> causal;              // GPT-2: true; BERT, RoBERTa: false
  std::optional<Index> heads;              // config.json num_attention_heads / n_head
  std::optional<Index> layers, d_model, d_ff;  // config.json's, checked against the tensors
  std::optional<Activation> activation;    // config.json hidden_act / activation_function, or the family's
  std::string activation_name;             // as the checkpoint spells it, e.g. "gelu_new"
  std::optional<double> norm_eps;          // layer_norm_eps / layer_norm_epsilon, or the family's default
  std::string source;                      // where these come from, for messages: "config.json 'dir/config.json'"

  // The decoder families (hf-llama ... hf-neox; `decoder` true): the block options config.json fixes, as gradflow's
  // model options (config.hpp), and what the analysis needs besides the block.
  bool decoder = false;
  Index kv_heads = 0, head_dim = 0;        // num_key_value_heads, head_dim (0: h, d/h)
  double rope_theta = 10000;               // rope_theta | rotary_emb_base
  double rotary_fraction = 1.0;            // partial_rotary_factor | rotary_pct
  QkNorm qk_norm = QkNorm::None;           // Qwen3 per head, OLMo-2 over the projection
  double attn_softcap = 0, attn_scale = 0; // attn_logit_softcapping; query_pre_attn_scalar (Gemma-2)
  double final_softcap = 0;                // final_logit_softcapping: logits <- C·tanh(logits/C) (--loss lm)
  FeedForwardKind ffn = FeedForwardKind::Mlp;
  bool bias = true, qkv_bias = false;      // every linear's bias; q, k, v's alone (Qwen2)
  NormKind norm = NormKind::LayerNorm;
  bool norm_offset = false;                // Gemma: scale 1 + w
  bool embed_scale_sqrt_d = false;         // Gemma: x_0 = √d · embedding
  bool tied_head = false;                  // tie_word_embeddings: the LM head is the token embedding
  Index sliding_window = 0;                // the window of the layers that slide (0: none does)
  std::string sliding_layers;              // which layers slide, for messages: "every layer", "layers 0, 2, 4, ..."
};

struct Checkpoint {
  std::string path;                        // as given to --weights (a file or a folder)
  std::string format;                      // "torch-encoder" | "hf-bert" | "hf-roberta" | "hf-gpt2" | "hf-llama" ...
  std::string config_path;                 // the config.json read, or ""
  std::vector<std::string> files;          // the safetensors files read (several for a sharded checkpoint)
  // Its content identity, of what was read: the SHA-256 of config.json's bytes and of every tensor loaded (its
  // gradflow name, the file's dtype, the shape and the float64 values), so a tensor never loaded is never read for
  // it, and the same weights re-sharded or renamed count as the same (checkpoint.cpp: checkpoint_sha256).
  std::string sha256;
  std::vector<SafeTensor> tensors;         // in gradflow's names: layers.{i}.self_attn.in_proj_weight, ..., norm.*
  std::map<std::string, std::string> source_names;  // gradflow name -> the checkpoint's tensor(s), HF formats
  std::vector<std::string> outside;        // the checkpoint's tensors outside the analyzed block stack
  CheckpointArch arch;
  // Read only when asked (with_embeddings): "word" (vocab, d), and when the family has them "position"
  // (max_positions, d; none for the RoPE decoders), "token_type" (types, d), "norm.weight", "norm.bias" (d); with
  // with_output_head and an untied head, "head" (vocab, d: lm_head / embed_out); with the first position id and
  // RoBERTa's padding_idx (-1: none).
  std::vector<SafeTensor> embeddings;
  std::map<std::string, std::string> embedding_names;  // role -> the checkpoint's tensor name
  Index position_offset = 0;
  Index padding_idx = -1;
};

// What read_checkpoint will hold, known from the headers before any tensor data is read (the memory guard refuses
// a load that does not fit: run/memory_estimate.hpp, checkpoint_memory).
struct CheckpointLoad {
  std::string path, format;
  double block_values = 0;      // doubles of Checkpoint::tensors (torch-encoder: every tensor of the file)
  double embedding_values = 0;  // doubles of Checkpoint::embeddings (read for --token-ids only)
  double largest_values = 0;    // the largest gradflow tensor, built (stacked, transposed) while its sources are held
  // The peak while reading: the kept tensors, one tensor being built, the read buffer (16 MiB, or less for small
  // tensors).
  double peak_bytes() const;
  // What the Checkpoint holds once read (a run keeps it: its model is a copy).
  double kept_bytes() const;
};

// The values of --weights-format: "auto" first.
const std::vector<std::string>& weights_formats();

// Reads `path` in `format` ("auto": config.json's model_type when there is one, else the tensor names). Reads
// each file's header first and then only the tensors of the block stack. Throws a one-line Error naming the
// file (and tensor) and the fix for every problem: unknown layout (listing what was recognized), a missing
// layer or tensor, a wrong shape, a config that contradicts the tensors, an index naming a missing shard.
// With `with_embeddings`, the embedding tensors are read too (for --token-ids). `before_reading` (when given) sees
// what the load will hold after every header is read and checked and before any tensor data is: it may throw to
// refuse a load that would not fit in memory. The peak is the tensors kept plus one tensor being built plus the
// read buffer (CheckpointLoad::peak_bytes; each source tensor is dropped once its gradflow tensor is built).
// With `with_output_head` (--loss lm) a decoder family's untied LM head is read too (embeddings role "head").
Checkpoint read_checkpoint(const std::string& path, const std::string& format = "auto", bool with_embeddings = false,
                           const std::function<void(const CheckpointLoad&)>& before_reading = {},
                           bool with_output_head = false);

// Copies every parameter of `store` from the checkpoint (load_params: a missing tensor or a wrong shape is an Error
// naming the checkpoint's own tensor); tensors the store has no parameter for are named in one warning on stderr.
void load_checkpoint_params(const Checkpoint& c, ParamStore& store);

// Bytes the checkpoint holds in double (its tensors and embeddings).
double checkpoint_kept_bytes(const Checkpoint& c);

// x_0 (n, d) for `ids` through the checkpoint's embeddings, as the family computes it: BERT word + position
// (0, 1, ...) + token type 0, then the embedding LayerNorm (eps of the checkpoint); RoBERTa the same with
// positions padding_idx + 1, + 2, ... (a padding token gets padding_idx); GPT-2 wte + wpe. Error naming the id
// and the vocabulary size, or the sequence length and the number of positions, when they do not fit.
// word_scale multiplies the word embedding (--embed-scale).
Mat embed_tokens(const Checkpoint& c, const std::vector<int64_t>& ids, double word_scale = 1.0);
// The position id of each of `ids` (the checks of embed_tokens, without the embedding: run before the memory
// estimate, so too many ids are refused as such).
std::vector<Index> token_positions(const Checkpoint& c, const std::vector<int64_t>& ids);

// The options the user gave that a checkpoint may also fix (unset: not given). Checked against it.
struct GivenArch {
  std::optional<std::string> placement;  // --placement
  std::optional<Index> heads;            // --heads
  std::optional<Activation> activation;  // --activation
  bool causal = false;                   // --causal
  std::optional<NormKind> norm;          // --norm
  // the other block options given explicitly (names without dashes: "rope-theta", "kv-heads", "arch", ...): a Hugging
  // Face checkpoint fixes them all, so each is refused
  std::vector<std::string> block_options;
};

// Sets cfg's sizes (apply_checkpoint_sizes) and, for a Hugging Face format, its placement, causality, heads,
// activation, norm and eps from the checkpoint (a decoder family: every block option, apply_decoder_arch). A given option that differs from the checkpoint, or a
// config.json value that differs from the tensors, is an Error naming both values.
void apply_checkpoint(const Checkpoint& c, const GivenSizes& sizes, const GivenArch& arch, ModelConfig& cfg);

// The block options a decoder family's CheckpointArch fixes, set on cfg (placement, causal, heads, kv-heads, head
// dim, RoPE, QK-norm, soft-cap, logit scale, feed-forward, biases, norm, eps, offset, embedding scale, final norm).
void apply_decoder_arch(const CheckpointArch& a, ModelConfig& cfg);

// n tokens through a checkpoint whose layers slide: Error when n exceeds the window (gradflow's attention sees every
// earlier token), naming the layers and the longest sequence that is exact.
void check_sliding_window(const Checkpoint& c, Index n);

// Writes `tensors` (a model's parameters in gradflow's names: to_tensors) as the Hugging Face checkpoint folder
// `dir` (created when missing): model.safetensors (F64, the family's names and layouts; no embeddings or heads)
// and config.json (sizes, heads, activation, eps from `cfg`; a decoder family's every block option). Error when
// the model is not the family's block (placement, causality, final norm, norm kind, residual scale 1, no extra
// parameters; a decoder family: config.json read back must give the model's every block option).
void write_hf_checkpoint(const std::string& dir, const std::string& format, const std::vector<SafeTensor>& tensors,
                         const ModelConfig& cfg);

}  // namespace gradflow
