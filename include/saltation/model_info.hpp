#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace saltation {

// What request readers and result writers need to know about a model, with no templates.
struct ModelInfo {
  std::string name;
  int N = 0, P = 0, M = 0;
  std::vector<std::string> state_names, param_names, param_domains;
  std::vector<std::string> guard_names;              // a model file's guards by name; empty for a C++ model
  std::string definition_digest;                     // a model file's: the SHA-256 of its checked definition
  nlohmann::json config = nlohmann::json::object();  // the configuration in force, defaults included
};

}  // namespace saltation
