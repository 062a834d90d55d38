// The members the generator derives for a model file (guard gradients, R_q, event partials,
// flow_param, affine_flow) against the dual-number passes over the model's own guard, reset and
// flow, on the C++ that `saltation model cpp` prints for examples/models/ at build time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bouncing_ball.hpp"
#include "hopper.hpp"
#include "impact_pendulum.hpp"
#include "saltation/core/params.hpp"
#include "saltation/dual.hpp"
#include "saltation/model.hpp"
#include "saltation/params.hpp"
#include "thermostat.hpp"

using namespace saltation;

namespace {

// A draw from [low, high) whose bits the standard fixes (mt19937_64's output is specified).
double uniform(std::mt19937_64& rng, double low, double high) {
  return low + (high - low) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// A parameter row inside the model's domains, from per-parameter [low, high) ranges.
std::vector<double> sample_row(std::mt19937_64& rng, const std::vector<std::pair<double, double>>& ranges) {
  std::vector<double> row;
  for (const auto& [low, high] : ranges) row.push_back(uniform(rng, low, high));
  return row;
}

::testing::AssertionResult near(double got, double want) {
  if (std::fabs(got - want) <= 1e-13 * (1.0 + std::fabs(want))) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "analytic " << got << ", dual " << want << " (difference " << got - want
                                       << ")";
}

// Parameters seeded in the dual slots 0..P-1.
template <int P>
struct SeededParams {
  const double* theta;
  Dual<P> operator[](int p) const { return Dual<P>::variable(theta[p], p); }
};

// For every guard j, at random states and rows in a mode where j is active: g and dg/dq from
// guard_gradient (the value bit-equal to guard<double>, the one from the event context bit-equal
// to it), R_q against a Dual<N> pass through reset, g_theta and R_theta against a Dual<P> pass
// through guard and reset.
template <class Model>
void expect_analytic_members_match_duals(const std::vector<std::pair<double, double>>& ranges, std::uint64_t seed) {
  constexpr int N = Model::N, P = Model::P, M = Model::M;
  std::mt19937_64 rng(seed);
  const Model m;
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::vector<double> theta = sample_row(rng, ranges);
    const RowParams th{theta.data(), 1};
    double q[N];
    for (int k = 0; k < N; ++k) q[k] = uniform(rng, -3.0, 3.0);
    for (int j = 0; j < M; ++j) {
      int mode = 0;
      while (m.direction(j, mode) == 0) ++mode;  // every guard is active in some mode
      SCOPED_TRACE(std::string(Model::name) + " guard " + std::to_string(j) + " mode " + std::to_string(mode));
      ++checked;

      double g_q[N];
      const double g = m.guard_gradient(j, q, mode, th, g_q);
      EXPECT_EQ(g, m.guard(j, q, mode, th)) << "the guard's value with its gradient";
      Dual<N> qv[N], qv_plus[N];
      for (int k = 0; k < N; ++k) qv[k] = Dual<N>::variable(q[k], k);
      const core::ConstantParams<Dual<N>, RowParams> th_const{th};
      const Dual<N> g_dual = m.guard(j, qv, mode, th_const);
      for (int k = 0; k < N; ++k) EXPECT_TRUE(near(g_q[k], g_dual.d[k])) << "dg/dq" << k;

      const auto ctx = m.event_context(j, q, mode, th);
      double g_q_from_context[N];
      EXPECT_EQ(m.event_guard_gradient(ctx, g_q_from_context), g) << "g from the event context";
      for (int k = 0; k < N; ++k) EXPECT_EQ(g_q_from_context[k], g_q[k]) << "dg/dq" << k << " from the event context";

      double R_q[N * N];
      m.event_state_jacobian(ctx, R_q);
      m.reset(j, qv, mode, th_const, qv_plus);
      for (int r = 0; r < N; ++r)
        for (int k = 0; k < N; ++k) EXPECT_TRUE(near(R_q[r * N + k], qv_plus[r].d[k])) << "R_q " << r << k;

      double g_theta[P], R_theta[N * P];
      m.event_param_partials(ctx, 0, P, th, g_theta, R_theta, P);
      Dual<P> qp[N], qp_plus[N];
      for (int k = 0; k < N; ++k) qp[k] = Dual<P>(q[k]);
      const SeededParams<P> th_seeded{theta.data()};
      const Dual<P> g_p = m.guard(j, qp, mode, th_seeded);
      m.reset(j, qp, mode, th_seeded, qp_plus);
      for (int p = 0; p < P; ++p) {
        EXPECT_TRUE(near(g_theta[p], g_p.d[p])) << "dg/d" << Model::param_name(p);
        for (int r = 0; r < N; ++r)
          EXPECT_TRUE(near(R_theta[r * P + p], qp_plus[r].d[p])) << "dq+" << r << "/d" << Model::param_name(p);
      }
    }
  }
  EXPECT_EQ(checked, 40 * M);
}

// The flow reads only the parameters flow_param lists: with every parameter seeded, the others'
// slots stay zero, in every mode.
template <class Model>
void expect_flow_reads_only_flow_params(const std::vector<std::pair<double, double>>& ranges, int modes) {
  constexpr int N = Model::N, P = Model::P;
  std::mt19937_64 rng(11);
  const Model m;
  for (int mode = 0; mode < modes; ++mode)
    for (int trial = 0; trial < 5; ++trial) {
      const std::vector<double> theta = sample_row(rng, ranges);
      Dual<P> q[N], f[N];
      for (int k = 0; k < N; ++k) q[k] = Dual<P>(uniform(rng, -3.0, 3.0));
      m.flow(q, mode, SeededParams<P>{theta.data()}, f);
      for (int p = 0; p < P; ++p) {
        bool listed = false;
        for (int k = 0; k < Model::F; ++k) listed = listed || Model::flow_param(k) == p;
        if (listed) continue;
        for (int k = 0; k < N; ++k)
          EXPECT_EQ(f[k].d[p], 0.0) << Model::name << " mode " << mode << ": flow depends on unlisted "
                                    << Model::param_name(p);
      }
    }
}

// The flow's Jacobian f_q at several random states of one row and mode: all equal for an affine flow.
template <class Model>
bool jacobian_is_constant(const std::vector<std::pair<double, double>>& ranges, int modes) {
  constexpr int N = Model::N;
  using D = Dual<N>;
  std::mt19937_64 rng(17);
  const Model m;
  const std::vector<double> theta = sample_row(rng, ranges);
  const core::ConstantParams<D, RowParams> th{RowParams{theta.data(), 1}};
  bool constant = true;
  for (int mode = 0; mode < modes; ++mode) {
    double J0[N * N];
    for (int trial = 0; trial < 5; ++trial) {
      D q[N], f[N];
      for (int k = 0; k < N; ++k) q[k] = D::variable(uniform(rng, -3.0, 3.0), k);
      m.flow(q, mode, th, f);
      for (int r = 0; r < N; ++r)
        for (int k = 0; k < N; ++k) {
          if (trial == 0) J0[r * N + k] = f[r].d[k];
          constant = constant && f[r].d[k] == J0[r * N + k];
        }
    }
  }
  return constant;
}

// Parameter ranges inside each file's domains (and for the thermostat, T_low < T_high).
const std::vector<std::pair<double, double>> kPendulum = {{-1.0, 0.3}, {-2.0, 2.0}, {0.5, 2.0},
                                                          {0.0, 0.5},  {0.0, 1.0},  {0.35, 1.0}};
const std::vector<std::pair<double, double>> kBall = {{0.0, 2.0}, {-3.0, 3.0}, {0.0, 1.0}};
const std::vector<std::pair<double, double>> kThermostat = {{15.0, 25.0}, {5.0, 15.0},  {0.5, 5.0},
                                                            {10.0, 30.0}, {16.0, 19.0}, {20.0, 24.0}};
const std::vector<std::pair<double, double>> kHopper = {{0.5, 2.0}, {-2.0, 2.0}, {50.0, 300.0}, {0.5, 1.5}, {0.0, 1.0}};

}  // namespace

