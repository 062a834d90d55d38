// Model-concept checks: the flow reads only its declared flow parameters, analytic event
// partials agree with the dual-number ones, and the guard-exclusion bound is conservative.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends.hpp"
#include "saltation/core/trajectory.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "terrain_samples.hpp"
#include "user_models.hpp"

using namespace saltation;

namespace {
// The flow reads only the parameters the model names in flow_param (what lets sensitivities skip
// P-wide work between events): checked with every parameter seeded.
template <class Model>
void expect_flow_reads_only_flow_params(const Model& m, const std::vector<double>& theta, int mode) {
  constexpr int P = Model::P, N = Model::N;
  using D = Dual<P>;
  std::vector<D> th(P);
  for (int p = 0; p < P; ++p) th[p] = D::variable(theta[p], p);
  struct View {
    const D* p;
    D operator[](int k) const { return p[k]; }
  } view{th.data()};
  D q[N], f[N];
  double q0[N];
  m.initial_state(RowParams{theta.data(), 1}, q0);
  for (int k = 0; k < N; ++k) q[k] = D(q0[k]);
  m.flow(q, mode, view, f);
  for (int p = 0; p < P; ++p) {
    bool listed = false;
    for (int k = 0; k < Model::F; ++k) listed |= Model::flow_param(k) == p;
    if (listed) continue;
    for (int k = 0; k < N; ++k)
      EXPECT_EQ(f[k].d[p], 0.0) << Model::name << ": flow depends on unlisted " << Model::param_name(p);
  }
}

}  // namespace

TEST(ModelConcept, FlowDependsOnlyOnDeclaredFlowParameters) {
  std::mt19937_64 rng(1);
  expect_flow_reads_only_flow_params(BouncingBall{}, {1.0, 0.5, 0.8}, 0);
  expect_flow_reads_only_flow_params(Thermostat{}, {19.0, 18.0, 12.0, 8.0, 20.0, 22.0}, Thermostat::On);
  expect_flow_reads_only_flow_params(Thermostat{}, {19.0, 18.0, 12.0, 8.0, 20.0, 22.0}, Thermostat::Off);
  expect_flow_reads_only_flow_params(TerrainBall<3>{}, sample_terrain_row<3>(rng), 0);
}

// At impact-like states on the terrain, the analytic g_theta, R_theta and R_q equal the dual-number ones.
template <int K>
void expect_analytic_partials_match_duals(std::uint64_t seed) {
  using Model = TerrainBall<K>;
  constexpr int P = Model::P, N = Model::N;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Model m;
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<double> theta = sample_terrain_row<K>(rng);
    const RowParams th{theta.data(), 1};
    double q[N] = {3.0 * u(rng), 0.0, 2.0 * u(rng) - 1.0, -1.0 - 2.0 * u(rng)};
    double h, dh;
    m.terrain(q[0], th, h, dh);
    q[1] = h;
    const auto ctx = m.event_context(0, q, 0, th);
    double g_an[P], R_an[N * P];
    m.event_param_partials(ctx, 0, P, th, g_an, R_an, P);
    using D = Dual<P>;
    std::vector<D> seeded(P);
    for (int p = 0; p < P; ++p) seeded[p] = D::variable(theta[p], p);
    struct View {
      const D* p;
      D operator[](int k) const { return p[k]; }
    } view{seeded.data()};
    D qd[N], qp[N];
    for (int k = 0; k < N; ++k) qd[k] = D(q[k]);
    const D g = m.guard(0, qd, 0, view);
    m.reset(0, qd, 0, view, qp);
    double R_q[N * N];
    m.event_state_jacobian(ctx, R_q);
    Dual<N> qv[N], qv_plus[N];
    for (int k = 0; k < N; ++k) qv[k] = Dual<N>::variable(q[k], k);
    m.reset(0, qv, 0, core::ConstantParams<Dual<N>, RowParams>{th}, qv_plus);
    for (int r = 0; r < N; ++r)
      for (int k = 0; k < N; ++k)
        EXPECT_NEAR(R_q[r * N + k], qv_plus[r].d[k], 1e-13 * (1.0 + std::fabs(qv_plus[r].d[k]))) << "R_q " << r << k;
    for (int p = 0; p < P; ++p) {
      EXPECT_NEAR(g_an[p], g.d[p], 1e-13 * (1.0 + std::fabs(g.d[p]))) << Model::param_name(p);
      for (int r = 0; r < N; ++r)
        EXPECT_NEAR(R_an[r * P + p], qp[r].d[p], 1e-13 * (1.0 + std::fabs(qp[r].d[p])))
            << "row " << r << " " << Model::param_name(p);
    }
  }
}

