#pragma once
// The per-trajectory routine every backend runs unchanged: fixed-step RK4, direction-aware
// event detection with interior probes, fixed-count event location, resets, termination statuses,
// and (when Sens) forward-variational sensitivities with saltation jumps.
//
// Sensitivities. Between events the tangent Y = d q(t) / d [q(t_s), theta_flow] of the current
// segment (N x (N+F), started at [I | 0] at the segment start t_s) is integrated with the state's
// RK4 stages, so X(t) = Y_q X_s + Y_theta (placed in the F flow-parameter columns) is never formed
// in the step loop: P-wide work happens only at events and at the end. At an event at t_e:
//   tau_theta = -(g_q . X- + g_theta) / (g_q . f-)                 (dt_e / dtheta)
//   X+ = R_q X- + R_theta - (f+ - R_q f-) tau_theta               (saltation jump, theta-augmented)
//   d q-_e / dtheta = X- + f- tau_theta                           (total derivative of the event state)
// with g_q, R_q from Dual<N> and g_theta, R_theta from Dual<kChunk> over chunks of theta, or from
// the model's analytic partials where it has them (docs/models.md).
#include <cstddef>
#include <type_traits>
#include <utility>

#include "saltation/config.hpp"
#include "saltation/dual.hpp"
#include "saltation/core/params.hpp"
#include "saltation/core/rk4.hpp"
#include "saltation/model.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"

namespace saltation::core {

// Parameter columns handled per dual-number pass at an event.
constexpr int kChunk = 8;
// The parameter columns an event's jump forms at once: eight in host vectors (one AVX-512 vector,
// two AVX2 ones), one on the device. Four at a time made a sensitivity run at P = 14 about 4 %
// slower on an AVX-512 machine (bench/README.md, "What a sensitivity event costs").
using ColumnGroup = Group<double, 8>;

// A guard value past its surface in the guard's direction (where a crossing ends).
SALTATION_HD inline bool past_surface(int direction, double g) {
  return (direction < 0 && g < 0.0) || (direction > 0 && g > 0.0);
}
SALTATION_HD inline bool crosses(int direction, double g_from, double g_to) {
  return past_surface(direction, g_to) && (direction < 0 ? g_from >= 0.0 : g_from <= 0.0);
}

// What is wrong with one row before integration: a parameter outside its domain, or an initial
// state already past an active guard. Used by host validation and by integrate_one alike.
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

// Optional model member `guard_summary(th)`: what the model's guard bound needs of theta, formed
// once per trajectory (theta does not change along it) and passed to
// `guard_excluded(j, mode, q0, q1, th, summary)`, so the bound need not scan every parameter on
// every step (the terrain ball's ceiling, docs/models.md).
template <class Model, class Th, class = void>
struct GuardSummaryOf {
  struct type {};
  static constexpr bool present = false;
};
template <class Model, class Th>
struct GuardSummaryOf<Model, Th, std::void_t<decltype(std::declval<const Model&>().guard_summary(std::declval<const Th&>()))>> {
  using type = decltype(std::declval<const Model&>().guard_summary(std::declval<const Th&>()));
  static constexpr bool present = true;
};

// The flow-parameter columns of Y (N x W, row-major) after a full step of an affine flow from state
// q: Y_F' = Phi Y_F + Psi_f q + psi_f (see Tangents). Generic over the scalar and over how the
// operands are read (`Array`, indexed by entry), so that the CPU's SIMD lanes (src/cpu_lanes.cpp)
// run these very operations in this order on W trajectories at once, loading each operand where it
// is used (copies of the matrices first were most of that step's cost).
template <int N, int F, int W, class Array, class T>
SALTATION_HD void affine_flow_param_columns(Array Phi, Array Psi, Array psi, Array q, Array Y, T* Y_out) {
  for (int f = 0; f < F; ++f)
    for (int i = 0; i < N; ++i) {
      T acc = psi[f * N + i];
      for (int l = 0; l < N; ++l) acc += Psi[(f * N + i) * N + l] * q[l];
      for (int l = 0; l < N; ++l) acc += Phi[i * N + l] * Y[l * W + N + f];
      Y_out[i * W + N + f] = acc;
    }
}

// Sensitivity storage: empty for forward-only runs, so they carry and compute nothing.
template <class Model, bool Sens>
struct Tangents {};

template <class Model>
struct Tangents<Model, true> {
  static constexpr int N = Model::N, P = Model::P, F = Model::F, W = tangent_width<Model>();
  double Y[N * W];   // segment tangent (for affine flows, see `pending`)
  // X at the segment start, row-major N x P, each row padded to whole column groups: the jump
  // forms and stores whole groups (jump()); the padding is never read into a real column.
  static constexpr int kXsCols = (P + ColumnGroup::size - 1) / ColumnGroup::size * ColumnGroup::size;
  double Xs[N * kXsCols];

