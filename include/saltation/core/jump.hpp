#pragma once
// The saltation jump at an event and the partials it needs. At an event of guard j at t_e with
// pre-event state q-, f- = f(q-), q+ = R(q-), f+ = f(q+) (new mode):
//   tau_theta = -(g_q . X- + g_theta) / (g_q . f-)                 (dt_e / dtheta)
//   X+ = R_q X- + R_theta - (f+ - R_q f-) tau_theta               (saltation jump, theta-augmented)
//   d q-_e / dtheta = X- + f- tau_theta                           (total derivative of the event state)
// with g_q, R_q from Dual<N> and g_theta, R_theta from Dual<kChunk> over chunks of theta, or from
// the model's analytic partials where it has them (docs/models.md).
#include <cmath>

#include "saltation/config.hpp"
#include "saltation/core/params.hpp"
#include "saltation/core/result_views.hpp"
#include "saltation/core/tangents.hpp"
#include "saltation/dual.hpp"
#include "saltation/model.hpp"
#include "saltation/status.hpp"

namespace saltation::core {

// Gradient of guard j at q in `mode`, and the guard's value: the model's own, else from dual numbers.
template <class Model, class Th>
SALTATION_HD double guard_gradient_at(const Model& m, int j, const double* q, int mode, const Th& th, double* g_q) {
  constexpr int N = Model::N;
  if constexpr (has_guard_gradient<Model>::value) {
    return m.guard_gradient(j, q, mode, th, g_q);
  } else {
    using D = Dual<N>;
    D qd[N];
    for (int k = 0; k < N; ++k) qd[k] = D::variable(q[k], k);
    const D g = m.guard(j, qd, mode, ConstantParams<D, Th>{th});
    for (int k = 0; k < N; ++k) g_q[k] = g.d[k];
    return g.v;
  }
}

// R_q, g_theta and R_theta at an event of guard j at pre-event state q (the latter a chunk of
// parameters at a time): from the model's analytic partials when it has them, else from
// dual-number passes. Formed with Sens only; the event's guard gradient comes from its context
// where the model gives it from there.
template <class Model, class Th, bool Sens>
class EventPartials {
 public:
  static constexpr int N = Model::N;
  SALTATION_HD EventPartials(const Model& m, int mode, const Th& th, int j, const double* q)
      : m_(m), mode_(mode), th_(th), j_(j), q_(q) {
    if constexpr (Sens && has_event_partials<Model>::value) ctx_ = m.event_context(j, q, mode, th);
  }
  // The guard g and g_q = d g_j / dq at q from the context, true when the model gives them so
  // (one pass over the guard's geometry per event fewer); false, both untouched, when not.
  SALTATION_HD bool guard_gradient(double& g, double* g_q) const {
    if constexpr (Sens && has_context_guard_gradient<Model, Context>::value) {
      g = m_.event_guard_gradient(ctx_, g_q);
      return true;
    } else {
      return false;
    }
  }
  SALTATION_HD int mode() const { return mode_; }
  SALTATION_HD int guard() const { return j_; }
  // R_q = d q+ / d q- (row-major N x N) of guard j's reset at q.
  SALTATION_HD void state_jacobian(double* R_q) const {
    if constexpr (has_event_partials<Model>::value) {
      m_.event_state_jacobian(ctx_, R_q);
    } else {
      using D = Dual<N>;
      D qd[N], qp[N];
      for (int k = 0; k < N; ++k) qd[k] = D::variable(q_[k], k);
      m_.reset(j_, qd, mode_, ConstantParams<D, Th>{th_}, qp);
      for (int r = 0; r < N; ++r)
        for (int k = 0; k < N; ++k) R_q[r * N + k] = qp[r].d[k];
    }
  }
  // g_theta[c] and R_theta[r * kChunk + c] for parameters p0 + c, c < count (R_theta zero unless
  // with_reset).
  SALTATION_HD void fill(int p0, int count, bool with_reset, double* g_theta, double* R_theta) const {
    if constexpr (has_event_partials<Model>::value) {
      m_.event_param_partials(ctx_, p0, count, th_, g_theta, R_theta, kChunk);
    } else {
      using C = Dual<kChunk>;
      const ChunkSeededParams<kChunk, Th> cth{th_, p0};
      C qc[N], qp[N];
      for (int k = 0; k < N; ++k) qc[k] = C(q_[k]);
      const C g = m_.guard(j_, qc, mode_, cth);
      if (with_reset) m_.reset(j_, qc, mode_, cth, qp);
      for (int c = 0; c < count; ++c) {
        g_theta[c] = g.d[c];
        for (int r = 0; r < N; ++r) R_theta[r * kChunk + c] = with_reset ? qp[r].d[c] : 0.0;
      }
    }
  }

 private:
  using Context = typename event_context_of<Model, Th>::type;
  const Model& m_;
  int mode_;
  const Th& th_;
  int j_;
  const double* q_;
  Context ctx_{};
};

// The guard's gradient and the flow at an event's pre-event state, which the settling test and
// the jump both need: g_dot = g_q . f-, and |g_q|^2, |f-|^2.
template <int N>
struct EventGeometry {
  double g = 0.0;  // the guard's value (0 to within the location's accuracy)
  double g_q[N], f_minus[N];
  double g_dot = 0.0, gq2 = 0.0, f2 = 0.0;

