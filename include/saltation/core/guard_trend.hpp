#pragma once
// The curvature bound: a guard bound for any model without one of its own (docs/models.md,
// "Probes"). Over a step from t_n to t_n + h a smooth guard g stays within (h^2 / 8) max |g''| of
// the chord between its end values. The guards at the ends of the last full steps estimate h^2 g''
// by the second difference d2 = (g_{n+1} - g_n) - (g_n - g_{n-1}) and its change across the step by
// the third, d2 - d2_back; the step is clear when both end values lie on the guard's allowed side
// by more than four times that estimate's (h^2 / 8) |g''|. Only the values the step's end already
// gives are used, so a step it clears costs no probe at all. A dip through a guard with curvature
// that the step ends do not see (a feature narrower than a step) is what the interior probes are
// for, and what the bound cannot rule out; docs/models.md says so.
#include "saltation/config.hpp"
#include "saltation/dual.hpp"
#include "saltation/model.hpp"

namespace saltation::core {

// The guards at the ends of the last full steps of one trajectory, behind the state's own
// (Trajectory::g_left_): g_back at the end of the step before, d2_back the second difference there.
// `steps` counts what holds: 0 nothing, 1 g_back, 2 both (the bound applies).
template <int M>
struct GuardTrend {
  double g_back[M];
  double d2_back[M];
  int steps = 0;
  SALTATION_HD void restart() { steps = 0; }
};
// What a trajectory keeps where the bound does not apply: nothing (on the GPU every byte of a
// trajectory's state is registers or stack).
struct NoGuardTrend {
  SALTATION_HD void restart() {}
};

// Whether the curvature bound applies to a model (with probes): guards polynomial in the state
// (model.hpp) and no guard bound of its own.
template <class Model>
constexpr bool has_curvature_bound() {
  return has_polynomial_guards<Model>::value && !has_guard_exclusion<Model>::value;
}
template <class Model>
using GuardTrendOf = std::conditional_t<has_curvature_bound<Model>(), GuardTrend<Model::M>, NoGuardTrend>;

// The second difference of a guard at the step's start, from its values one step back, at the
// start and at the end. S is double, or a lane vector in the CPU's SIMD lanes.
template <class S>
SALTATION_HD S second_difference(const S& g_back, const S& g_start, const S& g_end) {
  return (g_end - g_start) - (g_start - g_back);
}

// Whether the step from g_start to g_end stays clear of the surface of a guard with `direction`
// (non-zero), given the second differences d2 (at the step's start) and d2_back (one step back):
// bool for double, a lane mask for lane vectors.
template <class S>
SALTATION_HD auto curvature_clear(int direction, const S& g_start, const S& g_end, const S& d2, const S& d2_back) {
  const S margin = 0.5 * (abs(d2) + 2.0 * abs(d2 - d2_back));
  // The distance to the surface on the guard's allowed side (negative past it).
  const S side = direction < 0 ? S(1.0) : S(-1.0);
  return side * g_start > margin && side * g_end > margin;
}

}  // namespace saltation::core