  // For an affine flow the RK4 step of dt is affine in q, q' = Phi q + c, with Phi (N x N) and c
  // functions of the mode and theta only; so is its flow-parameter tangent,
  //   Y_F' = Phi Y_F + Psi_f q + psi_f,   Psi_f = dPhi/dtheta_f, psi_f = dc/dtheta_f.
  // All three are formed once per mode from the generic tangent step (rk4_tangent_step with
  // Y = [I | 0] at q = 0, whose q-columns give Phi and F-columns psi_f, then its F-columns alone
  // from 0 at each unit vector, psi_f + Psi_f e_k). A full step then costs the forward rk4_step
  // (its state bit for bit) and a few independent products for Y_F, instead of the four chained
  // stages on dual numbers. Full steps advance only the F columns of Y; its q-columns lack the
  // factor Phi^pending, applied by up_to_date() when they are needed (at events, a shorter step
  // and the end): the power by squaring, O(log pending) N x N products instead of one N x N x N
  // product per step. Its squares Phi^(2^k) are the same at every event of the mode, so the first
  // kSquares are kept once formed: an event between a handful of steps then costs a product or
  // two instead of twice as many squarings besides (the same products in the same order, so the
  // same bits).
  static constexpr int kSquares = 4;
  double Phi[N * N];
  double Psi[F * N * N > 0 ? F * N * N : 1];  // [(f * N + i) * N + l]
  double psi[F * N > 0 ? F * N : 1];          // [f * N + i]
  double squares[kSquares][N * N];            // squares[k] = Phi^(2^(k+1)), the first squares_known
  int squares_known = 0;
  int affine_mode = -1;
  int pending = 0;

  // Phi, Psi and psi for `mode` (h is always dt).
  template <class Model_, class Th>
  SALTATION_HD void ready_affine(const Model_& m, int mode, const Th& th, double h) {
    if (affine_mode == mode) return;
    up_to_date();
    form_affine_step(m, mode, th, h);
    squares_known = 0;
    affine_mode = mode;
  }
  template <class Model_, class Th>
  SALTATION_HD void form_affine_step(const Model_& m, int mode, const Th& th, double h) {
    double I[N * W], at[N], unused[N];
    for (int k = -1; k < N; ++k) {  // k = -1: at q = 0, else at e_k
      for (int i = 0; i < N; ++i) {
        at[i] = i == k ? 1.0 : 0.0;
        for (int c = 0; c < W; ++c) I[i * W + c] = (c == i) ? 1.0 : 0.0;
      }
      if (k < 0) rk4_tangent_step(m, at, mode, th, h, unused, I);
      else if constexpr (F > 0) rk4_tangent_step<N>(m, at, mode, th, h, unused, I);
      for (int f = 0; f < F; ++f)
        for (int i = 0; i < N; ++i) {
          if (k < 0) psi[f * N + i] = I[i * W + N + f];
          else Psi[(f * N + i) * N + k] = I[i * W + N + f] - psi[f * N + i];
        }
      if (k < 0)
        for (int i = 0; i < N; ++i)
          for (int l = 0; l < N; ++l) Phi[i * N + l] = I[i * W + l];
    }
  }
  // The tangent of a full step (dt) of an affine flow from q, taken once the step is (the state
  // itself is rk4_step's): Y_F as above, the q-columns pending.
  SALTATION_HD void take_affine_step(const double* q) {
    double Y_out[N * W];
    affine_flow_param_columns<N, F, W, const double*>(Phi, Psi, psi, q, Y, Y_out);
    for (int i = 0; i < N; ++i)
      for (int f = 0; f < F; ++f) Y[i * W + N + f] = Y_out[i * W + N + f];
    ++pending;
  }

  // Applies the pending full steps to the q-columns of Y: Y_q = Phi^pending Y_q, the power by
  // squaring; Y_q is mostly the identity (a segment with no step other than full ones), and then
  // it is the power. (Starting the power at its first factor instead of I x that factor made the
  // device's sensitivity kernel for TerrainBall<3> spill: 255 registers and 76 to 100 bytes of
  // spills instead of 194 and none.)
  SALTATION_HD void up_to_date() {
    if (pending == 0) return;
    double power[N * N], base[N * N], tmp[N * N];
    for (int e = 0; e < N * N; ++e) {
      power[e] = (e % (N + 1) == 0) ? 1.0 : 0.0;
      base[e] = Phi[e];
    }
    for (int n = pending, k = 0; n > 0; n >>= 1, ++k) {
      if (k > 0) {  // base = Phi^(2^k): kept, formed now and kept, or past the kept ones formed
        if (k > kSquares) {
          mat_mul<N>(base, base, tmp);
        } else if (k > squares_known) {
          mat_mul<N>(base, base, squares[k - 1]);
          squares_known = k;
        }
        const double* next = k > kSquares ? tmp : squares[k - 1];
        for (int e = 0; e < N * N; ++e) base[e] = next[e];
      }
      if (n & 1) {
        mat_mul<N>(power, base, tmp);
        for (int e = 0; e < N * N; ++e) power[e] = tmp[e];
      }
    }
    bool identity = true;
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < N; ++c) identity = identity && Y[i * W + c] == (i == c ? 1.0 : 0.0);
    if (!identity) {
      for (int i = 0; i < N; ++i)
        for (int c = 0; c < N; ++c) {
          double acc = 0.0;
          for (int l = 0; l < N; ++l) acc += power[i * N + l] * Y[l * W + c];
          tmp[i * N + c] = acc;
        }
      for (int e = 0; e < N * N; ++e) power[e] = tmp[e];
    }
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < N; ++c) Y[i * W + c] = power[i * N + c];
    pending = 0;
  }

  SALTATION_HD void restart_segment() {
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < W; ++c) Y[i * W + c] = (c == i) ? 1.0 : 0.0;
    pending = 0;
  }
  // The column of Y for parameter p: N + f for flow parameter f, else -1 (p's column of Y_theta is 0).
  SALTATION_HD static int flow_column(int p) {
    int f_col = -1;
    for (int f = 0; f < F; ++f)
      if (Model::flow_param(f) == p) f_col = N + f;
    return f_col;
  }
  // Column p of X(t) = Y_q Xs + Y_theta (after up_to_date()).
  SALTATION_HD void column(int p, double* x) const {
    const int f_col = flow_column(p);
    for (int i = 0; i < N; ++i) {
      double acc = f_col >= 0 ? Y[i * W + f_col] : 0.0;
      for (int l = 0; l < N; ++l) acc += Y[i * W + l] * Xs[l * kXsCols + p];
      x[i] = acc;
    }
  }
};

