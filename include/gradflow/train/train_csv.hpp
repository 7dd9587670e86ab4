// train_csv.hpp — the train report's log as a long CSV (step,layer,metric,value; layer empty for scalars;
// parameter gradients as metric "param_grad_norm:<name>") and the short summary `gradflow train` prints.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace gradflow {

std::string train_csv(const nlohmann::ordered_json& report);
void print_train_summary(std::ostream& os, const nlohmann::ordered_json& report);

}  // namespace gradflow
