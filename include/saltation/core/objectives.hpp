#pragma once
// Objectives: a scalar of one trajectory's outcome (an event's time or state, a final state, the
// event count, a status) and its pathwise derivative, as observe() and the sweep studies read them.
// Adding a kind is one line of the table below and its evaluation in the three functions after it;
// everything else (the study file's key and shape, validation, output rows, the sweep's boundary
// term) follows from the table's columns.
#include "saltation/config.hpp"
#include "saltation/status.hpp"

namespace saltation {

// X(Kind, key, reads_event, reads_state, has_target, reads_status, differentiable, jumps_at_horizon)
//   key             the study file's name for it (docs/sweep.md)
//   reads_event     read at event `event` (events count from 0; with `guard` >= 0, only that guard's
//                   events count): absent where that event never came
//   reads_state     reads state `state`
//   has_target      reads `target`
//   reads_status    reads `status`
//   differentiable  has a pathwise derivative (a piecewise constant kind has none)
//   jumps_at_horizon  its value jumps when an event crosses t_final (the sweep's boundary term)
#define SALTATION_FOR_EACH_OBJECTIVE_KIND(X)                            \
  X(EventTime, "event_time", true, false, false, false, true, false)    \
  X(EventState, "event_state", true, true, false, false, true, false)   \
  X(FinalState, "final_state", false, true, false, false, true, true)   \
  X(EventCount, "event_count", false, false, false, false, false, true) \
  X(Landing, "landing", true, true, true, false, true, false)           \
  X(StatusIs, "status", false, false, false, true, false, true)

enum class ObjectiveKind : int {
#define SALTATION_OBJECTIVE_KIND(kind, ...) kind,
  SALTATION_FOR_EACH_OBJECTIVE_KIND(SALTATION_OBJECTIVE_KIND)
#undef SALTATION_OBJECTIVE_KIND
};

struct ObjectiveTraits {
  const char* key;
  bool reads_event, reads_state, has_target, reads_status, differentiable, jumps_at_horizon;
};
SALTATION_HD constexpr ObjectiveTraits objective_traits(ObjectiveKind kind) {
  switch (kind) {
#define SALTATION_OBJECTIVE_TRAITS(kind, key, ...) \
  case ObjectiveKind::kind: return {key, __VA_ARGS__};
    SALTATION_FOR_EACH_OBJECTIVE_KIND(SALTATION_OBJECTIVE_TRAITS)
#undef SALTATION_OBJECTIVE_TRAITS
  }
  return {"", false, false, false, false, false, false};
}
constexpr int kObjectiveKinds = 0
#define SALTATION_OBJECTIVE_COUNT(...) +1
    SALTATION_FOR_EACH_OBJECTIVE_KIND(SALTATION_OBJECTIVE_COUNT)
#undef SALTATION_OBJECTIVE_COUNT
    ;

struct ObjectiveSpec {
  ObjectiveKind kind = ObjectiveKind::FinalState;
  int event = 0;
  int guard = -1;  // with reads_event: count only this guard's events (-1: every event)
  int state = 0;
  double target = 0.0;
  int status = 0;
  SALTATION_HD ObjectiveTraits traits() const { return objective_traits(kind); }
  SALTATION_HD bool differentiable() const { return traits().differentiable; }
};

// Guards an event objective can name: the observer counts each one's events.
constexpr int kCountedGuards = 32;

// ---- The evaluation of each kind. `q` is the state the objective reads (the event's pre-event
// state, or the final state) at ob.state, `dq` its derivative by one parameter.

// An event objective's value at its event at t_e.
SALTATION_HD inline double objective_at_event(const ObjectiveSpec& ob, double t_e, double q) {
  switch (ob.kind) {
    case ObjectiveKind::EventTime: return t_e;
    case ObjectiveKind::Landing: {
      const double miss = q - ob.target;
      return miss * miss;
    }
    default: return q;  // EventState
  }
}
// Its derivative from the event time's (tau) and the state's (dq).
SALTATION_HD inline double objective_at_event_derivative(const ObjectiveSpec& ob, double tau, double q, double dq) {
  switch (ob.kind) {
    case ObjectiveKind::EventTime: return tau;
    case ObjectiveKind::Landing: return 2.0 * (q - ob.target) * dq;
    default: return dq;  // EventState
  }
}
// An end objective's value; the derivative of a differentiable one is the final state's, dqf[state].
SALTATION_HD inline double objective_at_end(const ObjectiveSpec& ob, Status status, double q, int n_events) {
  switch (ob.kind) {
    case ObjectiveKind::EventCount: return n_events;
    case ObjectiveKind::StatusIs: return static_cast<int>(status) == ob.status ? 1.0 : 0.0;
    default: return q;  // FinalState
  }
}

}  // namespace saltation
