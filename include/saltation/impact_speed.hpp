#pragma once
// The normal speed |g_q . f-| / |g_q| at which each recorded event of a trajectory met its guard,
// the number options.v_stop compares (core/jump.hpp, EventGeometry::impact_speed), and its
// derivatives by the parameters: what the settling boundary of a study's gradients needs
// (docs/sweep.md, "Settling"). Read back from a trajectory's records on the host.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <vector>

#include "saltation/core/jump.hpp"
#include "saltation/params.hpp"
#include "saltation/result.hpp"

namespace saltation {

// Parameters with entry p moved by delta.
struct MovedParams {
  RowParams base;
  int p;
  double delta;
  SALTATION_HD double operator[](int k) const { return base[k] + (k == p ? delta : 0.0); }
};

// The normal speed of an event of guard j at pre-event state q in `mode`, by the solver's own
// arithmetic (the same bits as its settling test).
template <class Model, class Th>
double normal_speed(const Model& m, int j, const double* q, int mode, const Th& th) {
  const core::EventPartials<Model, Th, false> partials(m, mode, th, j, q);
  return core::event_geometry(m, mode, th, j, q, partials).impact_speed();
}

// For trajectory i of `r` (recorded with sensitivities), theta its parameters: speed[c] for each
// recorded event c, and slope[c * D + d] = d speed_c / d theta_{parameters[d]}, the total
// derivative along the event's state, dq-_c/dtheta (the record's). The speed holds the guard's
// gradient, so its derivative needs the guard's second derivatives: it is the central difference
// of the exact speed along (dq-_c/dtheta_p, e_p), with the step cbrt(eps) relative to the state
// and parameter (relative error about 1e-10 for a smooth guard and flow). The pre-event modes
// are replayed from the initial mode through the resets.
template <class Model>
void impact_speeds(const Model& m, const Result& r, std::size_t i, RowParams th, const std::vector<int>& parameters,
                   double* speed, double* slope) {
  constexpr int N = Model::N;
  const std::size_t D = parameters.size();
  const int recorded = std::min(r.n_events[i], r.C);
  int mode = m.initial_mode;
  double q[N], q_moved[N], dq[N], q_plus[N];
  for (int c = 0; c < recorded; ++c) {
    const int j = r.ev_guard[static_cast<std::size_t>(c) * r.n + i];
    double scale = 1.0;
    for (int k = 0; k < N; ++k) q[k] = r.event_q(i, c, k), scale = std::max(scale, std::abs(q[k]));
    speed[c] = normal_speed(m, j, q, mode, th);
    for (std::size_t d = 0; d < D; ++d) {
      const int p = parameters[d];
      double reach = 1.0;  // the direction's largest entry, the parameter's being 1
      for (int k = 0; k < N; ++k) dq[k] = r.event_dq(i, c, k, p), reach = std::max(reach, std::abs(dq[k]));
      const double step = std::cbrt(DBL_EPSILON) * std::max(scale, std::abs(th[p])) / reach;
      double moved[2];
      for (int side = 0; side < 2; ++side) {
        const double h = side == 0 ? step : -step;
        for (int k = 0; k < N; ++k) q_moved[k] = q[k] + h * dq[k];
        moved[side] = normal_speed(m, j, q_moved, mode, MovedParams{th, p, h});
      }
      slope[static_cast<std::size_t>(c) * D + d] = (moved[0] - moved[1]) / (2.0 * step);
    }
    mode = m.reset(j, q, mode, th, q_plus);
  }
}

}  // namespace saltation
