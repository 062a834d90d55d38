#pragma once
// A Monte Carlo design and sensitivity study (docs/sweep.md): parameters sampled from counter-based
// streams, every sample integrated, objectives and their gradients with respect to the design
// parameters folded into accumulators block by block (block_reduction.hpp), never stored. The
// summary is bitwise identical for any chunk size, thread count and shard split.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "saltation/any_model.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/sweep/block_reduction.hpp"
#include "saltation/sweep/distributions.hpp"
#include "saltation/sweep/qmc.hpp"
#include "saltation/sweep/sobol.hpp"
#include "saltation/sweep/summary.hpp"

namespace saltation::sweep {

// How the summary estimates d E[L] / dtheta (docs/sweep.md, "Gradients across topology changes"):
// the mean of the per-trajectory derivative, or that plus the boundary term of the events that
// cross t_final (boundary.hpp).
enum class GradientEstimator { Pathwise, Corrected };

// A named objective of a study: what it reads (ObjectiveSpec, core/objectives.hpp: its kind's
// table entry says which of event, state, target and status) and how its gradient is estimated.
// Events are counted from 0 (event 1 is the second).
struct Objective : ObjectiveSpec {
  std::string name;
  GradientEstimator gradient = GradientEstimator::Corrected;
  double bandwidth = 0.0;        // of the boundary term's kernel; 0: from the pilot (boundary.hpp)
  double speed_bandwidth = 0.0;  // of settling's kernel in speed (options.v_stop); 0: from the pilot
  // Counts, statuses and states read at t_final jump in value when an event crosses t_final; an
  // objective read at event c ceases to exist instead (boundary.hpp).
  bool jumps_in_value() const { return traits().jumps_at_horizon; }
};

// An objective of C++ code: L = f(y), y the values of the study's built-in objectives named in
// `inputs`. Its gradient with respect to the design parameters comes by the chain rule,
// dL/dtheta = sum_i df/dy_i dy_i/dtheta (when every input is differentiable); f writes df/dy_i
// into df_dy (inputs.size() entries). Library only: a study file cannot hold code.
struct UserObjective {
  std::string name;
  std::vector<std::string> inputs;
  std::function<double(const double* y, double* df_dy)> f;
};

// A design parameter of a sampling distribution ("h0": {"dist": "normal", "mean": {"design": 1.5},
// "sigma": 0.1}): E[L] is differentiated with respect to it pathwise through the sample
// x = F^-1(u; theta) and, where the support stays put, by the likelihood ratio (score.hpp).
struct DistributionDesign {
  int parameter = 0;  // the model parameter drawn from the distribution
  int field = 0;      // Distribution's a, b, c, d = 0 .. 3
  std::string name;   // "h0.mean"
};

// Where the uniforms of the sampled parameters come from (docs/sweep.md): independent Philox draws,
// or scrambled Sobol' points (qmc.hpp), which stratify the sample space and converge faster for
// smooth objectives.
enum class Sampling { Random, ScrambledSobol };

struct Study {
  Options options;                                       // as for solve; mark_invalid_rows is always on
  std::vector<Distribution> parameters;                  // one per model parameter, in order
  std::vector<DistributionDesign> distribution_designs;  // in parameter order, then field order
  std::vector<Objective> objectives;
  std::vector<UserObjective> user_objectives;  // after `objectives` in every summary
  std::uint64_t samples = 0;                   // base samples (Sobol: each costs k + 2 trajectories)
  std::uint64_t seed = 0;
  bool sobol = false;
  Sampling sampling = Sampling::Random;
  int sobol_resamples = 100;           // bootstrap replicates of the Sobol intervals
  std::uint64_t block_size = 4096;     // the reduction tree's leaves; part of the result
  std::uint64_t pilot_samples = 1024;  // samples 0 .. that fix the histogram ranges and bandwidths
  // The referee ("gradient_check": {"delta": d}): every sample also runs at theta +- delta e_p for
  // each design parameter p, on the same draws, for the central difference of E[L]. 0: off.
  double gradient_check_delta = 0.0;

