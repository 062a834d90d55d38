#include "saltation/sweep/robust_design.hpp"

#include <LBFGSB.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../recording_line_search.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/sweep/gradient_estimate.hpp"

namespace saltation::sweep {

using nlohmann::json;

namespace {

// Thrown by the objective through LBFGSpp. Not a std::exception, so the line-search hook, which
// turns LBFGSpp's own std::logic_error / std::runtime_error into a stall, lets it pass: either an
// error of the sweep itself (rethrown to the caller) or an objective undefined at a trial design.
struct EvaluationStopped {
  std::exception_ptr error;
  std::string undefined;
};

// LBFGSpp's line search could not make progress.
struct LineSearchStalled {
  explicit LineSearchStalled(std::string what) : message(std::move(what)) {}
  std::string message;
};

// Settings checks shared by the parser and the library call; messages name the study's keys.
void check_settings(const RobustDesignSettings& s, const Study& study, const ModelInfo& info) {
  const std::vector<std::string> design = study.gradient_names(info);
  const std::vector<double> start = study.gradient_values();
  if (design.empty())
    throw InvalidInput("parameters", -1, "no design parameter to optimise: mark at least one {\"design\": value}");
  if (s.objective < 0 || s.objective >= static_cast<int>(study.objectives.size()))
    throw InvalidInput("optimize.objective", -1, "is not an objective of the study");
  const Objective& objective = study.objectives[s.objective];
  if (!objective.differentiable() && objective.gradient != GradientEstimator::Corrected)
    throw InvalidInput(
        "optimize.objective", -1,
        "\"" + objective.name +
            "\" is piecewise constant and its gradient is pathwise (0): give it \"gradient\": \"corrected\"");
  if (!(s.lambda >= 0.0) || !std::isfinite(s.lambda))
    throw InvalidInput("optimize.lambda", -1, "must be a number >= 0");
  if (s.lower.size() != design.size() || s.upper.size() != design.size())
    throw InvalidInput("optimize.bounds", -1, "needs one lower and one upper bound per design parameter");
  for (std::size_t d = 0; d < design.size(); ++d) {
    const std::string key = "optimize.bounds." + design[d];
    if (!(s.lower[d] < s.upper[d])) throw InvalidInput(key, -1, "must be [low, high] with low < high");
    if (start[d] < s.lower[d] || start[d] > s.upper[d])
      throw InvalidInput(key, -1, "the design value " + std::to_string(start[d]) + " lies outside the bounds");
  }
  if (s.max_iterations < 1) throw InvalidInput("optimize.max_iterations", -1, "must be >= 1");
  if (!(s.gradient_tolerance >= 0.0)) throw InvalidInput("optimize.gradient_tolerance", -1, "must be >= 0");
  if (!(s.relative_gradient_tolerance >= 0.0))
    throw InvalidInput("optimize.relative_gradient_tolerance", -1, "must be >= 0");
  if (s.max_linesearch < 1) throw InvalidInput("optimize.max_linesearch", -1, "must be >= 1");
}

// F = mean + lambda sd at one design, from the sweep there.
class DesignObjective {
 public:
  DesignObjective(const Study& study, const RobustDesignSettings& settings, const StudySweep& sweep,
                  const DesignProgress& on_iterate)
      : study_(study), settings_(settings), sweep_(sweep), on_iterate_(on_iterate) {
    // Sobol indices are not part of F; the final design gets them from one more sweep.
    study_.sobol = false;
  }

  // LBFGSpp's objective: F(x), and dF/dx in `gradient`.
  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& gradient) {
    const std::vector<double> design(x.data(), x.data() + x.size());
    if (design != last_.point.design) last_ = evaluate(design);
    if (!std::isfinite(last_.point.value))
      throw EvaluationStopped{nullptr, "\"" + study_.objectives[settings_.objective].name +
                                           "\" is defined for fewer than two samples at the trial design"};
    if (last_.point.value < best_trial_.point.value) best_trial_ = last_;
    gradient = Eigen::Map<const Eigen::VectorXd>(last_.point.gradient.data(), x.size());
    return last_.point.value;
  }

  // The line search accepted its last trial design (RecordingLineSearch's hook: More-Thuente
  // returns the point it evaluated last, which `last_` holds).
  void accepted(const Eigen::VectorXd&, double) { accepted(); }
  // ... or minimize is about to start from `last_`.
  void accepted() {
    accepted_ = best_trial_ = last_;
    history_.push_back({static_cast<int>(history_.size()), evaluations_, accepted_.point});
    if (on_iterate_) on_iterate_(history_.back());
  }

