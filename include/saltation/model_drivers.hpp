#pragma once
// A model's entry points behind one interface, with no templates and no JSON: what AnyModel
// holds, and what a model compiled at run time (user_model/plugin.hpp) hands to the process that
// loads it.
#include <utility>
#include <vector>

#include "saltation/impact_speed.hpp"
#include "saltation/solve.hpp"

namespace saltation {

class ModelDrivers {
 public:
  virtual ~ModelDrivers() = default;
  virtual Result solve(const Batch& batch, const Options& options, Backend backend, const Progress& progress) const = 0;
  // saltation::observe: objective values and design derivatives, [n_outputs][n], with status and n_events.
  virtual Observation observe(const Batch& batch, const Options& options, std::vector<ObjectiveSpec> objectives,
                              std::vector<int> design, Backend backend, const Progress& progress) const = 0;
  // The backend a run asking for `requested` uses: Auto resolved (resolve_backend), or the CPU
  // where a compiled model cannot be built for the device.
  virtual Backend backend_for(Backend requested) const { return resolve_backend(requested); }
  // saltation::impact_speeds (impact_speed.hpp): trajectory i's events' normal speeds and their
  // derivatives by `parameters`, from its records; theta its parameters.
  virtual void impact_speeds(const Result& record, std::size_t i, RowParams theta, const std::vector<int>& parameters,
                             double* speed, double* slope) const = 0;
};

// The drivers of a model type: saltation::solve and saltation::observe for it.
template <class Model>
class ModelDriversOf final : public ModelDrivers {
 public:
  explicit ModelDriversOf(const Model& model) : model_(model) {}
  Result solve(const Batch& batch, const Options& options, Backend backend, const Progress& progress) const override {
    return saltation::solve(model_, batch, options, backend, progress);
  }
  Observation observe(const Batch& batch, const Options& options, std::vector<ObjectiveSpec> objectives,
                      std::vector<int> design, Backend backend, const Progress& progress) const override {
    return saltation::observe(model_, batch, options, std::move(objectives), std::move(design), backend, progress);
  }
  void impact_speeds(const Result& record, std::size_t i, RowParams theta, const std::vector<int>& parameters,
                     double* speed, double* slope) const override {
    saltation::impact_speeds(model_, record, i, theta, parameters, speed, slope);
  }

 private:
  Model model_;
};

}  // namespace saltation