// The terrain ball's analytic guard gradient equals the dual-number one (Dual<N> over q) and the
// one from its event context, and its reset from that gradient equals its reset.
TEST(ModelConcept, TerrainAnalyticGuardGradientMatchesDualNumbers) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 6.0);
  TerrainBall<24> m;
  constexpr int N = TerrainBall<24>::N;
  for (int trial = 0; trial < 50; ++trial) {
    const std::vector<double> theta = sample_terrain_row<24>(rng);
    const RowParams th{theta.data(), 1};
    const double q[N] = {u(rng), u(rng), u(rng), u(rng)};
    double g_q[N];
    EXPECT_EQ(m.guard_gradient(0, q, 0, th, g_q), m.guard(0, q, 0, th)) << "the guard's value with its gradient";
    using D = Dual<N>;
    D qd[N];
    for (int k = 0; k < N; ++k) qd[k] = D::variable(q[k], k);
    const D g = m.guard(0, qd, 0, core::ConstantParams<D, RowParams>{th});
    for (int k = 0; k < N; ++k) EXPECT_NEAR(g_q[k], g.d[k], 1e-13 * (1.0 + std::fabs(g.d[k]))) << "dg/dq" << k;
    // The one from a sensitivity event's context is the same, bit for bit.
    double g_q_from_context[N];
    EXPECT_EQ(m.event_guard_gradient(m.event_context(0, q, 0, th), g_q_from_context), m.guard(0, q, 0, th));
    for (int k = 0; k < N; ++k) EXPECT_EQ(g_q_from_context[k], g_q[k]) << "dg/dq" << k << " from the event context";
    // The reset from that gradient is the reset, bit for bit.
    double q_plus[N], q_plus_from_gradient[N];
    EXPECT_EQ(m.reset(0, q, 0, th, q_plus), m.reset_from_gradient(0, q, 0, th, g_q, q_plus_from_gradient));
    for (int k = 0; k < N; ++k) EXPECT_EQ(q_plus_from_gradient[k], q_plus[k]) << "q+" << k;
  }
}

TEST(ModelConcept, TerrainAnalyticEventPartialsMatchDualNumbers) {
  expect_analytic_partials_match_duals<3>(1);
  expect_analytic_partials_match_duals<24>(2);
}

// Ten sampled terrains, each flown from its initial state by `fly(m, th, q)`, which counts its
// steps and those the bound excluded; the bound must exclude most free-flight steps.
template <int K, class Fly>
void expect_most_steps_excluded(std::uint64_t seed, Fly fly) {
  std::mt19937_64 rng(seed);
  TerrainBall<K> m;
  int excluded = 0, steps = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const std::vector<double> theta = sample_terrain_row<K>(rng);
    const RowParams th{theta.data(), 1};
    double q[4];
    m.initial_state(th, q);
    fly(m, th, q, excluded, steps);
  }
  EXPECT_GT(excluded, steps / 4) << "the bound should exclude most free-flight steps";
}

// Wherever the bound excludes a step, the guard stays positive at 200 points along that step.
template <int K>
void expect_exclusion_conservative(std::uint64_t seed) {
  expect_most_steps_excluded<K>(seed, [](const auto& m, const RowParams& th, double* q, int& excluded, int& steps) {
    const double dt = 1e-2;
    for (int n = 0; n < 150; ++n) {
      double q1[4];
      core::rk4_step(m, q, 0, th, dt, q1);
      ++steps;
      if (m.guard_excluded(0, 0, q, q1, th)) {
        ++excluded;
        for (int s = 1; s <= 200; ++s) {
          double qs[4];
          core::rk4_step(m, q, 0, th, dt * s / 200.0, qs);
          ASSERT_GT(m.guard(0, qs, 0, th), 0.0) << "excluded step " << n << " crosses the terrain";
        }
      } else if (m.guard(0, q1, 0, th) < 0.0) {
        break;  // reached the ground: this check is about free flight
      }
      for (int k = 0; k < 4; ++k) q[k] = q1[k];
    }
  });
}