// ---- Outputs: what a trajectory keeps (docs/architecture.md, "Outputs")
//
// The routine reports to an output policy bound to its trajectory (constructed from the policy's
// View and the trajectory's index) through these hooks, and writes nothing else (N is the model's
// state dimension, a template argument so that state arrays are indexed by constants and stay in
// registers on the device):
//   event(c, t_e, j, q_minus, q_plus)   event c is recorded (c < the event capacity)
//   event_flags(c, flags)               its flags (EventFlag)
//   event_column(c, p, tau, q_minus, dq)  with Sens: dt_e/dtheta_p and the N entries dq-_e/dtheta_p
//   final_dq(k, p, value)               with Sens: d qf[k] / dtheta_p; a later call may overwrite it
//   finish(status, t_end, qf, n_events) once, when the trajectory ends
// and says whether it keeps event_column's values (`records_event_columns`: when not, they are
// not formed).
// Every backend runs the same routine, so each policy gives the same values on every backend.

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
  SALTATION_HD FinalState(const View& out, std::size_t i) : out_(out), i_(i) {}

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
  const View out_;
  const std::size_t i_;
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
// objective is written when its event is recorded, the others at the end; an objective whose event
// never came (fewer events, an invalid row) is NaN, value and derivatives.
class ObjectiveObserver {
 public:
  using View = ObservationView;
  static constexpr bool records_event_columns = true;
  SALTATION_HD ObjectiveObserver(const View& out, std::size_t i) : out_(out), i_(i) {}

