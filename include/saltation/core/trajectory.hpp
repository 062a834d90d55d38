#pragma once
// One trajectory, the routine every backend runs unchanged (README, "How it works"):
//   begin()  initial state and mode, row validation, an event already at t = 0;
//   step()   one RK4 step of dt, the guards probed at the step's end and interior points for a
//            crossing in each guard's direction (scan_step: unless a guard bound, the model's or
//            the curvature bound, rules the step out, the interior points on the step's dense
//            output first, on the discrete path where that shows a guard past its surface); a
//            crossing holds the step as a bracket;
//   take_bracketed_event()  the crossing located to the earliest guard zero by a fixed count of
//            safeguarded root steps (locate), the state stepped there, the event taken (take_event):
//            recorded, reset into the next mode or ended by a terminal status.
// With Sens the segment tangent rides along each step (tangents.hpp) and each event applies the
// saltation jump (jump.hpp) to the parameter columns, kept by the trajectory or recorded to be
// composed apart (columns.hpp); what is kept goes through an output policy (outputs.hpp). The CUDA
// driver runs the same calls in warp lockstep (warp.hpp).
// With Stepping dopri5 (options.method) step() takes adaptive steps
// instead (adaptive_step): the guards probed on each step's continuous extension, the event
// located on it.
#include <cstddef>
#include <new>
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/core/clock.hpp"
#include "saltation/core/columns.hpp"
#include "saltation/core/dopri5.hpp"
#include "saltation/core/guard_trend.hpp"
#include "saltation/core/guards.hpp"
#include "saltation/core/jump.hpp"
#include "saltation/core/locate.hpp"
#include "saltation/core/options.hpp"
#include "saltation/core/outputs.hpp"
#include "saltation/core/params.hpp"
#include "saltation/core/rk4.hpp"
#include "saltation/core/tangents.hpp"
#include "saltation/dual.hpp"
#include "saltation/model.hpp"
#include "saltation/status.hpp"

namespace saltation::core {

// What adaptive steps keep between calls (options.method dopri5): the last step tried (held with
// a bracket until take_bracketed_event), its size, the next step's size (0: not chosen yet), the
// log of the last accepted step's error and the steps tried so far. RK4 keeps nothing, and as an empty base
// this takes no room in its trajectories.
template <Method Stepping, int N>
struct AdaptiveState {};
template <int N>
struct AdaptiveState<Method::Dopri5, N> {
  Dopri5Step<N, double> dense_;
  double h_step_ = 0.0, h_next_ = 0.0, log_err_prev_ = dopri5::kLogErrFloor;
  long long steps_ = 0;
};

template <class Model, class Th, bool Sens, class Output = FullRecord, Method Stepping = Method::Rk4>
class Trajectory : private AdaptiveState<Stepping, Model::N> {
 public:
  static constexpr int N = Model::N, M = Model::M;
  static constexpr int kWidth = tangent_width<Model>();  // of the segment tangent Y
  static constexpr int kYSize = Sens ? N * kWidth : 1;
  static constexpr bool kAdaptive = Stepping == Method::Dopri5;

  SALTATION_HD Trajectory(const Model& m, const Options& o, const Th& th, std::size_t i,
                          const typename Output::View& out)
      : m_(m), o_(o), th_(th), out_(out, i), columns_(out_) {}

  // The same model, options and outputs on row i of the batch, not yet begun: built in place over
  // this trajectory, since a temporary would double the stack frame of a wide model's sensitivity
  // kernel (its tangents take tens of kilobytes).
  SALTATION_HD void restart_on_row(const Th& th, std::size_t i) {
    static_assert(std::is_trivially_destructible<Trajectory>::value, "restart_on_row builds over the old one");
    const Model m = m_;
    const Options o = o_;
    const typename Output::View out = out_.view();
    ::new (static_cast<void*>(this)) Trajectory(m, o, th, i, out);
  }

  // One trajectory on its own: the CPU driver's way.
  SALTATION_HD void run() {
    if (begin()) return;
    for (;;) {
      const StepOutcome outcome = step();
      if (outcome == StepOutcome::Ended) return;
      if (outcome == StepOutcome::Bracketed && take_bracketed_event()) return;
    }
  }

  // The same trajectory in three calls, for drivers that choose when a lane localises its event
  // (the CUDA warp loop, docs/warp_events.md): begin(), then step() until it ends; after
  // Bracketed the trajectory holds the bracket and does not move until take_bracketed_event().
  // Nothing changes between the two, so when the event is localised does not change the result.
  enum class StepOutcome { Stepped, Bracketed, Ended };

  // Initial state, validation and an event at t = 0; true when the trajectory has already ended.
  SALTATION_HD bool begin() {
    mode_ = m_.initial_mode;
    m_.initial_state(th_, q_);
    const RowCheck check = check_row(m_, th_);
    if (!check.ok()) {
      finish_invalid();
      return true;
    }
    if constexpr (Sens) {
      columns_.start(m_, th_, out_);
      tan_.restart_segment();
    }
    if constexpr (guard_summary_of<Model, Th>::present) guard_summary_ = m_.guard_summary(th_);
    refresh_guards(-1);
    if constexpr (has_jump_at_start<Model>::value) {
      for (int j = 0; j < M; ++j) {
        if (past_surface(m_.direction(j, mode_), g_left_[j])) {
          double q0[N];
          for (int k = 0; k < N; ++k) q0[k] = q_[k];
          if (take_event(j, 0.0, q0, true)) return true;
          break;
        }
      }
    }
    return finish_at_t_final();
  }

  // One step: Stepped, Bracketed (a crossing in it, held for take_bracketed_event()) or Ended
  // (non-finite state, or t_final reached).
  SALTATION_HD StepOutcome step() {
    if constexpr (kAdaptive) {
      return adaptive_step();
    } else {
      return fixed_step();
    }
  }

