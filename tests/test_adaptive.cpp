// Adaptive steps (options.method dopri5): the Dormand-Prince pair's order conditions and dense
// output, closed forms of event times and their derivatives at tight tolerances, errors that follow
// the tolerance, the step statuses, and the options that choose the method.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "saltation/core/dopri5.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "saltation/options.hpp"
#include "saltation/solve.hpp"
#include "terrain_samples.hpp"
#include "user_models.hpp"

using namespace saltation;

namespace {

Options adaptive_options(double t_final, double rtol, double atol, int capacity) {
  Options o;
  o.method = Method::Dopri5;
  o.t_final = t_final;
  o.rtol = rtol;
  o.atol = atol;
  o.event_capacity = capacity;
  return o;
}

// Four random terrains (K = 3), and their solves by RK4 at a fine step with sensitivities over
// t_final 2: the reference the adaptive solves are held to.
Batch terrain_rows(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 4; ++i) rows.push_back(saltation::sample_terrain_row<3>(rng));
  return Batch::from_rows(rows, TerrainBall<3>::P);
}
Result fine_rk4(const TerrainBall<3>& m, const Batch& batch) {
  Options fine;
  fine.t_final = 2.0;
  fine.dt = 1e-4;
  fine.event_capacity = 16;
  fine.sensitivities = true;
  return solve(m, batch, fine, Backend::Cpu);
}

TEST(Dopri5, TableauMeetsTheOrderConditions) {
  using namespace core::dopri5;
  const double c[7] = {0.0, c2, c3, c4, c5, 1.0, 1.0};
  const double A[7][6] = {{0, 0, 0, 0, 0, 0},       {a21, 0, 0, 0, 0, 0},       {a31, a32, 0, 0, 0, 0},
                          {a41, a42, a43, 0, 0, 0}, {a51, a52, a53, a54, 0, 0}, {a61, a62, a63, a64, a65, 0},
                          {b1, 0, b3, b4, b5, b6}};
  const double b[7] = {b1, 0.0, b3, b4, b5, b6, 0.0};
  const double e[7] = {e1, 0.0, e3, e4, e5, e6, e7};
  for (int i = 1; i < 7; ++i) {
    double row = 0.0;
    for (int l = 0; l < 6; ++l) row += A[i][l];
    EXPECT_NEAR(row, c[i], 1e-15) << "row " << i;
  }
  // The quadrature conditions sum b_i c_i^(k-1) = 1/k up to order 5, for b_hat = b - e up to 4.
  for (int k = 1; k <= 5; ++k) {
    double sum = 0.0, sum_hat = 0.0;
    for (int i = 0; i < 7; ++i) {
      sum += b[i] * std::pow(c[i], k - 1);
      sum_hat += (b[i] - e[i]) * std::pow(c[i], k - 1);
    }
    EXPECT_NEAR(sum, 1.0 / k, 1e-15) << "order " << k;
    if (k <= 4) {
      EXPECT_NEAR(sum_hat, 1.0 / k, 1e-15) << "embedded order " << k;
    }
  }
  // One fifth-order condition beyond quadrature: sum b_i c_i a_ij c_j^2 = 1/15.
  double tree = 0.0;
  for (int i = 0; i < 7; ++i)
    for (int l = 0; l < 6; ++l) tree += b[i] * c[i] * A[i][l] * c[l] * c[l];
  EXPECT_NEAR(tree, 1.0 / 15.0, 1e-15);
}

// One state decaying as e^(-2 t).
struct Decay {
  static constexpr int N = 1;
  template <class S, class Th>
  void flow(const S* q, int, const Th&, S* f) const {
    f[0] = -2.0 * q[0];
  }
};

