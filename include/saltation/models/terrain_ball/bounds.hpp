#pragma once
// The terrain ball's guard bound and departure bound (optional model members, docs/models.md):
// conservative tests that rule a step's crossing out, so free flight skips the exact guard and
// the probes. Generic over the scalar S: double, or the CPU's SIMD-lane vector (a trajectory per
// lane, src/cpu_lanes.cpp), which decides W lanes' steps at once and gives each lane the double
// code's answer (numeric.hpp: select, any_lane, all_lanes), or on AVX-512 one a little looser
// (half_square_ratio): a valid bound only decides which steps skip the probes.
#include <cmath>
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/dual.hpp"
#include "saltation/models/terrain_ball/bumps.hpp"
#include "saltation/numeric.hpp"

namespace saltation::terrain_ball {

// What the bounds need of theta, formed once per trajectory (theta does not change along it).
// One ceiling for all x, not one per cell of x: that kept the forward CUDA kernel within its
// register limit (bench/README.md, "The guard bound in vectors").
template <class S>
struct GuardSummary {
  S ceiling = S(0.0);  // sum of the positive amplitudes: no terrain point is higher
  S slope = S(0.0);    // bounds of |h'| and of h'' everywhere (departure_excluded)
  S curvature = S(0.0);
};
constexpr double kMaxSlope = 0.60653066, kMaxCurvature = 0.44626033;  // e^(-1/2), 2 e^(-3/2), up

template <int K, int First, class Th>
SALTATION_HD auto guard_summary(const Th& th) {
  using S = std::decay_t<decltype(th[0])>;
  GuardSummary<S> s;
  for (int k = 0; k < K; ++k) {
    const S a = th[First + 3 * k], w = th[First + 3 * k + 2];
    s.ceiling = select(a > 0.0, s.ceiling + a, s.ceiling);
    s.slope = s.slope + kMaxSlope * abs(a) / w;
    s.curvature = s.curvature + select(a > 0.0, kMaxCurvature * a, -a) / (w * w);
  }
  return s;
}

// Bound of the terrain over [x_lo, x_hi] from each bump's height at the point of the interval
// nearest its centre, r widths from it, without an exp: bumps out of reach of the whole interval
// contribute nothing, the others a e^(-r^2 / 2) bounded from above by exp_neg_upper_bound (at
// most 6.2 % loose; bench/README.md, "The guard bound without a division"). Stops as soon as the
// sum reaches `enough` (with lanes, a lane past `enough` goes on adding terms >= 0: its answer
// stays the same).
template <int K, int First, class S, class Th>
SALTATION_HD S bump_bound(const S& x_lo, const S& x_hi, const Th& th, const S& enough) {
  S top = 0.0;
  for (int k = 0; k < K; ++k) {
    const S a = th[First + 3 * k], b = th[First + 3 * k + 1], w = th[First + 3 * k + 2];
    const S d = select(b < x_lo, x_lo - b, select(b > x_hi, b - x_hi, S(0.0)));
    const auto counts = a > 0.0 && in_reach(d, S(0.0), w);
    if (!any_lane(counts)) continue;
    top = select(counts, top + a * exp_neg_upper_bound(half_square_ratio(d, w)), top);
    if (all_lanes(top >= enough)) break;
  }
  return top;
}

// Guard bound: x(t) is monotone on a step (vx' = -c vx), and with g >= 0, c >= 0 the height y(t)
// has no interior minimum on a step, so y above a bound of the terrain over the step's x-range
// at both ends rules the crossing out (the margin covers RK4's error on the probes). The bounds,
// cheapest first: the ceiling (independent of K); the sum of bump_bound over the x-range.
// x_slack and y_slack widen the x-range and lower the height by how far the probed path may lie
// from the flow (dopri5's steps and continuous extension: the step's error scale).
template <int K, int First, class S, class Th>
SALTATION_HD auto guard_excluded(double gravity, const S& c, const S* q0, const S* q1, const Th& th,
                                 const GuardSummary<S>& s, double x_slack = 0.0, double y_slack = 0.0) {
  const auto valid = S(gravity) >= 0.0 && c >= 0.0;
  const S y_min = select(q0[1] < q1[1], q0[1], q1[1]) - 1e-9 * (1.0 + abs(q0[1])) - y_slack;
  const auto below_ceiling = s.ceiling < y_min;
  if (all_lanes(below_ceiling || !valid)) return valid && below_ceiling;
  const S x_lo = select(q0[0] < q1[0], q0[0], q1[0]) - x_slack, x_hi = select(q0[0] < q1[0], q1[0], q0[0]) + x_slack;
  return valid && (below_ceiling || bump_bound<K, First>(x_lo, x_hi, th, y_min) < y_min);
}

// Departure bound, for the step that starts on the terrain right after an impact, which the guard
// bound cannot rule out (y starts at the terrain height; bench/README.md, "The step after an
// impact"). The probes lie on the RK4 sub-steps from q0, for this affine flow the degree-4 Taylor
// polynomials x(s) = x0 + vx0 p1(s), y(s) = y0 + vy0 p1(s) - g p2(s),
// p1 = s - c s^2/2 + c^2 s^3/6 - c^3 s^4/24, p2' = p1; with c h <= 1, 0 < p1' <= 1 and
// -c <= p1'' <= 0 on [0, h]. So the guard G(s) = y(s) - h(x(s)) has G'(0) = vy0 - h'(x0) vx0 and
// G'' >= -A, A = c |vy0| + |g| + H2 vx0^2 + c H1 |vx0|, where H1 and H2 bound |h'| and h'' (the
// summary's, summed over the bumps: |h'| <= e^(-1/2) |a| / w, h'' <= 2 e^(-3/2) a / w^2 for a > 0
// and |a| / w^2 for a < 0). Then G(s) >= G(0) + s (G'(0) - A h / 2) on [0, h]: above the margin
// at the first probe (s_first) and rising, it is above it at every probe. The margin, as the
// guard bound's, covers the rounding of the probes' guard values (the table exp, the bumps culled
// beyond 1e-17 of their height). g0 and g_q0, the guard and its gradient at the event's pre-event
// state, are those at q0: the impact keeps the position, which is all the guard depends on.
SALTATION_HD inline bool departure_excluded(double gravity, double c, const double* q0, double g0, const double* g_q0,
                                            double s_first, double step, const GuardSummary<double>& s) {
  if (!(c >= 0.0 && c * step <= 1.0)) return false;
  const double dh0 = -g_q0[0];
  const double vx = q0[2], vy = q0[3];
  const double A = c * ::fabs(vy) + ::fabs(gravity) + s.curvature * vx * vx + c * s.slope * ::fabs(vx);
  const double rate = vy - dh0 * vx - 0.5 * A * step;
  return rate > 0.0 && g0 + s_first * rate > 1e-9 * (1.0 + ::fabs(q0[1]));
}

}  // namespace saltation::terrain_ball
