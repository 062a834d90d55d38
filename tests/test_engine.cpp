// The per-trajectory engine: RK4 order, event detection and ordering, termination statuses,
// thread-count independence, host-API input validation.
#include <cmath>
#include <cstring>
#include <random>

#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "terrain_samples.hpp"
#include "saltation/models/thermostat.hpp"
#include "test_support.hpp"

using namespace saltation;
using saltation::testing::solve_cpu;

namespace {

// A test-local model (also showing that user models need nothing from src/): a particle
// falling through two thresholds, both active, with a reflecting reset on each.
struct TwoThresholds {
  static constexpr int N = 2, P = 3, M = 2, F = 0;
  static constexpr const char* name = "two_thresholds";
  int initial_mode = 0;
  SALTATION_HD static int flow_param(int) { return -1; }
  template <class S, class Th>
  SALTATION_HD void initial_state(const Th&, S* q) const {
    q[0] = S(1.0);
    q[1] = S(-1.0);
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th&, S* f) const {
    f[0] = q[1];
    f[1] = S(0.0);
  }
  // Guard j at height theta[j]; theta[2] is the restitution.
  template <class S, class Th>
  SALTATION_HD S guard(int j, const S* q, int, const Th& th) const {
    return q[0] - th[j];
  }
  SALTATION_HD int direction(int, int) const { return -1; }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* qp) const {
    qp[0] = q[0];
    qp[1] = -th[2] * q[1];
    return mode;
  }
  template <class Th>
  SALTATION_HD int invalid_param(const Th&) const { return -1; }
  static std::string param_name(int p) { return "p" + std::to_string(p); }
  static std::string param_domain(int) { return "finite"; }
  void validate_config() const {}
};

Options opts(double t_final, double dt, int capacity = 32) {
  Options o;
  o.t_final = t_final;
  o.dt = dt;
  o.event_capacity = capacity;
  return o;
}


}  // namespace

TEST(Rk4, ObservedOrderFourOnSmoothFlow) {
  // Terrain ball with drag, high above flat ground: x(t), y(t) have closed forms.
  TerrainBall<0> m;
  m.x0 = 0.0;
  m.y0 = 100.0;
  m.gravity = 9.81;
  const double vx0 = 2.0, vy0 = 1.0, c = 1.5, T = 2.0;
  auto error = [&](double dt) {
    const Result r = solve_cpu(m, {{vx0, vy0, c, 0.5, 0.1}}, opts(T, dt));
    const double E = std::exp(-c * T), g = 9.81;
    const double x = vx0 * (1.0 - E) / c;
    const double y = 100.0 + (vy0 + g / c) * (1.0 - E) / c - g * T / c;
    const double vx = vx0 * E, vy = (vy0 + g / c) * E - g / c;
    return std::fabs(r.qf_of(0, 0) - x) + std::fabs(r.qf_of(0, 1) - y) + std::fabs(r.qf_of(0, 2) - vx) +
           std::fabs(r.qf_of(0, 3) - vy);
  };
  const double e1 = error(0.1), e2 = error(0.05), e3 = error(0.025);
  EXPECT_NEAR(std::log2(e1 / e2), 4.0, 0.2);
  EXPECT_NEAR(std::log2(e2 / e3), 4.0, 0.2);
}

TEST(TerrainBall, ImpactsAndFinalStateStableUnderStepRefinement) {
  std::mt19937_64 rng(7);
  TerrainBall<3> m;
  std::vector<std::vector<double>> theta;
  for (int i = 0; i < 4; ++i) theta.push_back(sample_terrain_row<3>(rng));
  const Result a = solve_cpu(m, theta, opts(2.0, 1e-3));
  const Result b = solve_cpu(m, theta, opts(2.0, 5e-4));
  for (std::size_t i = 0; i < theta.size(); ++i) {
    ASSERT_EQ(a.status_of(i), Status::Finished);
    ASSERT_GE(a.n_events[i], 2) << "row " << i << " should bounce";
    ASSERT_EQ(a.n_events[i], b.n_events[i]);
    for (int c = 0; c < a.n_events[i]; ++c) {
      EXPECT_NEAR(a.event_time(i, c), b.event_time(i, c), 1e-8);
      for (int k = 0; k < 4; ++k) EXPECT_NEAR(a.event_q(i, c, k), b.event_q(i, c, k), 1e-8);
    }
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(a.qf_of(i, k), b.qf_of(i, k), 1e-8);
  }
}

