// model_settings.cpp — the table of model options (model_settings.hpp).
#include "gradflow/run/model_settings.hpp"

#include <algorithm>
#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "gradflow/run/arch_presets.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/core/decimal.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/io/npy.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow {
namespace {

using Set = std::function<void(ModelSettings&, const std::string&)>;

// The value of a flag: "true" (as given on the command line) or "false" (a spec's false).
bool parse_flag(const std::string& text, const std::string& option) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw Error("--" + option + " takes no value (got '" + text + "'); fix: give it alone, e.g. --" + option);
}

std::string existing_file_or_folder(const std::string& text, const std::string& option) {
  std::error_code ec;
  require(std::filesystem::is_regular_file(text, ec) || std::filesystem::is_directory(text, ec),
          "--" + option + " '" + text + "' is neither a file nor a folder; fix: check the path and its permissions");
  return text;
}

std::string existing_file(const std::string& text, const std::string& option) {
  std::error_code ec;
  require(std::filesystem::is_regular_file(text, ec),
          "--" + option + " '" + text + "' is not a file; fix: check the path and its permissions");
  return text;
}

// "101,7592,102": non-negative whole numbers separated by commas.
std::vector<int64_t> parse_token_ids(const std::string& text) {
  std::vector<int64_t> ids;
  size_t a = 0;
  while (a <= text.size()) {
    size_t b = text.find(',', a);
    if (b == std::string::npos) b = text.size();
    const std::string item = text.substr(a, b - a);
    const bool digits = !item.empty() && item.size() <= 12 && item.find_first_not_of("0123456789") == std::string::npos;
    require(digits, "--token-ids '" + text + "': '" + item + "' is not a token id; fix: give non-negative whole numbers "
                    "separated by commas, e.g. --token-ids 101,7592,2088,102");
    ids.push_back(std::stoll(item));
    a = b + 1;
  }
  return ids;
}

// --token-ids FILE.npy: a 1-D int64 or int32 array of ids, (n,) or (1, n) (a batch of one, as a tokenizer's
// return_tensors="np" gives it).
std::vector<int64_t> token_ids_from_npy(const std::string& path) {
  const NpyInts a = read_npy_ints(path);
  std::string shape;
  for (size_t i = 0; i < a.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape[i]);
  const bool ok = (a.shape.size() == 1 || (a.shape.size() == 2 && a.shape[0] == 1)) && !a.data.empty();
  require(ok, "npy file '" + path + "' (--token-ids): shape (" + shape + (a.shape.size() == 1 ? ",)" : ")") +
                  " is not (n,) or (1, n) with n > 0; fix: save one sequence of ids, e.g. "
                  "np.save(path, np.array(ids, dtype=np.int64))");
  for (size_t k = 0; k < a.data.size(); ++k)
    require(a.data[k] >= 0, "npy file '" + path + "' (--token-ids): id " + std::to_string(a.data[k]) + " (token " +
                                std::to_string(k) + ") is negative; fix: use ids from the checkpoint's tokenizer");
  return a.data;
}

ModelOption value(std::string name, std::string help, std::string default_text, bool training, Set set) {
  ModelOption o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.default_text = std::move(default_text);
  o.training = training;
  o.set = std::move(set);
  return o;
}

ModelOption flag(std::string name, std::string help, bool training, std::function<void(ModelSettings&, bool)> set) {
  ModelOption o;
  o.name = name;
  o.help = std::move(help);
  o.flag = true;
  o.training = training;
  o.set = [name, set](ModelSettings& s, const std::string& v) { set(s, parse_flag(v, name)); };
  return o;
}

