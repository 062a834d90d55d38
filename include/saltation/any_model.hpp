#pragma once
// A configured model chosen at run time: the value the CLI, the C API, the bindings and sweeps
// hold. Built from any model type (built-in or a user's) or from a model file compiled at run
// time, it carries the model's description and its drivers (model_drivers.hpp).
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "saltation/model_drivers.hpp"
#include "saltation/model_info.hpp"

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
    return AnyModel(std::make_shared<const ModelDriversOf<Model>>(model), model_info<Model>(std::move(config)));
  }
  // A model known by its drivers and description only (a model file compiled at run time).
  AnyModel(std::shared_ptr<const ModelDrivers> drivers, ModelInfo info)
      : drivers_(std::move(drivers)), info_(std::move(info)) {}

  const ModelInfo& info() const { return info_; }
  Result solve(const Batch& batch, const Options& options, Backend backend = Backend::Auto,
               const Progress& progress = nullptr) const {
    return drivers_->solve(batch, options, backend, progress);
  }
  // saltation::observe: objective values and design derivatives, [n_outputs][n], with status and n_events.
  Observation observe(const Batch& batch, const Options& options, std::vector<ObjectiveSpec> objectives,
                      std::vector<int> design, Backend backend = Backend::Auto,
                      const Progress& progress = nullptr) const {
    return drivers_->observe(batch, options, std::move(objectives), std::move(design), backend, progress);
  }

  // The backend a run asking for `requested` uses (ModelDrivers::backend_for): what results and
  // their provenance name.
  Backend backend_for(Backend requested) const { return drivers_->backend_for(requested); }
  // The same for a run of `options` (backend_for_method: Auto is the CPU for dopri5).
  Backend backend_for(Backend requested, const Options& options) const {
    return backend_for(backend_for_method(requested, options));
  }
  // ModelDrivers::impact_speeds: trajectory i's events' normal speeds and their derivatives.
  void impact_speeds(const Result& record, std::size_t i, RowParams theta, const std::vector<int>& parameters,
                     double* speed, double* slope) const {
    drivers_->impact_speeds(record, i, theta, parameters, speed, slope);
  }

 private:
  std::shared_ptr<const ModelDrivers> drivers_;
  ModelInfo info_;
};

}  // namespace saltation