TEST(Dopri5, DenseOutputIsFourthOrder) {
  // The continuous extension's error inside a step of h is O(h^5): halving h divides it by about 32.
  const Decay m;
  const double q0[1] = {1.0};
  double previous = 0.0;
  for (double h : {0.2, 0.1, 0.05}) {
    core::Dopri5Step<1, double> st;
    st.k[0][0] = -2.0;
    core::dopri5_step(m, q0, 0, 0, h, st);
    const double u = 0.37;
    const double y = core::dopri5_dense_entry(0, u, h, q0[0], st, [](double x) { return x; });
    const double err = std::fabs(y - std::exp(-2.0 * u * h));
    EXPECT_EQ(core::dopri5_dense_entry(0, 1.0, h, q0[0], st, [](double x) { return x; }), st.q1[0]);
    if (previous > 0.0) {
      EXPECT_GT(previous / err, 20.0) << "h " << h;
    }
    previous = err;
  }
}

TEST(Adaptive, BouncingBallImpactTimesToTheClosedForm) {
  // Free fall is quadratic in t, so the pair is exact but for rounding: impact times to 1e-12.
  // (By t = 5.75 the impacts accumulate: status zeno, as with RK4.)
  BouncingBall m;
  m.gravity = 9.81;
  const double h0 = 2.0, e = 0.8;
  const Result r = solve(m, Batch::from_rows({{h0, 0.0, e}}, BouncingBall::P), adaptive_options(5.0, 1e-13, 1e-13, 64),
                         Backend::Cpu);
  ASSERT_EQ(r.status[0], static_cast<int>(Status::Finished));
  ASSERT_EQ(r.n_events[0], 9);
  const double t1 = std::sqrt(2.0 * h0 / 9.81);
  double t = t1;
  for (int n = 1; n <= 9; ++n) {
    EXPECT_NEAR(r.event_time(0, n - 1), t, 1e-12) << "impact " << n;
    t += 2.0 * t1 * std::pow(e, n);
  }
}

TEST(Adaptive, ThermostatSwitchTimesAndDerivativesToTheClosedForm) {
  Thermostat m;
  const double T0 = 19, Te = 18, tau = 12, Q = 8, Tl = 20, Th = 22;
  Options o = adaptive_options(60.0, 1e-13, 1e-13, 16);
  o.sensitivities = true;
  const Result r = solve(m, Batch::from_rows({{T0, Te, tau, Q, Tl, Th}}, Thermostat::P), o, Backend::Cpu);
  ASSERT_GE(r.n_events[0], 4);
  // t1 = tau ln((T0 - Ti)/(Th - Ti)), Ti = Te + Q; Off legs tau ln((Th - Te)/(Tl - Te)); On legs
  // tau ln((Tl - Ti)/(Th - Ti)); d t / d tau is each time over tau.
  const double Ti = Te + Q;
  double t = tau * std::log((T0 - Ti) / (Th - Ti));
  for (int c = 0; c < r.n_events[0]; ++c) {
    SCOPED_TRACE("switch " + std::to_string(c));
    EXPECT_NEAR(r.event_time(0, c), t, 1e-12 * t);
    EXPECT_NEAR(r.event_dt(0, c, Thermostat::Tau), t / tau, 1e-10);
    t += tau * (c % 2 == 0 ? std::log((Th - Te) / (Tl - Te)) : std::log((Tl - Ti) / (Th - Ti)));
  }
}

TEST(Adaptive, TerrainBallMatchesFineRk4WithinTheTolerance) {
  // A nonlinear flow with events: every event time, pre-event state and derivative against RK4 at
  // a fine step, and the error shrinking with the tolerance.
  TerrainBall<3> m;
  const Batch batch = terrain_rows(2024);
  const Result ref = fine_rk4(m, batch);
  double previous = 1.0;
  for (double tol : {1e-6, 1e-9, 1e-12}) {
    Options o = adaptive_options(2.0, tol, tol, 16);
    o.sensitivities = true;
    const Result r = solve(m, batch, o, Backend::Cpu);
    double worst = 0.0, worst_dt = 0.0;
    for (std::size_t i = 0; i < batch.n; ++i) {
      ASSERT_EQ(r.status[i], ref.status[i]) << "row " << i << " at tol " << tol;
      ASSERT_EQ(r.n_events[i], ref.n_events[i]) << "row " << i << " at tol " << tol;
      for (int c = 0; c < r.n_events[i]; ++c) {
        worst = std::fmax(worst, std::fabs(r.event_time(i, c) - ref.event_time(i, c)));
        for (int p = 0; p < TerrainBall<3>::P; ++p)
          worst_dt = std::fmax(worst_dt, std::fabs(r.event_dt(i, c, p) - ref.event_dt(i, c, p)) /
                                             (1.0 + std::fabs(ref.event_dt(i, c, p))));
      }
    }
    SCOPED_TRACE("tol " + std::to_string(tol));
    EXPECT_LT(worst, 1e3 * tol + 1e-11);
    EXPECT_LT(worst_dt, 1e4 * tol + 1e-8);
    if (tol < 1e-6) {
      EXPECT_LT(worst, previous);
    }
    previous = worst;
  }
}