std::string text_of(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::vector<ModelOption> make_table() {
  const ModelSettings d;  // the defaults
  std::vector<ModelOption> t;
  t.push_back(value("arch", "classic | llama | qwen2 | qwen3 | olmo2 | gemma2 | neox: a preset of the block's options "
                    "(an option given explicitly wins; docs/placements.md)", d.arch, true,
                    [](ModelSettings& s, const std::string& v) {
                      find_arch(v);  // Error listing the presets
                      s.arch = v;
                    }));
  t.push_back(value("placement", "where the norm sits (see `gradflow placements`)", d.rc.model.placement, false,
                    [](ModelSettings& s, const std::string& v) { s.rc.model.placement = v; }));
  t.push_back(value("layers", "number of blocks L", std::to_string(d.rc.model.layers), false,
                    [](ModelSettings& s, const std::string& v) { s.rc.model.layers = parse_integer(v, "layers"); }));
  t.push_back(value("d-model", "width d", std::to_string(d.rc.model.d_model), true,
                    [](ModelSettings& s, const std::string& v) { s.rc.model.d_model = parse_integer(v, "d-model"); }));
  t.push_back(value("heads", "attention heads h (must divide d unless --head-dim is given)", std::to_string(d.rc.model.heads), true,
                    [](ModelSettings& s, const std::string& v) { s.rc.model.heads = parse_integer(v, "heads"); }));
  t.push_back(value("kv-heads", "key/value heads K of grouped-query attention (divides h; default h)", "", true,
                    [](ModelSettings& s, const std::string& v) {
                      s.rc.model.kv_heads = parse_integer(v, "kv-heads");
                      require(s.rc.model.kv_heads > 0, "--kv-heads " + v + " must be positive; fix: e.g. --kv-heads 2");
                    }));
  t.push_back(value("head-dim", "width e of every head (default d/h): q (h*e, d), k and v (K*e, d), out_proj (d, h*e)",
                    "", true, [](ModelSettings& s, const std::string& v) {
                      s.rc.model.head_dim = parse_integer(v, "head-dim");
                      require(s.rc.model.head_dim > 0, "--head-dim " + v + " must be positive; fix: e.g. --head-dim 64");
                    }));
  t.push_back(flag("rope", "rotary positions on q and k (rotate-half pairing: Llama, Qwen, Gemma, OLMo, NeoX)", true,
                   [](ModelSettings& s, bool b) { s.rc.model.rope = b; }));
  t.push_back(value("rope-theta", "RoPE base theta", text_of(d.rc.model.rope_theta), true,
                    [](ModelSettings& s, const std::string& v) { s.rc.model.rope_theta = parse_number(v, "rope-theta"); }));
  t.push_back(value("rotary-fraction", "the rotated fraction of each head (Pythia: 0.25)", text_of(d.rc.model.rotary_fraction),
                    true, [](ModelSettings& s, const std::string& v) {
                      s.rc.model.rotary_fraction = parse_number(v, "rotary-fraction");
                    }));
  t.push_back(value("qk-norm", "none | head (q and k normed per head: Qwen3) | proj (over the whole projection: OLMo-2)",
                    "none", true, [](ModelSettings& s, const std::string& v) { s.rc.model.qk_norm = parse_qk_norm(v); }));
  t.push_back(value("attn-softcap", "attention logits s <- C*tanh(s/C) before the mask (Gemma-2: 50; 0: none)", "0", true,
                    [](ModelSettings& s, const std::string& v) {
                      s.rc.model.attn_softcap = parse_number(v, "attn-softcap");
                    }));
  t.push_back(value("attn-scale", "logits times S^(-1/2) (Gemma-2's query_pre_attn_scalar; default: the head width)", "",
                    true, [](ModelSettings& s, const std::string& v) {
                      s.rc.model.attn_scale = parse_number(v, "attn-scale");
                      require(s.rc.model.attn_scale > 0, "--attn-scale " + v + " must be positive; fix: e.g. --attn-scale 256");
                    }));
  t.push_back(value("d-ff", "feed-forward width (default 4*d)", "", true,
                    [](ModelSettings& s, const std::string& v) {
                      s.rc.model.d_ff = parse_integer(v, "d-ff");
                      require(s.rc.model.d_ff > 0, "--d-ff " + v + " must be positive; fix: e.g. --d-ff 256, or omit it "
                                                   "for 4*d");
                    }));
  t.push_back(value("seq-len", "tokens n of the input", std::to_string(d.rc.analysis.seq_len), false,
                    [](ModelSettings& s, const std::string& v) { s.rc.analysis.seq_len = parse_integer(v, "seq-len"); }));
  t.push_back(value("activation", "relu | gelu (exact erf form) | gelu-tanh (tanh approximation: GPT-2's gelu_new) | "
                    "silu, of --ffn mlp", d.activation, true,
                    [](ModelSettings& s, const std::string& v) { s.activation = v; }));
  t.push_back(value("ffn", "feed-forward: mlp (linear2(act(linear1 x))) | swiglu (linear2(silu(linear1 x) * linear3 x): "
                    "Llama) | geglu (gelu-tanh gate: Gemma); --d-ff is the gate's width", d.ffn, true,
                    [](ModelSettings& s, const std::string& v) { s.ffn = v; }));
  t.push_back(value("bias", "on | off: the bias of every linear layer (off: Llama, Qwen, OLMo, Gemma)", "on", true,
                    [](ModelSettings& s, const std::string& v) {
                      require(v == "on" || v == "off", "--bias '" + v + "' is not on or off; fix: --bias off (no "
                                                       "biases) or --bias on");
                      s.rc.model.bias = v == "on";
                    }));
  t.push_back(flag("qkv-bias", "with --bias off: q, k, v keep their biases (Qwen2)", true,
                   [](ModelSettings& s, bool b) { s.rc.model.qkv_bias = b; }));
  t.push_back(flag("shared-norm", "--placement parallel: one norm feeds both branches (GPT-J, PaLM)", true,
                   [](ModelSettings& s, bool b) { s.rc.model.shared_norm = b; }));
  t.push_back(flag("causal", "causal attention mask", true, [](ModelSettings& s, bool b) { s.rc.model.causal = b; }));
  t.push_back(value("norm", "layernorm | rmsnorm | dyt", d.norm, true,
                    [](ModelSettings& s, const std::string& v) { s.norm = v; }));
  t.push_back(value("norm-eps", "eps of every norm (LayerNorm, RMSNorm, QK-norm; DyT has none): PyTorch's 1e-5 by "
                    "default; a Hugging Face checkpoint's config.json gives its own", text_of(d.rc.model.norm_eps), true,
                    [](ModelSettings& s, const std::string& v) {
                      const double eps = parse_number(v, "norm-eps");
                      require(eps > 0 && std::isfinite(eps), "--norm-eps " + v + " must be a positive number; fix: "
                              "e.g. --norm-eps 1e-6 (Llama's rms_norm_eps)");
                      s.rc.model.norm_eps = eps;
                    }));
  t.push_back(flag("norm-offset", "every norm's scale is 1 + w with w stored and initialized to 0 (Gemma's RMSNorm)",
                   true, [](ModelSettings& s, bool b) { s.rc.model.norm_offset = b; }));
  t.push_back(value("embed-scale", "S or sqrt-d: x_0 = S * embedding where x_0 comes from embeddings (--token-ids, "
                                   "train); sqrt-d is sqrt(d_model) in float64 (Gemma)", "1", true,
                    [](ModelSettings& s, const std::string& v) {
                      s.rc.model.embed_scale_sqrt_d = v == "sqrt-d";
                      s.rc.model.embed_scale = v == "sqrt-d" ? 1.0 : parse_number(v, "embed-scale");
                    }));
  t.push_back(flag("no-final-norm", "drop the final norm of pre/sandwich/mix", true,
                   [](ModelSettings& s, bool b) { s.no_final_norm = b; }));
  t.push_back(value("residual-scale", "x + LAMBDA*G(...): the residual branch weight", text_of(d.rc.model.residual_scale),
                    true, [](ModelSettings& s, const std::string& v) {
                      s.rc.model.residual_scale = parse_number(v, "residual-scale");
                    }));
  t.push_back(value("parametrization", "sp | mup | depth-mup | completep: how init, multipliers and Adam's rates scale "
                    "with width (and depth) from --base-width/--base-depth (docs/math.md section 15)", "sp", true,
                    [](ModelSettings& s, const std::string& v) { s.rc.model.param.kind = parse_parametrization(v); }));
  t.push_back(value("base-width", "W0: the width a parametrization's hyperparameters were tuned at (m_N = d/W0)", "",
                    true, [](ModelSettings& s, const std::string& v) {
                      s.rc.model.param.base_width = parse_integer(v, "base-width");
                      require(s.rc.model.param.base_width > 0, "--base-width " + v + " must be positive; fix: e.g. "
                                                               "--base-width 64");
                    }));
  t.push_back(value("base-depth", "L0: the depth a depth parametrization's hyperparameters were tuned at (m_L = L/L0)",
                    "", true, [](ModelSettings& s, const std::string& v) {
                      s.rc.model.param.base_depth = parse_integer(v, "base-depth");
                      require(s.rc.model.param.base_depth > 0, "--base-depth " + v + " must be positive; fix: e.g. "
                                                               "--base-depth 2");
                    }));
  for (const auto& o : scheme_options()) {  // the placements' own options, declared by their entries
    std::string shown;
    if (o.show_default)
      shown = o.type == SchemeOption::Type::Word ? o.words.front() : text_of(o.number_default);
    const std::string name = o.name;
    const SchemeOption::Type type = o.type;
    t.push_back(value(name, o.help, shown, true, [name, type](ModelSettings& s, const std::string& v) {
      SchemeValues& sv = s.rc.model.scheme;
      if (type == SchemeOption::Type::Number) sv.numbers[name] = parse_number(v, name);
      else if (type == SchemeOption::Type::Count) sv.counts[name] = parse_integer(v, name);
      else sv.words[name] = v;
    }));
  }
  t.push_back(value("init", "torch | xavier | xavier-normal | gpt2 | t-fixup | hf-normal (the --arch decoder presets' "
                    "default: every weight matrix N(0, 0.02), as their Hugging Face classes)", d.rc.init.scheme, true,
                    [](ModelSettings& s, const std::string& v) { s.rc.init.scheme = v; }));
  t.push_back(value("init-scale", "multiply out_proj and linear2 weights by C, or inv-sqrt-2L", d.init_scale, true,
                    [](ModelSettings& s, const std::string& v) { s.init_scale = v; }));
  t.push_back(value("seed", "seed of weights, input and cotangent", std::to_string(d.rc.init.seed), true,
                    [](ModelSettings& s, const std::string& v) {
                      const Index seed = parse_integer(v, "seed");
                      require(seed >= 0, "--seed " + v + " is negative; fix: e.g. --seed 0");
                      s.rc.init.seed = static_cast<uint64_t>(seed);
                    }));
  t.push_back(value("loss", "dot (L = sum g*y, g ~ N(0,1)) | half-sq (L = sum y^2 / 2) | lm (a decoder's --weights with "
                    "--token-ids: next-token cross-entropy through its LM head, tied or not)", d.rc.analysis.loss, false,
                    [](ModelSettings& s, const std::string& v) { s.rc.analysis.loss = v; }));
  t.push_back(value("weights",
                    "parameters from a checkpoint: a PyTorch nn.TransformerEncoder state_dict (.safetensors; give --heads "
                    "and --placement), or a Hugging Face folder (config.json + model.safetensors or its sharded index) or "
                    ".safetensors file of BERT, RoBERTa, GPT-2, Llama, Mistral, Qwen2, Qwen3, OLMo-2, Gemma-2 or "
                    "GPT-NeoX/Pythia; L, d, d_ff and the final norm come from it (a Hugging Face config.json: the block too)",
                    "", false, [](ModelSettings& s, const std::string& v) {
                      s.rc.weights = existing_file_or_folder(v, "weights");
                    }));
  t.push_back(value("weights-format", "auto | torch-encoder | hf-bert | hf-roberta | hf-gpt2 | hf-llama | hf-mistral | "
                    "hf-qwen2 | hf-qwen3 | hf-olmo2 | hf-gemma2 | hf-neox (auto: config.json's model_type, else the "
                    "tensor names)", d.rc.weights_format, false,
                    [](ModelSettings& s, const std::string& v) {
                      const auto& known = weights_formats();
                      std::string list;
                      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
                      require(std::find(known.begin(), known.end(), v) != known.end(),
                              "--weights-format '" + v + "' is not one of " + list + "; fix: e.g. --weights-format auto");
                      s.rc.weights_format = v;
                    }));
  t.push_back(value("input", "input tokens x_0 from a .npy of shape (n, d) or (1, n, d) (default: seeded N(0,1)); n comes from it",
                    "", false, [](ModelSettings& s, const std::string& v) { s.rc.input = existing_file(v, "input"); }));
  t.push_back(value("token-ids",
                    "x_0 from token ids through the --weights checkpoint's own embeddings, e.g. 101,7592,2088,102 "
                    "(BERT: word + position + token type 0, LayerNorm; RoBERTa: positions from padding_idx + 1; GPT-2: "
                    "wte + wpe; the RoPE decoders: the token embedding, Gemma-2 times sqrt(d)), or a .npy of int64/int32 ids of shape (n,) or (1, n); n comes from it",
                    "", false, [](ModelSettings& s, const std::string& v) {
                      const bool npy = v.size() > 4 && v.compare(v.size() - 4, 4, ".npy") == 0;
                      s.rc.token_ids = npy ? token_ids_from_npy(existing_file(v, "token-ids")) : parse_token_ids(v);
                      s.rc.token_ids_file = npy ? v : "";
                    }));
  t.push_back(value("cotangent", "g of --loss dot from a .npy of the output's shape (default: seeded N(0,1))", "", false,
                    [](ModelSettings& s, const std::string& v) { s.rc.cotangent = existing_file(v, "cotangent"); }));
  t.push_back(value("precision", "f64 (exact, the default) | f32 | bf16 | f16: analyze: the gradients also with the "
                    "model cast to this type (as PyTorch's model.to(dtype)), measured against float64's layer by layer: "
                    "relative error, underflow, overflow margin (gradients only; docs/math.md §16); train: mixed "
                    "precision, float32 master weights and Adam, each step by the model cast to the type "
                    "(docs/training.md)", "f64", true,
                    [](ModelSettings& s, const std::string& v) {
                      require(!s.rc.analysis.autocast, "--precision and --autocast are two regimes of one run; fix: "
                                                       "give one of them");
                      s.rc.analysis.precision = parse_precision(v);
                    }));
  t.push_back(value("autocast", "bf16 | f16: analyze: the gradients also under mixed precision as CUDA autocast runs "
                    "it (float32 master weights, residual stream, norms, softmax and loss; every matrix product and "
                    "what is computed from it in the type), measured against float64's as --precision is "
                    "(docs/math.md §16); train: each step in that regime (docs/training.md)", "", true,
                    [](ModelSettings& s, const std::string& v) {
                      require(s.rc.analysis.precision == Precision::F64, "--precision and --autocast are two regimes "
                                                                         "of one run; fix: give one of them");
                      const Precision p = parse_precision(v, "--autocast");
                      require(p == Precision::BF16 || p == Precision::F16,
                              "--autocast " + v + " has no low-precision type to cast to; fix: --autocast bf16 or f16 "
                              "(or --precision f32 for a float32 model)");
                      s.rc.analysis.precision = p;
                      s.rc.analysis.autocast = true;
                    }));
  t.push_back(value("loss-scale", "S | dynamic: with --precision or --autocast, the cotangent times S before the low-precision backward "
                    "pass and the gradients divided by S after it (dynamic: analyze, the largest power of two without "
                    "Inf/NaN; train, PyTorch's GradScaler: 2^16, halved on Inf/NaN with the step skipped, doubled after "
                    "2000 clean steps)", "1", true, [](ModelSettings& s, const std::string& v) {
                      s.rc.analysis.loss_scale = parse_loss_scale(v);
                    }));
  t.push_back(value("max-memory", "memory budget, e.g. 512M, 8G (default: half of RAM): a run estimated to need more is refused before it allocates", "", true,
                    [](ModelSettings& s, const std::string& v) { s.max_memory = v; }));
  return t;
}

}  // namespace

