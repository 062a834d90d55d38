#pragma once
// The CPU/GPU agreement policy (docs/agreement.md) as one check: statuses, event counts, event
// guards and event flags exactly equal; every value within rtol relative to max(|reference|,
// 1e-3 x the array's largest magnitude), so that entries near zero are held to the array's scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "saltation/result.hpp"

namespace saltation::agreement {

inline void expect_close(const HostArray<double>& got, const HostArray<double>& reference, double rtol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), reference.size()) << what;
  double scale = 0.0;
  for (double x : reference)
    if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
  std::size_t bad = 0, first = 0;
  double worst = 0.0;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    const double a = got[k], b = reference[k];
    if (std::isnan(a) && std::isnan(b)) continue;  // invalid rows: NaN on both
    const double err = std::fabs(a - b) / std::max(std::fabs(b), 1e-3 * scale);
    if (!(err <= rtol)) {
      if (bad++ == 0) first = k;
      if (!(err <= worst)) worst = err;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << reference.size() << " entries beyond " << rtol
                     << " relative; worst " << worst << ", first at " << first;
}

// got: the result under test (CUDA, or the contracted build); reference: the plain CPU build.
inline void expect_agreement(const Result& got, const Result& reference, double rtol) {
  EXPECT_EQ(got.status, reference.status) << "statuses must be equal";
  EXPECT_EQ(got.n_events, reference.n_events) << "event counts must be equal";
  EXPECT_EQ(got.ev_guard, reference.ev_guard) << "event guards must be equal";
  EXPECT_EQ(got.ev_flags, reference.ev_flags) << "event flags must be equal";
  expect_close(got.t_end, reference.t_end, rtol, "t_end");
  expect_close(got.qf, reference.qf, rtol, "qf");
  expect_close(got.ev_t, reference.ev_t, rtol, "event times");
  expect_close(got.ev_q, reference.ev_q, rtol, "pre-event states");
  expect_close(got.ev_q_plus, reference.ev_q_plus, rtol, "post-event states");
  expect_close(got.dqf, reference.dqf, rtol, "dqf/dtheta");
  expect_close(got.ev_dt, reference.ev_dt, rtol, "dt_e/dtheta");
  expect_close(got.ev_dq, reference.ev_dq, rtol, "dq-/dtheta");
}

}  // namespace saltation::agreement
