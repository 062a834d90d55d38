// A C++ model type in the CPU's SIMD lanes outside the library (saltation/cpu_lanes_static.hpp,
// docs/simd_lanes.md "Lanes outside the library"): this file is compiled for AVX2
// (-march=x86-64-v3, tests/CMakeLists.txt) as a user's source would be, the model sets
// has_static_cpu_lanes, and its solves in lanes are bitwise those of the scalar driver, by RK4 and
// dopri5, forward and with sensitivities (its flow is not affine: the tangent on dual numbers of
// lane vectors), for every output policy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
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
  for (const Method method : {Method::Rk4, Method::Dopri5})
    for (const int probes : {0, 3})
      for (const bool sens : {false, true}) {
        SCOPED_TRACE("method " + std::to_string(static_cast<int>(method)) + ", probes " + std::to_string(probes) +
                     ", sensitivities " + std::to_string(sens));
        Options o;
        o.method = method;
        o.rtol = 1e-9;
        o.atol = 1e-9;
        o.error_on_sensitivities = probes == 3;  // with sensitivities the tangent's error controls dopri5's step too
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

// Dual numbers of lane vectors (dual.hpp and elementary.hpp over the lanes' LaneVec, what a
// non-affine flow's tangent runs on in lanes): every lane of each function's value and slots is
// the bits of Dual<D> on that lane's numbers, the choices included (abs at 0 and -0, fmin and fmax
// at ties and with NaN, pow's zero slots with a negative base and its zero base, hypot at the
// origin, atan2 at the origin).
TEST(StaticLanes, DualsOfLaneVectorsMatchScalarDualsBitwise) {
  namespace lanes = saltation::cpu_lanes::HWY_NAMESPACE;
  using lanes::kW;
  using DV = Dual<2, lanes::LaneVec>;
  using DS = Dual<2>;
  const double nan = std::nan("");
  // Lane inputs a, b and their two slots; enough cases for several vector loads.
  const std::vector<double> a = {0.0, -0.0, 1.5, -2.0, 0.3, nan, 2.0, 0.0, 0.7, -0.5, 3.0, 0.0};
  const std::vector<double> b = {0.0, 0.0, 1.5, 2.5, -0.3, 1.0, nan, 2.0, 0.7, 0.0, -1.0, -0.0};
  const std::vector<double> da0 = {1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 2.0, 1.0, -1.0, 0.0, 1.0, 1.0};
  const std::vector<double> da1 = {0.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 3.0, 1.0, 0.0, 0.0};
  const std::vector<double> db0 = {0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0};
  const std::vector<double> db1 = {1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0};
  auto pair_at = [&](std::size_t first, auto& av, auto& bv) {  // lanes first .. first + kW - 1
    auto load = [&](const std::vector<double>& x) {
      HWY_ALIGN double lane[kW];
      for (int l = 0; l < kW; ++l) lane[l] = x[(first + l) % x.size()];
      return lanes::LaneVec(hwy::HWY_NAMESPACE::Load(lanes::Tag(), lane));
    };
    av = DV(load(a));
    bv = DV(load(b));
    av.d[0] = load(da0), av.d[1] = load(da1), bv.d[0] = load(db0), bv.d[1] = load(db1);
  };
  auto bits_equal = [](double x, double y) {
    std::uint64_t bx, by;
    std::memcpy(&bx, &x, sizeof bx);
    std::memcpy(&by, &y, sizeof by);
    return bx == by;
  };
  auto check = [&](const char* name, auto f) {
    for (std::size_t first = 0; first < a.size(); first += kW) {
      DV av, bv;
      pair_at(first, av, bv);
      const DV r = f(av, bv);
      HWY_ALIGN double value[kW], slot[2][kW];
      hwy::HWY_NAMESPACE::Store(r.v.v, lanes::Tag(), value);
      for (int k = 0; k < 2; ++k) hwy::HWY_NAMESPACE::Store(r.d[k].v, lanes::Tag(), slot[k]);
      for (int l = 0; l < kW; ++l) {
        const std::size_t i = (first + l) % a.size();
        DS as(a[i]), bs(b[i]);
        as.d[0] = da0[i], as.d[1] = da1[i], bs.d[0] = db0[i], bs.d[1] = db1[i];
        const DS rs = f(as, bs);
        SCOPED_TRACE(std::string(name) + " at a = " + std::to_string(a[i]) + ", b = " + std::to_string(b[i]));
        EXPECT_TRUE(bits_equal(value[l], rs.v)) << value[l] << " against " << rs.v;
        for (int k = 0; k < 2; ++k)
          EXPECT_TRUE(bits_equal(slot[k][l], rs.d[k])) << slot[k][l] << " against " << rs.d[k];
      }
    }
  };
  check("a + b", [](auto x, auto y) { return x + y; });
  check("a - b", [](auto x, auto y) { return x - y; });
  check("a * b", [](auto x, auto y) { return x * y; });
  check("a / b", [](auto x, auto y) { return x / y; });
  check("2 / a - b * 3", [](auto x, auto y) { return 2.0 / x - y * 3.0; });
  check("exp", [](auto x, auto) { return exp(x); });
  check("log", [](auto x, auto) { return log(x); });
  check("sqrt", [](auto x, auto) { return sqrt(x); });
  check("abs", [](auto x, auto) { return abs(x); });
  check("cbrt", [](auto x, auto) { return cbrt(x); });
  check("sin", [](auto x, auto) { return sin(x); });
  check("cos", [](auto x, auto) { return cos(x); });
  check("tan", [](auto x, auto) { return tan(x); });
  check("asin", [](auto x, auto) { return asin(x); });
  check("acos", [](auto x, auto) { return acos(x); });
  check("atan", [](auto x, auto) { return atan(x); });
  check("sinh", [](auto x, auto) { return sinh(x); });
  check("cosh", [](auto x, auto) { return cosh(x); });
  check("tanh", [](auto x, auto) { return tanh(x); });
  check("atan2", [](auto x, auto y) { return atan2(x, y); });
  check("pow", [](auto x, auto y) { return pow(x, y); });
  check("pow(a, 2.5)", [](auto x, auto) { return pow(x, 2.5); });
  check("pow(2, b)", [](auto, auto y) { return pow(2.0, y); });
  check("hypot", [](auto x, auto y) { return hypot(x, y); });
  check("fmin", [](auto x, auto y) { return fmin(x, y); });
  check("fmax", [](auto x, auto y) { return fmax(x, y); });
  check("elementary exp", [](auto x, auto) { return elementary::exp(x); });
  check("elementary log", [](auto x, auto) { return elementary::log(x); });
  check("elementary sin", [](auto x, auto) { return elementary::sin(x); });
  check("elementary cos", [](auto x, auto) { return elementary::cos(x); });
}