TEST(TerrainBall, ImpactLiesOnTerrainAndResetFollowsLocalFrame) {
  std::mt19937_64 rng(11);
  TerrainBall<3> m;
  const std::vector<double> th = sample_terrain_row<3>(rng);
  const Result r = solve_cpu(m, {th}, opts(3.0, 1e-3));
  ASSERT_GE(r.n_events[0], 1);
  const core::RowParams view{th.data(), 1};
  for (int c = 0; c < r.n_events[0]; ++c) {
    double h, dh;
    const double x = r.event_q(0, c, 0);
    m.terrain(x, view, h, dh);
    EXPECT_NEAR(r.event_q(0, c, 1), h, 1e-12);
    const double nrm = std::sqrt(1 + dh * dh), nx = -dh / nrm, ny = 1 / nrm;
    const double vn_minus = r.event_q(0, c, 2) * nx + r.event_q(0, c, 3) * ny;
    const double vn_plus = r.event_q_plus(0, c, 2) * nx + r.event_q_plus(0, c, 3) * ny;
    const double vt_minus = r.event_q(0, c, 2) * ny * 1 + r.event_q(0, c, 3) * dh / nrm;
    const double vt_plus = r.event_q_plus(0, c, 2) / nrm + r.event_q_plus(0, c, 3) * dh / nrm;
    EXPECT_NEAR(vn_plus, -th[3] * vn_minus, 1e-12);
    EXPECT_NEAR(vt_plus, (1 - th[4]) * vt_minus, 1e-12);
  }
}

TEST(Status, FinishedReturnsStateAtTFinal) {
  BouncingBall m;
  const Result r = solve_cpu(m, {{10.0, 0.0, 0.5}}, opts(1.0, 1e-3));
  EXPECT_EQ(r.status_of(0), Status::Finished);
  EXPECT_EQ(r.t_end[0], 1.0);
  EXPECT_NEAR(r.qf_of(0, 0), 10.0 - 0.5 * 9.81, 1e-12);
  EXPECT_NEAR(r.qf_of(0, 1), -9.81, 1e-12);
}

TEST(Status, EventCapacityReturnsPreImpactStateOfTruncatingCrossing) {
  BouncingBall m;
  const std::vector<std::vector<double>> th = {{2.0, 0.0, 0.8}};
  const Result full = solve_cpu(m, th, opts(6.0, 1e-3, 10));
  const Result cut = solve_cpu(m, th, opts(6.0, 1e-3, 2));
  ASSERT_EQ(cut.status_of(0), Status::EventCapacity);
  EXPECT_EQ(cut.n_events[0], 2);
  EXPECT_EQ(cut.t_end[0], full.event_time(0, 2));
  for (int k = 0; k < 2; ++k) EXPECT_EQ(cut.qf_of(0, k), full.event_q(0, 2, k));
  EXPECT_LT(cut.qf_of(0, 1), 0.0);  // still falling: pre-impact
}

TEST(Status, SettledReturnsPostImpactState) {
  BouncingBall m;
  Options o = opts(10.0, 1e-3, 100);
  o.v_stop = 1.0;
  const Result r = solve_cpu(m, {{2.0, 0.0, 0.8}}, o);
  ASSERT_EQ(r.status_of(0), Status::Settled);
  const int last = r.n_events[0] - 1;
  EXPECT_EQ(r.t_end[0], r.event_time(0, last));
  for (int k = 0; k < 2; ++k) EXPECT_EQ(r.qf_of(0, k), r.event_q_plus(0, last, k));
  EXPECT_LT(-r.event_q(0, last, 1), 1.0);      // met the ground slower than v_stop
  EXPECT_GE(-r.event_q(0, last - 1, 1), 1.0);  // the impact before was still faster
}

