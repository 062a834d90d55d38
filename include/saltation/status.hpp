#pragma once
// The one status vocabulary: how a trajectory (or a disk system) ended. Written per row by
// the per-trajectory code on every backend; never an exception.
namespace saltation {

enum class Status : int {
  Finished = 0,           // ran to t_final (disks: all frames); qf = state at t_final
  EventCapacity = 1,      // event capacity reached; qf = pre-event state at the truncating crossing
  Settled = 2,            // left the guard slower than v_stop; qf = post-event state at that event
  NonFinite = 3,          // the state became NaN/Inf; qf = last finite state, t_end its time
  InvalidInput = 4,       // parameters outside their domain or initial state past a guard; nothing integrated
  Zeno = 5,               // zeno_events events within zeno_window; qf = post-event state of the last one
  CellOverflow = 6,       // disks: a cell of the cell list would hold more than cell_capacity disks
  OutOfGrid = 7,          // disks: a disk left the cell-list grid
  Coincident = 8,         // disks: two disks at the same position (contact normal undefined)
  StepSizeUnderflow = 9,  // dopri5: the step the tolerances need fell below dt_min; qf = last accepted state
  StepLimit = 10,         // dopri5: max_steps steps (accepted and rejected) before t_final; qf = last accepted state
};
constexpr int status_count = 11;

inline const char* status_name(Status s) {
  switch (s) {
    case Status::Finished: return "finished";
    case Status::EventCapacity: return "event_capacity";
    case Status::Settled: return "settled";
    case Status::NonFinite: return "non_finite";
    case Status::InvalidInput: return "invalid_input";
    case Status::Zeno: return "zeno";
    case Status::CellOverflow: return "cell_overflow";
    case Status::OutOfGrid: return "out_of_grid";
    case Status::Coincident: return "coincident";
    case Status::StepSizeUnderflow: return "step_size_underflow";
    case Status::StepLimit: return "step_limit";
  }
  return "unknown";
}

}  // namespace saltation