  // The start, evaluated before LBFGSpp sees it, so that an unusable start is the caller's error.
  void start() {
    const std::vector<double> design = study_.gradient_values();
    last_ = evaluate(design);
    if (!std::isfinite(last_.point.value))
      throw InvalidInput("optimize.objective", -1,
                         "\"" + study_.objectives[settings_.objective].name +
                             "\" is defined for fewer than two samples at the starting design");
    accepted();
  }

  // After a failed line search: accepts its lowest trial when that decreased F by more than
  // rounding (relative 1e-10), so that the search ends at the rounding floor instead of creeping.
  bool accept_best_trial() {
    const double F = accepted_.point.value;
    if (!(best_trial_.point.value < F - 1e-10 * std::abs(F))) return false;
    last_ = best_trial_;
    accepted();
    return true;
  }

  std::vector<DesignIterate>& history() { return history_; }
  StudyResult& accepted_study() { return accepted_.study; }
  int evaluations() const { return evaluations_; }

 private:
  struct Evaluation {
    DesignPoint point;
    StudyResult study;
  };

  Evaluation evaluate(const std::vector<double>& design) {
    Study at = study_;
    at.set_gradient_values(design);
    Evaluation e;
    try {
      e.study = sweep_(at);
    } catch (...) {
      throw EvaluationStopped{std::current_exception(), ""};
    }
    ++evaluations_;
    const StudyAccumulator& total = e.study.partial.total();
    const OutputSummary& summary = total.objectives()[settings_.objective];
    const CoMoments& m = summary.moments();
    DesignPoint& p = e.point;
    p.design = design;
    p.n_undefined = summary.n_non_finite();
    p.n_defined = summary.n_samples() - p.n_undefined;
    // dE[L]/dtheta as the objective's estimator gives it (the boundary-corrected one where L jumps
    // at t_final), or for a distribution's design where L is discontinuous the likelihood ratio;
    // the spread's term Cov(L, dL/dtheta) stays pathwise.
    const ObjectiveColumns columns = objective_columns(e.study.header, settings_.objective);
    const ObjectiveGradient mean_gradient = objective_gradient(summary, columns, nullptr, 0.0);
    p.discontinuity_fraction = 0.0;
    std::vector<Estimate> mean_terms;
    for (std::size_t d = 0; d < design.size(); ++d) {
      const ParameterGradient& g = mean_gradient.parameters[d];
      p.discontinuity_fraction = std::max(p.discontinuity_fraction, g.discontinuity.mean);
      const bool ratio = g.has_likelihood_ratio && g.discontinuity.mean > 0.0;
      p.estimators.push_back(ratio ? "likelihood_ratio" : estimator_name(mean_gradient.estimator));
      mean_terms.push_back(ratio ? g.likelihood_ratio : mean_gradient.chosen(d));
    }
    if (p.n_defined < 2) {
      p.value = std::numeric_limits<double>::quiet_NaN();
      return e;
    }
    p.mean = m.mean(0);
    p.sd = std::sqrt(m.variance(0));
    p.std_error = m.standard_error(0);
    p.value = p.mean + settings_.lambda * p.sd;
    // d sd / dtheta = d Var / dtheta / (2 sd) = Cov(L, dL/dtheta) / sd; without spread it is 0.
    const bool sd_term = settings_.lambda > 0.0 && p.sd > 0.0 && columns.pathwise;
    p.projected_gradient_norm = 0.0;
    for (std::size_t d = 0; d < design.size(); ++d) {
      const int column = 1 + static_cast<int>(d);
      const double g = mean_terms[d].mean + (sd_term ? settings_.lambda * m.covariance(0, column) / p.sd : 0.0);
      p.gradient.push_back(g);
      const double projected = std::clamp(design[d] - g, settings_.lower[d], settings_.upper[d]) - design[d];
      p.projected_gradient_norm = std::max(p.projected_gradient_norm, std::abs(projected));
    }
    return e;
  }

  Study study_;
  const RobustDesignSettings& settings_;
  const StudySweep& sweep_;
  const DesignProgress& on_iterate_;
  Evaluation last_, accepted_, best_trial_;  // best_trial_: the lowest F since the last accepted iterate
  std::vector<DesignIterate> history_;
  int evaluations_ = 0;
};

}  // namespace