 private:
  // One RK4 step of dt, or the remainder to t_final.
  SALTATION_HD StepOutcome fixed_step() {
    const bool last = last_step_from(t_);
    const double h = step_length_from(t_);
    StepEnd end;
    if (scan_step(h, end, bracket_)) return StepOutcome::Bracketed;
    if (!all_finite(end.q)) {
      finish(Status::NonFinite, t_, q_);
      return StepOutcome::Ended;
    }
    if constexpr (Sens) {
      if (affine_step(h)) {
        tan_.take_affine_step(q_);
      } else {
        for (int e = 0; e < kYSize; ++e) tan_.Y[e] = end.Y[e];
      }
    }
    advance_trend(h, end);
    for (int k = 0; k < N; ++k) q_[k] = end.q[k];
    if (end.g_known)
      for (int j = 0; j < M; ++j) g_left_[j] = end.g[j];
    g_left_known_ = end.g_known;
    if (end.f_known)
      for (int k = 0; k < N; ++k) f_left_[k] = end.f[k];
    f_left_known_ = end.f_known;
    if (last) {
      t_ = o_.t_final;
    } else {
      advance_time(t_, t_carry_, h);
    }
    return finish_at_t_final() ? StepOutcome::Ended : StepOutcome::Stepped;
  }

 public:
  // The event path for the held bracket: localise, step to the event, take it. Returns true
  // when the trajectory has ended.
  SALTATION_HD bool take_bracketed_event() {
    int j = -1;
    double s = locate(bracket_, j);
    double q_minus[N];
    if constexpr (kAdaptive) {
      s = on_the_step(j, s, bracket_);
      step_to_event(s, q_minus);
    } else if constexpr (Sens) {
      tan_.up_to_date();
      rk4_tangent_step(m_, q_, mode_, th_, s, q_minus, tan_.Y);
    } else {
      rk4_step(m_, q_, mode_, th_, s, q_minus);
    }
    if (!all_finite(q_minus)) {
      finish(Status::NonFinite, t_, q_);
      return true;
    }
    return take_event(j, t_ + s, q_minus, false) || finish_at_t_final();
  }

  // For a driver that advances several trajectories' free flight at once (the CPU's SIMD lanes,
  // src/cpu_lanes.cpp) and holds their states meanwhile: it takes the state, mode and time (with
  // its carry, advanced by advance_time), and then, while full_step_next(), steps of dt by
  // rk4_step from the state q0 it holds to q1, each
  // one only where step() would take it without a guard evaluation (q1 finite, which the driver
  // checks, and guards_excluded(q0, q1)); resume() hands the state back after one or more such
  // steps (not after none: it marks the guards at the state unknown), and is true when t_final
  // is reached. Between them the trajectory goes through what step() would do on each step.
  // With Sens the driver also takes the tangent of the free steps: free_steps_tangent() gives the
  // segment tangent Y and, for an affine flow, readies the step matrices for the mode (as the first
  // full step would). The driver advances an affine flow's flow-parameter columns of Y by
  // affine_flow_param_columns, and resume() takes those columns back with the number of free
  // steps; any other flow's whole Y by rk4_tangent_step, which resume() takes back whole.
  SALTATION_HD const double* state() const { return q_; }
  SALTATION_HD int mode() const { return mode_; }
  SALTATION_HD double time() const { return t_; }
  SALTATION_HD double time_carry() const { return t_carry_; }  // advance_time's (clock.hpp)
  SALTATION_HD bool full_step_next() const { return !last_step_from(t_); }
  SALTATION_HD bool guards_excluded(const double* q0, const double* q1) const { return all_guards_excluded(q0, q1); }
  // For a model without a guard bound, the lanes screen free steps on their own and keep the
  // guards at the state with their trend (the curvature bound's history): guards_at_state() gives
  // them (false when unknown), and take_guards() hands them back after resume().
  SALTATION_HD bool guards_at_state(double* g, GuardTrendOf<Model>& trend) const {
    for (int j = 0; j < M; ++j) g[j] = g_left_[j];
    trend = trend_;
    return g_left_known_;
  }
  SALTATION_HD void take_guards(const double* g, const GuardTrendOf<Model>& trend) {
    for (int j = 0; j < M; ++j) g_left_[j] = g[j];
    g_left_known_ = true;
    trend_ = trend;
  }
  SALTATION_HD bool resume(const double* q, double t, double t_carry) {
    static_assert(!Sens, "free steps taken elsewhere carry a tangent: resume(q, t, t_carry, Y, steps)");
    return resume_state(q, t, t_carry);
  }
  SALTATION_HD const Tangents<Model, Sens>& free_steps_tangent() {
    static_assert(Sens, "a forward run has no tangent");
    if constexpr (has_affine_flow<Model>::value) tan_.ready_affine(m_, mode_, th_, o_.dt);
    return tan_;
  }
  SALTATION_HD bool resume(const double* q, double t, double t_carry, const double* Y, int steps) {
    static_assert(Sens, "a forward run has no tangent: resume(q, t, t_carry)");
    if constexpr (has_affine_flow<Model>::value) {
      for (int i = 0; i < N; ++i)
        for (int f = 0; f < Model::F; ++f) tan_.Y[i * kWidth + N + f] = Y[i * kWidth + N + f];
      tan_.pending += steps;
    } else {
      for (int e = 0; e < N * kWidth; ++e) tan_.Y[e] = Y[e];
    }
    return resume_state(q, t, t_carry);
  }

