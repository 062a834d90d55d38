#pragma once
// The host API: validate, pick a backend, run. One call for every backend.
#include <cstddef>
#include <sstream>
#include <string>

#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/core/integrate_one.hpp"
#include "saltation/cpu.hpp"
#include "saltation/cuda.hpp"
#include "saltation/errors.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation {

// Throws InvalidInput for the first bad row (parameter outside its domain, NaN, or an initial
// state already past a guard), naming the parameter and the row.
template <class Model>
void validate_batch(const Model& model, const Batch& batch) {
  if (batch.P != Model::P)
    throw InvalidInput("theta", -1, "rows have " + std::to_string(batch.P) + " entries, " + Model::name +
                                        " needs " + std::to_string(Model::P));
  for (std::size_t i = 0; i < batch.n; ++i) {
    const RowParams th{batch.theta.data() + i, batch.n};
    const core::RowCheck check = core::check_row(model, th);
    if (check.param >= 0) {
      std::ostringstream what;
      what << "theta[" << check.param << "] = " << th[check.param] << " must be " << Model::param_domain(check.param);
      throw InvalidInput(Model::param_name(check.param), static_cast<long>(i), what.str());
    }
    if (check.guard >= 0) {
      std::ostringstream what;
      what << "the initial state is already past guard " << check.guard << " (g = " << check.guard_value << ")";
      throw InvalidInput("initial state", static_cast<long>(i), what.str());
    }
  }
}

// `progress`, when given, is told how many trajectories are done (see progress.hpp).
template <class Model>
Result solve(const Model& model, const Batch& batch, const Options& options, Backend backend = Backend::Auto,
             const Progress& progress = nullptr) {
  const Progress* report = progress ? &progress : nullptr;
  model.validate_config();
  const Options opts = normalize_options(options);
  if (batch.P != Model::P || !opts.mark_invalid_rows) validate_batch(model, batch);
  Result result(batch.n, Model::N, Model::P, opts.event_capacity, opts.sensitivities);
  if (batch.n == 0) return result;
  if (resolve_backend(backend) == Backend::Cuda) {
    if constexpr (has_cuda_driver<Model>::value) {
      cuda::solve(model, batch.theta.data(), batch.n, opts, result, report);
    } else {
      throw CudaError(std::string("no CUDA driver is compiled for model ") + Model::name +
                          ": instantiate saltation::cuda::solve<Model> in a .cu file that includes "
                          "kernels/solve.cuh and specialize saltation::has_cuda_driver<Model>",
                      __FILE__, __LINE__);
    }
  } else {
    cpu::solve(model, batch.theta.data(), batch.n, opts, result.view(), report);
  }
  return result;
}

}  // namespace saltation