  // |g_q . f-| / |g_q|: the normal speed at which the trajectory meets the guard surface (|v-| for
  // the bouncing ball, as the event-handling paper's min_bounce_speed test).
  SALTATION_HD double impact_speed() const { return gq2 > 0.0 ? ::fabs(g_dot) / ::sqrt(gq2) : ::fabs(g_dot); }
  // Whether the event is grazing: |g_q . f-| small against |g_q| |f-| (its derivatives do not exist).
  SALTATION_HD bool grazing(double graze_tol) const { return ::fabs(g_dot) < graze_tol * ::sqrt(gq2 * f2); }
};

template <class Model, class Th, bool Sens>
SALTATION_HD EventGeometry<Model::N> event_geometry(const Model& m, int mode, const Th& th, int j,
                                                    const double* q_minus,
                                                    const EventPartials<Model, Th, Sens>& partials) {
  EventGeometry<Model::N> e;
  if (!partials.guard_gradient(e.g, e.g_q)) e.g = guard_gradient_at(m, j, q_minus, mode, th, e.g_q);
  m.flow(q_minus, mode, th, e.f_minus);
  for (int k = 0; k < Model::N; ++k) {
    e.g_dot += e.g_q[k] * e.f_minus[k];
    e.gq2 += e.g_q[k] * e.g_q[k];
    e.f2 += e.f_minus[k] * e.f_minus[k];
  }
  return e;
}

// Where an event leaves the trajectory: its pre- and post-event states, the mode after it, its
// record's slot (-1: not recorded), whether it ends the run (`terminal`; Finished means it does
// not) and whether its time is pinned (an initial state already in the jump set: dt_e/dtheta = 0).
struct EventEnd {
  const double* q_minus;
  const double* q_plus;
  int mode_plus;
  int slot;
  Status terminal;
  bool pinned;
};

// What the parameter columns of an event's jump need besides the event's parameter partials
// (g_theta, R_theta, formed a chunk of columns at a time from q-, the mode and the guard) and its
// state (EventState): N (N+F) numbers and a few, whatever P. Column p of X- is Y_q Xs_p +
// Y_theta_p (Y_theta_p the column of Y for flow parameter p, else 0), so g_q . X- and R_q X- come
// from g_q Y and R_q Y formed once: N and N^2 per column instead of N^2 and 2 N^2.
template <class Model>
struct EventMap {
  static constexpr int N = Model::N, W = tangent_width<Model>();
  double gY[W];            // g_q Y
  double RY[N * W];        // R_q Y
  double c[N];             // R_q f-, less f+ when the run goes on: X+ = ... - (f+ - R_q f-) tau
  double minus_inv_g_dot;  // one division per event, not one per column
  int slot;
  Status terminal;
  bool pinned;
};

// The event's state that its columns read: dq-/dtheta_p = X- + f- tau_p, the output's event_column q-.
struct EventState {
  const double* q_minus;
  const double* f_minus;
  const double* Y;  // the segment tangent at the event, brought up to date
};

// The event's map: R_q, f+ and the products with the segment tangent (brought up to date here).
template <class Model, class Th>
SALTATION_HD EventMap<Model> event_map(const Model& m, const Th& th, const EventPartials<Model, Th, true>& partials,
                                       const EventGeometry<Model::N>& geo, const EventEnd& ev,
                                       Tangents<Model, true>& tan) {
  constexpr int N = Model::N, kWidth = tangent_width<Model>();
  EventMap<Model> map;
  double R_q[N * N], f_plus[N];
  partials.state_jacobian(R_q);
  m.flow(ev.q_plus, ev.mode_plus, th, f_plus);
  tan.up_to_date();
  for (int col = 0; col < kWidth; ++col) {
    map.gY[col] = 0.0;
    for (int l = 0; l < N; ++l) map.gY[col] += geo.g_q[l] * tan.Y[l * kWidth + col];
    for (int r = 0; r < N; ++r) {
      double acc = 0.0;
      for (int l = 0; l < N; ++l) acc += R_q[r * N + l] * tan.Y[l * kWidth + col];
      map.RY[r * kWidth + col] = acc;
    }
  }
  for (int r = 0; r < N; ++r) {
    double acc = 0.0;
    for (int l = 0; l < N; ++l) acc += R_q[r * N + l] * geo.f_minus[l];
    map.c[r] = ev.terminal == Status::Finished ? acc - f_plus[r] : acc;
  }
  map.minus_inv_g_dot = -1.0 / geo.g_dot;
  map.slot = ev.slot;
  map.terminal = ev.terminal;
  map.pinned = ev.pinned;
  return map;
}

// The jump of the parameter columns [p_begin, p_end) (p_begin a multiple of kChunk) of X at the
// segment start, column p of Xs at Xs[l * xs_cols + p - xs_first] (whole column groups: past P
// its padding, formed from zeros and never read into a real column). Into the output:
// dt_e/dtheta and dq-/dtheta (at the record's slot, where kept); then by `terminal`: Finished (not
// terminal) jumps the columns of Xs (the caller restarts Y); EventCapacity writes dq-/dtheta as
// dqf; Settled and Zeno write the total derivative of the post-event state,
//   R_q dq- + R_theta = (R_q Y_q) Xs_p + R_q Y_theta_p + R_theta + (R_q f-) tau_p  (= X+ + f+ tau_p),
// as dqf, straight to the output column by column (an N x P array for it would double the
// per-thread stack beside Xs).
template <class Model, class Th, class Output>
SALTATION_HD void jump_columns(const EventPartials<Model, Th, true>& partials, const EventMap<Model>& map,
                               const EventState& at, double* Xs, int xs_cols, int xs_first, int p_begin, int p_end,
                               const Output& out) {
  constexpr int N = Model::N, kWidth = tangent_width<Model>();
  const bool needs_reset = map.terminal != Status::EventCapacity;
  using Gr = ColumnGroup;
  using G = Gr::type;
  constexpr int L = Gr::size;
  static_assert(kChunk % L == 0, "a chunk holds whole column groups");
  for (int p0 = p_begin; p0 < p_end; p0 += kChunk) {
    const int count = p_end - p0 < kChunk ? p_end - p0 : kChunk;
    double g_theta[kChunk], R_theta[N * kChunk];
    partials.fill(p0, count, needs_reset, g_theta, R_theta);
    if (L > 1 && count < kChunk) {  // the columns past count (the last group's padding): zeros
      for (int e = count; e < kChunk; ++e) g_theta[e] = 0.0;
      for (int r = 0; r < N; ++r)
        for (int e = count; e < kChunk; ++e) R_theta[r * kChunk + e] = 0.0;
    }
    // L columns at a time (Group: eight in host vectors, else one), each column's entries
    // formed by the same operations in the same order as one column at a time.
    for (int d0 = 0; d0 < count; d0 += L) {
      const int here = count - d0 < L ? count - d0 : L;
      double* xs_at = Xs + (p0 + d0 - xs_first);
      // The flow-parameter columns' terms of Y (gY, RY) added to the group's elements they
      // belong to, at the same place in each sum as a term of every column would be.
      int flow_e[Model::F > 0 ? Model::F : 1];  // flow parameter f's element of the group, or -1
      for (int f = 0; f < Model::F; ++f) {
        const int e = Model::flow_param(f) - (p0 + d0);
        flow_e[f] = e >= 0 && e < here ? e : -1;
      }
      G xs[N];
      for (int l = 0; l < N; ++l) xs[l] = Gr::load(xs_at + l * xs_cols);
      G num = Gr::make(g_theta + d0);
      for (int l = 0; l < N; ++l) num = num + map.gY[l] * xs[l];
      for (int f = 0; f < Model::F; ++f)
        if (flow_e[f] >= 0) Gr::add_at(num, flow_e[f], map.gY[N + f]);
      const G tau = map.pinned ? Gr::zero() : num * map.minus_inv_g_dot;
      const bool columns_kept = Output::records_event_columns || map.terminal == Status::EventCapacity;
      for (int e = 0; e < here && columns_kept; ++e) {
        const int p = p0 + d0 + e, y_col = Tangents<Model, true>::flow_column(p);
        const double tau_p = Gr::at(tau, e);
        // dq-/dtheta_p = X- + f- tau, only where it is kept (a recording output, a truncated run).
        const auto event_dq = [&](double* dq) {
          for (int i = 0; i < N; ++i) {
            double acc = at.f_minus[i] * tau_p;
            for (int l = 0; l < N; ++l) acc += at.Y[i * kWidth + l] * xs_at[l * xs_cols + e];
            if (y_col >= 0) acc += at.Y[i * kWidth + y_col];
            dq[i] = acc;
          }
        };
        if (map.slot >= 0) {
          double dq[N];
          event_dq(dq);
          out.template event_column<N>(map.slot, p, tau_p, at.q_minus, dq);
        }
        if (map.terminal == Status::EventCapacity) {
          double dq[N];
          event_dq(dq);
          for (int k = 0; k < N; ++k) out.final_dq(k, p, dq[k]);
        }
      }
      if (map.terminal == Status::EventCapacity) continue;
      for (int r = 0; r < N; ++r) {
        G total = Gr::make(R_theta + r * kChunk + d0) + map.c[r] * tau;
        for (int l = 0; l < N; ++l) total = total + map.RY[r * kWidth + l] * xs[l];
        for (int f = 0; f < Model::F; ++f)
          if (flow_e[f] >= 0) Gr::add_at(total, flow_e[f], map.RY[r * kWidth + N + f]);
        if (map.terminal == Status::Finished) {
          Gr::store(total, xs_at + r * xs_cols);
        } else {
          for (int e = 0; e < here; ++e) out.final_dq(r, p0 + d0 + e, Gr::at(total, e));
        }
      }
    }
  }
}

}  // namespace saltation::core