  // For a driver that takes several trajectories' adaptive trial steps at once (the CPU's SIMD
  // lanes): adaptive_trial() readies the next trial from the state and gives its size in h; false
  // when the steps are used up (the trajectory has ended with status step_limit). The driver takes
  // dopri5_step of h from state(): forward with the flow there (the step's first stage) from
  // first_stage(); with Sens on dual numbers seeded with the segment tangent, tangent() (as
  // tangent_start does). It hands the step and its error (dopri5_step_error, with the options'
  // tolerances and last_log_error()) to adaptive_trial_taken(), which goes on as step() would: false when the trial was
  // rejected (the next one is shorter), else true with step()'s outcome.
  SALTATION_HD bool adaptive_trial(double& h) {
    static_assert(kAdaptive, "trial steps taken elsewhere are dopri5's");
    if constexpr (Sens) {
      tan_.up_to_date();
      if (this->h_next_ == 0.0) {  // the flow's values are those of the first stage on dual numbers
        double f0[N];
        m_.flow(q_, mode_, th_, f0);
        ready_trials(f0);
      }
    } else {
      ready_first_stage();
      ready_trials(this->dense_.k[0]);
    }
    return trial_size(h);
  }
  SALTATION_HD const double* first_stage() const {
    static_assert(!Sens, "with Sens the first stage is on dual numbers seeded with tangent()");
    return this->dense_.k[0];
  }
  SALTATION_HD double last_log_error() const { return this->log_err_prev_; }  // dopri5_step_error's log_err_prev
  SALTATION_HD const double* tangent() const {
    static_assert(Sens, "a forward run has no tangent");
    return tan_.Y;
  }
  // The driver may also give the guards at the probes' points of the step's continuous extension
  // (dense_crossing's), each piece's M guards in turn, or leave them to the trajectory (nullptr).
  template <class S>
  SALTATION_HD bool adaptive_trial_taken(const Dopri5Step<N, S>& st, double h, const Dopri5Error<double>& error,
                                         const double* probe_guards, StepOutcome& outcome) {
    if constexpr (!Sens) {
      for (int i = 0; i < N; ++i) {
        for (int stage = 1; stage < 7; ++stage) this->dense_.k[stage][i] = st.k[stage][i];
        this->dense_.q1[i] = st.q1[i];
      }
      return trial_judged(this->dense_, h, error, probe_guards, outcome);
    } else {
      return trial_judged(st, h, error, probe_guards, outcome);
    }
  }

 private:
  // Whether the step from t is the last (the remainder to t_final, at most dt), and its length.
  SALTATION_HD bool last_step_from(double t) const { return o_.t_final - t <= o_.dt; }
  SALTATION_HD double step_length_from(double t) const { return last_step_from(t) ? o_.t_final - t : o_.dt; }

  SALTATION_HD bool resume_state(const double* q, double t, double t_carry) {
    for (int k = 0; k < N; ++k) q_[k] = q[k];
    t_ = t;
    t_carry_ = t_carry;
    g_left_known_ = false;
    trend_.restart();
    f_left_known_ = false;
    departing_ = -1;
    return finish_at_t_final();
  }

  // The event of guard j at t_e with pre-event state q_minus: truncate (capacity), end the run
  // (settled, Zeno) or reset and go on. `pinned`: the event time does not move with theta (an
  // initial state already in the jump set). Returns true when the trajectory has ended.
  SALTATION_HD bool take_event(int j, double t_e, const double* q_minus, bool pinned) {
    double q_plus[N];
    const EventPartials<Model, Th, Sens> partials(m_, mode_, th_, j, q_minus);
    const EventGeometry<N> geo = event_geometry(m_, mode_, th_, j, q_minus, partials);
    int mode_plus;
    if constexpr (has_reset_from_gradient<Model>::value) {
      mode_plus = m_.reset_from_gradient(j, q_minus, mode_, th_, geo.g_q, q_plus);
    } else {
      mode_plus = m_.reset(j, q_minus, mode_, th_, q_plus);
    }
    const bool departure_clear = departure_cleared(j, mode_plus, q_plus, t_e, geo);
    Status terminal = Status::Finished;  // Finished here means "not terminal"
    if (n_events_ >= o_.event_capacity) {
      terminal = Status::EventCapacity;
    } else {
      const double zeno_window = o_.zeno_window > 0.0 ? o_.zeno_window : o_.dt;
      if (t_e - zeno_start_ <= zeno_window) {
        ++zeno_count_;
      } else {
        zeno_start_ = t_e;
        zeno_count_ = 1;
      }
      if (o_.v_stop > 0.0 && geo.impact_speed() < o_.v_stop) terminal = Status::Settled;
      else if (zeno_count_ >= o_.zeno_events) terminal = Status::Zeno;
    }
    const int slot = terminal == Status::EventCapacity ? -1 : n_events_;
    if (slot >= 0) {
      out_.template event<N>(slot, t_e, j, q_minus, q_plus);
      out_.event_flags(slot, geo.grazing(o_.graze_tol) ? EventGrazing : 0);
      ++n_events_;
    }
    if constexpr (Sens) {
      const EventEnd ev{q_minus, q_plus, mode_plus, slot, terminal, pinned};
      columns_.jump(partials, event_map(m_, th_, partials, geo, ev, tan_), EventState{q_minus, geo.f_minus, tan_.Y},
                    out_);
      if (terminal == Status::Finished) tan_.restart_segment();
    }
    if (terminal == Status::EventCapacity) {
      finish_state(terminal, t_e, q_minus);
      return true;
    }
    if (!all_finite(q_plus)) {
      finish(Status::NonFinite, t_e, q_minus);  // overwrites the dqf the jump wrote
      return true;
    }
    if (terminal != Status::Finished) {
      finish_state(terminal, t_e, q_plus);
      return true;
    }
    for (int k = 0; k < N; ++k) q_[k] = q_plus[k];
    mode_ = mode_plus;
    t_ = t_e;
    t_carry_ = 0.0;
    refresh_guards(j);
    trend_.restart();
    f_left_known_ = false;
    departing_ = departure_clear ? j : -1;
    if constexpr (kAdaptive) this->log_err_prev_ = dopri5::kLogErrFloor;
    return false;
  }

  struct Bracket {
    double a = 0.0, b = 0.0;  // step-relative times with a crossing of each masked guard in (a, b]
    double ga[M], gb[M];
    unsigned mask = 0;
  };

  SALTATION_HD static bool all_finite(const double* q) {
    for (int k = 0; k < N; ++k)
      if (!is_finite(q[k])) return false;
    return true;
  }

  SALTATION_HD void guards_at(const double* q, int mode, double* g) const {
    for (int j = 0; j < M; ++j) g[j] = m_.direction(j, mode) != 0 ? m_.guard(j, q, mode, th_) : 0.0;
  }

