#pragma once
// The slopes the generated derivatives of a model file use where a function has a kink: the
// same choices the dual numbers make (dual.hpp), so that analytic and dual-number derivatives agree.
#include "saltation/config.hpp"

namespace saltation::user_model {

// d|u|/du: -1 below 0, +1 from 0 on (the dual abs is -a for a < 0, else a).
SALTATION_HD inline double abs_slope(double u) { return u < 0.0 ? -1.0 : 1.0; }
// d fmin(u, v) and d fmax(u, v) given du and dv: ties take the first argument, a NaN the other.
SALTATION_HD inline double min_slope(double u, double v, double du, double dv) { return (v < u || u != u) ? dv : du; }
SALTATION_HD inline double max_slope(double u, double v, double du, double dv) { return (v > u || u != u) ? dv : du; }

}  // namespace saltation::user_model
