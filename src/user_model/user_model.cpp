// A model file's model: its description from the spec, its drivers from the plugin compiled for
// the backend a run resolves to, built on first use.
#include "saltation/user_model/user_model.hpp"

#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/user_model/plugin_abi.hpp"
#include "toolchain.hpp"

namespace saltation::user_model {
namespace {

const PluginHost& plugin_host() {
  static const PluginHost host = [] {
    PluginHost h;
    h.interrupt_request = &interrupt_request();
    h.resolve_backend = &resolve_backend;
    h.result_bytes_per_trajectory = &result_bytes_per_trajectory;
    h.check_host_memory = &check_host_memory;
    h.simd_request = &cpu::simd_request;
    return h;
  }();
  return host;
}

class CompiledModel final : public ModelDrivers {
 public:
  CompiledModel(std::shared_ptr<const ModelSpec> spec, std::vector<double> constants)
      : spec_(std::move(spec)), constants_(std::move(constants)) {}

  Result solve(const Batch& batch, const Options& options, Backend backend, const Progress& progress) const override {
    Backend resolved = backend;
    const ModelDrivers& d = drivers(resolved);
    return d.solve(batch, options, resolved, progress);
  }
  Observation observe(const Batch& batch, const Options& options, std::vector<ObjectiveSpec> objectives,
                      std::vector<int> design, Backend backend, const Progress& progress) const override {
    Backend resolved = backend;
    const ModelDrivers& d = drivers(resolved);
    return d.observe(batch, options, std::move(objectives), std::move(design), resolved, progress);
  }
  Backend backend_for(Backend requested) const override {
    drivers(requested);
    return requested;
  }
  void impact_speeds(const Result& record, std::size_t i, RowParams theta, const std::vector<int>& parameters,
                     double* speed, double* slope) const override {
    Backend host = Backend::Cpu;
    drivers(host).impact_speeds(record, i, theta, parameters, speed, slope);
  }

 private:
  // The drivers for `backend`, resolved to Cpu or Cuda in place. Auto with a device but no nvcc
  // runs on the CPU, and says so once: later Auto runs go to the CPU without trying again.
  const ModelDrivers& drivers(Backend& backend) const {
    const Backend wanted = backend;
    backend = resolve_backend(backend);
    std::lock_guard<std::mutex> lock(mutex_);
    if (backend == Backend::Cuda && wanted == Backend::Auto && !cuda_ && !cuda_refused_) {
      try {
        cuda_ = start(Backend::Cuda);
      } catch (const ToolchainError& e) {
        cuda_refused_ = true;
        std::fprintf(stderr, "saltation: model \"%s\" runs on the CPU: %s\n", spec_->name.c_str(), e.what());
      }
    }
    if (backend == Backend::Cuda && wanted == Backend::Auto && cuda_refused_) backend = Backend::Cpu;
    std::unique_ptr<const ModelDrivers>& slot = backend == Backend::Cuda ? cuda_ : cpu_;
    if (!slot) slot = start(backend);
    return *slot;
  }

  // The model's drivers from its plugin for `backend`, compiled or found in the cache.
  std::unique_ptr<const ModelDrivers> start(Backend backend) const {
    const LoadedPlugin plugin = load_plugin(*spec_, backend);
    std::unique_ptr<const ModelDrivers> d(plugin.make(&plugin_host(), constants_.data()));
    if (!d) throw ToolchainError("the compiled model \"" + plugin.report.library + "\" did not start (ABI mismatch?)");
    return d;
  }

  std::shared_ptr<const ModelSpec> spec_;
  std::vector<double> constants_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<const ModelDrivers> cpu_, cuda_;
  mutable bool cuda_refused_ = false;  // Auto found no way to compile for CUDA
};

ModelInfo info_of(const ModelSpec& spec, nlohmann::json config) {
  ModelInfo info;
  info.name = spec.name;
  info.N = static_cast<int>(spec.states.size());
  info.P = static_cast<int>(spec.parameters.size());
  info.M = static_cast<int>(spec.guards.size());
  info.state_names = spec.states;
  for (const Parameter& p : spec.parameters) {
    info.param_names.push_back(p.name);
    info.param_domains.push_back(p.domain.text);
  }
  for (const Guard& g : spec.guards) info.guard_names.push_back(g.name);
  info.definition_digest = definition_digest(spec);
  info.config = std::move(config);
  return info;
}

}  // namespace

AnyModel load_model(std::shared_ptr<const ModelSpec> spec, const nlohmann::json& config_json) {
  const io::JsonObject config(config_json, "config");
  std::vector<double> constants;
  nlohmann::json used = nlohmann::json::object();
  for (const Constant& c : spec->constants) {
    const double v = config.number(c.name, c.value);
    if (!is_finite(v)) throw InvalidInput(config.path(c.name), -1, "must be finite");
    constants.push_back(v);
    used[c.name] = v;
  }
  config.reject_unknown("the constants of model " + spec->name);
  ModelInfo info = info_of(*spec, std::move(used));
  return AnyModel(std::make_shared<const CompiledModel>(std::move(spec), std::move(constants)), std::move(info));
}

BuildReport build_model(const ModelSpec& spec, Backend backend) { return load_plugin(spec, backend).report; }

}  // namespace saltation::user_model