double parse_number(const std::string& text, const std::string& option) {
  char* end = nullptr;
  errno = 0;
  const long double v = std::strtold(text.c_str(), &end);
  require(is_decimal_number(text), "--" + option + " " + not_decimal(text) + "; fix: e.g. --" + option + " 0.5");
  require(end == text.c_str() + text.size() && errno != ERANGE,
          "--" + option + " '" + text + "' is not a number; fix: e.g. --" + option + " 0.5");
  return static_cast<double>(v);
}

Index parse_integer(const std::string& text, const std::string& option) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  require(is_decimal_number(text, false), "--" + option + " " + not_decimal(text) + "; fix: e.g. --" + option + " 4");
  require(is_decimal_integer(text) && end == text.c_str() + text.size() && errno != ERANGE,
          "--" + option + " '" + text + "' is not a whole number; fix: e.g. --" + option + " 4");
  return static_cast<Index>(v);
}

const std::vector<ModelOption>& model_options() {
  static const std::vector<ModelOption> table = make_table();
  return table;
}

void set_model_option(ModelSettings& s, const std::string& name, const std::string& value) {
  for (const auto& o : model_options())
    if (o.name == name) {
      o.set(s, value);
      s.given.insert(name);
      return;
    }
  throw Error("--" + name + " is not a model option; fix: see `gradflow analyze --help` for the model options");
}