TEST(Adaptive, ErrorControlOnTheSensitivitiesTightensThem) {
  TerrainBall<3> m;
  const Batch batch = terrain_rows(99);
  const Result ref = fine_rk4(m, batch);
  const auto dqf_error = [&](bool on_sensitivities) {
    Options o = adaptive_options(2.0, 1e-7, 1e-7, 16);
    o.sensitivities = true;
    o.error_on_sensitivities = on_sensitivities;
    const Result r = solve(m, batch, o, Backend::Cpu);
    double worst = 0.0;
    for (std::size_t e = 0; e < r.dqf.size(); ++e)
      worst = std::fmax(worst, std::fabs(r.dqf[e] - ref.dqf[e]) / (1.0 + std::fabs(ref.dqf[e])));
    return worst;
  };
  const double state_only = dqf_error(false), with_tangent = dqf_error(true);
  std::printf("  dqf error at rtol 1e-7: %.2e on the state's error, %.2e with the tangent's\n", state_only,
              with_tangent);
  EXPECT_LT(with_tangent, state_only);
}

TEST(Adaptive, DtMaxBoundsTheStepsWhereTheGuardHasFeaturesOfItsOwn) {
  // Flat flight (no gravity, no drag) at y = 0.5 over one bump of height 0.5 + 1e-4: the flow is
  // exact in any step, so without dt_max one step spans the horizon and its probes miss the dip;
  // with dt_max = dt the events are RK4's at dt (the same probes), their times alike.
  TerrainBall<1> m;
  m.y0 = 0.5;
  m.gravity = 0.0;
  const int placements = 32;
  const double dt = 1e-2;
  Batch batch(placements, TerrainBall<1>::P);
  for (int i = 0; i < placements; ++i) {
    const double row[] = {1.0, 0.0, 0.0, 0.5, 0.0, 0.5 + 1e-4, 0.5 + dt * i / placements, 0.1};
    for (int p = 0; p < TerrainBall<1>::P; ++p) batch.at(i, p) = row[p];
  }
  Options rk4;
  rk4.t_final = 1.0;
  rk4.dt = dt;
  rk4.event_capacity = 1;
  const Result fixed = solve(m, batch, rk4, Backend::Cpu);
  Options o = adaptive_options(1.0, 1e-8, 1e-8, 1);
  const auto events = [&](const Result& r) {
    int count = 0;
    for (std::size_t i = 0; i < r.n; ++i) count += r.n_events[i];
    return count;
  };
  const Result unbounded = solve(m, batch, o, Backend::Cpu);
  o.dt_max = dt;
  const Result bounded = solve(m, batch, o, Backend::Cpu);
  EXPECT_GT(events(fixed), 0);
  EXPECT_EQ(events(unbounded), 0);
  ASSERT_EQ(events(bounded), events(fixed));
  for (std::size_t i = 0; i < batch.n; ++i)
    if (fixed.n_events[i] > 0) {
      EXPECT_NEAR(bounded.event_time(i, 0), fixed.event_time(i, 0), 1e-9) << "row " << i;
    }
}