TEST(ModelConcept, TerrainGuardExclusionIsConservative) {
  expect_exclusion_conservative<0>(4);
  expect_exclusion_conservative<3>(5);
  expect_exclusion_conservative<24>(6);
  expect_exclusion_conservative<192>(7);
}

// dopri5's steps (options.method) as the adaptive driver takes them, at loose and tight
// tolerances: wherever the bound with the extension's slack (ten times each state's error scale,
// as Trajectory::adaptive_step_excluded gives it) excludes an accepted step, the guard stays
// positive at 200 points of the step's continuous extension, which is what its probes read.
template <int K>
void expect_slack_exclusion_conservative(std::uint64_t seed, double rtol) {
  expect_most_steps_excluded<K>(seed, [rtol](const auto& m, const RowParams& th, double* q, int& excluded, int& steps) {
    const auto summary = m.guard_summary(th);
    double h = 1e-3, log_err_prev = core::dopri5::kLogErrFloor;
    for (double t = 0.0; t < 3.0 && steps < 100000;) {
      core::Dopri5Step<4, double> st;
      m.flow(q, 0, th, st.k[0]);
      core::dopri5_step(m, q, 0, th, h, st);
      const core::Dopri5Error<double> error =
          core::dopri5_step_error(q, st, h, rtol, AbsoluteTolerance(rtol), false, log_err_prev);
      if (!(error.err <= 1.0)) {
        h = core::dopri5_retry_step(h, error.err);
        continue;
      }
      ++steps;
      double slack[4];
      for (int i = 0; i < 4; ++i) slack[i] = 10.0 * (rtol * std::fmax(std::fabs(q[i]), std::fabs(st.q1[i])) + rtol);
      if (m.guard_excluded(0, 0, q, st.q1, th, summary, slack)) {
        ++excluded;
        for (int s = 1; s <= 200; ++s) {
          double qs[4];
          for (int i = 0; i < 4; ++i)
            qs[i] = core::dopri5_dense_entry(i, s / 200.0, h, q[i], st, [](double x) { return x; });
          ASSERT_GT(m.guard(0, qs, 0, th), 0.0) << "excluded step at t " << t << " crosses the terrain, rtol " << rtol;
        }
      } else if (m.guard(0, st.q1, 0, th) < 0.0) {
        break;  // reached the ground: this check is about free flight
      }
      for (int i = 0; i < 4; ++i) q[i] = st.q1[i];
      t += h;
      h = std::fmin(core::dopri5_next_step(h, error.growth), 0.05);
      log_err_prev = std::fmax(error.log_err, core::dopri5::kLogErrFloor);
    }
  });
}

TEST(ModelConcept, TerrainGuardExclusionWithSlackIsConservativeOnTheExtension) {
  for (double rtol : {1e-4, 1e-6, 1e-9}) {
    expect_slack_exclusion_conservative<3>(8, rtol);
    expect_slack_exclusion_conservative<24>(9, rtol);
  }
}

// Wherever the departure bound excludes the step after an impact, the guard stays above 0 along it
// from the first probe on (400 points), and it excludes most steps after clear bounces.
template <int K>
void expect_departure_exclusion_conservative(std::uint64_t seed) {
  using Model = TerrainBall<K>;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Model m;
  int excluded = 0, clear = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> theta = sample_terrain_row<K>(rng);
    theta[Model::C] = trial % 4 == 0 ? 0.0 : 0.5 * u(rng);
    const RowParams th{theta.data(), 1};
    // A post-impact state on the terrain: any direction, speeds up to 4, including ones heading
    // back into it and ones skimming along it.
    double q0[4] = {3.0 * u(rng), 0.0, 4.0 * u(rng) - 2.0, 4.0 * u(rng) - 2.0};
    double h0, dh0;
    m.terrain(q0[0], th, h0, dh0);
    q0[1] = h0;
    const double departure = q0[3] - dh0 * q0[2];  // G'(0)
    double g_q0[4];
    const double g0 = m.guard_gradient(0, q0, 0, th, g_q0);
    for (const double dt : {1e-3, 1e-2, 2e-2, 4e-2}) {
      for (const int probes : {0, 3}) {
        const double s_first = dt / (probes + 1);
        if (!m.departure_excluded(0, 0, q0, g0, g_q0, s_first, dt, th, m.guard_summary(th))) continue;
        ++excluded;
        for (int s = 0; s <= 400; ++s) {
          double qs[4];
          core::rk4_step(m, q0, 0, th, s_first + (dt - s_first) * s / 400.0, qs);
          ASSERT_GT(m.guard(0, qs, 0, th), 0.0) << "excluded departure crosses the terrain, trial " << trial;
        }
      }
    }
    if (departure > 1.0) clear += 8;
  }
  EXPECT_GT(excluded, clear * 3 / 4) << "the bound should exclude most steps after a clear bounce";
}

