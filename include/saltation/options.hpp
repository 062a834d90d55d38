#pragma once
// Run options: the one list of the user-settable ones, their validation and what is derived from them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "saltation/core/locate.hpp"
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
  f("method", "rk4 (fixed steps of dt) or dopri5 (adaptive Dormand-Prince 5(4) steps to rtol and atol)", o.method...);
  f("rtol", "dopri5: relative tolerance of each step's local error", o.rtol...);
  f("atol", "dopri5: absolute tolerance of each step's local error, one number or one per state", o.atol...);
  f("dt_min", "dopri5: a smaller step ends the trajectory with status step_size_underflow (0: 1e-12 t_final)",
    o.dt_min...);
  f("dt_max", "dopri5: the largest step (0: t_final)", o.dt_max...);
  f("error_on_sensitivities", "dopri5 with sensitivities: the segment tangent's error estimate controls the step too",
    o.error_on_sensitivities...);
  f("v_stop", "end with status settled at an event slower than this (0: off)", o.v_stop...);
  f("event_capacity", "events recorded per trajectory", o.event_capacity...);
  f("probes", "interior guard probes per step", o.probes...);
  f("time_tol", "event-time accuracy the fixed count of location iterations is sized for", o.time_tol...);
  f("graze_tol", "relative normal speed below which an event is flagged grazing", o.graze_tol...);
  f("zeno_events", "this many events inside zeno_window end a trajectory with status zeno", o.zeno_events...);
  f("zeno_window", "seconds; 0 means one step", o.zeno_window...);
  f("sensitivities", "also propagate derivatives with respect to theta", o.sensitivities...);
  f("threads", "CPU backend: OpenMP threads (0: OpenMP's default)", o.threads...);
  f("max_steps",
    "steps allowed per trajectory: rk4 refuses more (t_final / dt) before any work; dopri5 ends the "
    "trajectory with status step_limit after this many steps tried",
    o.max_steps...);
  f("mark_invalid_rows", "give bad rows status invalid_input instead of failing the batch", o.mark_invalid_rows...);
}

using core::locate_iterations_for;

// The names of options.method, as requests and the command line write them.
inline const char* method_name(Method m) { return m == Method::Dopri5 ? "dopri5" : "rk4"; }
inline Method method_from_name(const std::string& name, const std::string& where) {
  if (name == "rk4") return Method::Rk4;
  if (name == "dopri5") return Method::Dopri5;
  throw InvalidInput(where, -1, "\"" + name + "\" is not a method: rk4 or dopri5");
}

// options.atol from a list of numbers: one is every state's, more are one per state (checked
// against the model's states when it runs, checked_options). `where` names the key or flag.
inline AbsoluteTolerance atol_from_list(const std::vector<double>& values, const std::string& where) {
  if (values.empty() || values.size() > static_cast<std::size_t>(AbsoluteTolerance::kMaxStates))
    throw InvalidInput(where, -1,
                       "must be one number or a list of 1 to " + std::to_string(AbsoluteTolerance::kMaxStates) +
                           " (one per state), not " + std::to_string(values.size()));
  AbsoluteTolerance atol(values[0]);
  if (values.size() > 1) {
    atol.states = static_cast<int>(values.size());
    std::copy(values.begin(), values.end(), atol.value);
  }
  return atol;
}
// The same from a flag's text: "1e-9", or one per state, "1e-9,1e-6,1e-9".
inline AbsoluteTolerance atol_from_text(const std::string& text, const std::string& where) {
  std::vector<double> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size())
      throw InvalidInput(where, -1, "\"" + text + "\" is not a number or a comma-separated list of numbers");
    values.push_back(value);
    start = comma + 1;
  }
  return atol_from_list(values, where);
}
// The entries in force: one, or one per state.
inline std::vector<double> atol_entries(const AbsoluteTolerance& atol) {
  return std::vector<double>(atol.value, atol.value + std::max(1, atol.states));
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
  if (o.method != Method::Rk4 && o.method != Method::Dopri5)
    throw InvalidInput("options.method", -1, "must be rk4 or dopri5");
  if (!positive(o.rtol) || o.rtol >= 1.0) throw InvalidInput("options.rtol", -1, "must be finite, > 0 and < 1");
  if (o.atol.states < 0 || o.atol.states > AbsoluteTolerance::kMaxStates)
    throw InvalidInput("options.atol", -1,
                       "holds " + std::to_string(o.atol.states) + " states, outside [0, " +
                           std::to_string(AbsoluteTolerance::kMaxStates) + "]");
  const std::vector<double> atol = atol_entries(o.atol);
  for (std::size_t i = 0; i < atol.size(); ++i)
    if (!(std::isfinite(atol[i]) && atol[i] >= 0.0))
      throw InvalidInput(o.atol.states ? "options.atol[" + std::to_string(i) + "]" : std::string("options.atol"), -1,
                         "must be finite and >= 0");
  if (!(std::isfinite(o.dt_min) && o.dt_min >= 0.0))
    throw InvalidInput("options.dt_min", -1, "must be finite and >= 0 (0: 1e-12 t_final)");
  if (!(std::isfinite(o.dt_max) && o.dt_max >= 0.0))
    throw InvalidInput("options.dt_max", -1, "must be finite and >= 0 (0: t_final)");
  if (o.dt_max > 0.0 && o.dt_min > o.dt_max) {
    char what[120];
    std::snprintf(what, sizeof what, "dt_min = %g is larger than dt_max = %g", o.dt_min, o.dt_max);
    throw InvalidInput("options.dt_min", -1, what);
  }
  if (o.method == Method::Dopri5) return o;  // dt is not its step: the checks below are RK4's
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