TEST(Status, NonFiniteReturnsLastFiniteState) {
  TerrainBall<0> m;
  m.y0 = 5.0;
  const Result r = solve_cpu(m, {{1.0, 0.0, 1e300, 0.5, 0.1}}, opts(1.0, 1e-2));
  ASSERT_EQ(r.status_of(0), Status::NonFinite);
  EXPECT_EQ(r.t_end[0], 0.0);
  EXPECT_EQ(r.qf_of(0, 1), 5.0);
  EXPECT_EQ(r.qf_of(0, 2), 1.0);
}

TEST(Status, InvalidRowsMarkedWhenAsked) {
  BouncingBall m;
  Options o = opts(1.0, 1e-3);
  o.mark_invalid_rows = true;
  const Result r = solve_cpu(m, {{1.0, 0.0, 0.5}, {1.0, 0.0, 1.5}, {-1.0, 0.0, 0.5}}, o);
  EXPECT_EQ(r.status_of(0), Status::Finished);
  EXPECT_EQ(r.status_of(1), Status::InvalidInput);
  EXPECT_EQ(r.status_of(2), Status::InvalidInput);
  EXPECT_EQ(r.n_events[1], 0);
}

TEST(Status, ZenoOnChatterWithZeroRestitution) {
  // e = 0 on a slope: the ball can only chatter down the surface; never integrates below it.
  TerrainBall<1> m;
  m.x0 = -0.5;
  m.y0 = 0.7;
  Options o = opts(2.0, 1e-3, 10000);
  const Result r = solve(m, saltation::testing::rows({{0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.5}}, 8), o, Backend::Cpu);
  EXPECT_EQ(r.status_of(0), Status::Zeno);
  double h, dh;
  const std::vector<double> th = {0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.5};
  m.terrain(r.qf_of(0, 0), core::RowParams{th.data(), 1}, h, dh);
  EXPECT_GE(r.qf_of(0, 1) - h, -1e-12);
}

TEST(Events, ProbesCatchBumpsNarrowerThanAStep) {
  // Flat flight at y = 0.5 with vx = 10 (no gravity) over one bump of height 1 and width w.
  // Each step covers 0.1 in x. A bump is "caught" at width w when it is detected for every
  // placement of its centre relative to the step grid.
  TerrainBall<1> m;
  m.x0 = 0.0;
  m.y0 = 0.5;
  m.gravity = 0.0;
  const double dt = 0.01, step_x = 0.1;
  const int placements = 16;
  auto caught_everywhere = [&](double w, int probes) {
    std::vector<std::vector<double>> theta;
    for (int s = 0; s < placements; ++s) theta.push_back({10.0, 0.0, 0.0, 0.5, 0.0, 1.0, 1.0 + step_x * s / placements, w});
    Options o = opts(0.3, dt, 4);
    o.probes = probes;
    const Result r = solve(m, saltation::testing::rows(theta, 8), o, Backend::Cpu);
    for (int s = 0; s < placements; ++s)
      if (r.n_events[s] == 0) return false;
    return true;
  };
  auto narrowest = [&](int probes) {
    double lo = 1e-4, hi = 0.2;  // missed at lo, caught at hi
    EXPECT_FALSE(caught_everywhere(lo, probes));
    EXPECT_TRUE(caught_everywhere(hi, probes));
    for (int it = 0; it < 30; ++it) {
      const double mid = std::sqrt(lo * hi);
      (caught_everywhere(mid, probes) ? hi : lo) = mid;
    }
    return hi;
  };
  // A bump of width 0.02 placed between two step ends: missed without probes, caught with them.
  std::vector<std::vector<double>> one = {{10.0, 0.0, 0.0, 0.5, 0.0, 1.0, 1.05, 0.02}};
  Options o0 = opts(0.3, dt, 4), o3 = o0;
  o0.probes = 0;
  EXPECT_EQ(solve(m, saltation::testing::rows(one, 8), o0, Backend::Cpu).n_events[0], 0);
  EXPECT_GE(solve(m, saltation::testing::rows(one, 8), o3, Backend::Cpu).n_events[0], 1);
  const double w0 = narrowest(0), w3 = narrowest(3);
  RecordProperty("narrowest_width_no_probes", std::to_string(w0));
  RecordProperty("narrowest_width_3_probes", std::to_string(w3));
  std::printf("narrowest bump width caught: %.5f without probes, %.5f with 3 probes (ratio %.2f)\n", w0, w3, w0 / w3);
  EXPECT_GE(w0 / w3, 2.0);
}