  template <int N>
  SALTATION_HD void event(int c, double t_e, int, const double* q_minus, const double*) const {
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      if (ob.event != c) continue;
      if (ob.kind == ObjectiveKind::EventTime) put(row, t_e);
      if (ob.kind == ObjectiveKind::EventState) put(row, entry<N>(q_minus, ob.state));
      if (ob.kind == ObjectiveKind::Landing) {
        const double miss = entry<N>(q_minus, ob.state) - ob.target;
        put(row, miss * miss);
      }
    }
  }
  SALTATION_HD void event_flags(int, int) const {}
  template <int N>
  SALTATION_HD void event_column(int c, int p, double tau, const double* q_minus, const double* dq) const {
    const int d = design_index(p);
    if (d < 0) return;
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      if (ob.event != c) continue;
      if (ob.kind == ObjectiveKind::EventTime) put(row + 1 + d, tau);
      if (ob.kind == ObjectiveKind::EventState) put(row + 1 + d, entry<N>(dq, ob.state));
      if (ob.kind == ObjectiveKind::Landing)
        put(row + 1 + d, 2.0 * (entry<N>(q_minus, ob.state) - ob.target) * entry<N>(dq, ob.state));
    }
  }
  SALTATION_HD void final_dq(int k, int p, double value) const {
    const int d = design_index(p);
    if (d < 0) return;
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      if (ob.kind == ObjectiveKind::FinalState && ob.state == k) put(row + 1 + d, value);
    }
  }
  template <int N>
  SALTATION_HD void finish(Status status, double, const double* qf, int n_events) const {
    out_.status[i_] = static_cast<int>(status);
    out_.n_events[i_] = n_events;
    int row = 0;
    for (int o = 0; o < out_.n_objectives; row += out_.width(out_.objectives[o]), ++o) {
      const ObjectiveSpec& ob = out_.objectives[o];
      switch (ob.kind) {
        case ObjectiveKind::FinalState: put(row, entry<N>(qf, ob.state)); break;
        case ObjectiveKind::EventCount: put(row, n_events); break;
        case ObjectiveKind::StatusIs: put(row, static_cast<int>(status) == ob.status ? 1.0 : 0.0); break;
        default:
          if (ob.event >= n_events)
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

  const View out_;
  const std::size_t i_;
};

template <class Model, class Th, bool Sens, class Output = FullRecord>
class Trajectory {
 public:
  static constexpr int N = Model::N, P = Model::P, M = Model::M;
  static constexpr int kWidth = tangent_width<Model>();  // of the segment tangent Y
  static constexpr int kYSize = Sens ? N * kWidth : 1;

  SALTATION_HD Trajectory(const Model& m, const Options& o, const Th& th, std::size_t i,
                          const typename Output::View& out)
      : m_(m), o_(o), th_(th), out_(out, i) {}

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
      initial_tangent();
      tan_.restart_segment();
    }
    if constexpr (GuardSummaryOf<Model, Th>::present) guard_summary_ = m_.guard_summary(th_);
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

  // One step of dt (or the remainder to t_final): Stepped, Bracketed (a crossing in it, held for
  // take_bracketed_event()) or Ended (non-finite state, or t_final reached).
  SALTATION_HD StepOutcome step() {
    const bool last = last_step_from(t_);
    const double h = step_length_from(t_);
    double q_end[N], g_end[M];
    double Y_end[kYSize];
    bool g_end_known = false;
    if (scan_step(h, q_end, g_end, bracket_, Y_end, g_end_known)) return StepOutcome::Bracketed;
    if (!all_finite(q_end)) {
      finish(Status::NonFinite, t_, q_);
      return StepOutcome::Ended;
    }
    if constexpr (Sens) {
      if (affine_step(h)) {
        tan_.take_affine_step(q_);
      } else {
        for (int e = 0; e < kYSize; ++e) tan_.Y[e] = Y_end[e];
      }
    }
    for (int k = 0; k < N; ++k) q_[k] = q_end[k];
    for (int j = 0; j < M; ++j) g_left_[j] = g_end[j];
    g_left_known_ = g_end_known;
    t_ = last ? o_.t_final : t_ + h;
    return finish_at_t_final() ? StepOutcome::Ended : StepOutcome::Stepped;
  }

  // The event path for the held bracket: localise, step to the event, take it. Returns true
  // when the trajectory has ended.
  SALTATION_HD bool take_bracketed_event() {
    int j = -1;
    const double s = locate(bracket_, j);
    double q_minus[N];
    if constexpr (Sens) {
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
  // src/cpu_lanes.cpp) and holds their states meanwhile: it takes the state, mode and time, and
  // then, while full_step_next(), steps of dt by rk4_step from the state q0 it holds to q1, each
  // one only where step() would take it without a guard evaluation (q1 finite, which the driver
  // checks, and guards_excluded(q0, q1)); resume() hands the state back after one or more such
  // steps (not after none: it marks the guards at the state unknown), and is true when t_final
  // is reached. Between them the trajectory goes through what step() would do on each step.
  // With Sens (affine flows only) the driver also takes the tangent of the free steps:
  // affine_tangent() readies the step matrices for the mode (as the first full step would) and
  // gives them and the segment tangent Y, whose flow-parameter columns the driver advances by
  // affine_flow_param_columns; resume() takes those columns back with the number of free steps.
  SALTATION_HD const double* state() const { return q_; }
  SALTATION_HD int mode() const { return mode_; }
  SALTATION_HD double time() const { return t_; }
  SALTATION_HD bool full_step_next() const { return !last_step_from(t_); }
  SALTATION_HD bool guards_excluded(const double* q0, const double* q1) const { return all_guards_excluded(q0, q1); }
  SALTATION_HD bool resume(const double* q, double t) {
    static_assert(!Sens, "free steps taken elsewhere carry a tangent: resume(q, t, Y, steps)");
    return resume_state(q, t);
  }
  SALTATION_HD const Tangents<Model, Sens>& affine_tangent() {
    static_assert(Sens && has_affine_flow<Model>::value, "the free steps' tangent is for affine flows");
    tan_.ready_affine(m_, mode_, th_, o_.dt);
    return tan_;
  }
  SALTATION_HD bool resume(const double* q, double t, const double* Y, int steps) {
    static_assert(Sens && has_affine_flow<Model>::value, "the free steps' tangent is for affine flows");
    for (int i = 0; i < N; ++i)
      for (int f = 0; f < Model::F; ++f) tan_.Y[i * kWidth + N + f] = Y[i * kWidth + N + f];
    tan_.pending += steps;
    return resume_state(q, t);
  }

 private:
  // Whether the step from t is the last (the remainder to t_final, at most dt), and its length.
  SALTATION_HD bool last_step_from(double t) const { return o_.t_final - t <= o_.dt; }
  SALTATION_HD double step_length_from(double t) const { return last_step_from(t) ? o_.t_final - t : o_.dt; }

  SALTATION_HD bool resume_state(const double* q, double t) {
    for (int k = 0; k < N; ++k) q_[k] = q[k];
    t_ = t;
    g_left_known_ = false;
    departing_ = -1;
    return finish_at_t_final();
  }

  // The event of guard j at t_e with pre-event state q_minus: truncate (capacity), end the run
  // (settled, Zeno) or reset and go on. `pinned`: the event time does not move with theta (an
  // initial state already in the jump set). Returns true when the trajectory has ended.
  SALTATION_HD bool take_event(int j, double t_e, const double* q_minus, bool pinned) {
    double q_plus[N];
    const PartialsSource partials(*this, j, q_minus);
    const EventGeometry geo = event_geometry(j, q_minus, partials);
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
      if (o_.v_stop > 0.0 && impact_speed(geo) < o_.v_stop) terminal = Status::Settled;
      else if (zeno_count_ >= o_.zeno_events) terminal = Status::Zeno;
    }
    const int slot = terminal == Status::EventCapacity ? -1 : n_events_;
    if (slot >= 0) {
      out_.template event<N>(slot, t_e, j, q_minus, q_plus);
      ++n_events_;
    }
    jump(j, geo, partials, q_minus, q_plus, mode_plus, slot, terminal, pinned);
    if (terminal == Status::EventCapacity) {
      finish_state(terminal, t_e, q_minus);
      return true;
    }
    if (!all_finite(q_plus)) {
      finish(Status::NonFinite, t_e, q_minus);  // overwrites the dqf jump() wrote
      return true;
    }
    if (terminal != Status::Finished) {
      finish_state(terminal, t_e, q_plus);
      return true;
    }
    for (int k = 0; k < N; ++k) q_[k] = q_plus[k];
    mode_ = mode_plus;
    t_ = t_e;
    refresh_guards(j);
    departing_ = departure_clear ? j : -1;
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
    } else if constexpr (GuardSummaryOf<Model, Th>::present) {
      return m_.guard_excluded(j, mode_, q_start, q_end, th_, guard_summary_);
    } else {
      return m_.guard_excluded(j, mode_, q_start, q_end, th_);
    }
  }

  // Whether a step of h takes the affine path (Tangents): the cached step matrix is for dt.
  SALTATION_HD bool affine_step(double h) const { return has_affine_flow<Model>::value && h == o_.dt; }

  // Steps to the end of (t, t+h], then (unless the guard bound rules the step out) probes it;
  // returns true with the first sub-interval that holds a crossing, else false with the end
  // state in q_end (with Sens, and a step other than a full one of an affine flow, its tangent in
  // Y_end) and, when evaluated, the end guards.
  SALTATION_HD bool scan_step(double h, double* q_end, double* g_end, Bracket& br, double* Y_end, bool& g_end_known) {
    g_end_known = false;
    const int departing = departing_;
    departing_ = -1;
    const int pieces = o_.probes + 1;
    // A full step of an affine flow forms its tangent only once it is taken (step()): a step with
    // a crossing in it is not.
    bool tangent_stepped = false;
    if constexpr (Sens) {
      if (affine_step(h)) {
        tan_.ready_affine(m_, mode_, th_, h);
      } else {
        tan_.up_to_date();
        for (int e = 0; e < kYSize; ++e) Y_end[e] = tan_.Y[e];
        rk4_tangent_step(m_, q_, mode_, th_, h, q_end, Y_end);
        tangent_stepped = true;
      }
    }
    if (!tangent_stepped) rk4_step(m_, q_, mode_, th_, h, q_end);
    if (!all_finite(q_end) || all_guards_excluded(q_, q_end, departing)) return false;
    // The guards at the step's start are evaluated (when unknown) only if the first piece needs
    // them: a guard can cross there only if it ends past its surface (until then 0 stands in, with
    // which crosses() is false for a guard not past it). The result is the same.
    double g_prev[M];
    for (int j = 0; j < M; ++j) g_prev[j] = g_left_known_ ? g_left_[j] : 0.0;
    double s_prev = 0.0;
    for (int k = 1; k <= pieces; ++k) {
      const bool end = k == pieces;
      const double s = end ? h : h * k / pieces;
      double qs[N], gs[M];
      if (end) {
        for (int i = 0; i < N; ++i) qs[i] = q_end[i];
      } else {
        rk4_step(m_, q_, mode_, th_, s, qs);
        if (!all_finite(qs)) {  // blow-up: reported as NonFinite by the caller, never as an event
          for (int i = 0; i < N; ++i) q_end[i] = qs[i];
          return false;
        }
      }
      guards_at(qs, mode_, gs);
      if (k == 1 && !g_left_known_ && any_past_surface(gs)) {
        refresh_guards(-1);
        for (int j = 0; j < M; ++j) g_prev[j] = g_left_[j];
      }
      unsigned mask = 0;
      for (int j = 0; j < M; ++j)
        if (crosses(m_.direction(j, mode_), g_prev[j], gs[j])) mask |= 1u << j;
      if (mask) {
        br.a = s_prev;
        br.b = s;
        br.mask = mask;
        for (int j = 0; j < M; ++j) {
          br.ga[j] = g_prev[j];
          br.gb[j] = gs[j];
        }
        return true;
      }
      for (int j = 0; j < M; ++j) g_prev[j] = gs[j];
      s_prev = s;
    }
    for (int j = 0; j < M; ++j) g_end[j] = g_prev[j];
    g_end_known = true;
    return false;
  }

  // Safeguarded iterations on phi(s) = guard_j(rk4_step(q, s)) for each crossing guard:
  // locate_iterations true sub-steps (the same count on every lane, no early exit), the first at
  // the secant point, each later one at the root inside the bracket of the parabola with the last
  // trial's value and slope phi'(s) (exact for the discrete path: rk4_step_with_rate and the
  // guard's gradient) through the bracket's other end; the estimate is that root for the final
  // trial. Earliest crossing wins; ties go to the lower index. The bracket keeps phi(a) before the
  // crossing and phi(b) past it, so no trial leaves it; one that rounding puts on an end is a
  // halving instead. The slope makes each step's error quadratic in the last one's (Newton's
  // order, a Muller step's is linear), and the parabola keeps near-double roots (a shallow dip
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
      for (int it = 0; it < o_.locate_iterations; ++it) {
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
      if (o_.locate_iterations > 0) s = tangent_parabola_root(s, gs, rate, a, b, ga, gb);
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
    rk4_step_with_rate(m_, q_, mode_, th_, s, qs, dqs);
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

  SALTATION_HD static double secant_point(double a, double b, double ga, double gb) {
    return a + (b - a) * (ga / (ga - gb));
  }

  // The root in [a, b] of the parabola with value g and slope r at s, one end of the bracket,
  // through the other end (o, go), the root nearer s first; the bracket's secant point when
  // rounding finds none there. In t = x - s the parabola times d^2, d = o - s, is A t^2 + B t + C,
  // so the coefficients take no division (one, for the root, on the chain).
  SALTATION_HD static double tangent_parabola_root(double s, double g, double r, double a, double b, double ga,
                                                   double gb) {
    const bool at_b = s == b;
    const double o = at_b ? a : b, go = at_b ? ga : gb;
    const double d = o - s;
    const double A = (go - g) - r * d, B = r * (d * d), C = g * (d * d);
    const double disc = B * B - 4.0 * A * C;
    if (disc >= 0.0) {  // roots by the cancellation-free pair C / q (the one nearer s), q / A
      const double q = -0.5 * (B + ::copysign(::sqrt(disc), B));
      const double x1 = s + C / q, x2 = s + q / A;
      if (x1 >= a && x1 <= b) return x1;
      if (x2 >= a && x2 <= b) return x2;
    }
    return secant_point(a, b, ga, gb);
  }

  // Gradient of guard j at q in `mode`, and the guard's value: the model's own, else from dual numbers.
  SALTATION_HD double guard_gradient(int j, const double* q, int mode, double* g_q) const {
    if constexpr (has_guard_gradient<Model>::value) {
      return m_.guard_gradient(j, q, mode, th_, g_q);
    } else {
      using D = Dual<N>;
      D qd[N];
      for (int k = 0; k < N; ++k) qd[k] = D::variable(q[k], k);
      const D g = m_.guard(j, qd, mode, ConstantParams<D, Th>{th_});
      for (int k = 0; k < N; ++k) g_q[k] = g.d[k];
      return g.v;
    }
  }

  class PartialsSource;

  // The guard's gradient and the flow at an event's pre-event state, which the settling test and
  // the jump both need: g_dot = g_q . f-, and |g_q|^2, |f-|^2.
  struct EventGeometry {
    double g = 0.0;  // the guard's value (0 to within the location's accuracy)
    double g_q[N], f_minus[N];
    double g_dot = 0.0, gq2 = 0.0, f2 = 0.0;
  };
  SALTATION_HD EventGeometry event_geometry(int j, const double* q_minus, const PartialsSource& partials) const {
    EventGeometry e;
    if (!partials.guard_gradient(e.g, e.g_q)) e.g = guard_gradient(j, q_minus, mode_, e.g_q);
    m_.flow(q_minus, mode_, th_, e.f_minus);
    for (int k = 0; k < N; ++k) {
      e.g_dot += e.g_q[k] * e.f_minus[k];
      e.gq2 += e.g_q[k] * e.g_q[k];
      e.f2 += e.f_minus[k] * e.f_minus[k];
    }
    return e;
  }

  // |g_q . f-| / |g_q| at the pre-event state: the normal speed at which the trajectory meets the
  // guard surface (|v-| for the bouncing ball, as seed 003's min_bounce_speed test).
  SALTATION_HD static double impact_speed(const EventGeometry& e) {
    return e.gq2 > 0.0 ? ::fabs(e.g_dot) / ::sqrt(e.gq2) : ::fabs(e.g_dot);
  }

  // Whether the model's departure bound rules guard j out on the step from the state q0 its event
  // at t0 leaves in `mode`, from the guard's value and gradient the event formed: decided at the
  // event, where they are at hand, instead of by another evaluation of the guard's geometry on
  // that step (and right after the reset, so that the gradient need not be kept past it).
  SALTATION_HD bool departure_cleared(int j, int mode, const double* q0, double t0, const EventGeometry& geo) const {
    if constexpr (has_departure_exclusion<Model>::value) {
      const double h = step_length_from(t0);
      return m_.departure_excluded(j, mode, q0, geo.g, geo.g_q, h / (o_.probes + 1), h, th_, guard_summary_);
    } else {
      return false;
    }
  }

  // Event partials: grazing flag always; with Sens, dt_e/dtheta and dq-/dtheta (into the record
  // at `slot`), then by `terminal`: Finished (not terminal) jumps X; EventCapacity writes dq-/dtheta
  // as dqf; Settled and Zeno write the total derivative of the post-event state,
  // R_q dq-/dtheta + R_theta (= X+ + f+ tau_theta), as dqf. The terminal derivative goes straight
  // to the output, column by column: an N x P array for it would double the per-thread stack
  // beside Xs (18 KB more for TerrainBall<192>).
  SALTATION_HD void jump(int j, const EventGeometry& geo, const PartialsSource& partials, const double* q_minus,
                         const double* q_plus, int mode_plus, int slot, Status terminal, bool pinned) {
    const double* g_q = geo.g_q;
    const double* f_minus = geo.f_minus;
    const double g_dot = geo.g_dot;
    if (slot >= 0) out_.event_flags(slot, ::fabs(g_dot) < o_.graze_tol * ::sqrt(geo.gq2 * geo.f2) ? EventGrazing : 0);
    if constexpr (Sens) {
      const bool needs_reset = terminal != Status::EventCapacity;
      double R_q[N * N], f_plus[N];
      partials.state_jacobian(R_q);
      m_.flow(q_plus, mode_plus, th_, f_plus);
      tan_.up_to_date();
      // Column p of X- is Y_q Xs_p + Y_theta_p (Y_theta_p the column of Y for flow parameter p,
      // else 0), so g_q . X- and R_q X- come from g_q Y and R_q Y formed once here: N and N^2 per
      // column instead of N^2 and 2 N^2. The total derivative of the post-event state,
      //   R_q dq- + R_theta = (R_q Y_q) Xs_p + R_q Y_theta_p + R_theta + (R_q f-) tau_p,
      // is X+ + f+ tau_p when the run goes on, and dqf when a settled or Zeno event ends it.
      double gY[kWidth], RY[N * kWidth], c[N];  // the columns of Y: [q | flow parameters]
      for (int col = 0; col < kWidth; ++col) {
        gY[col] = 0.0;
        for (int l = 0; l < N; ++l) gY[col] += g_q[l] * tan_.Y[l * kWidth + col];
        for (int r = 0; r < N; ++r) {
          double acc = 0.0;
          for (int l = 0; l < N; ++l) acc += R_q[r * N + l] * tan_.Y[l * kWidth + col];
          RY[r * kWidth + col] = acc;
        }
      }
      for (int r = 0; r < N; ++r) {
        double acc = 0.0;
        for (int l = 0; l < N; ++l) acc += R_q[r * N + l] * f_minus[l];
        c[r] = terminal == Status::Finished ? acc - f_plus[r] : acc;  // X+ = ... - (f+ - R_q f-) tau
      }
      const double minus_inv_g_dot = -1.0 / g_dot;  // one division per event, not one per column
      using Gr = ColumnGroup;
      using G = Gr::type;
      constexpr int L = Gr::size;
      static_assert(kChunk % L == 0, "a chunk holds whole column groups");
      constexpr int xs_cols = Tangents<Model, Sens>::kXsCols;  // Xs's row length
      for (int p0 = 0; p0 < P; p0 += kChunk) {
        const int count = P - p0 < kChunk ? P - p0 : kChunk;
        double g_theta[kChunk], R_theta[N * kChunk];
        partials.fill(p0, count, needs_reset, g_theta, R_theta);
        if (L > 1 && count < kChunk) {  // the columns past count (the last group's padding): zeros
          for (int e = count; e < kChunk; ++e) g_theta[e] = 0.0;
          for (int r = 0; r < N; ++r)
            for (int e = count; e < kChunk; ++e) R_theta[r * kChunk + e] = 0.0;
        }
        // L columns at a time (Group: eight in host vectors, else one), each column's entries
        // formed by the same operations in the same order as one column at a time. The groups
        // are whole: past `count` their columns are Xs's padding, formed from zeros and never
        // read into a real column.
        for (int d0 = 0; d0 < count; d0 += L) {
          const int here = count - d0 < L ? count - d0 : L;
          // The flow-parameter columns' terms of Y (gY, RY) added to the group's elements they
          // belong to, at the same place in each sum as a term of every column would be.
          int flow_e[Model::F > 0 ? Model::F : 1];  // flow parameter f's element of the group, or -1
          for (int f = 0; f < Model::F; ++f) {
            const int e = Model::flow_param(f) - (p0 + d0);
            flow_e[f] = e >= 0 && e < here ? e : -1;
          }
          G xs[N];
          for (int l = 0; l < N; ++l) xs[l] = Gr::load(tan_.Xs + l * xs_cols + p0 + d0);
          G num = Gr::make(g_theta + d0);
          for (int l = 0; l < N; ++l) num = num + gY[l] * xs[l];
          for (int f = 0; f < Model::F; ++f)
            if (flow_e[f] >= 0) Gr::add_at(num, flow_e[f], gY[N + f]);
          const G tau = pinned ? Gr::zero() : num * minus_inv_g_dot;
          const bool columns_kept = Output::records_event_columns || terminal == Status::EventCapacity;
          for (int e = 0; e < here && columns_kept; ++e) {
            const int p = p0 + d0 + e, y_col = tan_.flow_column(p);
            const double tau_p = Gr::at(tau, e);
            // dq-/dtheta_p = X- + f- tau, only where it is kept (a recording output, a truncated run).
            const auto event_dq = [&](double* dq) {
              for (int i = 0; i < N; ++i) {
                double acc = f_minus[i] * tau_p;
                for (int l = 0; l < N; ++l) acc += tan_.Y[i * kWidth + l] * tan_.Xs[l * xs_cols + p];
                if (y_col >= 0) acc += tan_.Y[i * kWidth + y_col];
                dq[i] = acc;
              }
            };
            if (slot >= 0) {
              double dq[N];
              event_dq(dq);
              out_.template event_column<N>(slot, p, tau_p, q_minus, dq);
            }
            if (terminal == Status::EventCapacity) {
              double dq[N];
              event_dq(dq);
              for (int k = 0; k < N; ++k) out_.final_dq(k, p, dq[k]);
            }
          }
          if (terminal == Status::EventCapacity) continue;
          for (int r = 0; r < N; ++r) {
            G total = Gr::make(R_theta + r * kChunk + d0) + c[r] * tau;
            for (int l = 0; l < N; ++l) total = total + RY[r * kWidth + l] * xs[l];
            for (int f = 0; f < Model::F; ++f)
              if (flow_e[f] >= 0) Gr::add_at(total, flow_e[f], RY[r * kWidth + N + f]);
            if (terminal == Status::Finished) {
              Gr::store(total, tan_.Xs + r * xs_cols + p0 + d0);
            } else {
              for (int e = 0; e < here; ++e) out_.final_dq(r, p0 + d0 + e, Gr::at(total, e));
            }
          }
        }
      }
      if (terminal == Status::Finished) tan_.restart_segment();
    }
  }

  // R_q, g_theta and R_theta at an event (the latter a chunk of parameters at a time): from the
  // model's analytic partials when it has them, else from dual-number passes. Formed with Sens
  // only; the event's guard gradient comes from its context where the model gives it from there.
  class PartialsSource {
   public:
    SALTATION_HD PartialsSource(const Trajectory& tr, int j, const double* q) : tr_(tr), j_(j), q_(q) {
      if constexpr (Sens && has_event_partials<Model>::value) ctx_ = tr.m_.event_context(j, q, tr.mode_, tr.th_);
    }
    // The guard g and g_q = d g_j / dq at q from the context, true when the model gives them so
    // (one pass over the guard's geometry per event fewer); false, both untouched, when not.
    SALTATION_HD bool guard_gradient(double& g, double* g_q) const {
      if constexpr (Sens && has_context_guard_gradient<Model, Context>::value) {
        g = tr_.m_.event_guard_gradient(ctx_, g_q);
        return true;
      } else {
        return false;
      }
    }
    // R_q = d q+ / d q- (row-major N x N) of guard j's reset at q.
    SALTATION_HD void state_jacobian(double* R_q) const {
      if constexpr (has_event_partials<Model>::value) {
        tr_.m_.event_state_jacobian(ctx_, R_q);
      } else {
        using D = Dual<N>;
        D qd[N], qp[N];
        for (int k = 0; k < N; ++k) qd[k] = D::variable(q_[k], k);
        tr_.m_.reset(j_, qd, tr_.mode_, ConstantParams<D, Th>{tr_.th_}, qp);
        for (int r = 0; r < N; ++r)
          for (int k = 0; k < N; ++k) R_q[r * N + k] = qp[r].d[k];
      }
    }
    SALTATION_HD void fill(int p0, int count, bool with_reset, double* g_theta, double* R_theta) const {
      if constexpr (has_event_partials<Model>::value) {
        tr_.m_.event_param_partials(ctx_, p0, count, tr_.th_, g_theta, R_theta, kChunk);
      } else {
        using C = Dual<kChunk>;
        const ChunkSeededParams<kChunk, Th> cth{tr_.th_, p0};
        C qc[N], qp[N];
        for (int k = 0; k < N; ++k) qc[k] = C(q_[k]);
        const C g = tr_.m_.guard(j_, qc, tr_.mode_, cth);
        if (with_reset) tr_.m_.reset(j_, qc, tr_.mode_, cth, qp);
        for (int c = 0; c < count; ++c) {
          g_theta[c] = g.d[c];
          for (int r = 0; r < N; ++r) R_theta[r * kChunk + c] = with_reset ? qp[r].d[c] : 0.0;
        }
      }
    }

   private:
    using Context = typename event_context_of<Model, Th>::type;
    const Trajectory& tr_;
    int j_;
    const double* q_;
    Context ctx_{};
  };

  // X(0) = d q0 / dtheta.
  SALTATION_HD void initial_tangent() {
    if constexpr (Sens) {
      using C = Dual<kChunk>;
      for (double& x : tan_.Xs) x = 0.0;  // the padding too
      for (int p0 = 0; p0 < P; p0 += kChunk) {
        C q0[N];
        m_.initial_state(ChunkSeededParams<kChunk, Th>{th_, p0}, q0);
        for (int d = 0; d < kChunk && p0 + d < P; ++d)
          for (int k = 0; k < N; ++k) tan_.Xs[k * Tangents<Model, Sens>::kXsCols + p0 + d] = q0[k].d[d];
      }
    }
  }

  // Status, end time and final state; the caller has written dqf (a terminal event's jump()).
  SALTATION_HD void finish_state(Status status, double t_end, const double* qf) {
    out_.template finish<N>(status, t_end, qf, n_events_);
  }

  // Status, end time and final state, with dqf = X(t_end) from the current tangent.
  SALTATION_HD void finish(Status status, double t_end, const double* qf) {
    finish_state(status, t_end, qf);
    if constexpr (Sens) {
      tan_.up_to_date();
      for (int p = 0; p < P; ++p) {
        double x[N];
        tan_.column(p, x);
        for (int k = 0; k < N; ++k) out_.final_dq(k, p, x[k]);
      }
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
    if constexpr (Sens)
      for (int k = 0; k < N; ++k)
        for (int p = 0; p < P; ++p) out_.final_dq(k, p, ::nan(""));
  }

  const Model m_;
  const Options o_;
  const Th th_;
  const Output out_;
  double q_[N];
  int mode_ = 0;
  double t_ = 0.0;
  double g_left_[M];
  bool g_left_known_ = false;  // false after a step the guard bound skipped
  // The guard whose event was just taken (the state lies on it) when the model's departure bound
  // rules it out on the next step, which its guard bound cannot (docs/models.md); else -1. Until
  // the next step.
  int departing_ = -1;
  int n_events_ = 0;
  double zeno_start_ = -1e300;
  int zeno_count_ = 0;
  Bracket bracket_;  // the crossing step() found, until take_bracketed_event()
  typename GuardSummaryOf<Model, Th>::type guard_summary_{};
  Tangents<Model, Sens> tan_;
};

// Integrates trajectory i of a batch into `out` through the Output policy; `th` views its
// parameter row.
template <bool Sens, class Output = FullRecord, class Model, class Th>
SALTATION_HD void integrate_one(const Model& m, const Options& o, const Th& th, std::size_t i,
                                const typename Output::View& out) {
  static_assert(check_model<Model>(), "");
  Trajectory<Model, Th, Sens, Output>(m, o, th, i, out).run();
}

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
// localise_phase() with its answer. kernels/solve.cuh votes with __ballot_sync;
// tests/test_warp_policy.cpp runs the same phases over a CPU "warp".
template <class Model, class Th, bool Sens, class Output = FullRecord>
class WarpLane {
 public:
  // A lane past the end of the batch (`in_batch` false) is ended from the start and never
  // touches the result arrays.
  SALTATION_HD WarpLane(const Model& m, const Options& o, const Th& th, std::size_t i,
                        const typename Output::View& out, bool in_batch)
      : tr_(m, o, th, i, out), ended_(!in_batch || tr_.begin()) {}

  SALTATION_HD bool ended() const { return ended_; }
  SALTATION_HD bool pending() const { return pending_; }
  SALTATION_HD bool stepping() const { return !ended_ && !pending_; }
  SALTATION_HD bool expired(const WarpDeferral& d) const { return pending_ && waited_ >= d.max_wait; }

  SALTATION_HD void step_phase() {
    if (!stepping()) return;
    using Outcome = typename Trajectory<Model, Th, Sens, Output>::StepOutcome;
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
  Trajectory<Model, Th, Sens, Output> tr_;
  bool ended_;
  bool pending_ = false;
  int waited_ = 0;  // lockstep steps the held bracket has waited
};

}  // namespace saltation::core