  // Whether some active guard has gone past its surface.
  SALTATION_HD bool any_past_surface(const double* g) const {
    for (int j = 0; j < M; ++j)
      if (past_surface(m_.direction(j, mode_), g[j])) return true;
    return false;
  }

  // After an event on guard j the state lies on that guard: its value is taken as exactly 0,
  // so a trajectory heading back through the surface is caught at once (never integrates below).
  // With one guard there is nothing else to evaluate.
  SALTATION_HD void refresh_guards(int j_event) {
    if (M > 1 || j_event < 0) guards_at(q_, mode_, g_left_);
    if (j_event >= 0) g_left_[j_event] = 0.0;
    g_left_known_ = true;
  }

  // True when the model's conservative bounds rule out every active guard on this step: its guard
  // bound, and for the guard whose event the step starts from its departure bound (`departing`:
  // that guard when the bound, decided at the event, rules it out). The departure bound goes first:
  // the guard bound, from a state on the guard, almost never rules the step out and is the dearer
  // of the two (a loop over the terrain's bumps).
  SALTATION_HD bool all_guards_excluded(const double* q_start, const double* q_end, int departing = -1) const {
    if constexpr (has_guard_exclusion<Model>::value || has_departure_exclusion<Model>::value) {
      for (int j = 0; j < M; ++j) {
        if (m_.direction(j, mode_) == 0) continue;
        if (j == departing) continue;
        if (guard_excluded(j, q_start, q_end)) continue;
        return false;
      }
      return true;
    } else {
      return false;
    }
  }
  SALTATION_HD bool guard_excluded(int j, const double* q_start, const double* q_end) const {
    if constexpr (!has_guard_exclusion<Model>::value) {
      return false;
    } else if constexpr (guard_summary_of<Model, Th>::present) {
      return m_.guard_excluded(j, mode_, q_start, q_end, th_, guard_summary_);
    } else {
      return m_.guard_excluded(j, mode_, q_start, q_end, th_);
    }
  }

  // Whether a step of h takes the affine path (Tangents): the cached step matrix is for dt.
  SALTATION_HD bool affine_step(double h) const { return has_affine_flow<Model>::value && h == o_.dt; }

  // The end of a step: its state, and what scan_step evaluated there: the guards, the flow (the
  // next step's first stage) and, with Sens, the tangent (a step other than a full one of an
  // affine flow).
  struct StepEnd {
    double q[N];
    double g[M] = {};  // read only when g_known; zeroed so that GCC need not warn
    double f[N];
    double Y[kYSize];
    bool g_known = false, f_known = false;
  };

  // Steps to the end of (t, t+h], then (unless the guard bound rules the step out) probes it;
  // returns true with the first sub-interval that holds a crossing, else false with `end`.
  // With interior probes, the curvature bound and then the step's dense output screen it first:
  // the discrete probes, RK4 sub-steps from the start, run only where the end or the dense output
  // shows a guard past its surface.
  SALTATION_HD bool scan_step(double h, StepEnd& end, Bracket& br) {
    const int departing = departing_;
    departing_ = -1;
    const bool screened = screened_probes();
    // A full step of an affine flow forms its tangent only once it is taken (step()): a step with
    // a crossing in it is not.
    bool tangent_stepped = false;
    if constexpr (Sens) {
      if (affine_step(h)) {
        tan_.ready_affine(m_, mode_, th_, h);
      } else {
        tan_.up_to_date();
        for (int e = 0; e < kYSize; ++e) end.Y[e] = tan_.Y[e];
        rk4_tangent_step(m_, q_, mode_, th_, h, end.q, end.Y);
        tangent_stepped = true;
      }
    }
    if (!tangent_stepped) {
      if (screened) {
        know_flow_at_state();
        rk4_step_from(m_, q_, f_left_, mode_, th_, h, end.q);
      } else {
        rk4_step(m_, q_, mode_, th_, h, end.q);
      }
    }
    if (!all_finite(end.q) || all_guards_excluded(q_, end.q, departing)) return false;
    if (screened && dense_output_clear(h, end)) return false;
    return scan_discrete_path(h, end, br);
  }

  // Whether no guard is past its surface at the step's end nor, unless the curvature bound rules
  // the step out, at the probes' interior points of its dense output (hermite_point); evaluates
  // the end's guards into `end`, and for the dense output its flow (the next step's first stage).
  // A dip through a guard shallower than the interpolant's error can pass unseen where a discrete
  // probe would see it; the error is that of the step itself.
  SALTATION_HD bool dense_output_clear(double h, StepEnd& end) {
    guards_at(end.q, mode_, end.g);
    end.g_known = true;
    if (any_past_surface(end.g)) return false;
    if (h == o_.dt && curvature_bound_clear(end.g)) return true;
    know_flow_at_state();
    m_.flow(end.q, mode_, th_, end.f);
    end.f_known = true;
    const int pieces = o_.probes + 1;
    for (int k = 1; k < pieces; ++k) {
      double qs[N], gs[M];
      hermite_point<N>(static_cast<double>(k) / pieces, h, q_, f_left_, end.q, end.f, qs);
      guards_at(qs, mode_, gs);
      if (any_past_surface(gs)) return false;
    }
    return true;
  }

  // The flow at the state, f_left_, unless known: the first stage of a step (rk4_step_from) and the
  // dense output's slope at the start. A step whose tangent takes its own stages (rk4_tangent_step)
  // needs it only for the dense output.
  SALTATION_HD void know_flow_at_state() {
    if (f_left_known_) return;
    m_.flow(q_, mode_, th_, f_left_);
    f_left_known_ = true;
  }

  // Whether the interior probes are screened on the step's dense output (and by the curvature
  // bound). A model with a guard bound reaches the probes only near its guards, where the screen
  // would seldom clear a step: there it would cost registers (on the GPU) and buy nothing.
  SALTATION_HD bool screened_probes() const { return o_.probes > 0 && !has_guard_exclusion<Model>::value; }
  // Whether the curvature bound screens them first: for guards polynomial in the state (model.hpp).
  SALTATION_HD bool curvature_bounded() const { return has_curvature_bound<Model>() && o_.probes > 0; }