TEST(Events, GrazingImpactsAreFlagged) {
  // Horizontal flight (no gravity) into a bump of height 1 and width 0.2 at x = 1: at y = 0.9999
  // the ball meets the bump near its top, where the terrain is almost parallel to the velocity
  // (|g_q . f| / (|g_q| |f|) ~ 0.07); at y = 0.3 it hits the flank (~ 0.9).
  TerrainBall<1> m;
  m.gravity = 0.0;
  Options o = opts(2.0, 1e-3, 2);
  o.graze_tol = 0.1;
  std::vector<Result> rs;
  for (double y0 : {0.9999, 0.3}) {
    m.y0 = y0;
    rs.push_back(solve(m, saltation::testing::rows({{1.0, 0.0, 0.0, 0.5, 0.0, 1.0, 1.0, 0.2}}, 8), o, Backend::Cpu));
  }
  ASSERT_GE(rs[0].n_events[0], 1);
  ASSERT_GE(rs[1].n_events[0], 1);
  EXPECT_EQ(rs[0].ev_flags[0] & EventGrazing, EventGrazing);
  EXPECT_EQ(rs[1].ev_flags[0] & EventGrazing, 0);
}

TEST(Events, EarliestOfTwoCrossingsInOneStepWins) {
  TwoThresholds m;
  // Moving down at speed 1 from x = 1 with dt = 0.6: guard 1 (x = 0.5) is crossed before guard 0 (x = 0.45)
  // within the first step.
  Options o = opts(0.6, 0.6, 1);
  o.probes = 0;
  const Result r = solve(m, saltation::testing::rows({{0.45, 0.5, 1.0}}, 3), o, Backend::Cpu);
  ASSERT_GE(r.n_events[0], 1);
  EXPECT_EQ(r.ev_guard[0], 1);
  EXPECT_NEAR(r.event_time(0, 0), 0.5, 1e-12);
}

TEST(Events, ExactTiesGoToTheLowerGuardIndex) {
  TwoThresholds m;
  Options o = opts(0.6, 0.6, 1);
  const Result r = solve(m, saltation::testing::rows({{0.5, 0.5, 1.0}, {0.5, 0.5, 1.0}}, 3), o, Backend::Cpu);
  for (int i = 0; i < 2; ++i) {
    ASSERT_GE(r.n_events[i], 1);
    EXPECT_EQ(r.ev_guard[i], 0);
    EXPECT_NEAR(r.event_time(i, 0), 0.5, 1e-12);
  }
}

TEST(Thermostat, SwitchingTimesClosedForm) {
  Thermostat m;  // starts ON
  const double T0 = 19, Te = 18, tau = 12, Q = 8, Tl = 20, Th = 22;
  const Result r = solve_cpu(m, {{T0, Te, tau, Q, Tl, Th}}, opts(48.0, 1e-2));
  const double t1 = tau * std::log((T0 - Te - Q) / (Th - Te - Q));
  const double off = tau * std::log((Th - Te) / (Tl - Te));
  const double on = tau * std::log((Tl - Te - Q) / (Th - Te - Q));
  std::vector<double> expected = {t1};
  while (expected.size() < 8) expected.push_back(expected.back() + (expected.size() % 2 ? off : on));
  ASSERT_GE(r.n_events[0], 5);
  for (int c = 0; c < r.n_events[0]; ++c) {
    EXPECT_NEAR(r.event_time(0, c), expected[c], 1e-10) << "switch " << c;
    EXPECT_EQ(r.ev_guard[c * r.n], c % 2 == 0 ? 0 : 1);
    EXPECT_EQ(r.event_q(0, c, 0), r.event_q_plus(0, c, 0));  // a switch leaves T unchanged
  }
}

