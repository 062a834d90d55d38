#pragma once
// The host API: validate, pick a backend, run. One call for every backend, one per output
// (docs/architecture.md, "Outputs").
#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/core/trajectory.hpp"
#include "saltation/cpu.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/cuda.hpp"
#include "saltation/errors.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation {

// Rows a thread checks at least: a smaller batch is checked by fewer threads (one, below this),
// since waking a team costs more than checking a few thousand rows.
constexpr long long kValidateRowsPerThread = 16384;

// Throws InvalidInput for the first bad row (parameter outside its domain, NaN, or an initial
// state already past a guard), naming the parameter and the row. The rows are checked by up to
// `threads` threads (0: OpenMP's default), since on one thread the check can take longer than a
// GPU solve (bench/README.md, "Checking the rows"). The row named is the first bad one, as a
// serial pass would find.
template <class Model>
void validate_batch(const Model& model, const Batch& batch, int threads = 0) {
  if (batch.P != Model::P)
    throw InvalidInput(
        "theta", -1,
        "rows have " + std::to_string(batch.P) + " entries, " + Model::name + " needs " + std::to_string(Model::P));
  const long long n = static_cast<long long>(batch.n);
  const long long wanted = threads > 0 ? threads : omp_get_max_threads();
  const int team = static_cast<int>(std::max(1LL, std::min(wanted, n / kValidateRowsPerThread)));
  long long first_bad = n;
  // Static schedule: each thread's rows are one ascending range, so after its first bad row the
  // rest of its range cannot hold the batch's first.
#pragma omp parallel for num_threads(team) schedule(static) reduction(min : first_bad)
  for (long long i = 0; i < n; ++i) {
    if (i > first_bad) continue;
    if (!core::check_row(model, RowParams{batch.theta.data() + i, batch.n}).ok()) first_bad = i;
  }
  if (first_bad == n) return;
  const RowParams th{batch.theta.data() + first_bad, batch.n};
  const core::RowCheck check = core::check_row(model, th);
  if (check.param >= 0) {
    std::ostringstream what;
    what << "theta[" << check.param << "] = " << th[check.param] << " must be " << Model::param_domain(check.param);
    throw InvalidInput(Model::param_name(check.param), static_cast<long>(first_bad), what.str());
  }
  std::ostringstream what;
  what << "the initial state is already past guard " << check.guard << " (g = " << check.guard_value << ")";
  throw InvalidInput("initial state", static_cast<long>(first_bad), what.str());
}

namespace detail {

// Checks the model's configuration and the batch's rows as every entry point does; returns the
// normalized options.
template <class Model>
Options checked_options(const Model& model, const Batch& batch, const Options& options) {
  model.validate_config();
  const Options opts = normalize_options(options);
  if (opts.atol.states != 0 && opts.atol.states != Model::N)
    throw InvalidInput("options.atol", -1,
                       "lists " + std::to_string(opts.atol.states) + " tolerances, one per state, but " + Model::name +
                           " has " + std::to_string(Model::N) + (Model::N == 1 ? " state" : " states"));
  if (batch.P != Model::P || !opts.mark_invalid_rows) validate_batch(model, batch, opts.threads);
  return opts;
}

// Refuses, before anything is allocated, a record of the batch the host cannot hold (backend.hpp).
template <class Model>
void check_result_memory(std::size_t n, int C, bool sensitivities) {
  check_host_memory(n, result_bytes_per_trajectory(Model::N, Model::P, C, sensitivities),
                    std::string("the results of ") + Model::name,
                    "solve fewer trajectories at a time (saltation solve --format npy --out PREFIX streams any "
                    "number in chunks), record fewer events (options.event_capacity) or leave out sensitivities");
}

// Runs the batch into `out` on the backend: the CPU driver with the Output policy (in SIMD lanes
// where cpu::solve_lanes or cpu::solve_static_lanes applies, else one trajectory per thread), or
// `cuda_driver(model)`, which calls the CUDA entry point named `cuda_entry` for the same policy.
// `cuda_driver` is a generic lambda, so that the entry point it names is instantiated only for a
// model with a CUDA driver. `out` comes unfilled (Fill::None): the CUDA driver writes every entry,
// the CPU drivers only what happens, on the defaults.
template <class Output, class Model, class Host, class CudaDriver>
void run_batch(const Model& model, const Batch& batch, const Options& opts, Backend backend, Host& out,
               const Progress& progress, const char* cuda_entry, CudaDriver&& cuda_driver) {
  if (batch.n == 0) return;
  const auto on_cpu = [&] {
    out.fill_defaults();
    const Progress* report = progress ? &progress : nullptr;
    if constexpr (has_cpu_lanes<Model>::value) {
      if (cpu::solve_lanes<Output>(model, batch.theta.data(), batch.n, opts, out.view(), report)) return;
    } else if constexpr (has_static_cpu_lanes<Model>::value) {
      if (cpu::solve_static_lanes<Output>(model, batch.theta.data(), batch.n, opts, out.view(), report)) return;
    }
    cpu::solve<Output>(model, batch.theta.data(), batch.n, opts, out.view(), report);
  };
  const auto on_cuda = [&] {
    if constexpr (has_cuda_driver<Model>::value) {
      cuda_driver(model);
    } else {
      throw CudaError(std::string("no CUDA driver is compiled for model ") + Model::name +
                          ": instantiate saltation::cuda::" + cuda_entry +
                          "<Model> in a .cu file that includes "
                          "kernels/solve.cuh and specialize saltation::has_cuda_driver<Model>",
                      __FILE__, __LINE__);
    }
  };
  run_on_backend(backend_for_method(backend, opts), on_cpu, on_cuda);
}

}  // namespace detail

