#pragma once
// Run options, shared by every backend. Plain data: it is passed to kernels by value, so this
// header is device-safe (saltation/options.hpp validates and lists them on the host).
#include "saltation/config.hpp"

namespace saltation {

// How each trajectory steps: fixed RK4 steps of dt, or the Dormand-Prince 5(4) pair with its step
// chosen per trajectory to meet rtol and atol (core/dopri5.hpp).
enum class Method : int { Rk4 = 0, Dopri5 = 1 };

// dopri5's absolute tolerance: one value for every state, or one per state (states of very
// different scales), held inline so that the options stay plain data for the kernels.
struct AbsoluteTolerance {
  static constexpr int kMaxStates = 16;
  int states = 0;  // 0: value[0] for every state; else value[i] for state i
  double value[kMaxStates] = {1e-9};

  AbsoluteTolerance() = default;
  SALTATION_HD AbsoluteTolerance(double every_state) { value[0] = every_state; }
  SALTATION_HD double of(int state) const { return states == 0 ? value[0] : value[state]; }
};

struct Options {
  double t_final = 1.0;  // integrate over [0, t_final]
  double dt = 1e-3;      // fixed RK4 step
  double v_stop =
      0.0;  // status Settled at an event whose normal impact speed |g_q . f-| / |g_q| is below this (0: off)
  int event_capacity = 16;     // events recorded per trajectory; the next crossing ends it with status EventCapacity
  int probes = 3;              // interior guard probes per step (features narrower than a step)
  double time_tol = 1e-12;     // event-time accuracy the location iterations are sized for (locate_iterations_for)
  double graze_tol = 1e-6;     // an event is grazing when |g_q . f-| < graze_tol |g_q| |f-|
  int zeno_events = 8;         // this many events inside zeno_window ends the trajectory with status Zeno
  double zeno_window = 0.0;    // seconds; 0 means one step (dt)
  bool sensitivities = false;  // also propagate X = dq/dtheta and event-time derivatives
  int threads = 0;             // CPU backend: OpenMP threads (0: OpenMP's default)
  long long max_steps = 100000000;  // per trajectory; more steps (t_final / dt) are refused before any work
  bool mark_invalid_rows = false;   // false: a bad row throws InvalidInput before any work starts;
                                    // true: bad rows get status InvalidInput and the rest run
  // Derived by normalize_options(); the same on every backend.
  int locate_iterations = 0;
  // Adaptive steps: on every backend.
  Method method = Method::Rk4;
  bool error_on_sensitivities = false;  // dopri5 with sensitivities: the tangent's error controls the step too
  double rtol = 1e-6;                   // dopri5: relative tolerance of each step's local error
  AbsoluteTolerance atol;               // dopri5: absolute tolerance of each step's local error
  double dt_min = 0.0;  // dopri5: a step below this ends the trajectory, status step_size_underflow (0: 1e-12 t_final)
  double dt_max = 0.0;  // dopri5: the largest step (0: t_final)
};

}  // namespace saltation
