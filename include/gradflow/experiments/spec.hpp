// spec.hpp — an experiment saved as a file, so that a figure can be regenerated from it:
//   {"gradflow_spec": 1, "command": "compare" | "sweep", "claim": "C5", "description": "...",
//    "options": {"placements": "post,pre", "layers": [6, 12, 24], "seeds": 5, "init": "xavier", "gradients-only": true},
//    "reduced": {"layers": "2,4", "d-model": 16, ...},
//    "plot": {"metric": "bottom.grad_norm", "ratio": true, "article_value": 0.01}}
// "options" holds command-line flags without their dashes: a string or number is the flag's value, an array is
// joined with commas, true is a bare flag, false leaves it out. "reduced" (optional) overrides options for a
// seconds-long smoke run (`gradflow run SPEC --reduced`); "plot" (optional) says what `gradflow plot --kind claims`
// draws (docs/plotting.md); "verdicts" (optional) states the claim as statements decided at a level on the report
// (claim_verdicts.hpp), "reduced_verdicts" the statements of the reduced run (whose groups are other sizes). Every
// compare/sweep report records its spec, with the file's claim, description, plot and verdicts.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

constexpr int kSpecVersion = 1;

// Reads and checks a spec file (Error naming the file, the key and the fix); a compare/sweep report gives its spec.
nlohmann::ordered_json load_spec(const std::string& path);
// Checks a parsed spec; `where` names it in errors (a file path).
// `plan`: the spec of a plan's manifest, which may also be "analyze" (a streamed run split into tasks,
// commands/analyze_plan.hpp); a spec file runs compare, sweep or train-sweep only.
void check_spec(const nlohmann::ordered_json& spec, const std::string& where, bool plan = false);
// The spec's options (with "reduced" merged over them when asked) as command-line words, command first:
// {"compare", "--placements", "post,pre", "--gradients-only", ...}.
std::vector<std::string> spec_to_args(const nlohmann::ordered_json& spec, bool reduced);
// One option value as the command line would spell it ("16", "0.5", "6,12,24").
std::string spec_value_text(const nlohmann::ordered_json& value);

}  // namespace gradflow
