#pragma once
// A batch's objective observation (saltation::observe's) computed from its full records instead of
// during the solve: a study that needs every event (the boundary terms of its gradients) solves
// once with records and reads its objectives from them.
#include <vector>

#include "saltation/result.hpp"

namespace saltation::sweep {

// The objective observer's own hooks (core::ObjectiveObserver) replayed over each recorded
// trajectory, so the values are bit for bit those observe() writes. InvalidInput for a model of
// more than kReplayStates states.
Observation replay_observation(const Result& records, std::vector<ObjectiveSpec> specs, std::vector<int> design);

}  // namespace saltation::sweep
