// The registry, built from the table of built-in models (builtin_models.hpp).
#include "saltation/registry.hpp"

#include <string>
#include <type_traits>
#include <vector>

#include "builtin_models.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/user_model/user_model.hpp"

namespace saltation {
namespace {

using nlohmann::json;

template <class Model, class = void>
struct variant_of {
  static constexpr const char* key = "";
  static constexpr int value = 0;
};
template <class Model>
struct variant_of<Model, std::void_t<decltype(Model::variant_key)>> {
  static constexpr const char* key = Model::variant_key;
  static constexpr int value = Model::variant;
};

// Reads a model's constants from the request's "config" and records the values in force.
class JsonModelConfig final : public ModelConfig {
 public:
  explicit JsonModelConfig(const io::JsonObject& config) : config_(config) {}
  double number(const char* key, double fallback, const char*) const override {
    const double v = config_.number(key, fallback);
    used_[key] = v;
    return v;
  }
  std::string choice(const char* key, std::initializer_list<const char*> allowed, const char* fallback,
                     const char*) const override {
    const std::string v = config_.choice(key, allowed, fallback);
    used_[key] = v;
    return v;
  }
  const json& used() const { return used_; }

 private:
  const io::JsonObject& config_;
  mutable json used_ = json::object();
};

// Lists the keys a model reads, with their defaults, by configuring it from nothing.
class KeyRecorder final : public ModelConfig {
 public:
  double number(const char* key, double fallback, const char* meaning) const override {
    keys.push_back({key, meaning, fallback, {}});
    return fallback;
  }
  std::string choice(const char* key, std::initializer_list<const char*> allowed, const char* fallback,
                     const char* meaning) const override {
    keys.push_back({key, meaning, fallback, std::vector<std::string>(allowed.begin(), allowed.end())});
    return fallback;
  }
  mutable std::vector<ConfigKey> keys;
};

struct Variant {
  const char* name;
  const char* variant_key;
  int variant;
  AnyModel (*configure)(const io::JsonObject& config);
  void (*describe)(RegisteredModel& entry);
};

template <class Model>
AnyModel configure_as(const io::JsonObject& config) {
  static_assert(has_cuda_driver<Model>::value, "a built-in model's header must declare its CUDA driver");
  JsonModelConfig reader(config);
  const Model model = Model::from_config(reader);
  json used = reader.used();
  if (*variant_of<Model>::key) used[variant_of<Model>::key] = variant_of<Model>::value;
  config.reject_unknown(std::string("the config of model ") + Model::name);
  return AnyModel::of(model, used);
}

template <class Model>
void describe_as(RegisteredModel& entry) {
  KeyRecorder recorder;
  (void)Model::from_config(recorder);
  entry.config = recorder.keys;
  entry.state_names = model_info<Model>().state_names;
  entry.M = Model::M;
}

#define SALTATION_VARIANT(Model) \
  Variant{Model::name, variant_of<Model>::key, variant_of<Model>::value, &configure_as<Model>, &describe_as<Model>},
const std::vector<Variant>& variants() {
  static const std::vector<Variant> all{SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_VARIANT)};
  return all;
}
#undef SALTATION_VARIANT

std::string names_list() {
  std::string s;
  for (const RegisteredModel& m : builtin_models()) s += (s.empty() ? "" : ", ") + m.name;
  return s;
}

}  // namespace

const std::vector<RegisteredModel>& builtin_models() {
  static const std::vector<RegisteredModel> models = [] {
    std::vector<RegisteredModel> out;
    for (const Variant& v : variants()) {
      if (out.empty() || out.back().name != v.name) {
        out.push_back(RegisteredModel{v.name, {}, v.variant_key, {}, {}, 0});
        v.describe(out.back());
      }
      if (*v.variant_key) out.back().variants.push_back(v.variant);
    }
    return out;
  }();
  return models;
}

AnyModel configure_builtin_model(const std::string& name, const json& config_json) {
  const io::JsonObject config(config_json, "config");
  const Variant* first = nullptr;
  for (const Variant& v : variants())
    if (v.name == name) {
      first = &v;
      break;
    }
  if (!first) throw InvalidInput("model", -1, "\"" + name + "\" is not a built-in model (" + names_list() + ")");
  if (!*first->variant_key) return first->configure(config);
  // The first listed variant is the default.
  const int wanted = config.integer(first->variant_key, first->variant);
  std::string compiled;
  for (const Variant& v : variants()) {
    if (v.name != name) continue;
    if (v.variant == wanted) return v.configure(config);
    compiled += (compiled.empty() ? "" : ", ") + std::to_string(v.variant);
  }
  throw InvalidInput(config.path(first->variant_key), -1,
                     std::to_string(wanted) + " is not compiled in (" + compiled +
                         "); other values need the C++ API with the model type");
}

AnyModel configure_model(const io::ModelChoice& choice) {
  if (choice.definition) return user_model::load_model(choice.definition, choice.config);
  return configure_builtin_model(choice.name, choice.config);
}

}  // namespace saltation
