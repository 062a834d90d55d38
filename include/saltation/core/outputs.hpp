#pragma once
// Outputs: what a trajectory keeps (docs/architecture.md, "Outputs").
//
// The trajectory reports to an output policy bound to its trajectory (constructed from the policy's
// View and the trajectory's index) through these hooks, and writes nothing else (N is the model's
// state dimension, a template argument so that state arrays are indexed by constants and stay in
// registers on the device):
//   event(c, t_e, j, q_minus, q_plus)   event c is recorded (c < the event capacity)
//   event_flags(c, flags)               its flags (EventFlag)
//   event_column(c, p, tau, q_minus, dq)  with Sens: dt_e/dtheta_p and the N entries dq-_e/dtheta_p
//   final_dq(k, p, value)               with Sens: d qf[k] / dtheta_p; a later call may overwrite it
//   finish(status, t_end, qf, n_events) once, when the trajectory ends
// and says whether it keeps event_column's values (`records_event_columns`: when not, they are
// not formed). What event_column needs to know of its event besides its slot is the policy's
// ColumnNote: column_note() gives it after event(), take_column_note() restores it where the
// columns are formed apart from the trajectory (columns.hpp).
// Every backend runs the same routine, so each policy gives the same values on every backend.
#include <cmath>
#include <cstddef>

#include "saltation/config.hpp"
#include "saltation/core/result_views.hpp"
#include "saltation/status.hpp"

namespace saltation::core {

// q[k] for a k known only at run time, by a loop of constant indices (see above).
template <int N>
SALTATION_HD double entry(const double* q, int k) {
  double v = 0.0;
  for (int m = 0; m < N; ++m)
    if (m == k) v = q[m];
  return v;
}

// Status, end time, final state, event count and (with Sens) dqf; no event arrays: `View`'s C
// may be 0 and its event pointers null.
class FinalState {
 public:
  using View = ResultView;
  static constexpr bool records_event_columns = false;
  struct ColumnNote {};  // event_column needs only the slot
  SALTATION_HD FinalState(const View& out, std::size_t i) : out_(out), i_(i) {}
  SALTATION_HD const View& view() const { return out_; }
  SALTATION_HD ColumnNote column_note() const { return {}; }
  SALTATION_HD void take_column_note(const ColumnNote&) const {}

  template <int N>
  SALTATION_HD void event(int, double, int, const double*, const double*) const {}
  SALTATION_HD void event_flags(int, int) const {}
  template <int N>
  SALTATION_HD void event_column(int, int, double, const double*, const double*) const {}
  SALTATION_HD void final_dq(int k, int p, double value) const { out_.dqf[out_.dqf_at(k, p, i_)] = value; }
  template <int N>
  SALTATION_HD void finish(Status status, double t_end, const double* qf, int n_events) const {
    out_.status[i_] = static_cast<int>(status);
    out_.t_end[i_] = t_end;
    for (int k = 0; k < N; ++k) out_.qf[out_.qf_at(k, i_)] = qf[k];
    out_.n_events[i_] = n_events;
  }

 protected:
  View out_;
  std::size_t i_;
};

// Everything ResultView holds: the final state and every recorded event.
class FullRecord : public FinalState {
 public:
  using FinalState::FinalState;
  static constexpr bool records_event_columns = true;

