// A C++ model type in the CPU's SIMD lanes outside the library (saltation/cpu_lanes_static.hpp,
// docs/simd_lanes.md "Lanes outside the library"): this file is compiled for AVX2
// (-march=x86-64-v3, tests/CMakeLists.txt) as a user's source would be, the model sets
// has_static_cpu_lanes, and its solves in lanes are bitwise those of the scalar driver, forward
// and with sensitivities (its flow is not affine: the tangent on dual numbers of lane vectors), for
// every output policy.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "expect_bitwise.hpp"
#include "saltation/cpu_lanes_static.hpp"
#include "saltation/elementary.hpp"
#include "saltation/solve.hpp"
#include "simd_choice.hpp"
#include "user_models.hpp"

using namespace saltation;

namespace {

// x'' = -c x' - x^3 + a cos(w t) exp(-t / 10) against a stop at x = 1 with restitution e; t is the
// third state. theta: x0, v0, c, a, w, e.
struct DecayingDuffing : saltation::testing::TestModel {
  static constexpr int N = 3, P = 6, M = 1;
  static constexpr const char* name = "decaying_duffing";
  SALTATION_HD int direction(int, int) const { return 1; }
  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = S(th[0]);
    q[1] = S(th[1]);
    q[2] = S(0.0);
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th& th, S* f) const {
    f[0] = q[1];
    f[1] = -S(th[2]) * q[1] - q[0] * q[0] * q[0] +
           S(th[3]) * elementary::cos(S(th[4]) * q[2]) * elementary::exp(q[2] * S(-0.1));
    f[2] = S(1.0);
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th&) const {
    return q[0] - S(1.0);
  }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* qp) const {
    qp[0] = q[0];
    qp[1] = -S(th[5]) * q[1];
    qp[2] = q[2];
    return mode;
  }
};

}  // namespace

namespace saltation {
template <>
struct has_static_cpu_lanes<DecayingDuffing> : std::true_type {};
}  // namespace saltation

TEST(StaticLanes, CppModelTypeMatchesTheScalarDriverBitwise) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 45; ++i) {
    std::vector<double> row = {0.8 * u(rng),       u(rng) - 0.5,       0.05 + 0.2 * u(rng),
                               0.5 + 2.0 * u(rng), 0.8 + 0.6 * u(rng), 0.5 + 0.4 * u(rng)};
    if (i % 7 == 1) row[1] = 1e300;  // overflows
    if (i % 7 == 2) row[5] = 0.0;    // stops dead at the wall
    rows.push_back(row);
  }
  const Batch batch = Batch::from_rows(rows, DecayingDuffing::P);
  const std::vector<ObjectiveSpec> objectives = {{ObjectiveKind::EventTime, 0}, {ObjectiveKind::EventCount}};
  for (const int probes : {0, 3})
    for (const bool sens : {false, true}) {
      SCOPED_TRACE("probes " + std::to_string(probes) + ", sensitivities " + std::to_string(sens));
      Options o;
      o.t_final = 12.0;
      o.dt = 0.01;
      o.probes = probes;
      o.v_stop = 0.05;
      o.event_capacity = 40;
      o.sensitivities = sens;
      o.threads = 2;
      {
        saltation::testing::SimdChoice best("best");
        Result lanes(batch.n, 3, 6, o.event_capacity, sens);
        EXPECT_TRUE(cpu::solve_static_lanes<core::FullRecord>(DecayingDuffing{}, batch.theta.data(), batch.n,
                                                              normalize_options(o), lanes.view(), nullptr))
            << "forward runs and runs with sensitivities take the lanes";
      }
      auto solve_both = [&](const char* simd) {
        saltation::testing::SimdChoice choice(simd);
        return std::pair{solve(DecayingDuffing{}, batch, o, Backend::Cpu),
                         observe(DecayingDuffing{}, batch, o, objectives,
                                 sens ? std::vector<int>{2, 5} : std::vector<int>{}, Backend::Cpu)};
      };
      auto [lanes, lanes_observed] = solve_both("best");
      auto [scalar, scalar_observed] = solve_both("0");
      saltation::testing::expect_bitwise(lanes, scalar);
      saltation::testing::expect_bitwise(lanes_observed, scalar_observed);
      int events = 0;
      for (std::size_t i = 0; i < scalar.n; ++i) events += scalar.n_events[i];
      EXPECT_GT(events, static_cast<int>(batch.n));
    }
}
