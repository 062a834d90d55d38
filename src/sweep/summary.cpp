#include "saltation/sweep/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "saltation/errors.hpp"

namespace saltation::sweep {

OutputSummary::OutputSummary(const SummaryOptions& options)
    : moments_(options.n_outputs),
      min_(options.n_outputs, std::numeric_limits<double>::infinity()),
      max_(options.n_outputs, -std::numeric_limits<double>::infinity()) {
  if (!options.histograms.empty() && options.histograms.size() != static_cast<std::size_t>(options.n_outputs))
    throw InvalidInput("histograms", -1, "give one range per output or none");
  for (const auto& range : options.histograms) histograms_.emplace_back(range);
  quantiles_.assign(options.n_outputs, QuantileSketch(options.quantile_mantissa_bits));
}

void OutputSummary::add(std::uint64_t, const double* outputs) {
  const int n = input_width();
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(outputs[i])) {
      ++n_non_finite_;
      return;
    }
  }
  ++n_finite_;
  moments_.add(outputs);
  for (int i = 0; i < n; ++i) {
    min_[i] = std::min(min_[i], outputs[i]);
    max_[i] = std::max(max_[i], outputs[i]);
    quantiles_[i].add(outputs[i]);
    if (has_histograms()) histograms_[i].add(outputs[i]);
  }
}

void OutputSummary::merge(const OutputSummary& later) {
  if (later.input_width() != input_width() || later.has_histograms() != has_histograms())
    throw InvalidInput("summary", -1, "merging summaries of different shape");
  n_finite_ += later.n_finite_;
  n_non_finite_ += later.n_non_finite_;
  moments_.merge(later.moments_);
  for (int i = 0; i < input_width(); ++i) {
    min_[i] = std::min(min_[i], later.min_[i]);
    max_[i] = std::max(max_[i], later.max_[i]);
    quantiles_[i].merge(later.quantiles_[i]);
    if (has_histograms()) histograms_[i].merge(later.histograms_[i]);
  }
}

void OutputSummary::assign(const SummaryState& state) {
  const int n = input_width();
  n_finite_ = state.n_finite;
  n_non_finite_ = state.n_non_finite;
  moments_.assign(state.weight, state.mean.data(), state.comoment.data());
  min_ = state.min;
  max_ = state.max;
  std::size_t slot = 0;  // output i's slots follow those of outputs 0 .. i - 1
  for (int i = 0; i < n; ++i) {
    if (has_histograms()) {
      histograms_[i].add_slots(state.slots.data() + slot);
      slot += histograms_[i].range().n_bins + 2;
    }
    for (const auto& [key, count] : state.buckets[i]) quantiles_[i].add_bucket(key, count);
  }
}

nlohmann::json OutputSummary::to_json() const {
  nlohmann::json histograms = nlohmann::json::array(), quantiles = nlohmann::json::array();
  for (const auto& h : histograms_) histograms.push_back(h.to_json());
  for (const auto& q : quantiles_) quantiles.push_back(q.to_json());
  return {
      {"n_finite", n_finite_}, {"n_non_finite", n_non_finite_},       {"moments", moments_.to_json()},    {"min", min_},
      {"max", max_},           {"histograms", std::move(histograms)}, {"quantiles", std::move(quantiles)}};
}

OutputSummary OutputSummary::from_json(const nlohmann::json& j) {
  SummaryOptions options;
  options.n_outputs = j.at("moments").at("dim").get<int>();
  for (const auto& h : j.at("histograms")) options.histograms.push_back(Histogram::from_json(h).range());
  options.quantile_mantissa_bits = j.at("quantiles").at(0).at("mantissa_bits").get<int>();
  OutputSummary s(options);
  s.n_finite_ = j.at("n_finite").get<std::uint64_t>();
  s.n_non_finite_ = j.at("n_non_finite").get<std::uint64_t>();
  s.moments_ = CoMoments::from_json(j.at("moments"));
  // min/max of an empty summary are +-inf, which JSON text cannot hold (they come back null).
  const auto extremes = [&](const char* key, double empty_value) {
    std::vector<double> v;
    for (const auto& x : j.at(key)) v.push_back(x.is_null() ? empty_value : x.get<double>());
    return v;
  };
  s.min_ = extremes("min", std::numeric_limits<double>::infinity());
  s.max_ = extremes("max", -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < s.histograms_.size(); ++i)
    s.histograms_[i] = Histogram::from_json(j.at("histograms").at(i));
  for (std::size_t i = 0; i < s.quantiles_.size(); ++i)
    s.quantiles_[i] = QuantileSketch::from_json(j.at("quantiles").at(i));
  if (s.min_.size() != s.quantiles_.size() || s.max_.size() != s.quantiles_.size() ||
      j.at("quantiles").size() != s.quantiles_.size())
    throw InvalidInput("summary", -1, "array sizes do not match the number of outputs");
  return s;
}

nlohmann::json OutputSummary::report() const {
  static constexpr double levels[] = {0.01, 0.05, 0.50, 0.95, 0.99};
  static constexpr const char* names[] = {"q01", "q05", "q50", "q95", "q99"};
  nlohmann::json outputs = nlohmann::json::array();
  for (int i = 0; i < input_width(); ++i) {
    nlohmann::json o = {{"mean", moments_.mean(i)},
                        {"standard_error", moments_.standard_error(i)},
                        {"sd", std::sqrt(moments_.variance(i))},
                        {"min", min_[i]},
                        {"max", max_[i]}};
    if (n_finite_ > 0) {
      for (int l = 0; l < 5; ++l) o[names[l]] = quantiles_[i].quantile(levels[l]);
      o["quantile_relative_error_bound"] = quantiles_[i].relative_error_bound();
    }
    if (has_histograms()) o["histogram"] = histograms_[i].to_json();
    outputs.push_back(std::move(o));
  }
  nlohmann::json covariance = nlohmann::json::array();
  for (int i = 0; i < input_width(); ++i) {
    std::vector<double> row(input_width());
    for (int k = 0; k < input_width(); ++k) row[k] = moments_.covariance(i, k);
    covariance.push_back(row);
  }
  return {{"n_samples", n_samples()},
          {"n_non_finite", n_non_finite_},
          {"outputs", std::move(outputs)},
          {"covariance", std::move(covariance)}};
}

}  // namespace saltation::sweep