TEST(Thermostat, InitialModeOffFromConfig) {
  Thermostat m;
  m.initial_mode = Thermostat::OFF;
  const Result r = solve_cpu(m, {{21.0, 18.0, 12.0, 8.0, 20.0, 22.0}}, opts(10.0, 1e-2));
  ASSERT_GE(r.n_events[0], 1);
  EXPECT_EQ(r.ev_guard[0], 1);
  EXPECT_NEAR(r.event_time(0, 0), 12.0 * std::log(3.0 / 2.0), 1e-10);
}

TEST(Thermostat, StartInJumpSetSwitchesAtTimeZero) {
  // Seed 003: ON with T >= T_high switches OFF; OFF with T <= T_low switches ON.
  const double Te = 18, tau = 12, Q = 8, Tl = 20, Th = 22;
  Thermostat on;  // starts ON
  const Result hot = solve_cpu(on, {{23.0, Te, tau, Q, Tl, Th}}, opts(20.0, 1e-2));
  ASSERT_GE(hot.n_events[0], 2);
  EXPECT_EQ(hot.event_time(0, 0), 0.0);
  EXPECT_EQ(hot.ev_guard[0], 0);
  EXPECT_NEAR(hot.event_time(0, 1), tau * std::log((23.0 - Te) / (Tl - Te)), 1e-10);  // cools to T_low
  Thermostat off;
  off.initial_mode = Thermostat::OFF;
  const Result cold = solve_cpu(off, {{19.0, Te, tau, Q, Tl, Th}}, opts(20.0, 1e-2));
  ASSERT_GE(cold.n_events[0], 2);
  EXPECT_EQ(cold.event_time(0, 0), 0.0);
  EXPECT_EQ(cold.ev_guard[0], 1);
  EXPECT_NEAR(cold.event_time(0, 1), tau * std::log((19.0 - Te - Q) / (Th - Te - Q)), 1e-10);  // heats to T_high
}