  // Whether the curvature bound (guard_trend.hpp) rules every active guard out on this full step,
  // from the guards at its ends and their trend over the steps before.
  SALTATION_HD bool curvature_bound_clear(const double* g_end) const {
    if constexpr (!has_curvature_bound<Model>()) {
      return false;
    } else {
      if (!curvature_bounded() || trend_.steps < 2 || !g_left_known_) return false;
      for (int j = 0; j < M; ++j) {
        const int dir = m_.direction(j, mode_);
        if (dir == 0) continue;
        const double d2 = second_difference(trend_.g_back[j], g_left_[j], g_end[j]);
        if (!curvature_clear(dir, g_left_[j], g_end[j], d2, trend_.d2_back[j])) return false;
      }
      return true;
    }
  }

  // After a step is taken, the guards at its start move one step back in the trend; any step but a
  // full one with the guards known at both ends starts the trend again.
  SALTATION_HD void advance_trend(double h, const StepEnd& end) {
    if constexpr (has_curvature_bound<Model>()) {
      if (!curvature_bounded()) return;
      if (!(end.g_known && g_left_known_ && h == o_.dt)) {
        trend_.restart();
        return;
      }
      for (int j = 0; j < M; ++j) {
        trend_.d2_back[j] = trend_.steps > 0 ? second_difference(trend_.g_back[j], g_left_[j], end.g[j]) : 0.0;
        trend_.g_back[j] = g_left_[j];
      }
      trend_.steps = trend_.steps < 2 ? trend_.steps + 1 : 2;
    }
  }

  // The probes on the discrete path: the guards at RK4 sub-steps from the step's start to each
  // interior point, then at its end; true with the first piece that holds a crossing.
  SALTATION_HD bool scan_discrete_path(double h, StepEnd& end, Bracket& br) {
    end.g_known = end.f_known = false;
    const int pieces = o_.probes + 1;
    // The guards at the step's start are evaluated (when unknown) only if the first piece needs
    // them: a guard can cross there only if it ends past its surface (until then 0 stands in, with
    // which crosses() is false for a guard not past it). The result is the same.
    double g_prev[M];
    for (int j = 0; j < M; ++j) g_prev[j] = g_left_known_ ? g_left_[j] : 0.0;
    double s_prev = 0.0;
    for (int k = 1; k <= pieces; ++k) {
      const bool last_piece = k == pieces;
      const double s = last_piece ? h : h * k / pieces;
      double qs[N], gs[M];
      if (last_piece) {
        for (int i = 0; i < N; ++i) qs[i] = end.q[i];
      } else {
        rk4_step(m_, q_, mode_, th_, s, qs);
        if (!all_finite(qs)) {  // blow-up: reported as NonFinite by the caller, never as an event
          for (int i = 0; i < N; ++i) end.q[i] = qs[i];
          return false;
        }
      }
      guards_at(qs, mode_, gs);
      if (k == 1 && !g_left_known_ && any_past_surface(gs)) {
        refresh_guards(-1);
        for (int j = 0; j < M; ++j) g_prev[j] = g_left_[j];
      }
      if (holds_crossing(s_prev, s, g_prev, gs, br)) return true;
      for (int j = 0; j < M; ++j) g_prev[j] = gs[j];
      s_prev = s;
    }
    for (int j = 0; j < M; ++j) end.g[j] = g_prev[j];
    end.g_known = true;
    return false;
  }

  // Whether a guard crosses between the step-relative times s_prev and s, where the guards are
  // g_prev and gs; if so the piece becomes the bracket, with the mask of the guards that cross.
  SALTATION_HD bool holds_crossing(double s_prev, double s, const double* g_prev, const double* gs, Bracket& br) const {
    unsigned mask = 0;
    for (int j = 0; j < M; ++j)
      if (crosses(m_.direction(j, mode_), g_prev[j], gs[j])) mask |= 1u << j;
    if (!mask) return false;
    br.a = s_prev;
    br.b = s;
    br.mask = mask;
    for (int j = 0; j < M; ++j) {
      br.ga[j] = g_prev[j];
      br.gb[j] = gs[j];
    }
    return true;
  }

  // Safeguarded iterations on phi(s) = guard_j(rk4_step(q, s)) for each crossing guard:
  // locate_iterations true sub-steps (the same count on every lane, no early exit), the first at
  // the secant point, each later one at the root inside the bracket of the parabola with the last
  // trial's value and slope phi'(s) (exact for the discrete path: rk4_step_with_rate and the
  // guard's gradient) through the bracket's other end; the estimate is that root for the final
  // trial. Earliest crossing wins; ties go to the lower index. The bracket keeps phi(a) before the
  // crossing and phi(b) past it, so no trial leaves it; one that rounding puts on an end is a
  // halving instead. The slope makes each step's error quadratic in the last one's (Newton's
  // order), and the parabola keeps near-double roots (a shallow dip
  // through the guard) fast, where a tangent alone slows to halving the distance per step. After
  // an e = 0 impact the state rests on the guard (phi(a) = 0 exactly, refresh_guards) with phi < 0
  // beyond: the parabola through (a, 0) has its root at a, and the event is at a.
  SALTATION_HD double locate(const Bracket& br, int& j_event) const {
    double best = br.b;
    j_event = -1;
    for (int j = 0; j < M; ++j) {
      if (!(br.mask & (1u << j))) continue;
      const int dir = m_.direction(j, mode_);
      double a = br.a, b = br.b, ga = br.ga[j], gb = br.gb[j];
      double s = secant_point(a, b, ga, gb), gs = 0.0, rate = 0.0;  // the last trial: an end of [a, b]
      const int iterations = kAdaptive ? locate_iterations_for(b - a, o_.time_tol) : o_.locate_iterations;
      for (int it = 0; it < iterations; ++it) {
        if (it > 0) s = tangent_parabola_root(s, gs, rate, a, b, ga, gb);
        if (!(s > a && s < b)) s = 0.5 * (a + b);
        gs = guard_along_step(j, s, rate);
        if (crosses(dir, ga, gs)) {
          b = s;
          gb = gs;
        } else {
          a = s;
          ga = gs;
        }
      }
      if (iterations > 0) s = tangent_parabola_root(s, gs, rate, a, b, ga, gb);
      if (!(s >= a && s <= b)) s = b;
      if (j_event < 0 || s < best) {
        best = s;
        j_event = j;
      }
    }
    return best;
  }

