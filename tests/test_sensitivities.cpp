// Sensitivities through events against central differences of the whole solver and against
// closed forms; products (Jacobian, JVP, VJP) and the landing objective.
#include <cmath>
#include <random>

#include "backends.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "saltation/products.hpp"
#include "saltation/testing/check_sensitivities.hpp"
#include "terrain_samples.hpp"

using namespace saltation;
using saltation::testing::solve_on;

namespace {

Options sens_options(double t_final, double dt, int capacity) {
  Options o;
  o.t_final = t_final;
  o.dt = dt;
  o.event_capacity = capacity;
  o.sensitivities = true;
  return o;
}

// Every derivative of one trajectory against Richardson-extrapolated central differences of the
// whole solver (the installed check_sensitivities: h = 1e-5 relative, error |analytic - fd| /
// (|fd| + 1e-2) at most 1e-6), at a fixed event topology.
template <class Model>
void expect_matches_finite_differences(Backend backend, const Model& m, const std::vector<double>& theta,
                                       const Options& o) {
  const saltation::testing::SensitivityCheck check = saltation::testing::check_sensitivities(m, theta, o, backend);
  EXPECT_TRUE(check.ok(1e-6)) << check.summary();
  std::printf("  %s\n", check.summary().c_str());
}

// Five random parameter sets of a K-bump terrain, every derivative against finite differences.
template <int K>
void expect_random_sets_match_finite_differences(Backend backend, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TerrainBall<K> m;
  for (int set = 0; set < 5; ++set) {
    SCOPED_TRACE("parameter set " + std::to_string(set));
    expect_matches_finite_differences(backend, m, sample_terrain_row<K>(rng), sens_options(2.0, 1e-3, 16));
  }
}

using TerrainSensitivity = saltation::testing::BackendTest;
using BouncingBallSensitivity = saltation::testing::BackendTest;
using ThermostatSensitivity = saltation::testing::BackendTest;
using Products = saltation::testing::BackendTest;

TEST_P(TerrainSensitivity, K3AgainstFiniteDifferences) {
  expect_random_sets_match_finite_differences<3>(backend(), 2024);
}
TEST_P(TerrainSensitivity, K24AgainstFiniteDifferences) {
  expect_random_sets_match_finite_differences<24>(backend(), 77);
}

TEST_P(TerrainSensitivity, EventCapacityTerminalDerivative) {
  std::mt19937_64 rng(9);
  TerrainBall<3> m;
  const auto theta = sample_terrain_row<3>(rng);
  const Options o = sens_options(2.0, 1e-3, 2);
  const Result r = solve_on(backend(), m, {theta}, o);
  ASSERT_EQ(r.status_of(0), Status::EventCapacity);
  expect_matches_finite_differences(backend(), m, theta, o);
}

TEST_P(TerrainSensitivity, SettledTerminalDerivative) {
  std::mt19937_64 rng(9);
  TerrainBall<3> m;
  const auto theta = sample_terrain_row<3>(rng);
  Options o = sens_options(3.0, 1e-3, 32);
  o.v_stop = 3.2;
  const Result r = solve_on(backend(), m, {theta}, o);
  ASSERT_EQ(r.status_of(0), Status::Settled);
  ASSERT_GE(r.n_events[0], 2);
  expect_matches_finite_differences(backend(), m, theta, o);
}

TEST_P(BouncingBallSensitivity, SettledTerminalDerivative) {
  BouncingBall m;
  Options o = sens_options(10.0, 1e-3, 100);
  o.v_stop = 1.0;
  const std::vector<double> theta = {2.0, 0.3, 0.8};
  ASSERT_EQ(solve_on(backend(), m, {theta}, o).status_of(0), Status::Settled);
  expect_matches_finite_differences(backend(), m, theta, o);
}

TEST_P(ThermostatSensitivity, SwitchingTimeDerivativesClosedForm) {
  Thermostat m;
  const double T0 = 19, Te = 18, tau = 12, Q = 8, Tl = 20, Th = 22;
  const Result r = solve_on(backend(), m, {{T0, Te, tau, Q, Tl, Th}}, sens_options(60.0, 1e-2, 16));
  ASSERT_GE(r.n_events[0], 4);
  // t1 = tau ln(A/B), A = T0 - Ti, B = Th - Ti, Ti = Te + Q (On);
  // Off legs tau ln((Th - Te)/(Tl - Te)); later On legs tau ln((Tl - Ti)/(Th - Ti)).
  const double Ti = Te + Q;
  struct D {
    double t, tau, q, tl, th;
  };
  std::vector<D> expect;
  D cur{tau * std::log((T0 - Ti) / (Th - Ti)), std::log((T0 - Ti) / (Th - Ti)), tau * (-1 / (T0 - Ti) + 1 / (Th - Ti)),
        0.0, -tau / (Th - Ti)};
  expect.push_back(cur);
  for (int c = 1; c < r.n_events[0]; ++c) {
    if (c % 2 == 1) {  // Off leg ends at T_low
      const double L = std::log((Th - Te) / (Tl - Te));
      cur = {cur.t + tau * L, cur.tau + L, cur.q, cur.tl - tau / (Tl - Te), cur.th + tau / (Th - Te)};
    } else {  // On leg from T_low to T_high
      const double L = std::log((Tl - Ti) / (Th - Ti));
      cur = {cur.t + tau * L, cur.tau + L, cur.q + tau * (-1 / (Tl - Ti) + 1 / (Th - Ti)), cur.tl + tau / (Tl - Ti),
             cur.th - tau / (Th - Ti)};
    }
    expect.push_back(cur);
  }
  for (int c = 0; c < r.n_events[0]; ++c) {
    SCOPED_TRACE("switch " + std::to_string(c));
    EXPECT_NEAR(r.event_time(0, c), expect[c].t, 1e-10);
    EXPECT_NEAR(r.event_dt(0, c, Thermostat::Tau), expect[c].tau, 1e-10);
    EXPECT_NEAR(r.event_dt(0, c, Thermostat::Q), expect[c].q, 1e-10);
    EXPECT_NEAR(r.event_dt(0, c, Thermostat::TLow), expect[c].tl, 1e-10);
    EXPECT_NEAR(r.event_dt(0, c, Thermostat::THigh), expect[c].th, 1e-10);
  }
}

TEST_P(ThermostatSensitivity, AgainstFiniteDifferences) {
  Thermostat m;
  expect_matches_finite_differences(backend(), m, {19.0, 18.0, 12.0, 8.0, 20.0, 22.0}, sens_options(50.0, 1e-2, 16));
}

TEST_P(Products, JvpVjpConsistentWithJacobian) {
  std::mt19937_64 rng(4);
  TerrainBall<3> m;
  std::vector<std::vector<double>> theta;
  for (int i = 0; i < 6; ++i) theta.push_back(sample_terrain_row<3>(rng));
  const Result r = solve_on(backend(), m, theta, sens_options(2.0, 1e-3, 8));
  const std::size_t n = r.n, P = r.P, R = output_size(r);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(P * n), w(R * n);
  for (auto& x : v) x = u(rng);
  for (auto& x : w) x = u(rng);
  const auto Jv = jvp(r, v), wJ = vjp(r, w), J = jacobian(r);
  for (std::size_t i = 0; i < n; ++i) {
    double lhs = 0, rhs = 0, scale = 0;
    for (std::size_t k = 0; k < R; ++k) lhs += w[k * n + i] * Jv[k * n + i];
    for (std::size_t p = 0; p < P; ++p) rhs += wJ[p * n + i] * v[p * n + i];
    for (std::size_t k = 0; k < R; ++k)
      for (std::size_t p = 0; p < P; ++p) scale += std::fabs(w[k * n + i] * J[(k * P + p) * n + i] * v[p * n + i]);
    EXPECT_LE(std::fabs(lhs - rhs), 1e-12 * scale) << "trajectory " << i;
    // J v from the dense Jacobian equals jvp.
    for (std::size_t k = 0; k < R; ++k) {
      double acc = 0;
      for (std::size_t p = 0; p < P; ++p) acc += J[(k * P + p) * n + i] * v[p * n + i];
      EXPECT_NEAR(acc, Jv[k * n + i], 1e-12 * (1 + std::fabs(acc)));
    }
  }
}

TEST_P(Products, LandingObjectiveGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(12);
  TerrainBall<3> m;
  const auto theta = sample_terrain_row<3>(rng);
  LandingObjective L;
  L.impact = 1;
  L.coordinate = 0;
  L.target = 1.5;
  L.qf_weights = {0.0, 0.0, 0.5, 0.5};
  L.qf_target = {0.0, 0.0, 1.0, 0.0};
  const Options o = sens_options(2.0, 1e-3, 8);
  const ObjectiveValues ov = evaluate(L, solve_on(backend(), m, {theta}, o));
  auto value = [&](const std::vector<double>& th) { return evaluate(L, solve_on(backend(), m, {th}, o)).value[0]; };
  for (int p = 0; p < TerrainBall<3>::P; ++p) {
    const double fd = saltation::testing::central_difference(value, theta, p, 1e-6);
    EXPECT_NEAR(ov.gradient[p], fd, 1e-6 * std::fabs(fd) + 1e-8) << TerrainBall<3>::param_name(p);
  }
  // Fewer events than the impact asked for: NaN, not a silent number.
  L.impact = 7;
  EXPECT_TRUE(std::isnan(evaluate(L, solve_on(backend(), m, {theta}, o)).value[0]));
}

TEST_P(ThermostatSensitivity, StartInJumpSetAgainstFiniteDifferences) {
  // The t = 0 switch has a pinned time (dt_0/dtheta = 0); the later switches move with theta.
  Thermostat m;
  const std::vector<double> theta = {23.0, 18.0, 12.0, 8.0, 20.0, 22.0};
  const Result r = solve_on(backend(), m, {theta}, sens_options(40.0, 1e-2, 16));
  ASSERT_GE(r.n_events[0], 3);
  for (int p = 0; p < Thermostat::P; ++p) EXPECT_EQ(r.event_dt(0, 0, p), 0.0);
  // Second switch: t_1 = tau ln((T0 - Te)/(Tl - Te)).
  EXPECT_NEAR(r.event_dt(0, 1, Thermostat::T0), 12.0 / (23.0 - 18.0), 1e-10);
  EXPECT_NEAR(r.event_dt(0, 1, Thermostat::TLow), -12.0 / (20.0 - 18.0), 1e-10);
  expect_matches_finite_differences(backend(), m, theta, sens_options(40.0, 1e-2, 16));
}

SALTATION_INSTANTIATE_ON_EVERY_BACKEND(TerrainSensitivity);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(BouncingBallSensitivity);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(ThermostatSensitivity);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Products);

}  // namespace
