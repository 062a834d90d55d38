// `saltation models`: the built-in models as the registry describes them.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "saltation/registry.hpp"

namespace saltation::cli {

void add_models_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("models", "List the built-in models: states, parameters, config keys");
  auto as_json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *as_json, "Print the list as JSON");
  cmd->callback([as_json] {
    nlohmann::json all = nlohmann::json::array();
    for (const RegisteredModel& m : builtin_models()) {
      // Parameters depend on the variant: describe the default one.
      const ModelInfo info = configure_builtin_model(m.name, nullptr).info();
      nlohmann::json config = nlohmann::json::object();
      for (const ConfigKey& k : m.config) {
        config[k.key] = {{"default", k.fallback}, {"meaning", k.meaning}};
        if (!k.choices.empty()) config[k.key]["choices"] = k.choices;
      }
      nlohmann::json entry{{"name", m.name},   {"states", m.state_names},    {"guards", m.M},
                           {"config", config}, {"params", info.param_names}, {"param_domains", info.param_domains}};
      if (!m.variant_key.empty()) entry["variants"] = {{"key", m.variant_key}, {"values", m.variants}};
      all.push_back(entry);
    }
    if (*as_json) {
      std::cout << all.dump(1) << "\n";
      return;
    }
    for (const auto& e : all) {
      std::cout << e["name"].get<std::string>() << "\n  states: " << e["states"].dump() << ", guards: " << e["guards"]
                << "\n  params: ";
      for (std::size_t p = 0; p < e["params"].size(); ++p)
        std::cout << (p ? ", " : "") << e["params"][p].get<std::string>() << " ("
                  << e["param_domains"][p].get<std::string>() << ")";
      std::cout << "\n  config:";
      for (const auto& [key, v] : e["config"].items())
        std::cout << "\n    " << key << " = " << v["default"].dump() << ": " << v["meaning"].get<std::string>();
      if (e.contains("variants"))
        std::cout << "\n    " << e["variants"]["key"].get<std::string>() << " in " << e["variants"]["values"].dump()
                  << ": compiled-in variants (parameters above are for the first)";
      std::cout << "\n";
    }
  });
}

}  // namespace saltation::cli
