// The normal speeds of recorded events and their derivatives (impact_speed.hpp), which settling's
// boundary term reads: against the ball's |v-| and its exact derivative, and against central
// differences of whole solves of the terrain ball, whose guard is curved.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "saltation/impact_speed.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_samples.hpp"

using namespace saltation;

namespace {

Options recording(double t_final) {
  Options o;
  o.t_final = t_final;
  o.dt = 1e-3;
  o.event_capacity = 8;
  o.sensitivities = true;
  return o;
}

// Speeds and slopes of trajectory 0 of `r` by every parameter.
template <class Model>
void speeds_of(const Model& m, const Result& r, const Batch& batch, std::vector<double>& speed,
               std::vector<double>& slope) {
  std::vector<int> parameters;
  for (int p = 0; p < Model::P; ++p) parameters.push_back(p);
  speed.assign(r.C, 0.0);
  slope.assign(static_cast<std::size_t>(r.C) * Model::P, 0.0);
  impact_speeds(m, r, 0, RowParams{batch.theta.data(), batch.n}, parameters, speed.data(), slope.data());
}

}  // namespace

// The ball meets the ground at |v-|: the speed is that, its derivative -dv-/dtheta (v- < 0).
TEST(ImpactSpeed, BallSpeedIsTheImpactVelocity) {
  const BouncingBall ball{};
  const Batch batch = Batch::from_rows({{1.3, 0.4, 0.8}}, BouncingBall::P);
  const Result r = solve(ball, batch, recording(3.0), Backend::Cpu);
  ASSERT_GE(r.n_events[0], 3);
  std::vector<double> speed, slope;
  speeds_of(ball, r, batch, speed, slope);
  for (int c = 0; c < r.n_events[0]; ++c) {
    EXPECT_EQ(speed[c], std::abs(r.event_q(0, c, 1)));
    for (int p = 0; p < BouncingBall::P; ++p) {
      const double exact = -r.event_dq(0, c, 1, p);
      EXPECT_NEAR(slope[c * BouncingBall::P + p], exact, 1e-9 * (1.0 + std::abs(exact))) << "event " << c << " p " << p;
    }
  }
}

// On a curved terrain the speed |g_q . f-| / |g_q| moves with the event's state and the bumps'
// parameters: every slope against central differences of the speed over whole solves at theta +- d.
TEST(ImpactSpeed, TerrainSlopesAgainstFiniteDifferencesOfWholeSolves) {
  constexpr int K = 3;
  using Model = TerrainBall<K>;
  const Model terrain{};
  std::mt19937_64 rng(5);
  for (int row = 0; row < 3; ++row) {
    const std::vector<double> theta = sample_terrain_row<K>(rng);
    const Batch batch = Batch::from_rows({theta}, Model::P);
    const Options o = recording(1.5);
    const Result r = solve(terrain, batch, o, Backend::Cpu);
    std::vector<double> speed, slope;
    speeds_of(terrain, r, batch, speed, slope);
    const int events = std::min(r.n_events[0], r.C);
    ASSERT_GE(events, 2);
    for (int p = 0; p < Model::P; ++p) {
      const double d = 1e-6 * std::max(1.0, std::abs(theta[p]));
      std::vector<double> moved_speed[2], unused;
      for (int side = 0; side < 2; ++side) {
        std::vector<double> moved = theta;
        moved[p] += side == 0 ? d : -d;
        const Batch b = Batch::from_rows({moved}, Model::P);
        const Result rm = solve(terrain, b, o, Backend::Cpu);
        ASSERT_EQ(rm.n_events[0], r.n_events[0]) << "the same events at theta +- d";
        speeds_of(terrain, rm, b, moved_speed[side], unused);
      }
      for (int c = 0; c < events; ++c) {
        const double fd = (moved_speed[0][c] - moved_speed[1][c]) / (2.0 * d);
        EXPECT_NEAR(slope[c * Model::P + p], fd, 1e-5 * (std::abs(fd) + 1e-2))
            << "row " << row << " event " << c << " p " << p;
      }
    }
  }
}