TEST(Adaptive, ForwardAndSensitivityRunsShareTheirStates) {
  std::mt19937_64 rng(7);
  TerrainBall<3> m;
  const Batch batch = Batch::from_rows({saltation::sample_terrain_row<3>(rng)}, TerrainBall<3>::P);
  Options o = adaptive_options(2.0, 1e-8, 1e-8, 16);
  const Result forward = solve(m, batch, o, Backend::Cpu);
  o.sensitivities = true;
  const Result sens = solve(m, batch, o, Backend::Cpu);
  ASSERT_EQ(forward.n_events[0], sens.n_events[0]);
  for (int c = 0; c < forward.n_events[0]; ++c) EXPECT_EQ(forward.event_time(0, c), sens.event_time(0, c));
  for (int k = 0; k < TerrainBall<3>::N; ++k) EXPECT_EQ(forward.qf_of(0, k), sens.qf_of(0, k));
}

// Two decays at scales 1e8 apart: q0 = exp(-t) from 1, q1 = theta[0] exp(-10 t) from theta[0].
// One guard, never crossed.
struct TwoScales : saltation::testing::TestModel {
  static constexpr int N = 2, P = 1, M = 1;
  static constexpr const char* name = "two_scales";
  template <class S, class Th>
  void initial_state(const Th& th, S* q) const {
    q[0] = S(1.0);
    q[1] = S(th[0]);
  }
  template <class S, class Th>
  void flow(const S* q, int, const Th&, S* f) const {
    f[0] = -q[0];
    f[1] = -10.0 * q[1];
  }
  template <class S, class Th>
  S guard(int, const S* q, int, const Th&) const {
    return q[0] + 1.0;
  }
  template <class S, class Th>
  int reset(int, const S* q, int mode, const Th&, S* qp) const {
    qp[0] = q[0];
    qp[1] = q[1];
    return mode;
  }
};

TEST(Adaptive, AbsoluteToleranceOnePerState) {
  // One atol for both states lets the small one go unchecked; one per state holds it to rtol.
  const TwoScales m;
  const Batch batch = Batch::from_rows({{1e-8}}, TwoScales::P);
  const double t_final = 1.0, exact = 1e-8 * std::exp(-10.0 * t_final);
  Options o = adaptive_options(t_final, 1e-6, 1e-6, 1);
  const double shared = std::fabs(solve(m, batch, o, Backend::Cpu).qf_of(0, 1) / exact - 1.0);
  o.atol = atol_from_list({1e-6, 1e-20}, "atol");
  const double own = std::fabs(solve(m, batch, o, Backend::Cpu).qf_of(0, 1) / exact - 1.0);
  std::printf("  small state's relative error at rtol 1e-6: %.2e with one atol, %.2e with one per state\n", shared,
              own);
  EXPECT_GT(shared, 1e-4);
  EXPECT_LT(own, 10.0 * o.rtol);
  // Equal entries are the single atol, bit for bit.
  TerrainBall<3> terrain;
  const Batch rows = terrain_rows(5);
  Options single = adaptive_options(2.0, 1e-8, 1e-7, 16);
  single.sensitivities = true;
  Options each = single;
  each.atol = atol_from_text("1e-7,1e-7,1e-7,1e-7", "--atol");
  const Result a = solve(terrain, rows, single, Backend::Cpu), b = solve(terrain, rows, each, Backend::Cpu);
  EXPECT_EQ(a.qf, b.qf);
  EXPECT_EQ(a.dqf, b.dqf);
  EXPECT_EQ(a.ev_t, b.ev_t);
  // A list is one per state of the model, named when it is not.
  each.atol = atol_from_list({1e-7, 1e-7, 1e-7}, "atol");
  try {
    solve(terrain, rows, each, Backend::Cpu);
    FAIL() << "three tolerances for four states were taken";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.parameter(), "options.atol");
    EXPECT_NE(std::string(e.what()).find("4 states"), std::string::npos) << e.what();
  }
  each.atol = atol_from_list({1e-7, -1.0, 1e-7, 1e-7}, "atol");
  try {
    normalize_options(each);
    FAIL() << "a negative tolerance was taken";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.parameter(), "options.atol[1]");
  }
  EXPECT_THROW(atol_from_text("1e-7,,1e-7", "--atol"), InvalidInput);
  EXPECT_THROW(atol_from_list(std::vector<double>(17, 1e-9), "atol"), InvalidInput);
  // Requests read and write a number or a list.
  const Options read = io::options_from_json(
      io::JsonObject(nlohmann::json::parse(R"({"method": "dopri5", "atol": [1e-9, 1e-6]})"), "options"));
  EXPECT_EQ(read.atol.states, 2);
  EXPECT_EQ(read.atol.of(1), 1e-6);
  EXPECT_EQ(io::options_to_json(read)["atol"], nlohmann::json({1e-9, 1e-6}));
  EXPECT_EQ(io::options_to_json(Options{})["atol"], 1e-9);
}

