#pragma once
// Run options: the one list of the user-settable ones, their validation and what is derived from them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "saltation/core/options.hpp"
#include "saltation/errors.hpp"

namespace saltation {

// The one list of the user-settable options: calls f(name, meaning, o.member...) for each
// member, on one or more Options at once (to copy some members across), so the JSON reader
// and writer, the CLI flags and the docs cannot drift apart.
template <class F, class... O>
void for_each_option(F&& f, O&... o) {
  f("t_final", "integrate over [0, t_final]", o.t_final...);
  f("dt", "fixed RK4 step", o.dt...);
  f("v_stop", "end with status settled at an event slower than this (0: off)", o.v_stop...);
  f("event_capacity", "events recorded per trajectory", o.event_capacity...);
  f("probes", "interior guard probes per step", o.probes...);
  f("time_tol", "event-time accuracy the fixed count of location iterations is sized for", o.time_tol...);
  f("graze_tol", "relative normal speed below which an event is flagged grazing", o.graze_tol...);
  f("zeno_events", "this many events inside zeno_window end a trajectory with status zeno", o.zeno_events...);
  f("zeno_window", "seconds; 0 means one step", o.zeno_window...);
  f("sensitivities", "also propagate derivatives with respect to theta", o.sensitivities...);
  f("threads", "CPU backend: OpenMP threads (0: OpenMP's default)", o.threads...);
  f("max_steps", "RK4 steps allowed per trajectory (t_final / dt); more are refused before any work", o.max_steps...);
  f("mark_invalid_rows", "give bad rows status invalid_input instead of failing the batch", o.mark_invalid_rows...);
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
// time_tol 1e-12). A time that rounding alone moves by more than time_tol is not reachable.
constexpr double kLocateCurvature = 100.0;        // 1 / s
constexpr double kLocateThirdDerivative = 100.0;  // 1 / s^2
constexpr int kMaxLocateIterations = 12;          // when the bound does not converge (C3 bracket e_1 >= 1)
inline int locate_iterations_for(double bracket, double time_tol) {
  if (!(bracket > time_tol)) return 0;
  double e = kLocateCurvature * bracket * bracket / 4.0;  // e_1: the first secant point's error
  int L = 0;
  while (e > time_tol && L < kMaxLocateIterations) {
    e = kLocateThirdDerivative * bracket * e * e;
    ++L;
  }
  return L == 1 ? 2 : L;
}

// The most CPU threads a run may ask for: 4x the hardware threads. More is a typo, and OpenMP
// crashes trying to start 10^5 of them.
inline int max_threads() { return 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// Validates (throws InvalidInput naming the option) and fills the derived fields.
inline Options normalize_options(const Options& in) {
  Options o = in;
  auto positive = [](double x) { return std::isfinite(x) && x > 0.0; };
  if (!positive(o.dt)) throw InvalidInput("options.dt", -1, "must be finite and > 0");
  // t_final 0 would take no step at all, and dt > t_final is refused below: never run silently.
  if (!positive(o.t_final)) throw InvalidInput("options.t_final", -1, "must be finite and > 0");
  if (!(std::isfinite(o.v_stop) && o.v_stop >= 0.0))
    throw InvalidInput("options.v_stop", -1, "must be finite and >= 0");
  if (o.event_capacity < 0) throw InvalidInput("options.event_capacity", -1, "must be >= 0");
  if (o.probes < 0 || o.probes > 64) throw InvalidInput("options.probes", -1, "must be in [0, 64]");
  if (!positive(o.time_tol)) throw InvalidInput("options.time_tol", -1, "must be finite and > 0");
  if (!(std::isfinite(o.graze_tol) && o.graze_tol >= 0.0))
    throw InvalidInput("options.graze_tol", -1, "must be finite and >= 0");
  if (o.zeno_events < 2) throw InvalidInput("options.zeno_events", -1, "must be >= 2");
  if (!(std::isfinite(o.zeno_window) && o.zeno_window >= 0.0))
    throw InvalidInput("options.zeno_window", -1, "must be finite and >= 0 (0 means one step)");
  if (o.threads < 0 || o.threads > max_threads())
    throw InvalidInput("options.threads", -1,
                       std::to_string(o.threads) + " is outside [0, " + std::to_string(max_threads()) +
                           "] (0: OpenMP's default; at most 4x the hardware threads)");
  if (o.max_steps < 1) throw InvalidInput("options.max_steps", -1, "must be >= 1");
  // One step over the whole horizon is never what was meant (dt = 1e300, say): refused, not clipped.
  if (o.dt > o.t_final) {
    char what[120];
    std::snprintf(what, sizeof what, "dt = %g is larger than t_final = %g: choose dt <= t_final", o.dt, o.t_final);
    throw InvalidInput("options.dt", -1, what);
  }
  const double steps = std::ceil(o.t_final / o.dt);
  if (steps > static_cast<double>(o.max_steps)) {
    char what[200];
    std::snprintf(what, sizeof what,
                  "t_final / dt = %g / %g = %.3g steps per trajectory exceed max_steps = %lld; "
                  "raise dt or options.max_steps",
                  o.t_final, o.dt, steps, o.max_steps);
    throw InvalidInput("options.dt", -1, what);
  }
  o.locate_iterations = locate_iterations_for(o.dt / (o.probes + 1), o.time_tol);
  return o;
}

}  // namespace saltation
