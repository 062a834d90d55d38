#pragma once
// The registry of built-in models: the one table (src/builtin_models.hpp) behind every
// run-time choice of a model by name (CLI, C API, bindings, sweeps).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "saltation/any_model.hpp"
#include "saltation/io/solve_io.hpp"

namespace saltation {

// A documented configuration key of a built-in model.
struct ConfigKey {
  std::string key, meaning;
  nlohmann::json fallback;           // the default
  std::vector<std::string> choices;  // for string keys
};

struct RegisteredModel {
  std::string name;
  std::vector<ConfigKey> config;
  // Some models come in compiled-in variants chosen by an integer key (terrain_ball: "bumps").
  std::string variant_key;
  std::vector<int> variants;
  std::vector<std::string> state_names;
  int M = 0;
};

const std::vector<RegisteredModel>& builtin_models();

// The built-in model `name` configured by `config` (a JSON object of constants; null means
// all defaults). Throws InvalidInput naming "model" or the bad "config.<key>".
AnyModel configure_builtin_model(const std::string& name, const nlohmann::json& config);

// The model a request chose (io::parse_model_choice): a built-in one, or a model file's
// (user_model/user_model.hpp), configured by the request's "config".
AnyModel configure_model(const io::ModelChoice& choice);

}  // namespace saltation