// Every trajectory's full record (ResultView). `progress`, when given, is told how many
// trajectories are done (see progress.hpp).
template <class Model>
Result solve(const Model& model, const Batch& batch, const Options& options, Backend backend = Backend::Auto,
             const Progress& progress = nullptr) {
  const Options opts = detail::checked_options(model, batch, options);
  detail::check_result_memory<Model>(batch.n, opts.event_capacity, opts.sensitivities);
  Result result(batch.n, Model::N, Model::P, opts.event_capacity, opts.sensitivities, Fill::None);
  detail::run_batch<core::FullRecord>(model, batch, opts, backend, result, progress, "solve", [&](const auto& m) {
    cuda::solve(m, batch.theta.data(), batch.n, opts, result, progress ? &progress : nullptr);
  });
  return result;
}

// Status, t_end, qf, n_events and (with sensitivities) dqf of every trajectory, with no event
// arrays: the Result has event capacity C = 0 (its events were counted, not kept), the other
// arrays bitwise as solve's.
template <class Model>
Result solve_final_state(const Model& model, const Batch& batch, const Options& options,
                         Backend backend = Backend::Auto, const Progress& progress = nullptr) {
  const Options opts = detail::checked_options(model, batch, options);
  detail::check_result_memory<Model>(batch.n, 0, opts.sensitivities);
  Result result(batch.n, Model::N, Model::P, 0, opts.sensitivities, Fill::None);
  detail::run_batch<core::FinalState>(
      model, batch, opts, backend, result, progress, "solve_final_state", [&](const auto& m) {
        cuda::solve_final_state(m, batch.theta.data(), batch.n, opts, result, progress ? &progress : nullptr);
      });
  return result;
}

// Each trajectory reduced to `objectives` and their derivatives with respect to the `design`
// parameters (Observation, ObservationView: values [n_outputs][n], status, n_events), with no
// event arrays at all. Derivatives need options.sensitivities. Throws InvalidInput for an
// objective or design index the model or the event capacity does not have.
template <class Model>
Observation observe(const Model& model, const Batch& batch, const Options& options,
                    std::vector<ObjectiveSpec> objectives, std::vector<int> design, Backend backend = Backend::Auto,
                    const Progress& progress = nullptr) {
  const Options opts = detail::checked_options(model, batch, options);
  bool derivatives = false;
  for (std::size_t o = 0; o < objectives.size(); ++o) {
    const ObjectiveSpec& ob = objectives[o];
    const std::string where = "objectives[" + std::to_string(o) + "]";
    if (ob.state < 0 || ob.state >= Model::N)
      throw InvalidInput(where, -1, "state " + std::to_string(ob.state) + " is not a state index of " + Model::name);
    if (ob.traits().reads_event && (ob.event < 0 || ob.event >= opts.event_capacity))
      throw InvalidInput(where, -1, "event " + std::to_string(ob.event) + " is outside the event capacity");
    if (ob.traits().reads_event && (ob.guard < -1 || ob.guard >= std::min(Model::M, kCountedGuards)))
      throw InvalidInput(where, -1, "guard " + std::to_string(ob.guard) + " is not a guard index of " + Model::name);
    derivatives = derivatives || ob.differentiable();
  }
  for (int p : design)
    if (p < 0 || p >= Model::P)
      throw InvalidInput("design", -1, std::to_string(p) + " is not a parameter index of " + Model::name);
  if (derivatives && !design.empty() && !opts.sensitivities)
    throw InvalidInput("design", -1, "derivatives with respect to design parameters need options.sensitivities");
  Observation observation(batch.n, std::move(objectives), std::move(design), Fill::None);
  detail::run_batch<core::ObjectiveObserver>(
      model, batch, opts, backend, observation, progress, "observe", [&](const auto& m) {
        cuda::observe(m, batch.theta.data(), batch.n, opts, observation, progress ? &progress : nullptr);
      });
  return observation;
}

}  // namespace saltation