const char* outcome_name(DesignOutcome o) {
  switch (o) {
    case DesignOutcome::Converged: return "converged";
    case DesignOutcome::MaxIterations: return "max_iterations";
    case DesignOutcome::Stalled: return "stalled";
    case DesignOutcome::Failed: return "failed";
  }
  return "failed";
}

RobustDesignResult optimize_design(const AnyModel& model, const Study& study, const RobustDesignSettings& settings,
                                   const StudyRun& run, const DesignProgress& on_iterate) {
  if (run.n_shards != 1) throw InvalidInput("shard", -1, "robust design needs the whole study, not a shard");
  if (!run.per_sample_prefix.empty())
    throw InvalidInput("per_sample", -1, "robust design runs many sweeps; per-sample files do not apply");
  const StudySweep sweep = [&](const Study& at) { return run_study(model, at, run); };
  return optimize_design(model, study, settings, sweep, on_iterate);
}

RobustDesignResult optimize_design(const AnyModel& model, const Study& study, const RobustDesignSettings& settings,
                                   const StudySweep& sweep, const DesignProgress& on_iterate) {
  const ModelInfo& info = model.info();
  check_settings(settings, study, info);
  const int n = study.n_gradients();

  LBFGSpp::LBFGSBParam<double> param;
  param.epsilon = settings.gradient_tolerance;
  param.epsilon_rel = settings.relative_gradient_tolerance;
  param.max_iterations = settings.max_iterations;
  param.max_linesearch = settings.max_linesearch;
  param.past = 0;  // no stop on a small change of F: convergence is the projected gradient's alone

  DesignObjective objective(study, settings, sweep, on_iterate);
  try {
    objective.start();
  } catch (const EvaluationStopped& e) {
    std::rethrow_exception(e.error);  // the first sweep failed: the caller's error, as it was thrown
  }
  RobustDesignResult result;
  result.design_names = study.gradient_names(info);
  const Eigen::VectorXd lower = Eigen::Map<const Eigen::VectorXd>(settings.lower.data(), n);
  const Eigen::VectorXd upper = Eigen::Map<const Eigen::VectorXd>(settings.upper.data(), n);
  const auto iterations = [&] { return objective.history().back().iteration; };
  const auto converged = [&] {
    const DesignPoint& last = objective.history().back().point;
    double x_norm = 0.0;
    for (double v : last.design) x_norm += v * v;
    return last.projected_gradient_norm <= settings.gradient_tolerance ||
           last.projected_gradient_norm <= settings.relative_gradient_tolerance * std::sqrt(x_norm);
  };
  for (;;) {
    if (converged() || iterations() >= settings.max_iterations) {
      result.outcome = converged() ? DesignOutcome::Converged : DesignOutcome::MaxIterations;
      break;
    }
    param.max_iterations = settings.max_iterations - iterations();
    LBFGSpp::LBFGSBSolver<double, RecordingLineSearch<LineSearchStalled, EvaluationStopped>::Type> solver(param);
    Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(objective.history().back().point.design.data(), n);
    double fx = 0.0;
    try {
      solver.minimize(objective, x, fx, lower, upper);
      result.outcome = converged() ? DesignOutcome::Converged : DesignOutcome::MaxIterations;
      break;
    } catch (const LineSearchStalled& e) {
      // LBFGSpp's More-Thuente search extrapolates by a factor 1.1 per trial, so where F is far
      // from quadratic (a short first step, then negative curvature) it runs out of trials while F
      // still decreases: then its lowest trial is accepted and L-BFGS-B restarts from there with a
      // fresh memory. Without a decrease (the rounding floor, a kink at a topology change) the last
      // accepted iterate stands, as scipy's ABNORMAL_TERMINATION_IN_LNSRCH.
      if (objective.accept_best_trial()) {
        ++result.restarts;
        continue;
      }
      result.outcome = DesignOutcome::Stalled;
      result.message = "line search: " + e.message;
      break;
    } catch (const EvaluationStopped& e) {
      if (e.error) std::rethrow_exception(e.error);
      result.outcome = DesignOutcome::Failed;
      result.message = e.undefined;
      break;
    }
  }
  result.history = std::move(objective.history());
  result.evaluations = objective.evaluations();
  if (study.sobol) {
    Study final_design = study;
    const DesignPoint& last = result.history.back().point;
    final_design.set_gradient_values(last.design);
    result.final_study = sweep(final_design);
  } else {
    result.final_study = std::move(objective.accepted_study());
  }
  return result;
}

