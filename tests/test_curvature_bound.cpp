// The screen of a model without a guard bound (the curvature bound of core/guard_trend.hpp, then
// the guards on the step's dense output) only decides which steps skip the discrete probes, the
// RK4 sub-steps from the step's start. Where it clears a step wrongly, an event the discrete
// probes find is lost. So a model solved with the screen must give the bits of the same model
// solved with the discrete probes on every step (a guard bound that never rules a step out, which
// turns the screen off), over nonlinear and affine models, rows that dip through a guard within
// one step, and several step sizes; and the bound must clear most free-flight steps.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../examples/impact_pendulum/impact_pendulum.hpp"
#include "backends.hpp"
#include "expect_bitwise.hpp"
#include "saltation/core/guard_trend.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "user_models.hpp"

namespace {

using namespace saltation;
using saltation::testing::solve_on;

// `Model` with a guard bound that never rules a step out: every step runs its discrete probes.
template <class Model>
struct DiscreteProbesOnly : Model {
  template <class Th>
  SALTATION_HD bool guard_excluded(int, int, const double*, const double*, const Th&) const {
    return false;
  }
};

// A forced, damped Duffing oscillator striking a stop at x = 1 (bench/models/duffing_stop.json
// as a C++ type): q = (x, v, tau), theta = (x0, v0, delta, alpha, beta, gamma, omega, e).
struct DuffingStop : saltation::testing::TestModel {
  static constexpr int N = 3, P = 8, M = 1;
  static constexpr const char* name = "duffing_stop";
  static constexpr bool polynomial_guards = true;
  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[0];
    q[1] = th[1];
    q[2] = S(0.0);
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th& th, S* f) const {
    f[0] = q[1];
    f[1] = -th[2] * q[1] - th[3] * q[0] - th[4] * q[0] * q[0] * q[0] + th[5] * saltation::cos(th[6] * q[2]);
    f[2] = S(1.0);
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th&) const {
    return 1.0 - q[0];
  }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* qp) const {
    qp[0] = q[0];
    qp[1] = -th[7] * q[1];
    qp[2] = q[2];
    return mode;
  }
};

// n rows uniform in [lo[p], hi[p]].
std::vector<std::vector<double>> uniform_rows(std::size_t n, const std::vector<double>& lo,
                                              const std::vector<double>& hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<double>> rows(n, std::vector<double>(lo.size()));
  for (auto& row : rows)
    for (std::size_t p = 0; p < lo.size(); ++p) row[p] = lo[p] + (hi[p] - lo[p]) * u(rng);
  return rows;
}

// The screened solve against the discrete probes on every step, forward and with sensitivities,
// at each dt; returns the events found (so that a case without events cannot pass unnoticed).
template <class Model>
long expect_screen_loses_nothing(const Model& m, const std::vector<std::vector<double>>& rows, double t_final,
                                 std::initializer_list<double> dts) {
  long events = 0;
  for (double dt : dts) {
    for (bool sens : {false, true}) {
      Options o;
      o.t_final = t_final;
      o.dt = dt;
      o.event_capacity = 64;
      o.sensitivities = sens;
      o.threads = 1;
      SCOPED_TRACE(std::string(Model::name) + " dt " + std::to_string(dt) + (sens ? " with sensitivities" : ""));
      Result screened = solve_on(Backend::Cpu, m, rows, o);
      Result discrete = solve_on(Backend::Cpu, DiscreteProbesOnly<Model>{m}, rows, o);
      saltation::testing::expect_bitwise(screened, discrete);
      for (int e : screened.n_events) events += e;
    }
  }
  return events;
}

