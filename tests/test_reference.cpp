// The terrain ball against an independent reference that shares none of the solver's code: the
// flow with linear drag has a closed form between impacts, x(t) = x0 + vx (1 - E)/c,
// y(t) = y0 + (vy + g/c)(1 - E)/c - g t / c with E = exp(-c t); impacts are the first falling
// roots of y(t) - h(x(t)), bracketed on a fine time grid and refined by bisection to 1e-15.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "backends.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "terrain_samples.hpp"

using namespace saltation;
using saltation::testing::solve_on;

namespace {

struct RefEvent {
  double t, x, y, vx, vy;
};

template <int K>
struct ClosedFormReference {
  std::vector<double> th;
  double g;
  double height(double x) const {
    double h = 0.0;
    for (int k = 0; k < K; ++k) {
      const double u = (x - th[6 + 3 * k]) / th[7 + 3 * k];
      h += th[5 + 3 * k] * std::exp(-0.5 * u * u);
    }
    return h;
  }
  double slope(double x) const {
    double d = 0.0;
    for (int k = 0; k < K; ++k) {
      const double w = th[7 + 3 * k], u = (x - th[6 + 3 * k]) / w;
      d -= th[5 + 3 * k] * std::exp(-0.5 * u * u) * u / w;
    }
    return d;
  }
  // State at time s after (x, y, vx, vy).
  void flow(const double* q, double s, double* out) const {
    const double c = th[2], E = std::exp(-c * s), F = -std::expm1(-c * s) / c;
    out[0] = q[0] + q[2] * F;
    out[1] = q[1] + (q[3] + g / c) * F - g * s / c;
    out[2] = q[2] * E;
    out[3] = (q[3] + g / c) * E - g / c;
  }
  double guard(const double* q, double s) const {
    double o[4];
    flow(q, s, o);
    return o[1] - height(o[0]);
  }
  std::vector<RefEvent> run(double x0, double y0, double t_final, double* qf) const {
    std::vector<RefEvent> events;
    double q[4] = {x0, y0, th[0], th[1]}, t = 0.0;
    const double grid = 1e-4;
    for (;;) {
      // First falling crossing after the segment start (the start itself sits on the surface).
      double a = 0.0, ga = guard(q, 0.0);
      if (!events.empty()) ga = 0.0;
      bool found = false;
      for (double b = grid; t + b <= t_final; b += grid) {
        const double gb = guard(q, b);
        if (ga >= 0.0 && gb < 0.0) {
          for (int it = 0; it < 200 && b - a > 1e-15; ++it) {
            const double m = 0.5 * (a + b);
            (guard(q, m) >= 0.0 ? a : b) = m;
          }
          found = true;
          break;
        }
        a = b;
        ga = gb;
      }
      if (!found) {
        flow(q, t_final - t, qf);
        return events;
      }
      double qm[4];
      flow(q, a, qm);
      t += a;
      events.push_back({t, qm[0], qm[1], qm[2], qm[3]});
      const double s = slope(qm[0]), nrm = std::sqrt(1 + s * s);
      const double nx = -s / nrm, ny = 1 / nrm, tx = 1 / nrm, ty = s / nrm;
      const double vn = qm[2] * nx + qm[3] * ny, vt = qm[2] * tx + qm[3] * ty;
      const double an = -th[3] * vn, at = (1 - th[4]) * vt;
      q[0] = qm[0];
      q[1] = qm[1];
      q[2] = an * nx + at * tx;
      q[3] = an * ny + at * ty;
    }
  }
};

template <int K>
void compare_with_reference(Backend backend, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TerrainBall<K> m;
  Options o;
  o.t_final = 2.0;
  o.dt = 1e-3;
  o.event_capacity = 32;
  double worst_t = 0.0, worst_q = 0.0;
  for (int trial = 0; trial < 4; ++trial) {
    const std::vector<double> th = sample_terrain_row<K>(rng);
    const Result r = solve_on(backend, m, {th}, o);
    ClosedFormReference<K> ref{th, m.gravity};
    double qf[4];
    const std::vector<RefEvent> ev = ref.run(m.x0, m.y0, o.t_final, qf);
    ASSERT_EQ(r.status_of(0), Status::Finished);
    ASSERT_EQ(r.n_events[0], static_cast<int>(ev.size())) << "trial " << trial;
    for (std::size_t c = 0; c < ev.size(); ++c) {
      worst_t = std::max(worst_t, std::fabs(r.event_time(0, c) - ev[c].t));
      worst_q = std::max({worst_q, std::fabs(r.event_q(0, c, 0) - ev[c].x), std::fabs(r.event_q(0, c, 3) - ev[c].vy)});
      EXPECT_NEAR(r.event_time(0, c), ev[c].t, 1e-10) << "trial " << trial << " event " << c;
      EXPECT_NEAR(r.event_q(0, c, 0), ev[c].x, 1e-10);
      EXPECT_NEAR(r.event_q(0, c, 1), ev[c].y, 1e-10);
      EXPECT_NEAR(r.event_q(0, c, 2), ev[c].vx, 1e-9);
      EXPECT_NEAR(r.event_q(0, c, 3), ev[c].vy, 1e-9);
    }
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(r.qf_of(0, k), qf[k], 1e-9) << "qf[" << k << "]";
  }
  std::printf("  K = %d: largest event-time difference %.2e, event-state difference %.2e\n", K, worst_t, worst_q);
}

using Reference = saltation::testing::BackendTest;

TEST_P(Reference, TerrainBallK3MatchesClosedFormFlowWithRootFinding) { compare_with_reference<3>(backend(), 31); }
TEST_P(Reference, TerrainBallK24MatchesClosedFormFlowWithRootFinding) { compare_with_reference<24>(backend(), 32); }

SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Reference);

}  // namespace