  // phi(s) = guard_j(rk4_step(q, s)) and its derivative phi'(s) = g_q . d rk4_step / ds, from the
  // model's guard gradient (which gives the guard's value too), else from one pass on Dual<1>
  // along d rk4_step / ds.
  SALTATION_HD double guard_along_step(int j, double s, double& rate) const {
    double qs[N], dqs[N];
    if constexpr (kAdaptive) {
      dense_point_with_rate(s, qs, dqs);
    } else {
      rk4_step_with_rate(m_, q_, mode_, th_, s, qs, dqs);
    }
    return guard_with_rate(j, qs, dqs, rate);
  }

  // Guard j at the state qs and its rate along the path, g_q . dqs: from the model's guard
  // gradient, else from one pass on Dual<1>.
  SALTATION_HD double guard_with_rate(int j, const double* qs, const double* dqs, double& rate) const {
    if constexpr (has_guard_gradient<Model>::value) {
      double g_q[N];
      const double g = m_.guard_gradient(j, qs, mode_, th_, g_q);
      rate = 0.0;
      for (int k = 0; k < N; ++k) rate += g_q[k] * dqs[k];
      return g;
    } else {
      using D = Dual<1>;
      D qd[N];
      for (int k = 0; k < N; ++k) {
        qd[k] = D(qs[k]);
        qd[k].d[0] = dqs[k];
      }
      const D g = m_.guard(j, qd, mode_, ConstantParams<D, Th>{th_});
      rate = g.d[0];
      return g.v;
    }
  }

  // Whether the model's departure bound rules guard j out on the step from the state q0 its event
  // at t0 leaves in `mode`, from the guard's value and gradient the event formed: decided at the
  // event, where they are at hand, instead of by another evaluation of the guard's geometry on
  // that step (and right after the reset, so that the gradient need not be kept past it).
  SALTATION_HD bool departure_cleared(int j, int mode, const double* q0, double t0, const EventGeometry<N>& geo) const {
    if constexpr (has_departure_exclusion<Model>::value) {
      const double h = step_length_from(t0);
      return m_.departure_excluded(j, mode, q0, geo.g, geo.g_q, h / (o_.probes + 1), h, th_, guard_summary_);
    } else {
      return false;
    }
  }

  // Adaptive steps (Stepping dopri5, core/dopri5.hpp): each step is tried until its error
  // estimate meets rtol and atol, then probed on its continuous extension (dense_crossing). With
  // Sens the segment tangent is advanced by the same step on dual numbers (tangent_start), so it
  // is the derivative of the computed solution with the step sizes held fixed.
  SALTATION_HD double dt_min() const { return o_.dt_min > 0.0 ? o_.dt_min : 1e-12 * o_.t_final; }
  SALTATION_HD double dt_max() const { return o_.dt_max > 0.0 ? o_.dt_max : o_.t_final; }

  // With Sens each step is tried on dual numbers (their values are the forward step's bits), its
  // first stage formed from the tangent at the state; forward, the last step's end gives it.
  SALTATION_HD StepOutcome adaptive_step() {
    if constexpr (Sens) {
      TangentScalar q0[N];
      Dopri5Step<N, TangentScalar> st;
      tangent_start(q0, st);
      return adaptive_trials(q0, FlowSeededParams<Model, Th, N>{th_}, st);
    } else {
      ready_first_stage();
      return adaptive_trials(q_, th_, this->dense_);
    }
  }
  // Forward, the flow at the state: the next step's first stage.
  SALTATION_HD void ready_first_stage() {
    if (!f_left_known_) {
      m_.flow(q_, mode_, th_, this->dense_.k[0]);
      f_left_known_ = true;
    }
  }

  // Steps of the pair from q0 (the state, seeded with the tangent when S is dual) until one is
  // accepted: then probed for a crossing, and taken unless it holds one.
  template <class S, class Params>
  SALTATION_HD StepOutcome adaptive_trials(const S* q0, const Params& params, Dopri5Step<N, S>& st) {
    if (this->h_next_ == 0.0) {
      double f0[N];
      for (int i = 0; i < N; ++i) f0[i] = value_of(st.k[0][i]);
      ready_trials(f0);
    }
    for (;;) {
      double h;
      if (!trial_size(h)) return StepOutcome::Ended;
      dopri5_step(m_, q0, mode_, params, h, st);
      StepOutcome outcome;
      if (trial_taken(q0, st, h, outcome)) return outcome;
    }
  }

  // Before a trajectory's first trial: its size from the initial-step estimate (f0 the flow at the state).
  SALTATION_HD void ready_trials(const double* f0) {
    if (this->h_next_ == 0.0) this->h_next_ = dopri5_initial_step(m_, q_, f0, mode_, th_, o_.rtol, o_.atol, dt_max());
  }
  // The next trial's size: the controller's, or the remainder to t_final. False when the steps
  // tried have reached max_steps: the trajectory has ended, status step_limit.
  SALTATION_HD bool trial_size(double& h) {
    if (this->steps_ >= o_.max_steps) {
      finish(Status::StepLimit, t_, q_);
      return false;
    }
    ++this->steps_;
    const double remaining = o_.t_final - t_;
    h = remaining <= this->h_next_ ? remaining : this->h_next_;
    return true;
  }

