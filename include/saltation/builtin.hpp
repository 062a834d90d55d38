#pragma once
// Runtime access to the built-in models by name (what the CLI and the C API use). The models'
// templates are precompiled in the library for both backends.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation {

struct ModelInfo {
  std::string name;
  int N = 0, P = 0, M = 0;
  std::vector<std::string> state_names, param_names;
};

std::vector<std::string> builtin_model_names();

// `config` holds the model's constants (see docs/schema.md); unknown keys are errors.
ModelInfo builtin_model_info(const std::string& model, const nlohmann::json& config);

Result solve_builtin(const std::string& model, const nlohmann::json& config, const Batch& batch,
                     const Options& options, Backend backend, const Progress& progress = nullptr);

}  // namespace saltation
