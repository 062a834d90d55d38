#pragma once
// The summary of a plain Monte Carlo sweep: for D outputs per sample, count, means with standard
// errors, the full D x D covariance (e.g. of a loss and its gradient entries dL/dtheta, so
// E[dL/dtheta] comes with its standard error), min/max, optional fixed-bin histograms and quantile
// sketches. It is an accumulator of the block tree (block_reduction.hpp).
//
// A sample with any non-finite output (a failed trajectory, an overflow) is counted in
// n_non_finite() and left out of every other statistic, so all statistics describe the same
// samples.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/sweep/histogram.hpp"
#include "saltation/sweep/moments.hpp"

namespace saltation::sweep {

struct SummaryOptions {
  int n_outputs = 1;
  std::vector<HistogramRange> histograms;  // empty (no histograms) or one range per output
  int quantile_mantissa_bits = 7;          // see QuantileSketch
};

// One block's OutputSummary as a device's fold leaves it, in flat arrays (OutputSummary::assign).
struct SummaryState {
  std::uint64_t n_finite = 0, n_non_finite = 0;
  double weight = 0.0;
  std::vector<double> mean, comoment, min, max;  // D, D x D, D, D
  std::vector<std::uint64_t>
      slots;  // per output its n_bins + 2 (histogram_slot), outputs in order; empty without histograms
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> buckets;  // per output: (sketch_key, count)
};

class OutputSummary {
 public:
  explicit OutputSummary(const SummaryOptions& options);

  int input_width() const { return moments_.dim(); }
  // `outputs` holds input_width() values of sample `index` (the index is unused: every sample
  // weighs the same).
  void add(std::uint64_t index, const double* outputs);
  void merge(const OutputSummary& later);
  // Becomes the summary whose samples gave `state` (this one empty, of the same shape): what add()
  // over them would have built, bit for bit when the fold used add()'s arithmetic.
  void assign(const SummaryState& state);

  std::uint64_t n_samples() const { return n_finite_ + n_non_finite_; }
  std::uint64_t n_non_finite() const { return n_non_finite_; }
  const CoMoments& moments() const { return moments_; }
  double min(int output) const { return min_[output]; }
  double max(int output) const { return max_[output]; }
  bool has_histograms() const { return !histograms_.empty(); }
  const Histogram& histogram(int output) const { return histograms_[output]; }
  const QuantileSketch& quantiles(int output) const { return quantiles_[output]; }

  // The state, exact for finite values; from_json(to_json()) reproduces it bit for bit.
  nlohmann::json to_json() const;
  static OutputSummary from_json(const nlohmann::json& j);
  // What a user reads: per output n, mean, standard error, sd, min, max, quantiles 1/5/50/95/99 %
  // (with the sketch's bound), histogram; and the covariance matrix.
  nlohmann::json report() const;

 private:
  std::uint64_t n_finite_ = 0, n_non_finite_ = 0;
  CoMoments moments_;
  std::vector<double> min_, max_;
  std::vector<Histogram> histograms_;
  std::vector<QuantileSketch> quantiles_;
};

}  // namespace saltation::sweep
