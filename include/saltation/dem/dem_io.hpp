#pragma once
// The disk engine's requests and results in the I/O layer's terms (schema: docs/disks.md):
// a JSON request read into typed structs (every error names the key, unknown keys rejected),
// results as io::ArrayTable (one row per system) for the JSON / NPY / CSV writers, and the
// summary statistics of a batched fit. `saltation disks` is a thin adapter over this.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "saltation/backend.hpp"
#include "saltation/dem/engine.hpp"
#include "saltation/dem/fit.hpp"
#include "saltation/io/table.hpp"
#include "saltation/progress.hpp"

namespace saltation::dem {

enum class DisksMode { Rollout, Fit };

struct DisksRequest {
  DisksMode mode = DisksMode::Rollout;
  DiskBatch batch;
  RolloutOptions options;
  std::optional<LossSpec> loss;  // present when the request has observations
  FitOptions fit;
  Backend backend = Backend::Cpu;
};

// Values given outside the request (command-line flags); each one present replaces the
// request's value.
struct DisksOverrides {
  std::optional<double> dt;
  std::optional<int> n_frames, stride;
  std::optional<Backend> backend;
};

// Reads a request object. Throws InvalidInput naming the key (and the system row), also for a
// key the schema does not have. The engine validates the values when it runs.
DisksRequest parse_disks_request(const nlohmann::json& request, const DisksOverrides& overrides = {});

// The options in force (defaults filled in), as JSON: what provenance records.
nlohmann::json normalized_options(const DisksRequest& request);
// Version, git hash, backend used, mode, sizes and the normalised options.
nlohmann::json provenance(const DisksRequest& request, Backend used);

// Statistics over the systems of a fit.
struct FitSummary {
  double stiffness_factor_mean = 0.0;   // of exp(theta) = k / k_ref
  double stiffness_factor_sd = 0.0;     // sample standard deviation (0 for one system)
  int outcome_count[4] = {0, 0, 0, 0};  // systems per FitOutcome
  int iterations_max = 0;
  double iterations_mean = 0.0, evaluations_mean = 0.0;
};
FitSummary summarize_fit(const FitResult& fit);

// Row = system. A rollout: status, positions / velocities [n_frames][n_disks][2],
// d_positions / d_velocities [n_frames][n_tangents][n_disks][2] (with tangents), loss and
// gradient [n_tangents] (with observations). The table views `result`, which must outlive it.
io::ArrayTable rollout_table(const DisksRequest& request, const RolloutResult& result, Backend used);
// Row = system. log_stiffness, stiffness_factor, loss, initial_loss, gradient, iterations,
// evaluations, outcome (+ history_length, history_log_stiffness, history_loss [max] with
// history); meta: the summary, timings, messages. The table views `fit`.
io::ArrayTable fit_table(const DisksRequest& request, const FitResult& fit, Backend used);

// Runs the request and writes its table under the prefix `out`: "json" to out.json (standard
// output when `out` is empty), "npy" to out.json (meta and the array index) + out_<array>.npy,
// "csv" to out.csv + out.json (meta). Throws InvalidInput for a bad format or a missing `out`
// before anything runs.
void run_and_write(const DisksRequest& request, const std::string& format, const std::string& out,
                   const Progress& progress = nullptr);

}  // namespace saltation::dem