TEST(ModelConcept, TerrainDepartureExclusionIsConservative) {
  expect_departure_exclusion_conservative<0>(8);
  expect_departure_exclusion_conservative<3>(9);
  expect_departure_exclusion_conservative<24>(10);
}

// affine_flow declarations are true: f_q is the same at unrelated states, in every mode.
template <class Model>
void expect_affine_flow(const Model& m, const std::vector<double>& theta, int modes) {
  static_assert(has_affine_flow<Model>::value, "the built-in models declare affine flows");
  constexpr int N = Model::N;
  using D = Dual<N>;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  const core::ConstantParams<D, RowParams> th{RowParams{theta.data(), 1}};
  for (int mode = 0; mode < modes; ++mode) {
    double J0[N * N];
    for (int trial = 0; trial < 5; ++trial) {
      D q[N], f[N];
      for (int i = 0; i < N; ++i) q[i] = D::variable(u(rng), i);
      m.flow(q, mode, th, f);
      for (int i = 0; i < N; ++i)
        for (int l = 0; l < N; ++l) {
          if (trial == 0) J0[i * N + l] = f[i].d[l];
          EXPECT_EQ(f[i].d[l], J0[i * N + l]) << Model::name << " mode " << mode;
        }
    }
  }
}

TEST(ModelConcept, AffineFlowDeclarationsHold) {
  std::mt19937_64 rng(3);
  expect_affine_flow(BouncingBall{}, {1.0, 0.5, 0.8}, 1);
  expect_affine_flow(Thermostat{}, {19.0, 18.0, 12.0, 8.0, 20.0, 22.0}, 2);
  expect_affine_flow(TerrainBall<3>{}, sample_terrain_row<3>(rng), 1);
}

namespace {
// Runs the solver, so unlike the checks above it is instantiated per backend.
using ModelConcept = saltation::testing::BackendTest;

// The affine tangent step against the generic one (GenericTerrain3 is TerrainBall<3> without the
// affine declaration), the same batch on the same backend.
TEST_P(ModelConcept, AffineTangentStepAgreesWithGenericStep) {
  using saltation::testing::GenericTerrain3;
  static_assert(!has_affine_flow<GenericTerrain3>::value, "");
  std::mt19937_64 rng(8);
  Batch b(16, TerrainBall<3>::P);
  for (std::size_t i = 0; i < b.n; ++i) {
    const auto row = sample_terrain_row<3>(rng);
    for (int p = 0; p < TerrainBall<3>::P; ++p) b.at(i, p) = row[p];
  }
  Options o;
  o.t_final = 2.0;
  o.dt = 1e-3;
  o.sensitivities = true;
  // StrictTerrain3 is TerrainBall<3> with its CUDA driver compiled like GenericTerrain3's.
  const Result a = solve(saltation::testing::StrictTerrain3{}, b, o, backend());
  const Result g = solve(GenericTerrain3{}, b, o, backend());
  EXPECT_EQ(a.n_events, g.n_events);
  EXPECT_EQ(a.qf, g.qf);  // the state path is the same code
  double scale = 0.0;
  for (double x : g.dqf) scale = std::max(scale, std::fabs(x));
  for (std::size_t k = 0; k < a.dqf.size(); ++k) EXPECT_NEAR(a.dqf[k], g.dqf[k], 1e-12 * scale);
  for (std::size_t k = 0; k < a.ev_dq.size(); ++k) EXPECT_NEAR(a.ev_dq[k], g.ev_dq[k], 1e-12 * scale);
}

SALTATION_INSTANTIATE_ON_EVERY_BACKEND(ModelConcept);

}  // namespace
