// analysis.hpp — the interface every analysis in analyses/ implements, and the runner.
// An analysis reads the shared AnalysisContext and writes its fields into the JSON report; the report's
// "layers" array is created before any analysis runs (one object per block, with its "index").
// Adding an analysis touches only its own file and one line in analyses/registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/run/context.hpp"

namespace gradflow {

using Json = nlohmann::ordered_json;

class Analysis {
 public:
  virtual ~Analysis() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // Whether it runs for these options (e.g. explicit Jacobians only when requested).
  virtual bool enabled(const AnalysisContext&) const { return true; }
  // Refuses (Error) what it could not run for these options (opts.engine chosen) on this backend, before any work:
  // no file read, no forward pass yet.
  virtual void check(const Model&, const AnalysisOptions&, const Backend&) const {}
  virtual void run(const AnalysisContext& ctx, Json& report) const = 0;
};

// Every registered analysis, in the order they run (analyses/registry.cpp).
const std::vector<std::unique_ptr<Analysis>>& analyses();

// Every analysis's check, in order (analyze() calls it once the engine is chosen and the backend built).
void check_analyses(const Model& model, const AnalysisOptions& opts, const Backend& backend);

// Runs the enabled analyses and returns the report body (layers, output_grad_norm, summary, ...).
Json run_analyses(const AnalysisContext& ctx);

}  // namespace gradflow
