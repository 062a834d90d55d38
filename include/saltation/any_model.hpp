#pragma once
// A configured model chosen at run time: the value the CLI, the C API, the bindings and sweeps
// hold. Built from any model type (built-in or a user's), it carries the model's description
// and its solve and observe entry points for every backend.
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "saltation/model_info.hpp"
#include "saltation/solve.hpp"

namespace saltation {

template <class Model>
ModelInfo model_info(nlohmann::json config = nlohmann::json::object()) {
  ModelInfo info;
  info.name = Model::name;
  info.N = Model::N;
  info.P = Model::P;
  info.M = Model::M;
  for (int k = 0; k < Model::N; ++k) info.state_names.push_back(Model::state_name(k));
  for (int p = 0; p < Model::P; ++p) {
    info.param_names.push_back(Model::param_name(p));
    info.param_domains.push_back(Model::param_domain(p));
  }
  info.config = std::move(config);
  return info;
}

class AnyModel {
 public:
  template <class Model>
  static AnyModel of(const Model& model, nlohmann::json config = nlohmann::json::object()) {
    AnyModel m;
    m.impl_ = std::make_shared<const Holder<Model>>(model);
    m.info_ = model_info<Model>(std::move(config));
    return m;
  }

  const ModelInfo& info() const { return info_; }
  Result solve(const Batch& batch, const Options& options, Backend backend = Backend::Auto,
               const Progress& progress = nullptr) const {
    return impl_->solve(batch, options, backend, progress);
  }
  // saltation::observe: objective values and design derivatives, [n_outputs][n], with status and n_events.
  Observation observe(const Batch& batch, const Options& options, std::vector<ObjectiveSpec> objectives,
                      std::vector<int> design, Backend backend = Backend::Auto,
                      const Progress& progress = nullptr) const {
    return impl_->observe(batch, options, std::move(objectives), std::move(design), backend, progress);
  }

 private:
  struct Interface {
    virtual ~Interface() = default;
    virtual Result solve(const Batch&, const Options&, Backend, const Progress&) const = 0;
    virtual Observation observe(const Batch&, const Options&, std::vector<ObjectiveSpec>, std::vector<int>, Backend,
                                const Progress&) const = 0;
  };
  template <class Model>
  struct Holder final : Interface {
    explicit Holder(const Model& m) : model(m) {}
    Result solve(const Batch& b, const Options& o, Backend backend, const Progress& progress) const override {
      return saltation::solve(model, b, o, backend, progress);
    }
    Observation observe(const Batch& b, const Options& o, std::vector<ObjectiveSpec> objectives,
                        std::vector<int> design, Backend backend, const Progress& progress) const override {
      return saltation::observe(model, b, o, std::move(objectives), std::move(design), backend, progress);
    }
    Model model;
  };
  AnyModel() = default;
  std::shared_ptr<const Interface> impl_;
  ModelInfo info_;
};

}  // namespace saltation
