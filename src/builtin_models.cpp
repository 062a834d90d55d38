// The runtime dispatcher: model name + config -> model type, then the templated host API.
#include <set>
#include <string>
#include <vector>

#include "builtin_list.hpp"
#include "saltation/builtin.hpp"
#include "saltation/errors.hpp"
#include "saltation/solve.hpp"

namespace saltation {
namespace {

using nlohmann::json;

void reject_unknown_keys(const std::string& model, const json& config, const std::set<std::string>& known) {
  if (!config.is_object()) throw InvalidInput("config", -1, "must be a JSON object");
  for (const auto& item : config.items())
    if (!known.count(item.key()))
      throw InvalidInput("config." + item.key(), -1, "is not a setting of model " + model);
}

double number(const json& config, const char* key, double fallback) {
  if (!config.contains(key)) return fallback;
  const json& v = config.at(key);
  if (!v.is_number()) throw InvalidInput(std::string("config.") + key, -1, "must be a number");
  return v.get<double>();
}

template <int K>
TerrainBall<K> terrain_from(const json& config) {
  TerrainBall<K> m;
  m.x0 = number(config, "x0", m.x0);
  m.y0 = number(config, "y0", m.y0);
  m.gravity = number(config, "g", m.gravity);
  return m;
}

// Calls f(model) with the built-in model that `name` and `config` describe.
template <class F>
auto with_builtin_model(const std::string& name, const json& config_in, F&& f) {
  const json config = config_in.is_null() ? json::object() : config_in;
  if (name == "bouncing_ball") {
    reject_unknown_keys(name, config, {"g"});
    BouncingBall m;
    m.gravity = number(config, "g", m.gravity);
    return f(m);
  }
  if (name == "thermostat") {
    reject_unknown_keys(name, config, {"initial_mode"});
    Thermostat m;
    if (config.contains("initial_mode")) {
      const json& v = config.at("initial_mode");
      if (v == "on") m.initial_mode = Thermostat::ON;
      else if (v == "off") m.initial_mode = Thermostat::OFF;
      else throw InvalidInput("config.initial_mode", -1, "must be \"on\" or \"off\"");
    }
    return f(m);
  }
  if (name == "terrain_ball") {
    reject_unknown_keys(name, config, {"x0", "y0", "g", "bumps"});
    int bumps = 0;
    if (config.contains("bumps")) {
      const json& v = config.at("bumps");
      if (!v.is_number_integer()) throw InvalidInput("config.bumps", -1, "must be an integer");
      bumps = v.get<int>();
    }
#define SALTATION_TERRAIN_CASE(K) \
  if (bumps == K) return f(terrain_from<K>(config));
    SALTATION_TERRAIN_BUMPS(SALTATION_TERRAIN_CASE)
#undef SALTATION_TERRAIN_CASE
    throw InvalidInput("config.bumps", -1,
                       std::to_string(bumps) + " is not a compiled-in bump count (0, 3, 24, 192)");
  }
  throw InvalidInput("model", -1, "\"" + name + "\" is not one of bouncing_ball, terrain_ball, thermostat");
}

std::vector<std::string> state_names_of(const std::string& name) {
  if (name == "bouncing_ball") return {"h", "v"};
  if (name == "thermostat") return {"T"};
  return {"x", "y", "vx", "vy"};
}

}  // namespace

std::vector<std::string> builtin_model_names() { return {"bouncing_ball", "terrain_ball", "thermostat"}; }

ModelInfo builtin_model_info(const std::string& model, const json& config) {
  return with_builtin_model(model, config, [&](const auto& m) {
    using Model = std::decay_t<decltype(m)>;
    ModelInfo info;
    info.name = model;
    info.N = Model::N;
    info.P = Model::P;
    info.M = Model::M;
    info.state_names = state_names_of(model);
    for (int p = 0; p < Model::P; ++p) info.param_names.push_back(Model::param_name(p));
    return info;
  });
}

Result solve_builtin(const std::string& model, const json& config, const Batch& batch, const Options& options,
                     Backend backend, const Progress& progress) {
  return with_builtin_model(model, config, [&](const auto& m) { return solve(m, batch, options, backend, progress); });
}

}  // namespace saltation
