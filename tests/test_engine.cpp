// The per-trajectory engine: RK4 order, event detection and ordering, termination statuses,
// thread-count independence, host-API input validation.
#include <cmath>
#include <cstring>
#include <random>

#include "backends.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "terrain_samples.hpp"
#include "user_models.hpp"

using namespace saltation;
using saltation::testing::solve_on;
using saltation::testing::TwoThresholds;

namespace {

Options opts(double t_final, double dt, int capacity = 32) {
  Options o;
  o.t_final = t_final;
  o.dt = dt;
  o.event_capacity = capacity;
  return o;
}

// The suites carry the names of models and of saltation::Status, so those are spelled with
// saltation:: below.
using Rk4 = saltation::testing::BackendTest;
using TerrainBall = saltation::testing::BackendTest;
using Status = saltation::testing::BackendTest;
using Events = saltation::testing::BackendTest;
using Thermostat = saltation::testing::BackendTest;
using Sensitivities = saltation::testing::BackendTest;
using HostApi = saltation::testing::BackendTest;

TEST_P(Rk4, ObservedOrderFourOnSmoothFlow) {
  // Terrain ball with drag, high above flat ground: x(t), y(t) have closed forms.
  saltation::TerrainBall<0> m;
  m.x0 = 0.0;
  m.y0 = 100.0;
  m.gravity = 9.81;
  const double vx0 = 2.0, vy0 = 1.0, c = 1.5, T = 2.0;
  auto error = [&](double dt) {
    const Result r = solve_on(backend(), m, {{vx0, vy0, c, 0.5, 0.1}}, opts(T, dt));
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

TEST_P(TerrainBall, ImpactsAndFinalStateStableUnderStepRefinement) {
  std::mt19937_64 rng(7);
  saltation::TerrainBall<3> m;
  std::vector<std::vector<double>> theta;
  for (int i = 0; i < 4; ++i) theta.push_back(sample_terrain_row<3>(rng));
  const Result a = solve_on(backend(), m, theta, opts(2.0, 1e-3));
  const Result b = solve_on(backend(), m, theta, opts(2.0, 5e-4));
  for (std::size_t i = 0; i < theta.size(); ++i) {
    ASSERT_EQ(a.status_of(i), saltation::Status::Finished);
    ASSERT_GE(a.n_events[i], 2) << "row " << i << " should bounce";
    ASSERT_EQ(a.n_events[i], b.n_events[i]);
    for (int c = 0; c < a.n_events[i]; ++c) {
      EXPECT_NEAR(a.event_time(i, c), b.event_time(i, c), 1e-8);
      for (int k = 0; k < 4; ++k) EXPECT_NEAR(a.event_q(i, c, k), b.event_q(i, c, k), 1e-8);
    }
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(a.qf_of(i, k), b.qf_of(i, k), 1e-8);
  }
}

TEST_P(TerrainBall, ImpactLiesOnTerrainAndResetFollowsLocalFrame) {
  std::mt19937_64 rng(11);
  saltation::TerrainBall<3> m;
  const std::vector<double> th = sample_terrain_row<3>(rng);
  const Result r = solve_on(backend(), m, {th}, opts(3.0, 1e-3));
  ASSERT_GE(r.n_events[0], 1);
  const RowParams view{th.data(), 1};
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

TEST_P(Status, FinishedReturnsStateAtTFinal) {
  BouncingBall m;
  const Result r = solve_on(backend(), m, {{10.0, 0.0, 0.5}}, opts(1.0, 1e-3));
  EXPECT_EQ(r.status_of(0), saltation::Status::Finished);
  EXPECT_EQ(r.t_end[0], 1.0);
  EXPECT_NEAR(r.qf_of(0, 0), 10.0 - 0.5 * 9.81, 1e-12);
  EXPECT_NEAR(r.qf_of(0, 1), -9.81, 1e-12);
}

TEST_P(Status, EventCapacityReturnsPreImpactStateOfTruncatingCrossing) {
  BouncingBall m;
  const std::vector<std::vector<double>> th = {{2.0, 0.0, 0.8}};
  const Result full = solve_on(backend(), m, th, opts(6.0, 1e-3, 10));
  const Result cut = solve_on(backend(), m, th, opts(6.0, 1e-3, 2));
  ASSERT_EQ(cut.status_of(0), saltation::Status::EventCapacity);
  EXPECT_EQ(cut.n_events[0], 2);
  EXPECT_EQ(cut.t_end[0], full.event_time(0, 2));
  for (int k = 0; k < 2; ++k) EXPECT_EQ(cut.qf_of(0, k), full.event_q(0, 2, k));
  EXPECT_LT(cut.qf_of(0, 1), 0.0);  // still falling: pre-impact
}

TEST_P(Status, SettledReturnsPostImpactState) {
  BouncingBall m;
  Options o = opts(10.0, 1e-3, 100);
  o.v_stop = 1.0;
  const Result r = solve_on(backend(), m, {{2.0, 0.0, 0.8}}, o);
  ASSERT_EQ(r.status_of(0), saltation::Status::Settled);
  const int last = r.n_events[0] - 1;
  EXPECT_EQ(r.t_end[0], r.event_time(0, last));
  for (int k = 0; k < 2; ++k) EXPECT_EQ(r.qf_of(0, k), r.event_q_plus(0, last, k));
  EXPECT_LT(-r.event_q(0, last, 1), 1.0);      // met the ground slower than v_stop
  EXPECT_GE(-r.event_q(0, last - 1, 1), 1.0);  // the impact before was still faster
}

TEST_P(Status, NonFiniteReturnsLastFiniteState) {
  saltation::TerrainBall<0> m;
  m.y0 = 5.0;
  const Result r = solve_on(backend(), m, {{1.0, 0.0, 1e300, 0.5, 0.1}}, opts(1.0, 1e-2));
  ASSERT_EQ(r.status_of(0), saltation::Status::NonFinite);
  EXPECT_EQ(r.t_end[0], 0.0);
  EXPECT_EQ(r.qf_of(0, 1), 5.0);
  EXPECT_EQ(r.qf_of(0, 2), 1.0);
}

TEST_P(Status, InvalidRowsMarkedWhenAsked) {
  BouncingBall m;
  Options o = opts(1.0, 1e-3);
  o.mark_invalid_rows = true;
  const Result r = solve_on(backend(), m, {{1.0, 0.0, 0.5}, {1.0, 0.0, 1.5}, {-1.0, 0.0, 0.5}}, o);
  EXPECT_EQ(r.status_of(0), saltation::Status::Finished);
  EXPECT_EQ(r.status_of(1), saltation::Status::InvalidInput);
  EXPECT_EQ(r.status_of(2), saltation::Status::InvalidInput);
  EXPECT_EQ(r.n_events[1], 0);
}

TEST_P(Status, ZenoOnChatterWithZeroRestitution) {
  // e = 0 on a slope: the ball can only chatter down the surface; never integrates below it.
  saltation::TerrainBall<1> m;
  m.x0 = -0.5;
  m.y0 = 0.7;
  Options o = opts(2.0, 1e-3, 10000);
  const Result r = solve_on(backend(), m, {{0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.5}}, o);
  EXPECT_EQ(r.status_of(0), saltation::Status::Zeno);
  double h, dh;
  const std::vector<double> th = {0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.5};
  m.terrain(r.qf_of(0, 0), RowParams{th.data(), 1}, h, dh);
  EXPECT_GE(r.qf_of(0, 1) - h, -1e-12);
}

TEST_P(Events, ProbesCatchBumpsNarrowerThanAStep) {
  // Flat flight at y = 0.5 with vx = 10 (no gravity) over one bump of height 1 and width w.
  // Each step covers 0.1 in x. A bump is "caught" at width w when it is detected for every
  // placement of its centre relative to the step grid.
  saltation::TerrainBall<1> m;
  m.x0 = 0.0;
  m.y0 = 0.5;
  m.gravity = 0.0;
  const double dt = 0.01, step_x = 0.1;
  const int placements = 16;
  auto caught_everywhere = [&](double w, int probes) {
    std::vector<std::vector<double>> theta;
    for (int s = 0; s < placements; ++s)
      theta.push_back({10.0, 0.0, 0.0, 0.5, 0.0, 1.0, 1.0 + step_x * s / placements, w});
    Options o = opts(0.3, dt, 4);
    o.probes = probes;
    const Result r = solve_on(backend(), m, theta, o);
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
  EXPECT_EQ(solve_on(backend(), m, one, o0).n_events[0], 0);
  EXPECT_GE(solve_on(backend(), m, one, o3).n_events[0], 1);
  const double w0 = narrowest(0), w3 = narrowest(3);
  RecordProperty("narrowest_width_no_probes", std::to_string(w0));
  RecordProperty("narrowest_width_3_probes", std::to_string(w3));
  std::printf("narrowest bump width caught: %.5f without probes, %.5f with 3 probes (ratio %.2f)\n", w0, w3, w0 / w3);
  EXPECT_GE(w0 / w3, 2.0);
}

TEST_P(Events, ProbesCatchShallowDipsOfANonlinearPath) {
  // A pendulum from phi = 0 with amplitude A reaches phi = -A after a quarter period; a floor at
  // -A + depth is crossed and left again within 2 sqrt(2 depth / sin A) ~ 0.07-0.08 s, less than
  // a step of 0.2 but more than the probes' spacing of 0.05. Amplitudes from 0.8 to 1.5 place the
  // dip across several steps' interiors. The probes, screened on the step's dense output, must
  // catch every dip; the step ends alone miss some.
  const double depth = 6e-4;
  std::vector<std::vector<double>> theta;
  for (int s = 0; s < 24; ++s) {
    const double A = 0.8 + 0.7 * s / 23.0;
    theta.push_back({0.0, -std::sqrt(2.0 * (1.0 - std::cos(A))), -A + depth, 1.0});
  }
  Options o = opts(2.5, 0.2, 4);
  const Result r3 = solve_on(backend(), saltation::testing::PendulumFloor{}, theta, o);
  o.probes = 0;
  const Result r0 = solve_on(backend(), saltation::testing::PendulumFloor{}, theta, o);
  int missed_without_probes = 0;
  for (std::size_t s = 0; s < theta.size(); ++s) {
    EXPECT_EQ(r3.n_events[s], 1) << "amplitude row " << s;
    missed_without_probes += r0.n_events[s] == 0;
  }
  EXPECT_GT(missed_without_probes, 0) << "every dip reaches a step end: the case is not exercised";
}

TEST_P(Events, GrazingImpactsAreFlagged) {
  // Horizontal flight (no gravity) into a bump of height 1 and width 0.2 at x = 1: at y = 0.9999
  // the ball meets the bump near its top, where the terrain is almost parallel to the velocity
  // (|g_q . f| / (|g_q| |f|) ~ 0.07); at y = 0.3 it hits the flank (~ 0.9).
  saltation::TerrainBall<1> m;
  m.gravity = 0.0;
  Options o = opts(2.0, 1e-3, 2);
  o.graze_tol = 0.1;
  std::vector<Result> rs;
  for (double y0 : {0.9999, 0.3}) {
    m.y0 = y0;
    rs.push_back(solve_on(backend(), m, {{1.0, 0.0, 0.0, 0.5, 0.0, 1.0, 1.0, 0.2}}, o));
  }
  ASSERT_GE(rs[0].n_events[0], 1);
  ASSERT_GE(rs[1].n_events[0], 1);
  EXPECT_EQ(rs[0].ev_flags[0] & EventGrazing, EventGrazing);
  EXPECT_EQ(rs[1].ev_flags[0] & EventGrazing, 0);
}

TEST_P(Events, EarliestOfTwoCrossingsInOneStepWins) {
  TwoThresholds m;
  // Moving down at speed 1 from x = 1 with dt = 0.6: guard 1 (x = 0.5) is crossed before guard 0 (x = 0.45)
  // within the first step.
  Options o = opts(0.6, 0.6, 1);
  o.probes = 0;
  const Result r = solve_on(backend(), m, {{0.45, 0.5, 1.0}}, o);
  ASSERT_GE(r.n_events[0], 1);
  EXPECT_EQ(r.ev_guard[0], 1);
  EXPECT_NEAR(r.event_time(0, 0), 0.5, 1e-12);
}

TEST_P(Events, ExactTiesGoToTheLowerGuardIndex) {
  TwoThresholds m;
  Options o = opts(0.6, 0.6, 1);
  const Result r = solve_on(backend(), m, {{0.5, 0.5, 1.0}, {0.5, 0.5, 1.0}}, o);
  for (int i = 0; i < 2; ++i) {
    ASSERT_GE(r.n_events[i], 1);
    EXPECT_EQ(r.ev_guard[i], 0);
    EXPECT_NEAR(r.event_time(i, 0), 0.5, 1e-12);
  }
}

TEST_P(Thermostat, SwitchingTimesClosedForm) {
  saltation::Thermostat m;  // starts On
  const double T0 = 19, Te = 18, tau = 12, Q = 8, Tl = 20, Th = 22;
  const Result r = solve_on(backend(), m, {{T0, Te, tau, Q, Tl, Th}}, opts(48.0, 1e-2));
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

TEST_P(Thermostat, TimeDoesNotDriftOverManySmallSteps) {
  // 95,000 steps of 1e-4, a step binary cannot hold: summed plainly, the time drifts by about
  // 1e-11 by t = 9.5; summed with compensation (core/clock.hpp), the switch stays on its closed form.
  saltation::Thermostat m;  // starts On
  const double T0 = 19, Te = 18, tau = 17, Q = 8, Tl = 20, Th = 22;
  const Result r = solve_on(backend(), m, {{T0, Te, tau, Q, Tl, Th}}, opts(10.0, 1e-4));
  ASSERT_GE(r.n_events[0], 1);
  EXPECT_NEAR(r.event_time(0, 0), tau * std::log((T0 - Te - Q) / (Th - Te - Q)), 1e-12);
}

TEST_P(Thermostat, InitialModeOffFromConfig) {
  saltation::Thermostat m;
  m.initial_mode = saltation::Thermostat::Off;
  const Result r = solve_on(backend(), m, {{21.0, 18.0, 12.0, 8.0, 20.0, 22.0}}, opts(10.0, 1e-2));
  ASSERT_GE(r.n_events[0], 1);
  EXPECT_EQ(r.ev_guard[0], 1);
  EXPECT_NEAR(r.event_time(0, 0), 12.0 * std::log(3.0 / 2.0), 1e-10);
}

TEST_P(Thermostat, StartInJumpSetSwitchesAtTimeZero) {
  // Seed 003: On with T >= T_high switches Off; Off with T <= T_low switches On.
  const double Te = 18, tau = 12, Q = 8, Tl = 20, Th = 22;
  saltation::Thermostat on;  // starts On
  const Result hot = solve_on(backend(), on, {{23.0, Te, tau, Q, Tl, Th}}, opts(20.0, 1e-2));
  ASSERT_GE(hot.n_events[0], 2);
  EXPECT_EQ(hot.event_time(0, 0), 0.0);
  EXPECT_EQ(hot.ev_guard[0], 0);
  EXPECT_NEAR(hot.event_time(0, 1), tau * std::log((23.0 - Te) / (Tl - Te)), 1e-10);  // cools to T_low
  saltation::Thermostat off;
  off.initial_mode = saltation::Thermostat::Off;
  const Result cold = solve_on(backend(), off, {{19.0, Te, tau, Q, Tl, Th}}, opts(20.0, 1e-2));
  ASSERT_GE(cold.n_events[0], 2);
  EXPECT_EQ(cold.event_time(0, 0), 0.0);
  EXPECT_EQ(cold.ev_guard[0], 1);
  EXPECT_NEAR(cold.event_time(0, 1), tau * std::log((19.0 - Te - Q) / (Th - Te - Q)), 1e-10);  // heats to T_high
}

// Threads are the CPU backend's (OpenMP), so this one runs on the CPU only.
TEST(Cpu, ResultsIdenticalForOneTwoFourThreads) {
  std::mt19937_64 rng(3);
  saltation::TerrainBall<3> m;
  std::vector<std::vector<double>> theta;
  for (int i = 0; i < 40; ++i) theta.push_back(sample_terrain_row<3>(rng));
  Options o = opts(3.0, 1e-3, 8);
  o.sensitivities = true;
  std::vector<Result> rs;
  for (int threads : {1, 2, 4}) {
    o.threads = threads;
    rs.push_back(solve_on(Backend::Cpu, m, theta, o));
  }
  for (int k = 1; k < 3; ++k) {
    EXPECT_EQ(rs[0].status, rs[k].status);
    EXPECT_EQ(rs[0].n_events, rs[k].n_events);
    EXPECT_EQ(0, std::memcmp(rs[0].qf.data(), rs[k].qf.data(), rs[0].qf.size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(rs[0].ev_q.data(), rs[k].ev_q.data(), rs[0].ev_q.size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(rs[0].dqf.data(), rs[k].dqf.data(), rs[0].dqf.size() * sizeof(double)));
  }
}

// The rows are checked by several threads (each a range of rows) for large batches; the error must
// still name the batch's first bad row, not the first a thread found.
TEST(Cpu, ValidationNamesTheFirstBadRowWithAnyThreadCount) {
  saltation::TerrainBall<3> m;
  std::mt19937_64 rng(5);
  const std::vector<double> good = sample_terrain_row<3>(rng);
  const std::size_t n = 4 * static_cast<std::size_t>(saltation::kValidateRowsPerThread) + 3;
  std::vector<std::vector<double>> rows(n, good);
  const auto first_named = [&](int threads) -> long {
    try {
      saltation::validate_batch(m, Batch::from_rows(rows, m.P), threads);
    } catch (const InvalidInput& e) {
      return e.row();
    }
    return -2;
  };
  for (int threads : {1, 2, 3, 4, 8}) EXPECT_EQ(first_named(threads), -2) << threads << " threads";
  rows[n - 1][3] = 1.5;               // e, in the last thread's range
  rows[n / 2 + 1][4] = -0.1;          // mu
  rows[n / 4 + 7][6] = std::nan("");  // b_1
  for (int threads : {1, 2, 3, 4, 8})
    EXPECT_EQ(first_named(threads), static_cast<long>(n / 4 + 7)) << threads << " threads";
  rows[n / 4 + 7] = good;
  rows[n / 4 + 8][3] = 1.5;
  for (int threads : {1, 2, 3, 4, 8})
    EXPECT_EQ(first_named(threads), static_cast<long>(n / 4 + 8)) << threads << " threads";
  rows[3][5] = 5.0;  // a bump of height 5 centred on the start: the ball starts inside the terrain
  rows[3][6] = 0.0;
  try {
    saltation::validate_batch(m, Batch::from_rows(rows, m.P), 4);
    ADD_FAILURE() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.parameter(), "initial state") << e.what();
    EXPECT_EQ(e.row(), 3);
  }
}

TEST_P(Sensitivities, ForwardStatesIdenticalWithAndWithoutSensitivities) {
  std::mt19937_64 rng(5);
  saltation::testing::StrictTerrain3 m;  // bitwise across two kernels: no contraction on CUDA
  std::vector<std::vector<double>> theta;
  for (int i = 0; i < 8; ++i) theta.push_back(sample_terrain_row<3>(rng));
  Options o = opts(3.0, 1e-3, 8);
  const Result a = solve_on(backend(), m, theta, o);
  o.sensitivities = true;
  const Result b = solve_on(backend(), m, theta, o);
  EXPECT_EQ(a.n_events, b.n_events);
  EXPECT_EQ(a.qf, b.qf);
  EXPECT_EQ(a.ev_t, b.ev_t);
  EXPECT_EQ(a.ev_q, b.ev_q);
}

TEST(Options, StepBudgetAndOversizedDtRefusedBeforeAnyWork) {
  Options o;
  o.t_final = 1e6;
  o.dt = 1e-12;
  try {
    normalize_options(o);
    ADD_FAILURE() << "10^18 steps accepted";
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.parameter(), "options.dt");
    for (const char* part : {"1e+06", "1e-12", "max_steps = 100000000"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " missing from: " << what;
  }
  o.max_steps = 2000000000000000000;  // the budget is the user's to raise
  EXPECT_NO_THROW(normalize_options(o));
  Options one_step;
  one_step.t_final = 3.0;
  one_step.dt = 1e300;
  try {
    normalize_options(one_step);
    ADD_FAILURE() << "dt > t_final is refused, not clipped";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("dt = 1e+300 is larger than t_final = 3"), std::string::npos) << e.what();
  }
  one_step.dt = 3.0;
  EXPECT_NO_THROW(normalize_options(one_step)) << "one step of exactly t_final is fine";
}

// A batch mixing trajectories that reach their event capacity, overflow to non-finite, chatter
// into Zeno and graze: each row's results are bitwise those of its solo run (no fault leaks).
TEST_P(HostApi, FaultsStayInTheirRow) {
  Options o = opts(10.0, 1e-3, 12);
  o.sensitivities = true;
  const std::vector<std::vector<double>> rows = {{1.0, 0.0, 0.7},    // event capacity
                                                 {1.0, 1e308, 0.5},  // h overflows: non-finite
                                                 {1.0, 0.0, 0.2},    // chatters into Zeno
                                                 {0.0, 0.0, 0.0},    // at rest on the ground: grazing events, then Zeno
                                                 {1.5, 2.0, 0.8}};   // event capacity
  const Result all = solve_on(backend(), saltation::BouncingBall{}, rows, o);
  EXPECT_EQ(all.status_of(0), saltation::Status::EventCapacity);
  EXPECT_EQ(all.status_of(1), saltation::Status::NonFinite);
  EXPECT_EQ(all.status_of(2), saltation::Status::Zeno);
  EXPECT_EQ(all.status_of(3), saltation::Status::Zeno);
  EXPECT_NE(all.ev_flags[0 * all.n + 3] & EventGrazing, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Result solo = solve_on(backend(), saltation::BouncingBall{}, {rows[i]}, o);
    zip_arrays(all, solo, [&](const auto& batch, const auto& one) {
      const std::size_t per_row = one.size();  // solo: n = 1, so one entry per row of the array
      for (std::size_t r = 0; r < per_row; ++r)
        EXPECT_EQ(0, std::memcmp(&batch[r * all.n + i], &one[r], sizeof(one[r]))) << "row " << i << ", entry " << r;
    });
  }
}

TEST_P(HostApi, BadInputNamesParameterAndRow) {
  saltation::TerrainBall<3> m;
  std::mt19937_64 rng(1);
  std::vector<std::vector<double>> theta = {sample_terrain_row<3>(rng), sample_terrain_row<3>(rng),
                                            sample_terrain_row<3>(rng)};
  auto expect_bad = [&](std::vector<std::vector<double>> th, const char* param, long row, Options o = opts(1.0, 1e-3)) {
    try {
      solve_on(backend(), m, th, o);
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

// Backend selection itself: what happens with and without a device, so not instantiated per backend.
TEST(HostApi, CudaBackendWithoutDeviceIsATypedError) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  BouncingBall m;
  EXPECT_THROW(solve_on(Backend::Cuda, m, {{1.0, 0.0, 0.5}}, opts(1.0, 1e-3)), CudaError);
  // Auto falls back to the CPU.
  EXPECT_NO_THROW(solve_on(Backend::Auto, m, {{1.0, 0.0, 0.5}}, opts(1.0, 1e-3)));
}

// TwoThresholds under a name that no translation unit instantiates the CUDA driver for.
struct TwoThresholdsWithoutCudaDriver : TwoThresholds {};

TEST(HostApi, UserModelWithoutCudaDriverSaysSo) {
  TwoThresholdsWithoutCudaDriver m;
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();  // the driver check sits behind the device check
  EXPECT_THROW(solve_on(Backend::Cuda, m, {{0.5, 0.5, 1.0}}, opts(1.0, 0.1)), CudaError);
}

TEST_P(HostApi, ProgressIsMonotoneAndEndsAtTotal) {
  BouncingBall m;
  std::vector<std::vector<double>> theta(500, {1.0, 0.0, 0.5});
  std::vector<std::size_t> seen;
  const Progress progress = [&](std::size_t done, std::size_t total) {
    EXPECT_EQ(total, 500u);
    seen.push_back(done);
  };
  solve(m, Batch::from_rows(theta, 3), opts(1.0, 1e-3), backend(), progress);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 500u);
  for (std::size_t k = 1; k < seen.size(); ++k) EXPECT_LT(seen[k - 1], seen[k]);
  EXPECT_LE(seen.size(), 102u);
}

TEST_P(TerrainBall, FlatGroundBouncesLikeTheBouncingBall) {
  // K = 0, no drag: the vertical motion is the bouncing ball's, whatever the horizontal speed.
  saltation::TerrainBall<0> terrain;
  terrain.y0 = 2.0;
  BouncingBall ball;
  const Result a = solve_on(backend(), terrain, {{1.5, 0.0, 0.0, 0.8, 0.0}}, opts(4.0, 1e-3, 16));
  const Result b = solve_on(backend(), ball, {{2.0, 0.0, 0.8}}, opts(4.0, 1e-3, 16));
  ASSERT_GE(b.n_events[0], 4);
  ASSERT_EQ(a.n_events[0], b.n_events[0]);
  for (int c = 0; c < a.n_events[0]; ++c) EXPECT_NEAR(a.event_time(0, c), b.event_time(0, c), 1e-12);
  EXPECT_NEAR(a.qf_of(0, 1), b.qf_of(0, 0), 1e-12);
}

SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Rk4);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(TerrainBall);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Status);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Events);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Thermostat);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Sensitivities);
SALTATION_INSTANTIATE_ON_EVERY_BACKEND(HostApi);

}  // namespace
