#include "saltation/sweep/boundary.hpp"

#include <algorithm>
#include <cmath>

namespace saltation::sweep {

namespace {

// The index among trajectory i's `recorded` events of the event objective o reads (its event-th
// event, or its guard's event-th), or `recorded` when that event never came.
int objective_event(const Result& r, std::size_t i, const Objective& o, int recorded) {
  if (o.guard < 0) return std::min(o.event, recorded);
  int seen = 0;
  for (int c = 0; c < recorded; ++c)
    if (r.ev_guard[r.shape().at(c, i)] == o.guard && seen++ == o.event) return c;
  return recorded;
}

// Calls f(c, J_c) for each recorded event c of trajectory i whose crossing of t_final makes o
// jump by J_c (J_c = 1 where o's existence jumps), and returns the last event index o depends on
// (events after it cannot change o; -1 when none).
template <class F>
int for_each_crossing(const Result& r, std::size_t i, const Objective& o, F&& f) {
  const int recorded = std::min(r.n_events[i], r.C);
  switch (o.kind) {
    case ObjectiveKind::EventCount:
      for (int c = 0; c < recorded; ++c) f(c, 1.0);
      return recorded - 1;
    case ObjectiveKind::FinalState:
      for (int c = 0; c < recorded; ++c) f(c, r.event_q_plus(i, c, o.state) - r.event_q(i, c, o.state));
      return recorded - 1;
    case ObjectiveKind::StatusIs: {
      // Settling ends the trajectory at its event: past t_final, the trajectory finishes instead.
      if (r.status_of(i) == Status::Settled && recorded == r.n_events[i] && recorded > 0)
        f(recorded - 1, (o.status == static_cast<int>(Status::Settled) ? 1.0 : 0.0) -
                            (o.status == static_cast<int>(Status::Finished) ? 1.0 : 0.0));
      return recorded - 1;
    }
    case ObjectiveKind::EventTime:
    case ObjectiveKind::EventState:
    case ObjectiveKind::Landing: {
      const int c = objective_event(r, i, o, recorded);
      if (c < recorded) f(c, 1.0);
      return std::min(c, recorded - 1);
    }
  }
  return -1;
}

// Calls f(c, J_c) for each recorded event c of trajectory i that went on (settling was possible
// there), J_c = o as recorded minus o had the run settled at c: c + 1 events, status settled,
// qf = q+_c; 1 for an objective read at a later event, which would not exist. Returns the event
// the trajectory settled at when o depends on whether it did (-1 when not).
template <class F>
int for_each_settling_crossing(const Result& r, std::size_t i, const Objective& o, F&& f) {
  const Status s = r.status_of(i);
  if (s == Status::NonFinite) return -1;
  const int recorded = std::min(r.n_events[i], r.C);
  const int settled_at = s == Status::Settled && recorded == r.n_events[i] ? recorded - 1 : -1;
  auto is = [](bool b) { return b ? 1.0 : 0.0; };
  if (!o.jumps_in_value()) {
    const int read = objective_event(r, i, o, recorded);
    if (read < recorded)
      for (int c = 0; c < read; ++c) f(c, 1.0);
    return -1;
  }
  for (int c = 0; c < recorded; ++c) {
    if (c == settled_at) continue;
    switch (o.kind) {
      case ObjectiveKind::EventCount: f(c, static_cast<double>(r.n_events[i] - (c + 1))); break;
      case ObjectiveKind::FinalState: f(c, r.qf_of(i, o.state) - r.event_q_plus(i, c, o.state)); break;
      case ObjectiveKind::StatusIs:
        f(c, is(static_cast<int>(s) == o.status) - is(o.status == static_cast<int>(Status::Settled)));
        break;
      default: break;
    }
  }
  return settled_at;
}

// h = s n^(-1/3), s the sample standard deviation of the pilot trajectories' smallest margins
// (smallest(i): trajectory i's, infinite when it has none), `spread` where fewer than two have one.
template <class Smallest>
double bandwidth_from_pilot(const Result& pilot, Smallest&& smallest, double spread, std::uint64_t samples) {
  double count = 0.0, mean = 0.0, comoment = 0.0;  // Welford
  for (std::size_t i = 0; i < pilot.n; ++i) {
    if (pilot.status_of(i) == Status::InvalidInput) continue;
    const double m = smallest(i);
    if (!std::isfinite(m)) continue;
    count += 1.0;
    const double d = m - mean;
    mean += d / count;
    comoment += d * (m - mean);
  }
  if (count >= 2.0 && comoment > 0.0) spread = std::sqrt(comoment / (count - 1.0));
  return spread * std::cbrt(1.0 / static_cast<double>(samples));
}

}  // namespace

double boundary_kernel(double margin, double bandwidth) {
  if (!(margin >= 0.0 && margin < bandwidth)) return 0.0;
  return (4.0 - 6.0 * margin / bandwidth) / bandwidth;
}

void boundary_terms(const Result& r, std::size_t i, const Objective& o, const std::vector<int>& parameters,
                    const double* slopes, double t_final, double h, const Settling& settling, double* z, double* near) {
  const std::size_t D = parameters.size();
  std::fill(z, z + D, 0.0);
  std::fill(near, near + D, 0.0);
  if (r.status_of(i) == Status::InvalidInput) return;
  // Event c's term: K(margin) (d margin / dtheta_d) J, the margin within [0, width) of its
  // threshold. A grazing event's derivatives do not exist (DESIGN.md section 3): it is a
  // discontinuity, below, without a boundary term.
  auto add_term = [&](int c, double margin, double width, double jump, auto&& margin_rate) {
    if (!(margin < width) || jump == 0.0) return;
    const double kernel = boundary_kernel(margin, width);
    const bool grazing = r.ev_flags[static_cast<std::size_t>(c) * r.n + i] & EventGrazing;
    for (std::size_t d = 0; d < D; ++d) {
      const double rate = margin_rate(d);
      if (rate == 0.0) continue;
      near[d] = 1.0;
      if (std::isfinite(rate) && !grazing) z[d] += kernel * rate * jump;
    }
  };
  const int last = for_each_crossing(r, i, o, [&](int c, double jump) {
    add_term(c, t_final - r.event_time(i, c), h, jump,
             [&](std::size_t d) { return -slopes[d] * r.event_dt(i, c, parameters[d]); });
  });
  if (settling.v_stop > 0.0) {
    auto speed_rate = [&](int c, std::size_t d) {
      return slopes[d] * settling.slope[static_cast<std::size_t>(c) * D + d];
    };
    const int settled_at = for_each_settling_crossing(r, i, o, [&](int c, double jump) {
      add_term(c, settling.speed[c] - settling.v_stop, settling.bandwidth, jump,
               [&](std::size_t d) { return speed_rate(c, d); });
    });
    // The other side: the event it settled at might go on. What would follow was never integrated.
    if (settled_at >= 0 && settling.v_stop - settling.speed[settled_at] < settling.bandwidth)
      for (std::size_t d = 0; d < D; ++d)
        if (speed_rate(settled_at, d) != 0.0) near[d] = 1.0;
  }
  // A grazing event may vanish (or a new one appear) under any change of theta; a trajectory
  // truncated near t_final (capacity, Zeno, a non-finite state) ends otherwise past it. Neither
  // has a boundary term the records can estimate: they count as discontinuities only.
  bool other = false;
  for (int c = 0; c <= last; ++c) other = other || (r.ev_flags[static_cast<std::size_t>(c) * r.n + i] & EventGrazing);
  // An objective read at event c changes identity when c and a neighbour of another guard swap
  // order: within h of each other and drifting apart at another rate. One that names its guard
  // counts that guard's events only, whose order no other guard changes.
  if (!o.jumps_in_value() && o.guard < 0 && o.event < std::min(r.n_events[i], r.C)) {
    const int c = o.event;
    for (int other_event : {c - 1, c + 1}) {
      if (other_event < 0 || other_event >= std::min(r.n_events[i], r.C)) continue;
      const std::size_t a = static_cast<std::size_t>(c) * r.n + i, b = static_cast<std::size_t>(other_event) * r.n + i;
      if (r.ev_guard[a] == r.ev_guard[b] || !(std::abs(r.ev_t[a] - r.ev_t[b]) < h)) continue;
      for (std::size_t d = 0; d < D; ++d)
        if (slopes[d] * (r.event_dt(i, c, parameters[d]) - r.event_dt(i, other_event, parameters[d])) != 0.0)
          near[d] = 1.0;
    }
  }
  const Status s = r.status_of(i);
  if (o.jumps_in_value() && s != Status::Finished && s != Status::Settled) other = other || t_final - r.t_end[i] < h;
  if (other) std::fill(near, near + D, 1.0);
}

double pilot_bandwidth(const Result& pilot, const Objective& o, double t_final, std::uint64_t samples) {
  auto smallest = [&](std::size_t i) {
    double m = HUGE_VAL;
    for_each_crossing(pilot, i, o, [&](int c, double jump) {
      if (jump != 0.0) m = std::min(m, t_final - pilot.event_time(i, c));
    });
    return m;
  };
  return bandwidth_from_pilot(pilot, smallest, t_final / std::sqrt(12.0), samples);
}

double pilot_speed_bandwidth(const Result& pilot, const std::vector<std::vector<double>>& speeds, const Objective& o,
                             double v_stop, std::uint64_t samples) {
  auto smallest = [&](std::size_t i) {
    double m = HUGE_VAL;
    for_each_settling_crossing(pilot, i, o, [&](int c, double jump) {
      if (jump != 0.0) m = std::min(m, speeds[i][c] - v_stop);
    });
    return m;
  };
  return bandwidth_from_pilot(pilot, smallest, v_stop / std::sqrt(12.0), samples);
}

}  // namespace saltation::sweep