TEST(Adaptive, StepStatuses) {
  Thermostat m;
  const Batch batch = Batch::from_rows({{19.0, 18.0, 12.0, 8.0, 20.0, 22.0}}, Thermostat::P);
  Options o = adaptive_options(60.0, 1e-10, 1e-10, 16);
  o.max_steps = 5;
  const Result limited = solve(m, batch, o, Backend::Cpu);
  EXPECT_EQ(limited.status[0], static_cast<int>(Status::StepLimit));
  EXPECT_LT(limited.t_end[0], 60.0);
  o.max_steps = 100000;
  o.dt_min = 5.0;  // the exponential legs (tau = 12) need far shorter steps for 1e-10
  const Result underflow = solve(m, batch, o, Backend::Cpu);
  EXPECT_EQ(underflow.status[0], static_cast<int>(Status::StepSizeUnderflow));
  EXPECT_LT(underflow.t_end[0], 60.0);
  EXPECT_STREQ(status_name(Status::StepSizeUnderflow), "step_size_underflow");
  // A step to a state that overflows is never taken, although its error estimate may read 0: the
  // retries shrink below dt_min, status non_finite.
  const Result overflow = solve(BouncingBall{}, Batch::from_rows({{1e308, 1e308, 0.8}}, BouncingBall::P),
                                adaptive_options(2.5, 1e-8, 1e-8, 4), Backend::Cpu);
  EXPECT_EQ(overflow.status[0], static_cast<int>(Status::NonFinite));
}

TEST(Adaptive, OptionsNameTheMethodAndItsTolerances) {
  const Options read =
      io::options_from_json(io::JsonObject(nlohmann::json::parse(R"({"method": "dopri5", "rtol": 1e-8})"), "options"));
  EXPECT_EQ(read.method, Method::Dopri5);
  EXPECT_EQ(read.rtol, 1e-8);
  EXPECT_EQ(io::options_to_json(read)["method"], "dopri5");
  try {
    io::options_from_json(io::JsonObject(nlohmann::json::parse(R"({"method": "tsit"})"), "options"));
    FAIL() << "an unknown method was read";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.parameter(), "options.method");
  }
  Options bad = adaptive_options(1.0, 0.0, 1e-9, 4);
  EXPECT_THROW(normalize_options(bad), InvalidInput);
  bad = adaptive_options(1.0, 1e-6, 1e-9, 4);
  bad.dt_min = 1e-2;
  bad.dt_max = 1e-3;
  EXPECT_THROW(normalize_options(bad), InvalidInput);
  // Backend auto runs dopri5 on the CPU (backend.hpp says why); a named backend stays.
  EXPECT_EQ(backend_for_method(Backend::Auto, adaptive_options(1.0, 1e-6, 1e-9, 4)), Backend::Cpu);
  EXPECT_EQ(backend_for_method(Backend::Cuda, adaptive_options(1.0, 1e-6, 1e-9, 4)), Backend::Cuda);
  EXPECT_EQ(backend_for_method(Backend::Auto, Options{}), Backend::Auto);
  // dt is RK4's step: with dopri5 a dt beyond t_final is not an error.
  Options ok = adaptive_options(1e-4, 1e-6, 1e-9, 4);
  EXPECT_NO_THROW(normalize_options(ok));
}

}  // namespace
