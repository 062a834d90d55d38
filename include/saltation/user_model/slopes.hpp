#pragma once
// Helpers the code generated from a model file calls. The slopes its derivatives use where a
// function has a kink: the same choices the dual numbers make (dual.hpp), so that analytic and
// dual-number derivatives agree. And x ^ n for a small integer n.
#include "saltation/config.hpp"

namespace saltation::user_model {

// d|u|/du: -1 below 0, +1 from 0 on (the dual abs is -a for a < 0, else a).
SALTATION_HD inline double abs_slope(double u) { return u < 0.0 ? -1.0 : 1.0; }
// d fmin(u, v) and d fmax(u, v) given du and dv: ties take the first argument, a NaN the other.
SALTATION_HD inline double min_slope(double u, double v, double du, double dv) { return (v < u || u != u) ? dv : du; }
SALTATION_HD inline double max_slope(double u, double v, double du, double dv) { return (v > u || u != u) ? dv : du; }

// x ^ N (2 <= N <= 8) as N - 1 multiplications from the left, for any scalar (double, dual
// numbers, SIMD lanes): within about (N - 1) / 2 ulp of x^N where pow is within 1.
template <int N, class S>
SALTATION_HD S integer_power(const S& x) {
  static_assert(N >= 2 && N <= 8, "small integer powers only");
  S p = x * x;
  for (int k = 2; k < N; ++k) p = p * x;
  return p;
}

}  // namespace saltation::user_model
