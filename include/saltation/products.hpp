#pragma once
// Derivative products of a batch's outputs, from a Result solved with sensitivities (on any
// backend). The output vector of trajectory i is
//   y_i = [qf (N), then for each event slot c < C: t_e (1), pre-event state q-_e (N)]
// (R = N + C (1 + N) entries); the rows of event slots the trajectory did not reach are zero.
// Every array is SoA over the batch: entry (r, i) at [r * n + i], entry (r, p, i) at [(r * P + p) * n + i].
#include <vector>

#include "saltation/result.hpp"

namespace saltation {

int output_size(const Result& r);
// y for every trajectory: [R][n].
std::vector<double> outputs(const Result& r);
// J = dy/dtheta: [R][P][n].
std::vector<double> jacobian(const Result& r);
// J v for a tangent v: [P][n] -> [R][n].
std::vector<double> jvp(const Result& r, const std::vector<double>& v);
// w^T J for a cotangent w: [R][n] -> [P][n].
std::vector<double> vjp(const Result& r, const std::vector<double>& w);

// A scalar landing objective per trajectory:
//   L = (q-_k[coordinate] - target)^2 + sum_j qf_weights[j] (qf[j] - qf_target[j])^2
// where q-_k is the pre-event state of event `impact` (0-based): x of the k-th impact for the
// terrain ball with coordinate 0. Trajectories with fewer events get NaN value and gradient.
struct LandingObjective {
  int impact = 0;
  int coordinate = 0;
  double target = 0.0;
  std::vector<double> qf_weights;  // empty or N entries
  std::vector<double> qf_target;   // empty or N entries
};
struct ObjectiveValues {
  std::vector<double> value;     // [n]
  std::vector<double> gradient;  // [P][n]
};
// Throws InvalidInput when the result has no sensitivities or the objective does not fit it.
ObjectiveValues evaluate(const LandingObjective& objective, const Result& r);

}  // namespace saltation