  std::vector<int> design_parameters() const;  // indices of the design parameters
  // What the study differentiates by: the design parameters, then the distribution designs.
  int n_gradients() const { return static_cast<int>(design_parameters().size() + distribution_designs.size()); }
  std::vector<std::string> gradient_names(const ModelInfo& info) const;  // "e", "h0.mean"
  std::vector<double> gradient_values() const;                           // their values
  void set_gradient_values(const std::vector<double>& values);           // n_gradients() values
};

// Reads a study for the model `info` (the model itself is read with io::parse_model_choice).
// Throws InvalidInput naming the key: unknown keys, distributions that cannot be sampled, a
// parameter both designed and sampled, an event index past the capacity, zero samples, ...
Study parse_study(const nlohmann::json& study, const ModelInfo& info);

// How a study runs; nothing here changes its summary.
struct StudyResult;

struct StudyRun {
  Backend backend = Backend::Auto;
  std::uint64_t memory_budget =
      0;                        // bytes for one chunk's trajectories; 0: 1 GiB (CPU), a quarter of the device's (CUDA)
  int shard = 0, n_shards = 1;  // run blocks [n_blocks shard / n_shards, n_blocks (shard + 1) / n_shards)
  std::string per_sample_prefix;  // when not empty: PREFIX_<name>.npy per-sample arrays, streamed
  Progress progress;              // samples done of this shard's samples (of those left, when resumed)
  // When set, a run that stops early (an interrupt, a CUDA or I/O failure) first hands the blocks
  // it completed from the shard's start on (with those of `resume`) to this, then the error
  // propagates. Not called when there are none. Not with per-sample files.
  std::function<void(const StudyResult&)> keep_partial;
  // A kept partial of this shard (what keep_partial got): the run checks that its header is this
  // study's, runs the blocks after it and returns the two merged. Not with per-sample files.
  const StudyResult* resume = nullptr;
};

// Everything the block tree accumulates for a study: outcomes (status, event count, whether it
// differs from the nominal trajectory's), per objective its value, gradient columns (pathwise,
// boundary terms, discontinuity indicators, scores: gradient_estimate.hpp), the referee's pairs,
// and the Sobol sums.
class StudyAccumulator {
 public:
  StudyAccumulator() = default;
  StudyAccumulator(const Study& study, int n_events_capacity, const std::vector<HistogramRange>& objective_ranges);

  int input_width() const;
  void add(std::uint64_t index, const double* values);
  void merge(const StudyAccumulator& later);
  nlohmann::json to_json() const;
  static StudyAccumulator from_json(const nlohmann::json& j);

  const OutputSummary& outcomes() const { return outcomes_.front(); }
  const std::vector<OutputSummary>& objectives() const { return objectives_; }
  // Per objective, with a gradient check: L(theta + delta e_d), L(theta - delta e_d) per design
  // parameter d, on the same draws (empty without one).
  const std::vector<OutputSummary>& referee() const { return referee_; }
  const std::vector<SobolAccumulator>& sobol() const { return sobol_; }

  // The parts in the order of a sample's values (the outcomes, the objectives, the referee's, then
  // the Sobol accumulators), for a device's fold to assign (study_fold.hpp).
  std::size_t n_summaries() const { return 1 + objectives_.size() + referee_.size(); }
  const OutputSummary& summary(std::size_t k) const {
    return k == 0                    ? outcomes_.front()
           : k <= objectives_.size() ? objectives_[k - 1]
                                     : referee_[k - 1 - objectives_.size()];
  }
  OutputSummary& summary(std::size_t k) { return const_cast<OutputSummary&>(std::as_const(*this).summary(k)); }
  SobolAccumulator& sobol(std::size_t o) { return sobol_[o]; }

 private:
  std::vector<OutputSummary> outcomes_;  // one: status, n_events, event_count_changed
  std::vector<OutputSummary> objectives_, referee_;
  std::vector<SobolAccumulator> sobol_;
};

// A chunk's whole blocks folded on the CUDA device (src/sweep/study_fold_cuda.cu, with CUB): the
// fold_blocks of block_reduction.hpp, value r of sample first_index + i at outputs[r * stride + i];
// one accumulator per block, bit for bit StudyAccumulator::add over its samples in index order.
// run_study uses it with the CUDA backend. CudaError without a device or without CUDA in the build.
std::vector<StudyAccumulator> fold_study_blocks_on_device(const StudyAccumulator& empty, std::uint64_t first_index,
                                                          std::uint64_t n_samples, std::uint64_t block_size,
                                                          const double* outputs, std::uint64_t stride);

struct StudyResult {
  Partial<StudyAccumulator> partial;
  nlohmann::json header;  // the study, the nominal trajectory, the model: what a merge checks
};

// Runs this shard of the study.
StudyResult run_study(const AnyModel& model, const Study& study, const StudyRun& run);

// The shard's state for `saltation merge` (JSON), and back.
nlohmann::json result_to_json(const StudyResult& result);
StudyResult result_from_json(const nlohmann::json& j);
// Shards of one study (same header) covering all blocks: the whole study's result.
StudyResult merge_results(const std::vector<StudyResult>& shards);

// What a user reads (docs/sweep.md), for a complete result: statistics, per objective and design
// parameter its gradient estimates with standard errors and discontinuity diagnostic (and the
// referee's), Sobol indices, status and event-count histograms.
nlohmann::json summary_json(const StudyResult& result);

}  // namespace saltation::sweep
