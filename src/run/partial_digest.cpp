// partial_digest.cpp — see partial_digest.hpp.
#include "gradflow/run/partial_digest.hpp"

#include "gradflow/core/sha256.hpp"

namespace gradflow {
namespace {

constexpr const char* kDigest = "digest";

std::string digest_of(nlohmann::ordered_json partial) {
  partial.erase(kDigest);
  return sha256_hex(partial.dump());
}

}  // namespace

void seal_partial(nlohmann::ordered_json& partial) { partial[kDigest] = digest_of(partial); }

std::string partial_digest_problem(const nlohmann::ordered_json& partial, const std::string& key) {
  if (!partial.is_object() || !partial.contains(kDigest) || !partial[kDigest].is_string())
    return "its \"" + key + "\" has no \"digest\" (written by another gradflow, or edited)";
  if (partial[kDigest].get<std::string>() != digest_of(partial))
    return "the numbers of its \"" + key + "\" do not match its \"digest\" (edited after the task wrote them)";
  return "";
}

}  // namespace gradflow
