#pragma once
// Robust design (docs/sweep.md, "Robust design"): the study's design parameters theta that
// minimise F(theta) = E[L] + lambda sd[L] for one objective L, by L-BFGS-B (LBFGSpp) within
// bounds. Every evaluation of F is one run_study with design gradients at the same seed (common
// random numbers: every iterate sees the same samples), so F is a deterministic function of theta
// and its gradient is
//
//   dF/dtheta = dE[L]/dtheta + lambda Cov(L, dL/dtheta) / sd[L],
//
// both read from the objective's summary: dE[L]/dtheta by the objective's estimator (pathwise, or
// boundary-corrected where L jumps when an event crosses t_final: gradient_estimate.hpp), or for a
// design field of a sampling distribution where L is discontinuous the likelihood ratio; the
// spread's term pathwise. Every iterate reports the estimators and the share of samples near a
// discontinuity of L. The design parameters are Study::gradient_names(): the model's, then the
// distributions' design fields ("h0.mean").
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "saltation/any_model.hpp"
#include "saltation/sweep/study.hpp"

namespace saltation::sweep {

struct RobustDesignSettings {
  int objective = 0;    // index into Study::objectives; differentiable or with the corrected estimator
  double lambda = 0.0;  // weight of sd[L] in F (>= 0)
  // Per design parameter, in Study::gradient_names() order; +-infinity: unbounded.
  std::vector<double> lower, upper;
  int max_iterations = 30;                    // accepted L-BFGS-B steps
  double gradient_tolerance = 1e-6;           // converged when |projected dF/dtheta|_inf <= this
  double relative_gradient_tolerance = 1e-6;  // ... or <= this times |theta|_2
  int max_linesearch = 20;                    // evaluations per line search
};

// F, its parts and its gradient at one design.
struct DesignPoint {
  std::vector<double> design;  // values of the design parameters
  double value = 0.0;          // F = mean + lambda sd
  double mean = 0.0, sd = 0.0, std_error = 0.0;
  std::vector<double> gradient;                  // dF/dtheta
  double projected_gradient_norm = 0.0;          // max |P(theta - dF/dtheta) - theta|, P the projection on the bounds
  std::vector<std::string> estimators;           // of each entry of dE[L]/dtheta: pathwise, corrected, likelihood_ratio
  double discontinuity_fraction = 0.0;           // the largest over the design parameters (gradient_estimate.hpp)
  std::uint64_t n_defined = 0, n_undefined = 0;  // samples where L is (not) defined; only defined ones count
};

// An accepted iterate (iteration 0: the start) and the sweeps run so far.
struct DesignIterate {
  int iteration = 0;
  int evaluations = 0;
  DesignPoint point;
};

enum class DesignOutcome {
  Converged,      // the projected gradient is within the tolerances
  MaxIterations,  // max_iterations steps accepted
  Stalled,        // the line search found no decrease (the rounding floor, a kink at a topology change)
  Failed,         // L was undefined for (almost) every sample at a trial design
};
const char* outcome_name(DesignOutcome o);

struct RobustDesignResult {
  DesignOutcome outcome = DesignOutcome::Converged;
  std::string message;  // why it stopped, for Stalled and Failed
  std::vector<std::string> design_names;
  std::vector<DesignIterate> history;  // every accepted iterate; back() is the final design
  int evaluations = 0;                 // sweeps run
  int restarts = 0;                    // L-BFGS-B restarts after a line search that ran out of trials
  StudyResult final_study;             // the sweep at history.back()'s design
};

// Called with each accepted iterate, as it is accepted.
using DesignProgress = std::function<void(const DesignIterate&)>;

// Minimises F over the study's design parameters starting at their design values. The run must
// be a whole study (one shard) without per-sample files. Throws InvalidInput when the study has no
// design parameter, the objective has no gradient, a bound or a start is unusable, or L is
// undefined at the start; later failures are outcomes, reported with the last accepted iterate.
RobustDesignResult optimize_design(const AnyModel& model, const Study& study, const RobustDesignSettings& settings,
                                   const StudyRun& run, const DesignProgress& on_iterate = {});

// One whole sweep of a study, returning its complete result: run_study in this process, or the
// sweep spread over MPI ranks (src/sweep/mpi.hpp). The studies it is given differ from the one passed
// to optimize_design only in the values of the design parameters and in the sobol flag.
using StudySweep = std::function<StudyResult(const Study&)>;
// The same, with every evaluation of F (and the final design's sweep) run by `sweep`.
RobustDesignResult optimize_design(const AnyModel& model, const Study& study, const RobustDesignSettings& settings,
                                   const StudySweep& sweep, const DesignProgress& on_iterate = {});

// The study's "optimize" block (docs/sweep.md): {"objective": NAME, "lambda": 0.0,
// "bounds": {"PARAM": [low, high], ...}, "max_iterations": 30, "gradient_tolerance": 1e-6,
// "relative_gradient_tolerance": 1e-6}. Throws InvalidInput naming the key; the block is required.
RobustDesignSettings parse_robust_design(const nlohmann::json& study, const Study& parsed, const ModelInfo& info);

// DIR/optimization.json: the settings (by name), the outcome, the history.
nlohmann::json optimization_json(const RobustDesignResult& result, const RobustDesignSettings& settings,
                                 const Study& study);

}  // namespace saltation::sweep
