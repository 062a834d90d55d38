// Dual-number elementary functions: values equal the double overloads bit for bit, derivatives
// agree with finite differences of the double overloads, and the rules dual.hpp documents at
// kinks and singular points hold. The functions are called unqualified from a namespace other
// than saltation, through using-declarations: the pattern dual.hpp documents for user models.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "saltation/dual.hpp"

namespace dual_test {

using saltation::abs;
using saltation::acos;
using saltation::asin;
using saltation::atan;
using saltation::atan2;
using saltation::cbrt;
using saltation::cos;
using saltation::cosh;
using saltation::exp;
using saltation::fmax;
using saltation::fmin;
using saltation::hypot;
using saltation::log;
using saltation::pow;
using saltation::sin;
using saltation::sinh;
using saltation::sqrt;
using saltation::tan;
using saltation::tanh;
using D2 = saltation::Dual<2>;

const double nan = std::numeric_limits<double>::quiet_NaN();

// d/dx f at x: Richardson-extrapolated central difference, (4 D(h/2) - D(h)) / 3.
double finite_difference(const std::function<double(double)>& f, double x) {
  const double h = 1e-4 * std::max(1.0, std::fabs(x));
  const double d1 = (f(x + h) - f(x - h)) / (2 * h), d2 = (f(x + h / 2) - f(x - h / 2)) / h;
  return (4 * d2 - d1) / 3;
}

void expect_derivative(double dual, double fd, const char* name, double x) {
  EXPECT_NEAR(dual, fd, 1e-8 * (1.0 + std::fabs(fd))) << name << " at " << x;
}

// One generic callable per function: it serves double and Dual<2> alike, as a model's code does.
template <class F>
void check_unary(const char* name, F f, const std::vector<double>& points) {
  for (double x : points) {
    D2 a = D2::variable(x, 0);
    a.d[1] = -0.5;  // a second slot, carried through the chain rule with its own factor
    const D2 r = f(a);
    EXPECT_EQ(r.v, f(x)) << name << " at " << x << ": the dual value must be the double overload's";
    const double fd = finite_difference([&](double y) { return f(y); }, x);
    expect_derivative(r.d[0], fd, name, x);
    EXPECT_EQ(r.d[1], -0.5 * r.d[0]) << name << " at " << x;
  }
}

// Both partials of f(a, b), and the mixed overloads f(Dual, double) and f(double, Dual).
template <class F>
void check_binary(const char* name, F f, const std::vector<std::pair<double, double>>& points) {
  for (const auto& point : points) {
    // Not a structured binding: C++17 lambdas cannot capture one (clang refuses, the ASan build).
    const double x = point.first, y = point.second;
    const D2 a = D2::variable(x, 0), b = D2::variable(y, 1);
    const D2 r = f(a, b);
    EXPECT_EQ(r.v, f(x, y)) << name << " at (" << x << ", " << y << ")";
    expect_derivative(r.d[0], finite_difference([&](double s) { return f(s, y); }, x), name, x);
    expect_derivative(r.d[1], finite_difference([&](double s) { return f(x, s); }, y), name, y);
    const D2 ra = f(a, y), rb = f(x, b);
    EXPECT_EQ(ra.v, r.v) << name;
    EXPECT_EQ(rb.v, r.v) << name;
    EXPECT_EQ(ra.d[0], r.d[0]) << name << "(Dual, double)";
    EXPECT_EQ(ra.d[1], 0.0) << name << "(Dual, double)";
    EXPECT_EQ(rb.d[0], 0.0) << name << "(double, Dual)";
    EXPECT_EQ(rb.d[1], r.d[1]) << name << "(double, Dual)";
  }
}

TEST(DualFunctions, UnaryAgainstFiniteDifferences) {
  check_unary("exp", [](const auto& x) { return exp(x); }, {-2.0, 0.0, 0.7, 3.0});
  check_unary("log", [](const auto& x) { return log(x); }, {0.1, 1.0, 2.5, 40.0});
  check_unary("sqrt", [](const auto& x) { return sqrt(x); }, {0.01, 1.0, 7.0});
  check_unary("cbrt", [](const auto& x) { return cbrt(x); }, {-8.0, -0.3, 0.5, 27.0});
  check_unary("abs", [](const auto& x) { return abs(x); }, {-1.5, 2.0});
  check_unary("sin", [](const auto& x) { return sin(x); }, {-2.0, 0.0, 0.4, 3.0});
  check_unary("cos", [](const auto& x) { return cos(x); }, {-2.0, 0.0, 0.4, 3.0});
  check_unary("tan", [](const auto& x) { return tan(x); }, {-1.2, 0.0, 0.4, 1.3});
  check_unary("asin", [](const auto& x) { return asin(x); }, {-0.9, 0.0, 0.5, 0.95});
  check_unary("acos", [](const auto& x) { return acos(x); }, {-0.9, 0.0, 0.5, 0.95});
  check_unary("atan", [](const auto& x) { return atan(x); }, {-5.0, 0.0, 0.5, 10.0});
  check_unary("sinh", [](const auto& x) { return sinh(x); }, {-2.0, 0.0, 0.3, 3.0});
  check_unary("cosh", [](const auto& x) { return cosh(x); }, {-2.0, 0.0, 0.3, 3.0});
  check_unary("tanh", [](const auto& x) { return tanh(x); }, {-2.0, 0.0, 0.3, 3.0});
}

TEST(DualFunctions, BinaryAgainstFiniteDifferences) {
  // atan2 in all four quadrants, on three half-axes, and just either side of the branch cut
  // (the negative x axis), where the value jumps by 2 pi but the derivatives are continuous.
  check_binary("atan2", [](const auto& y, const auto& x) { return atan2(y, x); },
               {{1.0, 2.0},
                {1.5, -0.5},
                {-0.7, -1.1},
                {-2.0, 0.3},
                {0.0, 2.0},
                {2.0, 0.0},
                {-2.0, 0.0},
                {1e-3, -2.0},
                {-1e-3, -2.0}});
  check_binary("pow", [](const auto& a, const auto& b) { return pow(a, b); },
               {{2.0, 3.5}, {0.5, -1.2}, {3.0, 0.0}, {1.7, 2.0}});
  check_binary("hypot", [](const auto& a, const auto& b) { return hypot(a, b); },
               {{3.0, 4.0}, {-1.0, 2.0}, {0.5, -0.1}, {0.0, 2.0}});
  check_binary("fmin", [](const auto& a, const auto& b) { return fmin(a, b); }, {{1.0, 2.0}, {2.0, 1.0}, {-3.0, 0.5}});
  check_binary("fmax", [](const auto& a, const auto& b) { return fmax(a, b); }, {{1.0, 2.0}, {2.0, 1.0}, {-3.0, 0.5}});
}

TEST(DualFunctions, QualifiedCallsServeBothScalars) {
  const D2 x = D2::variable(0.3, 0);
  EXPECT_EQ(saltation::sin(0.3), std::sin(0.3));
  EXPECT_EQ(saltation::sin(x).v, saltation::sin(0.3));
  EXPECT_EQ(saltation::sin(x).d[0], std::cos(0.3));
}

TEST(DualFunctions, AtanTwoOnTheNegativeXAxisAndAtTheOrigin) {
  // On the cut atan2(+0, x < 0) = pi; the partials are x / r^2 in y and -y / r^2 in x.
  const D2 r = atan2(D2::variable(0.0, 0), D2::variable(-2.0, 1));
  EXPECT_EQ(r.v, std::atan2(0.0, -2.0));
  EXPECT_EQ(r.d[0], -0.5);
  EXPECT_EQ(r.d[1], 0.0);
  // At the origin there is no derivative: 0 / 0.
  const D2 o = atan2(D2::variable(0.0, 0), D2::variable(0.0, 1));
  EXPECT_EQ(o.v, 0.0);
  EXPECT_TRUE(std::isnan(o.d[0]) && std::isnan(o.d[1]));
}

TEST(DualFunctions, AbsFminFmaxKinkConventions) {
  // abs at 0 takes the x >= 0 piece (slope +1), for +0 and -0 alike.
  EXPECT_EQ(abs(D2::variable(0.0, 0)).d[0], 1.0);
  EXPECT_EQ(abs(D2::variable(-0.0, 0)).d[0], 1.0);
  EXPECT_EQ(abs(D2::variable(-3.0, 0)).d[0], -1.0);
  // A tie takes the first argument's derivatives.
  const D2 a = D2::variable(1.0, 0), b = D2::variable(1.0, 1);
  for (const D2& r : {fmin(a, b), fmax(a, b)}) {
    EXPECT_EQ(r.v, 1.0);
    EXPECT_EQ(r.d[0], 1.0);
    EXPECT_EQ(r.d[1], 0.0);
  }
  EXPECT_EQ(fmin(b, a).d[1], 1.0);
  EXPECT_EQ(fmax(b, a).d[1], 1.0);
  // A NaN argument yields the other argument, value and derivatives.
  const D2 not_a_number = D2::variable(nan, 0), c = D2::variable(2.0, 1);
  for (const D2& r : {fmin(not_a_number, c), fmin(c, not_a_number), fmax(not_a_number, c), fmax(c, not_a_number)}) {
    EXPECT_EQ(r.v, 2.0);
    EXPECT_EQ(r.d[0], 0.0);
    EXPECT_EQ(r.d[1], 1.0);
  }
  // Against a constant: the derivative is the dual argument's where it is chosen, else zero.
  EXPECT_EQ(fmin(D2::variable(3.0, 0), 2.0).d[0], 0.0);
  EXPECT_EQ(fmin(D2::variable(1.0, 0), 2.0).d[0], 1.0);
  EXPECT_EQ(fmax(2.0, D2::variable(3.0, 0)).d[0], 1.0);
}

TEST(DualFunctions, PowSpecialCases) {
  // A negative base with an integral exponent: exact value and slope n x^(n-1); an int exponent
  // is the same call as its double.
  const D2 x = D2::variable(-2.0, 0);
  const D2 cube = pow(x, 3);
  EXPECT_EQ(cube.v, -8.0);
  EXPECT_EQ(cube.d[0], 12.0);
  EXPECT_EQ(pow(x, 3.0).d[0], cube.d[0]);
  expect_derivative(cube.d[0], finite_difference([](double s) { return pow(s, 3.0); }, -2.0), "pow(x, 3)", -2.0);
  EXPECT_EQ(pow(x, -2).d[0], -2.0 * std::pow(-2.0, -3.0));
  // A constant exponent in a dual (zero slots) brings no log of the negative base in.
  const D2 square = pow(D2::variable(-1.5, 0), D2(2.0));
  EXPECT_EQ(square.v, 2.25);
  EXPECT_EQ(square.d[0], -3.0);
  EXPECT_EQ(square.d[1], 0.0);
  // A varying exponent of a negative base has no derivative.
  EXPECT_TRUE(std::isnan(pow(-2.0, D2::variable(3.0, 1)).d[1]));
  // x^0 is constant, also at x = 0; 0^b is 0 for b > 0, with zero slope in b.
  const D2 zero_power = pow(D2::variable(0.0, 0), 0.0);
  EXPECT_EQ(zero_power.v, 1.0);
  EXPECT_EQ(zero_power.d[0], 0.0);
  const D2 power_of_zero = pow(0.0, D2::variable(0.5, 1));
  EXPECT_EQ(power_of_zero.v, 0.0);
  EXPECT_EQ(power_of_zero.d[1], 0.0);
  // A non-integral power of a negative base is NaN, as for doubles.
  EXPECT_TRUE(std::isnan(pow(x, 0.5).v));
}

TEST(DualFunctions, HypotAtTheOriginHasZeroDerivatives) {
  const D2 r = hypot(D2::variable(0.0, 0), D2::variable(0.0, 1));
  EXPECT_EQ(r.v, 0.0);
  EXPECT_EQ(r.d[0], 0.0);
  EXPECT_EQ(r.d[1], 0.0);
  // Off the origin, along an axis, it is |x|'s slope.
  EXPECT_EQ(hypot(D2::variable(-2.0, 0), 0.0).d[0], -1.0);
}

TEST(DualFunctions, NoDerivativeWhereTheFunctionHasNone) {
  EXPECT_TRUE(std::isinf(sqrt(D2::variable(0.0, 0)).d[0]));
  EXPECT_TRUE(std::isinf(cbrt(D2::variable(0.0, 0)).d[0]));
  EXPECT_TRUE(std::isinf(asin(D2::variable(1.0, 0)).d[0]));
  EXPECT_TRUE(std::isinf(acos(D2::variable(-1.0, 0)).d[0]));
}

// The table exp (numeric.hpp): within 0.52 ulp of long double expl over the range the terrain
// uses and beyond, exact at 0, 0 and +inf outside the range, NaN through; the dual's value is it.
TEST(ExpByTable, WithinHalfAnUlpOfLongDoubleExp) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> near(-45.0, 0.0), far(-708.0, 709.0);
  double worst = 0.0;
  for (int i = 0; i < 400000; ++i) {
    const double x = (i % 4 == 0) ? far(rng) : near(rng);
    const double e = saltation::exp_by_table(x);
    const long double truth = expl(static_cast<long double>(x));
    const double ulp = std::nextafter(static_cast<double>(truth), INFINITY) - static_cast<double>(truth);
    worst = std::max(worst, static_cast<double>(fabsl(e - truth) / ulp));
  }
  std::printf("largest error %.3f ulp\n", worst);
  EXPECT_LE(worst, 0.52);
  EXPECT_EQ(saltation::exp_by_table(0.0), 1.0);
  EXPECT_EQ(saltation::exp_by_table(-709.0), 0.0);
  EXPECT_EQ(saltation::exp_by_table(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(saltation::exp_by_table(710.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(saltation::exp_by_table(std::nan(""))));
  const D2 d = saltation::exp_by_table(D2::variable(-1.5, 0));
  EXPECT_EQ(d.v, saltation::exp_by_table(-1.5));
  EXPECT_EQ(d.d[0], d.v);
}

// The guard bound's e^-s (numeric.hpp): never below e^-s beyond its rounding, at most 6.2 % above
// it, over the range a bump's reach gives (s <= 39) and beyond; capped at 2^-1000, NaN included.
TEST(ExpNegUpperBound, AboveExpAndAtMostSixPercentLoose) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> reach(0.0, 39.2), far(0.0, 690.0);
  double lowest = 1e300, highest = 0.0;
  for (int i = 0; i < 400000; ++i) {
    const double s = i < 2000 ? i * 0.0196 : (i % 4 == 0 ? far(rng) : reach(rng));
    const long double ratio = saltation::exp_neg_upper_bound(s) / expl(-static_cast<long double>(s));
    lowest = std::min(lowest, static_cast<double>(ratio));
    highest = std::max(highest, static_cast<double>(ratio));
  }
  std::printf("bound / e^-s in [%.15f, %.6f]\n", lowest, highest);
  EXPECT_GE(lowest, 1.0 - 1e-13);
  EXPECT_LE(highest, 1.0625);
  EXPECT_EQ(saltation::exp_neg_upper_bound(0.0), 1.0);
  EXPECT_NEAR(saltation::exp_neg_upper_bound(std::log(2.0) * 3.0), 0.125, 1e-15);
  EXPECT_EQ(saltation::exp_neg_upper_bound(1e6), std::ldexp(1.0, -1000));
  EXPECT_EQ(saltation::exp_neg_upper_bound(std::nan("")), std::ldexp(1.0, -1000));
}

#if SALTATION_HOST_VECTORS
// The host vector version gives each element the scalar's bits (the terrain ball's grouped bumps
// rely on it), in range and out of it.
TEST(ExpByTable, FourAtOnceGiveTheScalarBits) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> wide(-760.0, 760.0), near(-45.0, 0.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double special[] = {0.0,         -0.0, -708.0, -708.0000001, 709.78,
                            709.7800001, inf,  -inf,   std::nan(""), std::numeric_limits<double>::denorm_min()};
  long differing = 0;
  for (int i = 0; i < 200000; ++i) {
    double x[4];
    for (int e = 0; e < 4; ++e) x[e] = (i + e) % 3 == 0 ? wide(rng) : near(rng);
    if (i < 10) x[i % 4] = special[i];
    const saltation::Double4 v = saltation::exp_by_table(saltation::Double4{x[0], x[1], x[2], x[3]});
    for (int e = 0; e < 4; ++e) {
      const double one = saltation::exp_by_table(x[e]), four = v[e];
      if (std::memcmp(&one, &four, sizeof one) != 0) ++differing;
    }
  }
  EXPECT_EQ(differing, 0);
}

// exp_in_range (the terrain's bumps): exp_by_table's bits in every element in range, whatever the
// other elements hold (out of range, infinite, NaN: their results are the caller's to mask away).
TEST(ExpByTable, InRangeElementsKeepTheirBitsBesideAnyOthers) {
  std::mt19937_64 rng(14);
  std::uniform_real_distribution<double> in_range(-708.0, 709.78), reach(-39.2, 0.0), wide(-1e6, 1e6);
  const double inf = std::numeric_limits<double>::infinity();
  const double outside[] = {-708.0000001, 709.7800001, -1e300, 1e300, -inf, inf, std::nan("")};
  long differing = 0;
  for (int i = 0; i < 200000; ++i) {
    double x[4];
    bool kept[4];
    for (int e = 0; e < 4; ++e) {
      const int kind = static_cast<int>((i + 3 * e) % 4);
      kept[e] = kind < 3;
      x[e] = kind == 0 ? in_range(rng) : kind < 3 ? reach(rng) : (i % 2 ? wide(rng) : outside[i % 7]);
      if (!kept[e] && x[e] >= -708.0 && x[e] <= 709.78) kept[e] = true;
    }
    const saltation::Double4 v = saltation::exp_in_range(saltation::Double4{x[0], x[1], x[2], x[3]});
    for (int e = 0; e < 4; ++e) {
      if (!kept[e]) continue;
      const double one = saltation::exp_by_table(x[e]), four = v[e];
      if (std::memcmp(&one, &four, sizeof one) != 0) ++differing;
    }
  }
  EXPECT_EQ(differing, 0);
  EXPECT_EQ(saltation::exp_in_range(-1.5), saltation::exp_by_table(-1.5));  // one double: exp_by_table
}

// A host group of W columns (the jump's eight, the terrain's four) gives each element the bits of
// the one-column code: load and store keep every bit, add_at adds x at its element only (a -0
// kept: -0 plus -0 is -0, where +0 would give +0), and the pairwise sum adds halves first.
template <int W>
void expect_group_gives_the_column_bits() {
  using Gr = saltation::Group<double, W>;
  static_assert(Gr::size == W, "host groups are W wide");
  double v[W], w[W], out[W];
  for (int e = 0; e < W; ++e) {
    v[e] = e % 3 == 0 ? -0.0 : 0.1 * (e + 1);
    w[e] = 1.0 / (e + 3);
  }
  Gr::store(Gr::load(v), out);
  for (int e = 0; e < W; ++e) EXPECT_EQ(std::memcmp(&out[e], &v[e], sizeof v[e]), 0) << "load element " << e;
  for (int at = 0; at < W; ++at) {
    auto g = Gr::make(v);
    Gr::add_at(g, at, -0.0);
    Gr::add_at(g, at, w[at]);
    Gr::store(g, out);
    for (int e = 0; e < W; ++e) {
      const double expected = e == at ? (v[e] + -0.0) + w[e] : v[e];
      EXPECT_EQ(std::memcmp(&out[e], &expected, sizeof expected), 0) << "add_at " << at << " element " << e;
    }
    auto z = Gr::make(v);
    Gr::add_at(z, at, -0.0);
    if (v[at] == 0.0) {
      EXPECT_TRUE(std::signbit(Gr::at(z, at))) << "a -0 plus -0 stays -0 at " << at;
    }
  }
  const auto g = Gr::make(w);
  double expected = 0.0;
  if constexpr (W == 4) expected = (w[0] + w[1]) + (w[2] + w[3]);
  if constexpr (W == 8) expected = ((w[0] + w[1]) + (w[2] + w[3])) + ((w[4] + w[5]) + (w[6] + w[7]));
  EXPECT_EQ(Gr::sum(g), expected);
}

TEST(HostGroups, EachElementGetsTheOneColumnBits) {
  expect_group_gives_the_column_bits<4>();
  expect_group_gives_the_column_bits<8>();
}
#endif

}  // namespace dual_test