TEST(GeneratedMembers, AnalyticEventMembersMatchDualNumbers) {
  expect_analytic_members_match_duals<gen_impact_pendulum::Model>(kPendulum, 1);
  expect_analytic_members_match_duals<gen_bouncing_ball::Model>(kBall, 2);
  expect_analytic_members_match_duals<gen_thermostat::Model>(kThermostat, 3);
  expect_analytic_members_match_duals<gen_hopper::Model>(kHopper, 4);
}

TEST(GeneratedMembers, FlowReadsOnlyFlowParams) {
  static_assert(gen_impact_pendulum::Model::F == 2, "the pendulum's flow reads L and c");
  static_assert(gen_bouncing_ball::Model::F == 0, "the ball's flow reads no parameter");
  static_assert(gen_thermostat::Model::F == 3, "the thermostat's flow reads T_env, tau and Q");
  static_assert(gen_hopper::Model::F == 2, "the hopper's flow reads k and L0");
  expect_flow_reads_only_flow_params<gen_impact_pendulum::Model>(kPendulum, 1);
  expect_flow_reads_only_flow_params<gen_bouncing_ball::Model>(kBall, 1);
  expect_flow_reads_only_flow_params<gen_thermostat::Model>(kThermostat, 2);
  expect_flow_reads_only_flow_params<gen_hopper::Model>(kHopper, 2);
}

TEST(GeneratedMembers, AffineFlowIsDeclaredWhereItHolds) {
  static_assert(has_affine_flow<gen_bouncing_ball::Model>::value, "");
  static_assert(has_affine_flow<gen_thermostat::Model>::value, "");
  static_assert(has_affine_flow<gen_hopper::Model>::value, "");
  static_assert(!has_affine_flow<gen_impact_pendulum::Model>::value, "sin(phi) is not affine");
  EXPECT_TRUE(jacobian_is_constant<gen_bouncing_ball::Model>(kBall, 1));
  EXPECT_TRUE(jacobian_is_constant<gen_thermostat::Model>(kThermostat, 2));
  EXPECT_TRUE(jacobian_is_constant<gen_hopper::Model>(kHopper, 2));
  EXPECT_FALSE(jacobian_is_constant<gen_impact_pendulum::Model>(kPendulum, 1));
}

// Every example's guards are polynomials in the state (h, y - L0, wall - phi, T - T_high): the
// curvature bound applies to all four.
TEST(GeneratedMembers, PolynomialGuardsAreDeclaredWhereTheyHold) {
  static_assert(has_polynomial_guards<gen_bouncing_ball::Model>::value, "");
  static_assert(has_polynomial_guards<gen_thermostat::Model>::value, "");
  static_assert(has_polynomial_guards<gen_hopper::Model>::value, "");
  static_assert(has_polynomial_guards<gen_impact_pendulum::Model>::value, "");
}