  template <int N>
  SALTATION_HD void event(int c, double t_e, int j, const double* q_minus, const double* q_plus) const {
    out_.ev_t[out_.ev_at(c, i_)] = t_e;
    out_.ev_guard[out_.ev_at(c, i_)] = j;
    for (int k = 0; k < N; ++k) {
      out_.ev_q[out_.ev_q_at(c, k, i_)] = q_minus[k];
      out_.ev_q_plus[out_.ev_q_at(c, k, i_)] = q_plus[k];
    }
  }
  SALTATION_HD void event_flags(int c, int flags) const { out_.ev_flags[out_.ev_at(c, i_)] = flags; }
  template <int N>
  SALTATION_HD void event_column(int c, int p, double tau, const double*, const double* dq) const {
    out_.ev_dt[out_.ev_dt_at(c, p, i_)] = tau;
    for (int k = 0; k < N; ++k) out_.ev_dq[out_.ev_dq_at(c, k, p, i_)] = dq[k];
  }
};

// Objective values and their design derivatives, reduced on the fly (ObservationView): an event
// objective is written when its event is recorded (the observer counts each guard's events for the
// objectives that name a guard), the others at the end; an objective whose event never came (fewer
// events, an invalid row) is NaN, value and derivatives.
class ObjectiveObserver {
 public:
  using View = ObservationView;
  static constexpr bool records_event_columns = true;
  // The event last reported: its index, guard and occurrence among that guard's events.
  struct ColumnNote {
    int event = -1, guard = -1, occurrence = -1;
  };
  SALTATION_HD ObjectiveObserver(const View& out, std::size_t i) : out_(out), i_(i) {}
  SALTATION_HD const View& view() const { return out_; }
  SALTATION_HD ColumnNote column_note() const { return note_; }
  SALTATION_HD void take_column_note(const ColumnNote& note) const { note_ = note; }

  template <int N>
  SALTATION_HD void event(int c, double t_e, int j, const double* q_minus, const double*) const {
    note_ = {c, j, j >= 0 && j < kCountedGuards ? guard_events_[j]++ : -1};
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      if (reads_this_event(ob)) put(row, objective_at_event(ob, t_e, entry<N>(q_minus, ob.state)));
    }
  }
  SALTATION_HD void event_flags(int, int) const {}
  template <int N>
  SALTATION_HD void event_column(int, int p, double tau, const double* q_minus, const double* dq) const {
    const int d = design_index(p);
    if (d < 0) return;
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      if (reads_this_event(ob))
        put(row + 1 + d, objective_at_event_derivative(ob, tau, entry<N>(q_minus, ob.state), entry<N>(dq, ob.state)));
    }
  }
  SALTATION_HD void final_dq(int k, int p, double value) const {
    const int d = design_index(p);
    if (d < 0) return;
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      const ObjectiveTraits t = ob.traits();
      if (!t.reads_event && t.differentiable && ob.state == k) put(row + 1 + d, value);
    }
  }
  template <int N>
  SALTATION_HD void finish(Status status, double, const double* qf, int n_events) const {
    out_.status[i_] = static_cast<int>(status);
    out_.n_events[i_] = n_events;
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      if (!ob.traits().reads_event) {
        put(row, objective_at_end(ob, status, entry<N>(qf, ob.state), n_events));
      } else if (!came(ob, n_events)) {
        for (int w = 0; w < out_.width(ob); ++w) put(row + w, ::nan(""));
      }
    }
  }

 private:
  SALTATION_HD void put(int row, double value) const { out_.values[out_.at(row, i_)] = value; }
  // Position of parameter p in the design list, or -1.
  SALTATION_HD int design_index(int p) const {
    for (int d = 0; d < out_.n_design; ++d)
      if (out_.design[d] == p) return d;
    return -1;
  }

  // Whether event objective ob reads the event last reported (event_column follows its event).
  SALTATION_HD bool reads_this_event(const ObjectiveSpec& ob) const {
    if (!ob.traits().reads_event) return false;
    return ob.guard < 0 ? ob.event == note_.event : ob.guard == note_.guard && ob.event == note_.occurrence;
  }
  // Whether event objective ob's event came among the n_events recorded.
  SALTATION_HD bool came(const ObjectiveSpec& ob, int n_events) const {
    if (ob.guard < 0) return ob.event < n_events;
    return ob.guard < kCountedGuards && ob.event < guard_events_[ob.guard];
  }

  View out_;
  std::size_t i_;
  mutable ColumnNote note_;
  mutable int guard_events_[kCountedGuards] = {};
};

}  // namespace saltation::core
