#pragma once
// Guard crossings: when a guard value is past its surface in the guard's direction, when a pair
// of values brackets a crossing, and what is wrong with a row before any step (a parameter outside
// its domain, an initial state already past an active guard).
#include "saltation/config.hpp"
#include "saltation/model.hpp"

namespace saltation::core {

// A guard value past its surface in the guard's direction (where a crossing ends).
SALTATION_HD inline bool past_surface(int direction, double g) {
  return (direction < 0 && g < 0.0) || (direction > 0 && g > 0.0);
}
SALTATION_HD inline bool crosses(int direction, double g_from, double g_to) {
  return past_surface(direction, g_to) && (direction < 0 ? g_from >= 0.0 : g_from <= 0.0);
}

// What is wrong with one row before integration: a parameter outside its domain, or an initial
// state already past an active guard. Used by host validation and by the trajectory alike.
struct RowCheck {
  int param = -1;  // first bad parameter, or -1
  int guard = -1;  // first guard the initial state is past, or -1
  double guard_value = 0.0;
  SALTATION_HD bool ok() const { return param < 0 && guard < 0; }
};

template <class Model, class Th>
SALTATION_HD RowCheck check_row(const Model& m, const Th& th) {
  RowCheck r;
  r.param = m.invalid_param(th);
  if (r.param >= 0) return r;
  if (has_jump_at_start<Model>::value) return r;  // past a guard is then an event at t = 0
  double q[Model::N];
  m.initial_state(th, q);
  for (int j = 0; j < Model::M; ++j) {
    const int dir = m.direction(j, m.initial_mode);
    const double g = m.guard(j, q, m.initial_mode, th);
    if ((dir < 0 && !(g >= 0.0)) || (dir > 0 && !(g <= 0.0))) {
      r.guard = j;
      r.guard_value = g;
      return r;
    }
  }
  return r;
}

}  // namespace saltation::core
