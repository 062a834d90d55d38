#include "saltation/sweep/gradient_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "saltation/errors.hpp"

namespace saltation::sweep {

using nlohmann::json;

namespace {

// The table entry (core/objectives.hpp) of a summary's definition of a built-in objective: the
// kind whose key it holds.
ObjectiveTraits traits_of(const json& definition) {
  for (int k = 0; k < kObjectiveKinds; ++k) {
    const ObjectiveTraits t = objective_traits(static_cast<ObjectiveKind>(k));
    if (definition.contains(t.key)) return t;
  }
  throw InvalidInput("objectives", -1, "an objective definition names no objective kind: " + definition.dump());
}

bool definition_differentiable(const json& objectives, const json& definition) {
  if (definition.contains("user_inputs")) {
    for (const auto& input : definition.at("user_inputs"))
      for (const auto& other : objectives)
        if (other.at("name") == input && !definition_differentiable(objectives, other)) return false;
    return true;
  }
  return traits_of(definition).differentiable;
}

Estimate column_mean(const CoMoments& m, int column) { return {m.mean(column), m.standard_error(column)}; }

}  // namespace

std::vector<std::string> gradient_names(const json& header) {
  std::vector<std::string> names;
  for (const auto& g : header.at("gradient_parameters")) names.push_back(g.at("name"));
  return names;
}

const char* estimator_name(GradientEstimator e) { return e == GradientEstimator::Corrected ? "corrected" : "pathwise"; }

ObjectiveColumns objective_columns(const json& header, std::size_t o) {
  const json& objectives = header.at("objectives");
  const json& definition = objectives.at(o);
  ObjectiveColumns c;
  for (const auto& g : header.at("gradient_parameters")) {
    ++c.n_design;
    if (g.contains("score")) c.has_score.push_back(g.at("score").get<bool>());  // a distribution's design
  }
  c.pathwise = c.n_design > 0 && definition_differentiable(objectives, definition);
  c.boundary = c.n_design > 0 && definition.contains("bandwidth");
  c.jumps_in_value = !definition.contains("user_inputs") && traits_of(definition).jumps_at_horizon;
  if (c.boundary) {
    c.bandwidth = definition.at("bandwidth").get<double>();
    c.speed_bandwidth = definition.value("speed_bandwidth", 0.0);
    c.estimator = definition.at("gradient") == "corrected" ? GradientEstimator::Corrected : GradientEstimator::Pathwise;
  }
  return c;
}

bool ObjectiveGradient::agrees(std::size_t d) const {
  const ParameterGradient& p = parameters[d];
  const Estimate& e = chosen(d);
  return p.has_referee && std::abs(e.mean - p.referee.mean) <= 4.0 * std::hypot(e.std_error, p.referee.std_error);
}

ObjectiveGradient objective_gradient(const OutputSummary& summary, const ObjectiveColumns& c,
                                     const OutputSummary* referee, double delta) {
  ObjectiveGradient g;
  g.estimator = c.estimator;
  const CoMoments& m = summary.moments();
  const double n = m.weight();
  for (int d = 0; d < c.n_design; ++d) {
    ParameterGradient p;
    if (c.pathwise) p.pathwise = column_mean(m, 1 + d);
    if (c.boundary) {
      p.has_boundary = true;
      p.discontinuity = column_mean(m, c.near(d));
      if (c.jumps_in_value) {
        p.boundary = column_mean(m, c.z(d));
        // The two terms come from the same samples: Var(pathwise + z) with their covariance.
        const int a = 1 + d, b = c.z(d);
        const double variance = c.pathwise ? m.variance(a) + m.variance(b) + 2.0 * m.covariance(a, b) : m.variance(b);
        p.corrected = {p.pathwise.mean + p.boundary.mean, std::sqrt(variance / n)};
      } else {
        // Of the mean over the samples where L is defined: Cov(L, z) (population); its standard
        // error taken as sqrt(Var L Var z / n), exact when L and z are uncorrelated, and added to
        // the pathwise one's as if independent. Where no event comes near t_final, z = 0 and the
        // corrected estimate is the pathwise one, bit for bit.
        p.boundary = {m.comoment(0, c.z(d)) / n, std::sqrt(m.variance(0) * m.variance(c.z(d)) / n)};
        p.corrected = {p.pathwise.mean + p.boundary.mean, std::hypot(p.pathwise.std_error, p.boundary.std_error)};
      }
    }
    const int k = d - (c.n_design - c.n_scores());  // the distribution design's index
    if (k >= 0 && c.has_score[k]) {
      // (L - mean L) s per sample, the mean as the baseline (a control variate: E[s] = 0); its
      // standard error from Var(L s - mean(L) s), treating the baseline as fixed.
      const double L = m.mean(0);
      const int s = c.score(k), ls = c.weighted_score(k);
      const double variance = m.variance(ls) + L * L * m.variance(s) - 2.0 * L * m.covariance(ls, s);
      p.has_likelihood_ratio = true;
      p.likelihood_ratio = {m.comoment(0, s) / n, std::sqrt(std::max(variance, 0.0) / n)};
    }
    if (referee && delta > 0.0) {
      const CoMoments& r = referee->moments();
      const int plus = 2 * d, minus = 2 * d + 1;
      p.has_referee = true;
      const double variance = r.variance(plus) + r.variance(minus) - 2.0 * r.covariance(plus, minus);
      p.referee = {(r.mean(plus) - r.mean(minus)) / (2.0 * delta),
                   std::sqrt(std::max(variance, 0.0) / r.weight()) / (2.0 * delta)};
    }
    g.parameters.push_back(p);
  }
  return g;
}

}  // namespace saltation::sweep
