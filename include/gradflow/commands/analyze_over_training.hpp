// analyze_over_training.hpp — `gradflow analyze --weights A B C …` (several checkpoints, a folder of them, or a glob
// in quotes): one report over a run's checkpoints in step order, every checkpoint analyzed on the same input and
// cotangent, so the per-depth gradient norms, ‖B_l − I‖ and the token geometry can be followed against the step
// (`gradflow plot --kind grad-over-training`; docs/training.md, "A run's checkpoints over training").
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/commands/analyze_command.hpp"

namespace gradflow {

struct TrainingCheckpoint {
  std::string path;     // a file or folder --weights reads
  long long step = -1;  // from its name
  std::string input;    // the x_0 `gradflow train --save-every` saved beside it (NAME.input.npy), or ""
};

// The step a checkpoint's name gives: the digits after "step" in its last path component (extension dropped):
// step_000100.safetensors -> 100, step1000/ -> 1000, pythia's revision folder step143000 -> 143000, global_step20 ->
// 20; -1 when the name has no such digits.
long long step_of(const std::string& path);

// The checkpoints the --weights values name: each value a checkpoint (a .safetensors file, an index, or a folder
// with config.json / model.safetensors), a folder of checkpoints (step-named .safetensors files or step-named
// folders inside), or a glob pattern (*, ?, [...]; expanded by gradflow, never by a shell). Sorted by step. Error
// (one line, naming the value and the fix) for a value that names nothing, a checkpoint whose name gives no step
// when there are several, or two checkpoints with the same step.
std::vector<TrainingCheckpoint> training_checkpoints(const std::vector<std::string>& values);

// true when `values` name more than one checkpoint (several values, a folder of checkpoints, a glob): the run is
// an over-training analysis; false for one checkpoint (the plain analyze).
bool names_training_checkpoints(const std::vector<std::string>& values);

// Analyzes `r` on each checkpoint in order (r.model with --weights set to it; the input: r's --input or
// --token-ids, else the first checkpoint's saved .input.npy, else the seeded random x_0; the cotangent: r's, else
// the seeded random g — the same for every checkpoint) and returns the report {"over_training": {...},
// "config": the first checkpoint's, "checkpoints": [{"step", "weights", "report"}, ...]}. A checkpoint of another
// architecture than the first is an Error naming both and the setting that differs. `rc_hook` sees each run's
// settings, as run_analyze_request's. `progress` (when given) is told each checkpoint before it runs.
nlohmann::ordered_json run_analyze_over_training(
    const AnalyzeRequest& r, const std::vector<TrainingCheckpoint>& checkpoints,
    const std::function<void(RunConfig&)>& rc_hook = nullptr,
    const std::function<void(size_t, const TrainingCheckpoint&)>& progress = nullptr);

}  // namespace gradflow