RobustDesignSettings parse_robust_design(const json& study, const Study& parsed, const ModelInfo& info) {
  const io::JsonObject top(study, "");
  if (!top.has("optimize"))
    throw InvalidInput("optimize", -1,
                       "is required to optimise: {\"objective\": NAME, \"bounds\": {...}} (docs/sweep.md)");
  const io::JsonObject o = top.object("optimize");
  RobustDesignSettings s;
  const std::string name = o.string("objective");
  s.objective = -1;
  std::string names;
  for (std::size_t k = 0; k < parsed.objectives.size(); ++k) {
    if (parsed.objectives[k].name == name) s.objective = static_cast<int>(k);
    names += (names.empty() ? "" : ", ") + parsed.objectives[k].name;
  }
  if (s.objective < 0)
    throw InvalidInput(o.path("objective"), -1, "\"" + name + "\" is not an objective of the study (" + names + ")");
  s.lambda = o.number("lambda", s.lambda);
  const io::JsonObject bounds = o.object("bounds");
  for (const std::string& param : parsed.gradient_names(info)) {
    double low = -HUGE_VAL, high = HUGE_VAL;
    if (bounds.has(param)) {
      const std::vector<double> pair = bounds.numbers(param);
      if (pair.size() != 2) throw InvalidInput(bounds.path(param), -1, "must be [low, high]");
      low = pair[0], high = pair[1];
    }
    s.lower.push_back(low);
    s.upper.push_back(high);
  }
  bounds.reject_unknown("the bounds (design parameters only)");
  s.max_iterations = o.integer("max_iterations", s.max_iterations);
  s.gradient_tolerance = o.number("gradient_tolerance", s.gradient_tolerance);
  s.relative_gradient_tolerance = o.number("relative_gradient_tolerance", s.relative_gradient_tolerance);
  s.max_linesearch = o.integer("max_linesearch", s.max_linesearch);
  o.reject_unknown("the optimize block");
  check_settings(s, parsed, info);
  return s;
}

json optimization_json(const RobustDesignResult& result, const RobustDesignSettings& settings, const Study& study) {
  const auto by_name = [&](const auto& values) {
    json j = json::object();
    for (std::size_t d = 0; d < values.size(); ++d) j[result.design_names[d]] = values[d];
    return j;
  };
  json bounds = json::object();
  for (std::size_t d = 0; d < result.design_names.size(); ++d)
    if (std::isfinite(settings.lower[d]) || std::isfinite(settings.upper[d]))
      bounds[result.design_names[d]] = {std::isfinite(settings.lower[d]) ? json(settings.lower[d]) : json(nullptr),
                                        std::isfinite(settings.upper[d]) ? json(settings.upper[d]) : json(nullptr)};
  json history = json::array();
  for (const DesignIterate& it : result.history) {
    const DesignPoint& p = it.point;
    history.push_back({{"iteration", it.iteration},
                       {"evaluations", it.evaluations},
                       {"design", by_name(p.design)},
                       {"value", p.value},
                       {"mean", p.mean},
                       {"sd", p.sd},
                       {"std_error", p.std_error},
                       {"gradient", by_name(p.gradient)},
                       {"projected_gradient_norm", p.projected_gradient_norm},
                       {"gradient_estimator", by_name(p.estimators)},
                       {"discontinuity_fraction", p.discontinuity_fraction},
                       {"n_defined", p.n_defined},
                       {"n_undefined", p.n_undefined}});
  }
  return {{"settings",
           {{"objective", study.objectives[settings.objective].name},
            {"lambda", settings.lambda},
            {"bounds", bounds},
            {"max_iterations", settings.max_iterations},
            {"gradient_tolerance", settings.gradient_tolerance},
            {"relative_gradient_tolerance", settings.relative_gradient_tolerance},
            {"max_linesearch", settings.max_linesearch}}},
          {"outcome", outcome_name(result.outcome)},
          {"message", result.message},
          {"iterations", result.history.back().iteration},
          {"evaluations", result.evaluations},
          {"restarts", result.restarts},
          {"final", history.back()},
          {"history", history}};
}

}  // namespace saltation::sweep
