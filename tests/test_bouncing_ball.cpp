// Bouncing ball against its closed forms: impact times t_n = t1 (1 + 2 sum e^j), their derivatives, thrown starts.
#include <cmath>

#include "backends.hpp"
#include "saltation/models/bouncing_ball.hpp"

using namespace saltation;
using saltation::testing::solve_on;

namespace {

double drop_impact_time(double h0, double g, double e, int n) {  // n >= 1
  const double t1 = std::sqrt(2.0 * h0 / g);
  double s = 0.0;
  for (int j = 1; j < n; ++j) s += std::pow(e, j);
  return t1 * (1.0 + 2.0 * s);
}

Options ball_options(double t_final, double dt) {
  Options o;
  o.t_final = t_final;
  o.dt = dt;
  o.event_capacity = 64;
  return o;
}

// The suites carry the model's name, so the model is spelled saltation::BouncingBall below.
using BouncingBall = saltation::testing::BackendTest;
using BouncingBallSensitivity = saltation::testing::BackendTest;

TEST_P(BouncingBall, DroppedFromRestFirstTenImpactTimes) {
  saltation::BouncingBall m;
  m.gravity = 9.81;
  const double h0 = 2.0, e = 0.8;
  const Result r = solve_on(backend(), m, {{h0, 0.0, e}}, ball_options(6.0, 1e-3));
  ASSERT_GE(r.n_events[0], 10);
  for (int n = 1; n <= 10; ++n)
    EXPECT_NEAR(r.event_time(0, n - 1), drop_impact_time(h0, 9.81, e, n), 1e-10) << "impact " << n;
  // Pre-impact speed of impact n is sqrt(2 g h0) e^(n-1); the reset flips and scales it.
  const double v1 = std::sqrt(2.0 * 9.81 * h0);
  for (int n = 1; n <= 10; ++n) {
    EXPECT_NEAR(r.event_q(0, n - 1, 1), -v1 * std::pow(e, n - 1), 1e-9);
    EXPECT_NEAR(r.event_q_plus(0, n - 1, 1), v1 * std::pow(e, n), 1e-9);
    EXPECT_NEAR(r.event_q(0, n - 1, 0), 0.0, 1e-12);
  }
}

TEST_P(BouncingBall, ThrownUpwardImpactTimes) {
  saltation::BouncingBall m;
  m.gravity = 9.81;
  const double g = 9.81, h0 = 1.0, v0 = 3.0, e = 0.7;
  const Result r = solve_on(backend(), m, {{h0, v0, e}}, ball_options(5.0, 1e-3));
  const double t1 = (v0 + std::sqrt(v0 * v0 + 2.0 * g * h0)) / g;
  const double V = std::sqrt(v0 * v0 + 2.0 * g * h0);  // speed at the first impact
  double t = t1;
  ASSERT_GE(r.n_events[0], 10);
  for (int n = 1; n <= 10; ++n) {
    EXPECT_NEAR(r.event_time(0, n - 1), t, 1e-10) << "impact " << n;
    t += 2.0 * V * std::pow(e, n) / g;
  }
}

TEST_P(BouncingBall, ZenoStopsNearAccumulationTime) {
  saltation::BouncingBall m;
  const double g = 9.81, h0 = 1.0, e = 0.5;
  Options o = ball_options(10.0, 1e-3);
  o.event_capacity = 10000;
  const Result r = solve_on(backend(), m, {{h0, 0.0, e}}, o);
  ASSERT_EQ(r.status_of(0), Status::Zeno);
  const double t_inf = std::sqrt(2.0 * h0 / g) * (1.0 + e) / (1.0 - e);
  EXPECT_LT(r.t_end[0], t_inf);
  EXPECT_NEAR(r.t_end[0], t_inf, 1e-2);
  // qf is the post-event state of the last event.
  const int last = r.n_events[0] - 1;
  EXPECT_EQ(r.qf_of(0, 1), r.event_q_plus(0, last, 1));
  EXPECT_EQ(r.t_end[0], r.event_time(0, last));
}

TEST_P(BouncingBallSensitivity, DropImpactTimeDerivativesClosedForm) {
  saltation::BouncingBall m;
  const double g = 9.81, h0 = 2.0, e = 0.8;
  Options o = ball_options(6.0, 1e-3);
  o.sensitivities = true;
  m.gravity = g;
  const Result r = solve_on(backend(), m, {{h0, 0.0, e}}, o);
  ASSERT_GE(r.n_events[0], 6);
  const double t1 = std::sqrt(2.0 * h0 / g);
  for (int n = 1; n <= 6; ++n) {
    double dt_de = 0.0;
    for (int j = 1; j < n; ++j) dt_de += 2.0 * t1 * j * std::pow(e, j - 1);
    const double dt_dh0 = drop_impact_time(h0, g, e, n) / (2.0 * h0);
    EXPECT_NEAR(r.event_dt(0, n - 1, saltation::BouncingBall::E), dt_de, 1e-8) << "impact " << n;
    EXPECT_NEAR(r.event_dt(0, n - 1, saltation::BouncingBall::H0), dt_dh0, 1e-8) << "impact " << n;
  }
}

// The seed's check: h0 = 50, g = 9.8, e = 0.8, height at t = 15 (between the 3rd and 4th impacts)
// and its derivative with respect to e, against central differences of the whole solver.
TEST_P(BouncingBallSensitivity, HeightAtFifteenSecondsDerivativeInE) {
  saltation::BouncingBall m;
  m.gravity = 9.8;
  Options o = ball_options(15.0, 1e-3);
  o.sensitivities = true;
  const std::vector<double> theta = {50.0, 0.0, 0.8};
  const Result r = solve_on(backend(), m, {theta}, o);
  ASSERT_EQ(r.status_of(0), Status::Finished);
  ASSERT_EQ(r.n_events[0], 3);
  Options fwd = o;
  fwd.sensitivities = false;
  auto height = [&](const std::vector<double>& th) {
    const Result rr = solve_on(backend(), m, {th}, fwd);
    EXPECT_EQ(rr.n_events[0], 3);
    return rr.qf_of(0, 0);
  };
  const double fd = saltation::testing::central_difference(height, theta, saltation::BouncingBall::E, 1e-6);
  EXPECT_NEAR(r.dqf_of(0, 0, saltation::BouncingBall::E), fd, 1e-6 * std::fabs(fd));
  // Closed form: after the 3rd impact h = v3 s - g s^2 / 2 with s = t - t3(e), v3 = V e^3.
  const double t1 = std::sqrt(100.0 / 9.8), e = 0.8, V = 9.8 * t1;
  const double t3 = t1 * (1.0 + 2.0 * (e + e * e));
  const double v3 = V * e * e * e, s = 15.0 - t3;
  const double closed = (3.0 * V * e * e) * s - v3 * 2.0 * t1 * (1.0 + 2.0 * e) + 9.8 * s * 2.0 * t1 * (1.0 + 2.0 * e);
  EXPECT_NEAR(r.dqf_of(0, 0, saltation::BouncingBall::E), closed, 1e-6 * std::fabs(closed));
  // The event-time terms matter: the derivative of v3 alone (3 V e^2 s) is far off.
  EXPECT_GT(std::fabs(closed - 3.0 * V * e * e * s), 0.2 * std::fabs(closed));
}

SALTATION_INSTANTIATE_ON_EVERY_BACKEND(BouncingBall);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(BouncingBallSensitivity);

}  // namespace
