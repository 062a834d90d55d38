#pragma once
// Many independent 1-D bounded L-BFGS-B minimisations driven in lockstep: every round is one
// call of a batched objective over all systems whose solver is waiting for a value. The
// stiffness fit (fit.cpp) is this driver with a batched rollout as the objective.
#include <functional>
#include <string>
#include <vector>

#include "saltation/dem/fit.hpp"

namespace saltation::dem::detail {

// The objective's answer for the systems it was asked about, in that order. A nonempty
// failure[j] means no value exists for that system (it ends with FitError and that message).
struct BatchValues {
  std::vector<double> loss, grad;
  std::vector<std::string> failure;
  double seconds = 0.0;  // time spent in the engine, for FitResult::engine_seconds
};
using BatchedObjective = std::function<BatchValues(const std::vector<int>& systems, const std::vector<double>& theta)>;

// theta0, lower, upper: one value per system (validated by the caller). An exception thrown
// by the objective propagates after every solver has been unwound.
FitResult minimize_in_lockstep(const std::vector<double>& theta0, const std::vector<double>& lower,
                               const std::vector<double>& upper, const FitOptions& options,
                               const BatchedObjective& objective);

// Solvers started and not yet finished on this thread: 0 whenever no fit is running.
int live_solvers();

}  // namespace saltation::dem::detail
