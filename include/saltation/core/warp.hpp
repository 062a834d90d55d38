#pragma once
// Trajectories stepped in lockstep, one per lane of a CUDA warp (docs/warp_events.md): each lane
// runs the trajectory's begin / step / take_bracketed_event, and lanes holding a crossing wait to
// locate it together.
#include <cstddef>

#include "saltation/config.hpp"
#include "saltation/core/outputs.hpp"
#include "saltation/core/trajectory.hpp"

namespace saltation::core {

// Event deferral for trajectories stepped in lockstep, one per lane of a CUDA warp
// (docs/warp_events.md). A lane whose step holds a crossing stops and keeps its bracket; the
// pending lanes localise and jump together once enough of them are pending, once one has waited
// max_wait lockstep steps, or once no lane is left stepping. Deferral moves only when a lane
// localises, never what it computes.
struct WarpDeferral {
  int min_pending = 1;  // pending lanes that start a localisation (1: at once, no deferral)
  int max_wait = 0;     // lockstep steps a bracket may wait (0: none)

  // The policy the CUDA driver runs unless SALTATION_WARP_DEFER=0 (bench/warp_model.cpp's table).
  static constexpr WarpDeferral standard() { return {16, 64}; }
  static constexpr WarpDeferral off() { return {1, 0}; }

  // pending: lanes holding a bracket; stepping: lanes that would step meanwhile; expired: some
  // pending lane has waited max_wait steps. The same answer on every lane of the warp.
  SALTATION_HD bool localise_now(int pending, int stepping, bool expired) const {
    return pending > 0 && (stepping == 0 || pending >= min_pending || expired);
  }
};

// One lane of the lockstep loop. Each iteration has two phases on every lane of the warp:
// step_phase() (lanes neither ended nor pending take one step), then the warp's vote
// (WarpDeferral::localise_now over the lanes' pending(), stepping() and expired()), then
// localise_phase() with its answer. A lane whose trajectory ended may take another row
// (take_row) between iterations. kernels/solve.cuh votes with __ballot_sync;
// tests/test_warp_policy.cpp runs the same phases over a CPU "warp".
template <class Model, class Th, bool Sens, class Output = FullRecord, Method Stepping = Method::Rk4>
class WarpLane {
 public:
  // A lane past the end of the batch (`in_batch` false) is ended from the start and never
  // touches the result arrays.
  SALTATION_HD WarpLane(const Model& m, const Options& o, const Th& th, std::size_t i, const typename Output::View& out,
                        bool in_batch)
      : tr_(m, o, th, i, out), ended_(!in_batch || tr_.begin()) {}

  // The lane takes row i after its trajectory ended (a refill, kernels/solve.cuh): a new
  // trajectory over the ended one, begun at once. Out of line on the device: inlined, the forward
  // kernels need more registers than their rule allows (scripts/ptxas-check).
  SALTATION_DEVICE_NOINLINE SALTATION_HD void take_row(const Th& th, std::size_t i) {
    tr_.restart_on_row(th, i);
    ended_ = tr_.begin();
    pending_ = false;
    waited_ = 0;
  }

  SALTATION_HD bool ended() const { return ended_; }
  SALTATION_HD bool pending() const { return pending_; }
  SALTATION_HD bool stepping() const { return !ended_ && !pending_; }
  SALTATION_HD bool expired(const WarpDeferral& d) const { return pending_ && waited_ >= d.max_wait; }

  SALTATION_HD void step_phase() {
    if (!stepping()) return;
    using Outcome = typename Trajectory<Model, Th, Sens, Output, Stepping>::StepOutcome;
    const Outcome outcome = tr_.step();
    ended_ = outcome == Outcome::Ended;
    pending_ = outcome == Outcome::Bracketed;
    waited_ = 0;
  }

  SALTATION_HD void localise_phase(bool localise) {
    if (!pending_) return;
    if (!localise) {
      ++waited_;
      return;
    }
    ended_ = tr_.take_bracketed_event();
    pending_ = false;
  }

 private:
  Trajectory<Model, Th, Sens, Output, Stepping> tr_;
  bool ended_;
  bool pending_ = false;
  int waited_ = 0;  // lockstep steps the held bracket has waited
};

}  // namespace saltation::core
