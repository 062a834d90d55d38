#pragma once
// The gradient estimates of one objective, read from its accumulated summary (docs/sweep.md,
// "Gradients across topology changes"): pathwise, boundary term, corrected, the discontinuity
// diagnostic and the referee's central difference, each with its standard error.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/sweep/study.hpp"
#include "saltation/sweep/summary.hpp"

namespace saltation::sweep {

struct Estimate {
  double mean = 0.0, std_error = 0.0;
};

// Where an objective's summary keeps what (study.cpp writes the columns in this order): the value
// (column 0), its pathwise derivatives (D columns, when differentiable), then with records (a
// built-in objective of a study with design parameters) the kernel terms z_d and the
// discontinuity indicators near_d (boundary.hpp), then per distribution design k (the last
// n_scores of the D) its score s_k and L s_k (score.hpp).
struct ObjectiveColumns {
  int n_design = 0;             // D: the design parameters, then the distribution designs
  std::vector<bool> has_score;  // per distribution design
  bool pathwise = false;        // derivative columns 1 .. D
  bool boundary = false;        // z_d and near_d columns after them
  bool jumps_in_value = false;  // Objective::jumps_in_value
  GradientEstimator estimator = GradientEstimator::Pathwise;
  double bandwidth = 0.0;
  double speed_bandwidth = 0.0;  // settling's (options.v_stop > 0), else 0
  int z(int d) const { return 1 + (pathwise ? n_design : 0) + d; }
  int near(int d) const { return z(d) + n_design; }
  int n_scores() const { return static_cast<int>(has_score.size()); }
  int score(int k) const { return 1 + (pathwise ? n_design : 0) + (boundary ? 2 * n_design : 0) + 2 * k; }
  int weighted_score(int k) const { return score(k) + 1; }
  int width() const { return score(n_scores()); }
};

// The columns of objective o of a study result's header (study.cpp's study_header): what a merge
// or a summary knows of the study.
ObjectiveColumns objective_columns(const nlohmann::json& header, std::size_t o);
// The names of the gradient parameters, in column order ("e", "h0.mean").
std::vector<std::string> gradient_names(const nlohmann::json& header);

struct ParameterGradient {
  Estimate pathwise;          // E[dL/dtheta] over the samples where L is defined (0 for counts and statuses)
  bool has_boundary = false;  // the three below: with records
  Estimate boundary;          // the boundary term (for an objective read at an event: of its mean where defined)
  Estimate discontinuity;     // share of samples near a discontinuity of L in theta
  Estimate corrected;         // pathwise + boundary
  bool has_referee = false;
  Estimate referee;  // (E[L(theta + delta)] - E[L(theta - delta)]) / (2 delta), common random numbers
  bool has_likelihood_ratio = false;
  Estimate likelihood_ratio;  // mean((L - mean L) s): the score-function gradient with the mean as baseline
};

struct ObjectiveGradient {
  GradientEstimator estimator = GradientEstimator::Pathwise;  // what `chosen` is
  std::vector<ParameterGradient> parameters;                  // per design parameter
  const Estimate& chosen(std::size_t d) const {
    return estimator == GradientEstimator::Corrected ? parameters[d].corrected : parameters[d].pathwise;
  }
  // Whether the referee agrees with the chosen estimate: within 4 combined standard errors.
  bool agrees(std::size_t d) const;
};

// `referee`: the objective's referee summary (L(theta + delta e_d), L(theta - delta e_d) per d), or null.
ObjectiveGradient objective_gradient(const OutputSummary& summary, const ObjectiveColumns& columns,
                                     const OutputSummary* referee, double delta);

const char* estimator_name(GradientEstimator e);

}  // namespace saltation::sweep