  // The trial step st of h from q0 judged by its error (dopri5_step_error), as trial_judged.
  // Called, not inlined, on the device: inlined into the kernel's trial loop it nearly doubles the
  // forward kernel's registers, and makes the sensitivity kernels spill (bench/README.md, "CUDA
  // kernel resources").
  template <class S>
  SALTATION_DEVICE_NOINLINE SALTATION_HD bool trial_taken(const S* q0, const Dopri5Step<N, S>& st, double h,
                                                          StepOutcome& outcome) {
    const Dopri5Error<double> error =
        dopri5_step_error(q0, st, h, o_.rtol, o_.atol, o_.error_on_sensitivities, this->log_err_prev_);
    return trial_judged(st, h, error, nullptr, outcome);
  }
  // The trial step st of h from the state judged by its error: false when it is rejected (the
  // next trial's size set), else true with the outcome, as step()'s: taken, held with a crossing,
  // or ended (a rejected step's retry below dt_min, or t_final reached).
  template <class S>
  SALTATION_HD bool trial_judged(const Dopri5Step<N, S>& st, double h, const Dopri5Error<double>& error,
                                 const double* probe_guards, StepOutcome& outcome) {
    const bool last = h == o_.t_final - t_;  // trial_size's remainder
    double err = error.err;
    for (int i = 0; i < N; ++i)  // a non-finite end, whose error may read as 0, is never taken
      if (!is_finite(value_of(st.q1[i]))) err = ::nan("");
    if (!(err <= 1.0)) {  // rejected: never probed, so it never gives an event
      this->h_next_ = dopri5_retry_step(h, err);
      if (!(this->h_next_ < dt_min())) return false;
      finish(is_finite(err) ? Status::StepSizeUnderflow : Status::NonFinite, t_, q_);
      outcome = StepOutcome::Ended;
      return true;
    }
    this->h_step_ = h;
    if constexpr (Sens) {
      for (int i = 0; i < N; ++i) {
        for (int stage = 0; stage < 7; ++stage) this->dense_.k[stage][i] = value_of(st.k[stage][i]);
        this->dense_.q1[i] = value_of(st.q1[i]);
      }
    }
    double g_end[M];
    const bool excluded = adaptive_step_excluded();
    if (!excluded && dense_crossing(h, probe_guards, g_end, bracket_)) {
      outcome = StepOutcome::Bracketed;
      return true;
    }
    if constexpr (Sens) {
      for (int i = 0; i < N; ++i)
        for (int c = 0; c < kWidth; ++c) tan_.Y[i * kWidth + c] = st.q1[i].d[c];
    } else {
      for (int k = 0; k < N; ++k) this->dense_.k[0][k] = this->dense_.k[6][k];  // the next step's first stage
    }
    for (int k = 0; k < N; ++k) q_[k] = this->dense_.q1[k];
    if (!excluded)
      for (int j = 0; j < M; ++j) g_left_[j] = g_end[j];
    g_left_known_ = !excluded;
    if (!last) this->h_next_ = ::fmin(dopri5_next_step(h, error.growth), dt_max());
    this->log_err_prev_ = ::fmax(error.log_err, dopri5::kLogErrFloor);
    if (last) {
      t_ = o_.t_final;
    } else {
      advance_time(t_, t_carry_, h);
    }
    outcome = finish_at_t_final() ? StepOutcome::Ended : StepOutcome::Stepped;
    return true;
  }

  // Whether the model's guard bound rules every guard out on the accepted step from the state to
  // dense_.q1. The probes would read the continuous extension, which (as the step's end) lies off
  // the flow through the state by about the step's error: each state's slack is kExtensionSlack
  // times its error scale, rtol max(|q0_i|, |q1_i|) + atol_i (docs/models.md).
  static constexpr double kExtensionSlack = 10.0;
  SALTATION_HD bool adaptive_step_excluded() const {
    if constexpr (has_guard_exclusion_with_slack<Model, Th>::value) {
      double slack[N];
      for (int i = 0; i < N; ++i)
        slack[i] = kExtensionSlack * (o_.rtol * ::fmax(::fabs(q_[i]), ::fabs(this->dense_.q1[i])) + o_.atol.of(i));
      for (int j = 0; j < M; ++j) {
        if (m_.direction(j, mode_) == 0) continue;
        if (!m_.guard_excluded(j, mode_, q_, this->dense_.q1, th_, guard_summary_, slack)) return false;
      }
      return true;
    } else {
      return false;
    }
  }

  // The guards at the probes' interior points of the accepted step's continuous extension and at
  // its end (and at its start, where unknown), or the driver's (probe_guards, as
  // adaptive_trial_taken takes them); true with the first piece that holds a crossing, else false
  // with the end's guards in g_end.
  SALTATION_HD bool dense_crossing(double h, const double* probe_guards, double* g_end, Bracket& br) {
    if (!g_left_known_) {
      guards_at(q_, mode_, g_left_);
      g_left_known_ = true;
    }
    const int pieces = o_.probes + 1;
    double g_prev[M];
    for (int j = 0; j < M; ++j) g_prev[j] = g_left_[j];
    double s_prev = 0.0;
    for (int k = 1; k <= pieces; ++k) {
      const bool last_piece = k == pieces;
      const double u = last_piece ? 1.0 : static_cast<double>(k) / pieces;
      double gs[M];
      if (probe_guards) {
        for (int j = 0; j < M; ++j) gs[j] = probe_guards[(k - 1) * M + j];
      } else {
        double qs[N];
        for (int i = 0; i < N; ++i) qs[i] = last_piece ? this->dense_.q1[i] : dense_state_entry(i, u);
        guards_at(qs, mode_, gs);
      }
      const double s = last_piece ? h : u * h;
      if (holds_crossing(s_prev, s, g_prev, gs, br)) return true;
      for (int j = 0; j < M; ++j) g_prev[j] = gs[j];
      s_prev = s;
    }
    for (int j = 0; j < M; ++j) g_end[j] = g_prev[j];
    return false;
  }

