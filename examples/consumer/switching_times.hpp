#pragma once
// The consumer's test case, for each of its programs: three relief valves, the options they are
// solved with, and the check of a solve's switching times against their closed forms: closed, p
// rises linearly, t = C (p_open - p) / Q; open, p relaxes to p_eq = Q / G, reaching p_close after
// (C / G) ln((p_open - p_eq) / (p_close - p_eq)).
#include <cmath>
#include <cstdio>

#include "relief_valve.hpp"
#include "saltation/batch.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"

namespace vessel {

inline saltation::Batch test_batch() {
  // Rows: p0, Q, C, G, p_open, p_close.
  return saltation::Batch::from_rows(
      {{1.0, 2.0, 1.0, 1.0, 3.0, 2.5}, {0.0, 1.5, 2.0, 2.0, 2.0, 1.2}, {2.0, 4.0, 0.5, 3.0, 2.2, 1.4}}, ReliefValve::P);
}

inline saltation::Options test_options() {
  saltation::Options options;
  options.t_final = 6.0;
  options.dt = 1e-3;
  options.event_capacity = 32;
  return options;
}

// Prints each row's switching times; returns how many checks failed.
inline int check_switching_times(const saltation::Batch& batch, const saltation::Result& result) {
  int failures = 0;
  for (std::size_t i = 0; i < batch.n; ++i) {
    const double p0 = batch.at(i, ReliefValve::P0), Q = batch.at(i, ReliefValve::Inflow),
                 C = batch.at(i, ReliefValve::Capacity), G = batch.at(i, ReliefValve::Conductance),
                 p_open = batch.at(i, ReliefValve::POpen), p_close = batch.at(i, ReliefValve::PClose);
    const double p_eq = Q / G, rise = C * (p_open - p_close) / Q,
                 fall = C / G * std::log((p_open - p_eq) / (p_close - p_eq));
    std::printf("row %zu: %s, %d switches:", i, saltation::status_name(result.status_of(i)), result.n_events[i]);
    double expected = C * (p_open - p0) / Q;
    for (int c = 0; c < result.n_events[i]; ++c) {
      const double t = result.event_time(i, c);
      std::printf(" %.6f", t);
      if (!(std::fabs(t - expected) <= 1e-9)) {
        ++failures;
        std::printf(" (expected %.12f)", expected);
      }
      expected += c % 2 == 0 ? fall : rise;
    }
    std::printf("\n");
    if (result.n_events[i] < 2) ++failures;
  }
  return failures;
}

}  // namespace vessel