TEST(Cpu, ResultsIdenticalForOneTwoFourThreads) {
  std::mt19937_64 rng(3);
  TerrainBall<3> m;
  std::vector<std::vector<double>> theta;
  for (int i = 0; i < 40; ++i) theta.push_back(sample_terrain_row<3>(rng));
  Options o = opts(3.0, 1e-3, 8);
  o.sensitivities = true;
  std::vector<Result> rs;
  for (int threads : {1, 2, 4}) {
    o.threads = threads;
    rs.push_back(solve_cpu(m, theta, o));
  }
  for (int k = 1; k < 3; ++k) {
    EXPECT_EQ(rs[0].status, rs[k].status);
    EXPECT_EQ(rs[0].n_events, rs[k].n_events);
    EXPECT_EQ(0, std::memcmp(rs[0].qf.data(), rs[k].qf.data(), rs[0].qf.size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(rs[0].ev_q.data(), rs[k].ev_q.data(), rs[0].ev_q.size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(rs[0].dqf.data(), rs[k].dqf.data(), rs[0].dqf.size() * sizeof(double)));
  }
}

TEST(Sensitivities, ForwardStatesIdenticalWithAndWithoutSensitivities) {
  std::mt19937_64 rng(5);
  TerrainBall<3> m;
  std::vector<std::vector<double>> theta;
  for (int i = 0; i < 8; ++i) theta.push_back(sample_terrain_row<3>(rng));
  Options o = opts(3.0, 1e-3, 8);
  const Result a = solve_cpu(m, theta, o);
  o.sensitivities = true;
  const Result b = solve_cpu(m, theta, o);
  EXPECT_EQ(a.n_events, b.n_events);
  EXPECT_EQ(a.qf, b.qf);
  EXPECT_EQ(a.ev_t, b.ev_t);
  EXPECT_EQ(a.ev_q, b.ev_q);
}

TEST(HostApi, BadInputNamesParameterAndRow) {
  TerrainBall<3> m;
  std::mt19937_64 rng(1);
  std::vector<std::vector<double>> theta = {sample_terrain_row<3>(rng), sample_terrain_row<3>(rng), sample_terrain_row<3>(rng)};
  auto expect_bad = [&](std::vector<std::vector<double>> th, const char* param, long row, Options o = opts(1.0, 1e-3)) {
    try {
      solve_cpu(m, th, o);
      ADD_FAILURE() << "no error for " << param;
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.parameter(), param) << e.what();
      EXPECT_EQ(e.row(), row) << e.what();
    }
  };
  auto t = theta;
  t[1][3] = 1.5;
  expect_bad(t, "e", 1);
  t = theta;
  t[2][4] = -0.1;
  expect_bad(t, "mu", 2);
  t = theta;
  t[0][5 + 3 * 1 + 2] = 0.0;
  expect_bad(t, "w_2", 0);
  t = theta;
  t[2][6] = std::nan("");
  expect_bad(t, "b_1", 2);
  t = theta;
  t[1].pop_back();
  expect_bad(t, "theta", 1);
  Options o = opts(1.0, 0.0);
  expect_bad(theta, "options.dt", -1, o);
  o = opts(1.0, -1e-3);
  expect_bad(theta, "options.dt", -1, o);
  o = opts(std::nan(""), 1e-3);
  expect_bad(theta, "options.t_final", -1, o);
  m.y0 = -1.0;  // below flat-ish terrain
  expect_bad(theta, "initial state", 0);
}

TEST(HostApi, CudaBackendWithoutDeviceIsATypedError) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  BouncingBall m;
  EXPECT_THROW(solve(m, saltation::testing::rows({{1.0, 0.0, 0.5}}, 3), opts(1.0, 1e-3), Backend::Cuda), CudaError);
  // Auto falls back to the CPU.
  EXPECT_NO_THROW(solve(m, saltation::testing::rows({{1.0, 0.0, 0.5}}, 3), opts(1.0, 1e-3), Backend::Auto));
}

TEST(HostApi, UserModelWithoutCudaDriverSaysSo) {
  TwoThresholds m;
  if (!cuda_device_available()) GTEST_SKIP() << "needs a device to reach the driver check";
  EXPECT_THROW(solve(m, saltation::testing::rows({{0.5, 0.5, 1.0}}, 3), opts(1.0, 0.1), Backend::Cuda), CudaError);
}

TEST(HostApi, ProgressIsMonotoneAndEndsAtTotal) {
  BouncingBall m;
  std::vector<std::vector<double>> theta(500, {1.0, 0.0, 0.5});
  std::vector<std::size_t> seen;
  const Progress progress = [&](std::size_t done, std::size_t total) {
    EXPECT_EQ(total, 500u);
    seen.push_back(done);
  };
  solve(m, saltation::testing::rows(theta, 3), opts(1.0, 1e-3), Backend::Cpu, progress);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 500u);
  for (std::size_t k = 1; k < seen.size(); ++k) EXPECT_LT(seen[k - 1], seen[k]);
  EXPECT_LE(seen.size(), 102u);
}

TEST(TerrainBall, FlatGroundBouncesLikeTheBouncingBall) {
  // K = 0, no drag: the vertical motion is the bouncing ball's, whatever the horizontal speed.
  TerrainBall<0> terrain;
  terrain.y0 = 2.0;
  BouncingBall ball;
  const Result a = solve_cpu(terrain, {{1.5, 0.0, 0.0, 0.8, 0.0}}, opts(4.0, 1e-3, 16));
  const Result b = solve_cpu(ball, {{2.0, 0.0, 0.8}}, opts(4.0, 1e-3, 16));
  ASSERT_GE(b.n_events[0], 4);
  ASSERT_EQ(a.n_events[0], b.n_events[0]);
  for (int c = 0; c < a.n_events[0]; ++c) EXPECT_NEAR(a.event_time(0, c), b.event_time(0, c), 1e-12);
  EXPECT_NEAR(a.qf_of(0, 1), b.qf_of(0, 0), 1e-12);
}