  // Entry i of the state on the held step's continuous extension at the fraction u; the state at
  // the step-relative time s with its rate d/ds.
  SALTATION_HD double dense_state_entry(int i, double u) const {
    return dopri5_dense_entry(i, u, this->h_step_, q_[i], this->dense_, [](double x) { return x; });
  }
  SALTATION_HD void dense_point_with_rate(double s, double* qs, double* rate) const {
    const Dual<1> u = Dual<1>::variable(s / this->h_step_, 0);
    for (int i = 0; i < N; ++i) {
      const Dual<1> y = dopri5_dense_entry(i, u, this->h_step_, q_[i], this->dense_, [](double x) { return x; });
      qs[i] = y.v;
      rate[i] = y.d[0] / this->h_step_;
    }
  }

  // The time located on the continuous extension moved onto the pair's own step from the state,
  // as RK4's location follows its discrete path: Newton steps on phi(s) = guard_j(dopri5 step of
  // s), each kept inside the bracket (else the time stays). The extension is a fourth-order
  // approximation where the step is fifth-order, and an event that meets its guard slowly turns
  // the difference into a large error in its time.
  static constexpr int kStepNewtonIterations = 2;
  SALTATION_HD double on_the_step(int j, double s, const Bracket& br) const {
    for (int it = 0; it < kStepNewtonIterations; ++it) {
      double qs[N], dqs[N], rate = 0.0;
      dopri5_step_with_rate(m_, q_, mode_, th_, s, qs, dqs);
      const double g = guard_with_rate(j, qs, dqs, rate);
      const double next = s - g / rate;
      if (!(next > br.a && next <= br.b)) break;
      s = next;
    }
    return s;
  }

  // The pre-event state: the pair's step of s from the state, and with Sens the tangent with it.
  SALTATION_HD void step_to_event(double s, double* q_minus) {
    if constexpr (Sens) {
      Dopri5Step<N, TangentScalar> st;
      TangentScalar q0[N];
      tangent_start(q0, st);
      dopri5_step(m_, q0, mode_, FlowSeededParams<Model, Th, N>{th_}, s, st);
      for (int i = 0; i < N; ++i) {
        q_minus[i] = st.q1[i].v;
        for (int c = 0; c < kWidth; ++c) tan_.Y[i * kWidth + c] = st.q1[i].d[c];
      }
    } else {
      Dopri5Step<N, double> st;
      for (int i = 0; i < N; ++i) st.k[0][i] = this->dense_.k[0][i];  // the held step's: the flow at q_
      dopri5_step(m_, q_, mode_, th_, s, st);
      for (int i = 0; i < N; ++i) q_minus[i] = st.q1[i];
    }
  }

  // The state on dual numbers seeded with the rows of the segment tangent Y, and the flow there
  // with the flow parameters in their slots: a step's first stage (as rk4_tangent_step's).
  using TangentScalar = Dual<kWidth>;
  SALTATION_HD void tangent_start(TangentScalar* q0, Dopri5Step<N, TangentScalar>& st) {
    tan_.up_to_date();
    for (int i = 0; i < N; ++i) {
      q0[i] = TangentScalar(q_[i]);
      for (int c = 0; c < kWidth; ++c) q0[i].d[c] = tan_.Y[i * kWidth + c];
    }
    m_.flow(q0, mode_, FlowSeededParams<Model, Th, N>{th_}, st.k[0]);
  }

  // Status, end time and final state; the caller has written dqf (a terminal event's jump).
  SALTATION_HD void finish_state(Status status, double t_end, const double* qf) {
    out_.template finish<N>(status, t_end, qf, n_events_);
  }

  // Status, end time and final state, with dqf = X(t_end) from the current tangent.
  SALTATION_HD void finish(Status status, double t_end, const double* qf) {
    finish_state(status, t_end, qf);
    if constexpr (Sens) {
      tan_.up_to_date();
      columns_.finish(tan_.Y, out_);
    }
  }

  // Ends the run with status Finished once t_final is reached; true when it did.
  SALTATION_HD bool finish_at_t_final() {
    if (t_ < o_.t_final) return false;
    finish(Status::Finished, o_.t_final, q_);
    return true;
  }

  SALTATION_HD void finish_invalid() {
    finish_state(Status::InvalidInput, 0.0, q_);
    if constexpr (Sens) columns_.invalid(out_);
  }

  // Not const: restart_on_row builds a new trajectory over this one, which C++17 allows to be used
  // through the old name only for a type without const or reference members.
  Model m_;
  Options o_;
  Th th_;
  Output out_;
  double q_[N];
  int mode_ = 0;
  double t_ = 0.0, t_carry_ = 0.0;  // the time, a compensated sum of the steps (clock.hpp)
  double g_left_[M];
  bool g_left_known_ = false;  // false after a step the guard bound skipped
  GuardTrendOf<Model> trend_;  // the guards at the ends of the steps before (curvature_bound_clear)
  double f_left_[N];           // the flow at q_, when f_left_known_ (the screened probes' first stage)
  bool f_left_known_ = false;
  // The guard whose event was just taken (the state lies on it) when the model's departure bound
  // rules it out on the next step, which its guard bound cannot (docs/models.md); else -1. Until
  // the next step.
  int departing_ = -1;
  int n_events_ = 0;
  double zeno_start_ = -1e300;
  int zeno_count_ = 0;
  Bracket bracket_;  // the crossing step() found, until take_bracketed_event()
  typename guard_summary_of<Model, Th>::type guard_summary_{};
  Tangents<Model, Sens> tan_;
  typename columns_of<Model, Output, Sens>::type columns_;  // X at the segment start, or its records
};

// Integrates trajectory i of a batch into `out` through the Output policy; `th` views its
// parameter row.
template <bool Sens, class Output = FullRecord, Method Stepping = Method::Rk4, class Model, class Th>
SALTATION_HD void integrate_one(const Model& m, const Options& o, const Th& th, std::size_t i,
                                const typename Output::View& out) {
  static_assert(check_model<Model>(), "");
  Trajectory<Model, Th, Sens, Output, Stepping>(m, o, th, i, out).run();
}

}  // namespace saltation::core
