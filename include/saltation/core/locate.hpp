#pragma once
// The root steps of event location (Trajectory::locate): a bracket's secant point, and the root in
// the bracket of the parabola with a trial's value and slope through the bracket's other end.
#include <cmath>

#include "saltation/config.hpp"

namespace saltation::core {

SALTATION_HD inline double secant_point(double a, double b, double ga, double gb) {
  return a + (b - a) * (ga / (ga - gb));
}

// The root in [a, b] of the parabola with value g and slope r at s, one end of the bracket,
// through the other end (o, go), the root nearer s first; the bracket's secant point when
// rounding finds none there. In t = x - s the parabola times d^2, d = o - s, is A t^2 + B t + C,
// so the coefficients take no division (one, for the root, on the chain).
SALTATION_HD inline double tangent_parabola_root(double s, double g, double r, double a, double b, double ga,
                                                 double gb) {
  const bool at_b = s == b;
  const double o = at_b ? a : b, go = at_b ? ga : gb;
  const double d = o - s;
  const double A = (go - g) - r * d, B = r * (d * d), C = g * (d * d);
  const double disc = B * B - 4.0 * A * C;
  if (disc >= 0.0) {  // roots by the cancellation-free pair C / q (the one nearer s), q / A
    const double q = -0.5 * (B + ::copysign(::sqrt(disc), B));
    const double x1 = s + C / q, x2 = s + q / A;
    if (x1 >= a && x1 <= b) return x1;
    if (x2 >= a && x2 <= b) return x2;
  }
  return secant_point(a, b, ga, gb);
}

// Iterations that locate an event in a probe interval of width `bracket` to time_tol
// (Trajectory::locate, docs/warp_events.md), sized by a convergence bound for its safeguarded
// steps. Along the step the guard is smooth with relative derivatives
// C2 = |g''| / (2 |g'|) <= kLocateCurvature and C3 = |g'''| / (6 |g'|) <= kLocateThirdDerivative.
// The first trial, the secant point, is within e_1 = C2 bracket^2 / 4 of the root; each later one
// is the root of the parabola with the last trial's value and exact slope (error e_k) through the
// bracket's other end (within `bracket` of the root): the parabola differs from the guard by
// g''' / 6 (s - trial)^2 (s - other end), so the root is within e_{k+1} = C3 bracket e_k^2. The
// count is the least L with e_{L+1} <= time_tol, and never 1: near a grazing contact g' -> 0 and
// the bound fails, and one iteration missed the tests' shallow dips (bench/README.md, "Location
// steps with the guard's slope"). So 2 at dt = 1e-3, 1e-2 and 2e-2, 3 at 3e-2 and 4e-2 (probes 3,
// time_tol 1e-12). A time that rounding alone moves by more than time_tol is not reachable. With
// dopri5 each bracket, a piece of an adaptive step, is sized at its event.
constexpr double kLocateCurvature = 100.0;        // 1 / s
constexpr double kLocateThirdDerivative = 100.0;  // 1 / s^2
constexpr int kMaxLocateIterations = 12;          // when the bound does not converge (C3 bracket e_1 >= 1)
SALTATION_HD inline int locate_iterations_for(double bracket, double time_tol) {
  if (!(bracket > time_tol)) return 0;
  double e = kLocateCurvature * bracket * bracket / 4.0;  // e_1: the first secant point's error
  int L = 0;
  while (e > time_tol && L < kMaxLocateIterations) {
    e = kLocateThirdDerivative * bracket * e * e;
    ++L;
  }
  return L == 1 ? 2 : L;
}

}  // namespace saltation::core
