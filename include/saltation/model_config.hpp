#pragma once
// How a model reads its configuration constants (gravity, start point, initial mode) from a
// request, without knowing the request's format: a built-in model provides
//   static Model from_config(const ModelConfig& config);
// and the registry passes a reader over the request's "config" object (it rejects keys no
// model read, records the values in force for provenance, and lists the keys for
// `saltation models`). Host only.
#include <initializer_list>
#include <string>

namespace saltation {

class ModelConfig {
 public:
  virtual ~ModelConfig() = default;
  // The number under `key`, or `fallback` when absent; `meaning` documents the key.
  virtual double number(const char* key, double fallback, const char* meaning) const = 0;
  // One of `allowed` under `key`, or `fallback` when absent.
  virtual std::string choice(const char* key, std::initializer_list<const char*> allowed, const char* fallback,
                             const char* meaning) const = 0;
};

}  // namespace saltation