namespace {

// An option that only some placements take, given for a run none of whose placements takes it, would be ignored:
// refused instead, naming the placements that take it.
void check_placement_options(const ModelSettings& s) {
  const std::vector<std::string> run =
      s.run_placements.empty() ? std::vector<std::string>{s.rc.model.placement} : s.run_placements;
  const std::string listed = run.size() == 1 ? "--placement " + run[0] : "the placements given";
  for (const SchemeOption& o : scheme_options()) {
    if (!s.given.count(o.name)) continue;
    std::vector<std::string> takers;
    bool used = false;
    for (const auto& p : placements()) {
      bool takes = false;
      for (const SchemeOption& own : p->options()) takes = takes || own.name == o.name;
      if (!takes) continue;
      takers.push_back(p->name());
      used = used || std::find(run.begin(), run.end(), p->name()) != run.end();
    }
    if (used) continue;
    std::string names;
    for (const auto& t : takers) names += (names.empty() ? "" : ", ") + t;
    throw Error("--" + o.name + " does nothing with " + listed + " (only " + names + (takers.size() == 1 ? " takes" : " take") + " it); fix: drop --" +
                o.name + " or use --placement " + takers.front());
  }
  if (s.given.count("no-final-norm") && s.no_final_norm) {
    bool used = false;
    for (const auto& p : run) used = used || find_placement(p).final_norm_default(s.rc.model);
    std::string with;
    for (const auto& p : placements())
      if (p->final_norm_default(s.rc.model)) with += (with.empty() ? "" : ", ") + p->name();
    require(used, "--no-final-norm does nothing with " + listed + " (no final norm to drop); fix: drop it (" + with +
                      " have a final norm)");
  }
}

}  // namespace

