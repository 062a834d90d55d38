#pragma once
// Batched stiffness inference: many independent 1-D bounded fits of the log-stiffness theta
// (k = k_ref exp(theta)), each by LBFGSpp's L-BFGS-B, driven in lockstep so that every round
// is ONE batched loss-and-gradient rollout over all systems whose optimizer is waiting for a
// function value. Each optimizer runs in its own lightweight fiber (ucontext); see docs/disks.md.
#include <string>
#include <vector>

#include "saltation/dem/engine.hpp"

namespace saltation::dem {

enum FitOutcome : int {
  FitError = 0,              // the engine stopped this system (message: its status); theta is the last request
  FitConverged = 1,          // a tolerance (epsilon / delta) was met
  FitMaxIterations = 2,      // stopped at max_iterations
  FitLineSearchStalled = 3,  // the line search made no progress; theta is the last accepted iterate
};
const char* fit_outcome_name(int outcome);

struct FitOptions {
  double lower = 1.6094379124341003;  // bounds on theta; default [log 5, log 100]
  double upper = 4.6051701859880914;
  std::vector<double> lower_per_system, upper_per_system;  // optional [b], override
  int max_iterations = 30;                                 // L-BFGS-B iterations (scipy maxiter)
  double epsilon = 1e-10;                                  // projected-gradient tolerance (scipy gtol)
  double epsilon_rel = 0.0;
  int past = 1;  // with delta: scipy's ftol test
  double delta = 1e-14;
  int memory = 10;  // L-BFGS memory (scipy maxcor default)
  int max_linesearch = 40;
  bool record_history = false;  // accepted iterates (theta, loss), starting with the initial point
};

struct FitResult {
  std::vector<double> theta;         // fitted log stiffness [b]
  std::vector<double> loss;          // final loss [b]
  std::vector<double> initial_loss;  // [b]
  std::vector<double> grad;          // final gradient [b]
  std::vector<int> iterations;       // L-BFGS-B iterations [b]
  std::vector<int> evaluations;      // loss+gradient evaluations [b]
  std::vector<int> outcome;          // FitOutcome
  std::vector<std::string> message;  // "" or why it stopped
  std::vector<std::vector<double>> history_theta, history_loss;
  int rounds = 0;                // batched evaluations performed
  std::vector<int> round_sizes;  // systems evaluated in each round
  double seconds = 0.0;          // total wall time
  double engine_seconds = 0.0;   // time inside the batched rollouts
};

// batch.log_stiffness holds the initial guesses; options.tangents is replaced by the log
// stiffness; loss.observed holds the observations. Every round is one rollout on `backend`.
// Bad input throws InvalidInput before any work; an exception from a rollout (out of memory,
// a CUDA error) propagates after every solver has been unwound.
FitResult fit_log_stiffness(const DiskBatch& batch, const RolloutOptions& options, const LossSpec& loss,
                            const FitOptions& fit, Backend backend = Backend::Auto);

}  // namespace saltation::dem