TEST(CurvatureBound, ScreenedSolvesAreTheDiscreteProbesBitwise) {
  // x0, v0, delta, alpha, beta, gamma, omega, e (bench/probe_cost.cpp's box)
  EXPECT_GT(expect_screen_loses_nothing(DuffingStop{},
                                        uniform_rows(48, {0.0, -0.5, 0.05, 0.5, 0.5, 0.8, 1.0, 0.6},
                                                     {0.9, 0.5, 0.2, 1.5, 1.5, 2.5, 1.4, 0.9}, 1),
                                        20.0, {1e-3, 0.01, 0.05}),
            1000);
  // phi0, omega0, L, c, e, wall (bench/result_digest.cpp's box)
  EXPECT_GT(
      expect_screen_loses_nothing(pendulum::ImpactPendulum{},
                                  uniform_rows(48, {-0.5, 0.5, 0.5, 0.0, 0.5, 0.2}, {-0.1, 2.0, 2.0, 0.2, 0.9, 0.5}, 2),
                                  5.0, {1e-3, 0.02, 0.1}),
      100);
  EXPECT_GT(expect_screen_loses_nothing(BouncingBall{}, uniform_rows(48, {0.5, -1.0, 0.5}, {2.0, 1.0, 0.9}, 3), 3.0,
                                        {1e-3, 0.05}),
            100);
  EXPECT_GT(
      expect_screen_loses_nothing(
          Thermostat{}, uniform_rows(48, {18.0, 10.0, 0.5, 15.0, 19.0, 21.0}, {22.0, 15.0, 2.0, 25.0, 19.5, 21.5}, 4),
          10.0, {1e-3, 0.05}),
      100);
}

TEST(CurvatureBound, DipsWithinOneStepAreFoundAsTheDiscreteProbesFindThem) {
  // A pendulum from phi = 0 with amplitude A over a floor at -A + depth: the floor is crossed and
  // left within 2 sqrt(2 depth / sin A), from less than a probe's spacing to several steps
  // (tests/test_engine.cpp's ProbesCatchShallowDipsOfANonlinearPath, over more depths and steps).
  std::vector<std::vector<double>> rows;
  for (double depth : {1e-5, 1e-4, 6e-4, 3e-3, 2e-2})
    for (int s = 0; s < 24; ++s) {
      const double A = 0.8 + 0.7 * s / 23.0;
      rows.push_back({0.0, -std::sqrt(2.0 * (1.0 - std::cos(A))), -A + depth, 1.0});
    }
  EXPECT_GT(expect_screen_loses_nothing(saltation::testing::PendulumFloor{}, rows, 2.5, {0.2, 0.05, 1e-3}), 300);
}

// The bound itself on a guard g(t) = cos(t) + c sampled at step ends, which dips to c - 1 at
// t = pi (mod 2 pi): through the surface and out again within one step for c = 0.999 and 0.99,
// grazing it for c = 1.001. The bound clears a step only where the guard stays above 0 at 200
// points along the step, and it clears every step that stays 0.2 away from the surface.
TEST(CurvatureBound, ClearsOnlyStepsThatStayClearAndAllFarFromTheSurface) {
  int cleared = 0, far = 0;
  for (double c : {0.99, 0.999, 1.001, 1.5, 3.0})
    for (double h : {0.3, 0.1, 0.01}) {
      const auto g = [c](double t) { return std::cos(t) + c; };
      for (int n = 2; n * h < 20.0; ++n) {
        const double t = n * h;
        const double d2 = core::second_difference(g(t - h), g(t), g(t + h));
        const double d2_back = core::second_difference(g(t - 2 * h), g(t - h), g(t));
        double lowest = g(t);
        for (int s = 1; s <= 200; ++s) lowest = std::fmin(lowest, g(t + h * s / 200.0));
        const bool clear = core::curvature_clear(-1, g(t), g(t + h), d2, d2_back);
        if (clear) {
          ++cleared;
          EXPECT_GT(lowest, 0.0) << "c " << c << " h " << h << " step from " << t;
        }
        if (lowest > 0.2) far += 1 - clear;
      }
    }
  EXPECT_GT(cleared, 4000);
  EXPECT_EQ(far, 0) << "steps more than 0.2 from the surface the bound did not clear";
}

}  // namespace
