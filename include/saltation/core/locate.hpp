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

}  // namespace saltation::core
