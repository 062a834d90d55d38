#pragma once
// Derivatives of a sampling distribution with respect to one of its parameters (a design
// parameter of the distribution, "h0": {"dist": "normal", "mean": {"design": 1.5}, "sigma": 0.1}):
//
//   the score          d log p(x; theta) / d theta, for the likelihood-ratio (score-function)
//                      gradient d E[L] / d theta = E[L score] (docs/sweep.md);
//   the sample's slope dx / d theta at the fixed uniform u of x = F^-1(u; theta), for the pathwise
//                      (reparameterisation) gradient E[dL/dx dx/dtheta].
//
// Fields follow Distribution: a, b, c, d = 0, 1, 2, 3 (normal: mean, sigma; lognormal: mu, sigma;
// uniform: low, high; truncnormal: mean, sigma, low, high).
#include "saltation/sweep/distributions.hpp"

namespace saltation::sweep {

// Whether the field has a score: the support must not move with it (a uniform's or a truncated
// normal's bounds move it, and the score misses the mass that crosses them).
bool has_score(const Distribution& d, int field);
double score(const Distribution& d, int field, double x);
double sample_slope(const Distribution& d, int field, double x);

// The distribution with `field` set to `value`.
Distribution with_field(Distribution d, int field, double value);
double field_value(const Distribution& d, int field);

}  // namespace saltation::sweep