RunConfig resolve(const ModelSettings& given_settings) {
  ModelSettings s = given_settings;
  apply_arch(s);  // the preset's options that were not given
  RunConfig rc = s.rc;
  check_placement_options(s);
  rc.model.activation = parse_activation(s.activation);
  rc.model.ffn = parse_ffn(s.ffn);
  require(!rc.model.gated() || !s.given.count("activation"),
          "--activation " + s.activation + " does not apply to --ffn " + s.ffn + " (its gate is " +
              to_string(rc.model.ffn_activation()) + "); fix: drop --activation, or use --ffn mlp");
  rc.model.norm = parse_norm_kind(s.norm);
  if (s.no_final_norm) rc.model.final_norm = false;
  find_placement(rc.model.placement);
  GivenSizes given;
  const auto explicit_value = [&](const char* name, Index v) {
    return s.given.count(name) ? std::optional<Index>(v) : std::nullopt;
  };
  given.layers = explicit_value("layers", rc.model.layers);
  given.d_model = explicit_value("d-model", rc.model.d_model);
  given.d_ff = explicit_value("d-ff", rc.model.d_ff);
  given.seq_len = explicit_value("seq-len", rc.analysis.seq_len);
  if (s.no_final_norm) given.final_norm = false;
  GivenArch arch;
  if (s.given.count("placement")) arch.placement = rc.model.placement;
  if (s.given.count("heads")) arch.heads = rc.model.heads;
  if (s.given.count("activation")) arch.activation = rc.model.activation;
  arch.causal = s.given.count("causal") && rc.model.causal;
  if (s.given.count("norm")) arch.norm = rc.model.norm;
  // the block options a Hugging Face checkpoint fixes besides those above (the placements' own options are checked
  // against the placement it fixes)
  for (const char* name : {"arch", "norm-eps", "kv-heads", "head-dim", "rope", "rope-theta", "rotary-fraction", "qk-norm",
                           "attn-softcap", "attn-scale", "ffn", "bias", "qkv-bias", "shared-norm", "norm-offset",
                           "embed-scale", "residual-scale", "parametrization", "base-width", "base-depth"})
    if (s.given.count(name)) arch.block_options.push_back(name);
  for (const char* name : {"init", "init-scale"})  // the checkpoint gives every parameter
    require(rc.weights.empty() || !s.given.count(name),
            std::string("--") + name + " has no effect with --weights (the checkpoint gives the weights); fix: drop --" +
                name);
  // before the files are read: loading a checkpoint is refused when it alone would not fit
  if (!s.max_memory.empty()) rc.analysis.max_memory_bytes = parse_memory_size(s.max_memory, "--max-memory");
  apply_file_sizes(rc, given, arch);  // --weights/--input fix L, d, d_ff, the final norm and n
  if (rc.files && rc.files->weights) check_sliding_window(*rc.files->weights, rc.analysis.seq_len);
  rc.model.validate();
  rc.init.scale_text = s.init_scale;
  rc.init.scale = parse_init_scale(s.init_scale, rc.model.layers);
  require(!rc.model.param.scales_depth() || s.init_scale != "inv-sqrt-2L",
          "--init-scale inv-sqrt-2L with --parametrization " + to_string(rc.model.param.kind) +
              ", whose branch multiplier (L/L0)^(-alpha) sets the depth factor already; fix: drop --init-scale, or "
              "use --parametrization mup or sp");
  return rc;
}

}  // namespace gradflow
