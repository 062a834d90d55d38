#include "saltation/sweep/sobol.hpp"

#include <cmath>

#include "saltation/errors.hpp"
#include "saltation/sweep/moments.hpp"
#include "saltation/sweep/random.hpp"

namespace saltation::sweep {

SobolAccumulator::SobolAccumulator(int n_factors, std::uint64_t seed, int n_resamples)
    : n_factors_(n_factors), seed_(seed), n_resamples_(n_resamples) {
  if (n_factors < 1) throw InvalidInput("n_factors", -1, "a Sobol study needs at least one random parameter");
  if (n_resamples < 0) throw InvalidInput("n_resamples", -1, "must not be negative");
  const std::size_t n_sets = set(n_resamples + 1, 0);
  weight_.assign(n_sets, 0.0);
  mean_.assign(n_sets * 2, 0.0);
  comoment_.assign(n_sets * 4, 0.0);
}

void SobolAccumulator::add(std::uint64_t index, const double* values) {
  for (int m = 0; m < input_width(); ++m) {
    if (!std::isfinite(values[m])) {
      ++n_non_finite_;
      return;
    }
  }
  for (int r = 0; r <= n_resamples_; ++r) {
    const std::size_t k = set(r, 0);
    sobol_add_replicate(&weight_[k], &mean_[k * 2], &comoment_[k * 4], n_factors_, seed_, index, r, values);
  }
}

void SobolAccumulator::assign(std::uint64_t n_non_finite, const double* weight, const double* mean,
                              const double* comoment) {
  n_non_finite_ = n_non_finite;
  weight_.assign(weight, weight + weight_.size());
  mean_.assign(mean, mean + mean_.size());
  comoment_.assign(comoment, comoment + comoment_.size());
}

void SobolAccumulator::merge(const SobolAccumulator& later) {
  if (later.n_factors_ != n_factors_ || later.n_resamples_ != n_resamples_ || later.seed_ != seed_)
    throw InvalidInput("sobol", -1, "merging accumulators of different studies");
  n_non_finite_ += later.n_non_finite_;
  for (std::size_t k = 0; k < weight_.size(); ++k)
    comoments_merge(weight_[k], &mean_[k * 2], &comoment_[k * 4], 2, later.weight_[k], &later.mean_[k * 2],
                    &later.comoment_[k * 4]);
}

// Replicate r's indices. V pools f(A) and f(B) (equal weights W): their co-moments merged by
// Chan's rule, C = C_AA + C_BB + (mean_A - mean_B)^2 W / 2, over 2W.
void SobolAccumulator::replicate_estimates(int r, std::vector<Estimate>& out, double& mean, double& variance) const {
  const std::size_t ab = set(r, 0);
  const double w = weight_[ab];
  const double mean_a = mean_[ab * 2], mean_b = mean_[ab * 2 + 1];
  const double d = mean_a - mean_b;
  mean = 0.5 * (mean_a + mean_b);
  variance = (comoment_[ab * 4] + comoment_[ab * 4 + 3] + d * d * w / 2.0) / (2.0 * w);
  out.resize(n_factors_);
  for (int i = 0; i < n_factors_; ++i) {
    const std::size_t k = set(r, 1 + i);
    const double mean_d = mean_[k * 2 + 1];
    out[i].first_order = comoment_[k * 4 + 1] / w / variance;
    out[i].total = (comoment_[k * 4 + 3] + w * mean_d * mean_d) / (2.0 * w) / variance;
  }
}

SobolIndices SobolAccumulator::indices(double confidence_level) const {
  if (!(confidence_level > 0.0 && confidence_level < 1.0))
    throw InvalidInput("confidence_level", -1, "must be in (0, 1)");
  if (weight_[0] < 2.0) throw InvalidInput("sobol", -1, "needs at least two finite base samples");
  SobolIndices result;
  result.n_base_samples = static_cast<std::uint64_t>(weight_[0]);
  result.n_non_finite = n_non_finite_;
  result.confidence_level = confidence_level;
  result.n_resamples = n_resamples_;
  std::vector<Estimate> estimate;
  replicate_estimates(0, estimate, result.mean, result.variance);
  for (const auto& e : estimate) {
    result.S1.push_back(e.first_order);
    result.ST.push_back(e.total);
  }
  // Bootstrap spread: Welford over the replicates (sample sd, ddof = 1, as SALib).
  CoMoments spread(2 * n_factors_);
  std::vector<double> row(2 * n_factors_);
  for (int r = 1; r <= n_resamples_; ++r) {
    double mean, variance;
    replicate_estimates(r, estimate, mean, variance);
    for (int i = 0; i < n_factors_; ++i) {
      row[i] = estimate[i].first_order;
      row[n_factors_ + i] = estimate[i].total;
    }
    spread.add(row.data());
  }
  const double z = inverse_normal_cdf(0.5 + confidence_level / 2.0);
  for (int i = 0; i < n_factors_; ++i) {
    result.S1_conf.push_back(z * std::sqrt(spread.variance(i)));
    result.ST_conf.push_back(z * std::sqrt(spread.variance(n_factors_ + i)));
  }
  return result;
}

nlohmann::json SobolIndices::to_json() const {
  return {{"S1", S1},
          {"S1_conf", S1_conf},
          {"ST", ST},
          {"ST_conf", ST_conf},
          {"n_base_samples", n_base_samples},
          {"n_non_finite", n_non_finite},
          {"mean", mean},
          {"variance", variance},
          {"confidence_level", confidence_level},
          {"n_resamples", n_resamples}};
}

nlohmann::json SobolAccumulator::to_json() const {
  return {{"n_factors", n_factors_}, {"seed", seed_}, {"n_resamples", n_resamples_}, {"n_non_finite", n_non_finite_},
          {"weight", weight_},       {"mean", mean_}, {"comoment", comoment_}};
}

SobolAccumulator SobolAccumulator::from_json(const nlohmann::json& j) {
  SobolAccumulator s(j.at("n_factors").get<int>(), j.at("seed").get<std::uint64_t>(), j.at("n_resamples").get<int>());
  s.n_non_finite_ = j.at("n_non_finite").get<std::uint64_t>();
  const auto read = [&](const char* key, std::vector<double>& into) {
    auto values = j.at(key).get<std::vector<double>>();
    if (values.size() != into.size()) throw InvalidInput("sobol", -1, std::string(key) + " has the wrong length");
    into = std::move(values);
  };
  read("weight", s.weight_);
  read("mean", s.mean_);
  read("comoment", s.comoment_);
  return s;
}

}  // namespace saltation::sweep
