#pragma once
// The two nonlinear model files of bench/models written out as model types, for the peers that
// need a model's flow, guard and reset as functions (CVODES): the same equations, parameters and
// constants as bench/models/duffing_stop.json and pendulum_drag.json. saltation itself solves the
// files (peer_saltation); run.py's reference check compares the two.
#include "saltation/dual.hpp"
#include "saltation/model.hpp"

namespace peers {

// cos, sin and abs for doubles and, by argument-dependent lookup, for dual numbers.
using saltation::abs;
using saltation::cos;
using saltation::sin;

// A forced, damped Duffing oscillator striking a stop at x = 1; q = (x, v, tau), tau the forcing's
// clock. theta = [x0, v0, delta, alpha, beta, gamma, omega, e].
struct DuffingStop {
  static constexpr int N = 3, P = 8, M = 1, F = 5;
  static constexpr const char* name = "duffing_stop";
  enum Param { X0 = 0, V0, Delta, Alpha, Beta, Gamma, Omega, E };
  static constexpr double stop = 1.0;
  int initial_mode = 0;

  SALTATION_HD static int flow_param(int f) { return Delta + f; }  // delta, alpha, beta, gamma, omega

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[X0];
    q[1] = th[V0];
    q[2] = S(0.0);
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th& th, S* f) const {
    f[0] = q[1];
    f[1] = -th[Delta] * q[1] - th[Alpha] * q[0] - th[Beta] * (q[0] * q[0] * q[0]) + th[Gamma] * cos(th[Omega] * q[2]);
    f[2] = S(1.0);
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th&) const {
    return stop - q[0];
  }
  SALTATION_HD int direction(int, int) const { return -1; }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    q_plus[0] = q[0];
    q_plus[1] = -th[E] * q[1];
    q_plus[2] = q[2];
    return mode;
  }
};

// A pendulum with quadratic air drag striking a wall at phi = 0; q = (phi, omega).
// theta = [phi0, omega0, L, k, e]; g = 9.81.
struct PendulumDrag {
  static constexpr int N = 2, P = 5, M = 1, F = 2;
  static constexpr const char* name = "pendulum_drag";
  enum Param { Phi0 = 0, Omega0, Length, K, E };
  static constexpr double gravity = 9.81, wall = 0.0;
  int initial_mode = 0;

  SALTATION_HD static int flow_param(int f) { return f == 0 ? Length : K; }

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[Phi0];
    q[1] = th[Omega0];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th& th, S* f) const {
    f[0] = q[1];
    f[1] = -gravity / th[Length] * sin(q[0]) - th[K] * q[1] * abs(q[1]);
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th&) const {
    return q[0] - wall;
  }
  SALTATION_HD int direction(int, int) const { return -1; }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    q_plus[0] = q[0];
    q_plus[1] = -th[E] * q[1];
    return mode;
  }
};

}  // namespace peers
