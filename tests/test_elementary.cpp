// saltation::elementary (elementary.hpp) against the C library: the largest error in ulps over
// random arguments across each function's range, held to the bound its header states, and the
// special values (zeros, infinities, NaN, subnormals, overflow and underflow).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "saltation/elementary.hpp"

namespace el = saltation::elementary;

namespace {

// The distance in ulps between two finite doubles (their bit patterns on one ordered line).
double ulps(double a, double b) {
  auto ordered = [](double x) {
    std::int64_t i;
    std::memcpy(&i, &x, sizeof i);
    return i < 0 ? std::numeric_limits<std::int64_t>::min() - i : i;
  };
  return std::fabs(static_cast<double>(ordered(a) - ordered(b)));
}

// The largest ulp distance between f and the library's g over `count` arguments whose magnitude
// is log-uniform in [low, high] (with both signs where `both_signs`).
template <class F, class G>
double max_ulps(F f, G g, double low, double high, bool both_signs, int count = 200000) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(std::log(low), std::log(high));
  double worst = 0.0;
  for (int k = 0; k < count; ++k) {
    double x = std::exp(u(rng));
    if (both_signs && (rng() & 1u)) x = -x;
    const double got = f(x), want = g(x);
    if (std::isfinite(want) && want != 0.0) worst = std::max(worst, ulps(got, want));
  }
  return worst;
}

double lib_exp(double x) { return std::exp(x); }
double lib_log(double x) { return std::log(x); }
double lib_sin(double x) { return std::sin(x); }
double lib_cos(double x) { return std::cos(x); }
double our_exp(double x) { return el::exp(x); }
double our_log(double x) { return el::log(x); }
double our_sin(double x) { return el::sin(x); }
double our_cos(double x) { return el::cos(x); }

}  // namespace

TEST(Elementary, ExpWithinOneUlp) {
  EXPECT_LE(max_ulps(our_exp, lib_exp, 1e-300, 700.0, true), 1.0);
  EXPECT_LE(max_ulps(our_exp, lib_exp, 700.0, 709.7, false), 1.0);
  EXPECT_LE(max_ulps(our_exp, lib_exp, -744.0, -708.0, false), 1.0);  // subnormal results
}

TEST(Elementary, LogWithinOneUlp) {
  EXPECT_LE(max_ulps(our_log, lib_log, 1e-320, 1e308, false), 1.0);
  EXPECT_LE(max_ulps(our_log, lib_log, 0.5, 2.0, false), 1.0);  // around 1, where log is small
}

TEST(Elementary, SinAndCosWithinOneAndAHalfUlpsToAHundredAndTwoBeyond) {
  EXPECT_LE(max_ulps(our_sin, lib_sin, 1e-300, 1e6, true), 2.0);
  EXPECT_LE(max_ulps(our_cos, lib_cos, 1e-300, 1e6, true), 2.0);
  EXPECT_LE(max_ulps(our_sin, lib_sin, 0.1, 100.0, true), 1.5);
  EXPECT_LE(max_ulps(our_cos, lib_cos, 0.1, 100.0, true), 1.5);
  // Near the zeros of sin and cos, where the reduction's accuracy decides.
  for (int k = -2000; k <= 2000; ++k) {
    const double x = k * 1.5707963267948966;
    EXPECT_LE(ulps(our_sin(x), lib_sin(x)), 1.5) << x;
    EXPECT_LE(ulps(our_cos(x), lib_cos(x)), 1.5) << x;
  }
}

TEST(Elementary, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(our_exp(0.0), 1.0);
  EXPECT_EQ(our_exp(-0.0), 1.0);
  EXPECT_EQ(our_exp(inf), inf);
  EXPECT_EQ(our_exp(-inf), 0.0);
  EXPECT_EQ(our_exp(710.0), inf);
  EXPECT_EQ(our_exp(709.78), lib_exp(709.78));
  EXPECT_EQ(our_exp(-746.0), 0.0);
  EXPECT_EQ(our_exp(-745.0), lib_exp(-745.0));  // the least subnormal
  EXPECT_TRUE(std::isnan(our_exp(nan)));
  EXPECT_EQ(our_log(1.0), 0.0);
  EXPECT_EQ(our_log(0.0), -inf);
  EXPECT_EQ(our_log(-0.0), -inf);
  EXPECT_EQ(our_log(inf), inf);
  EXPECT_TRUE(std::isnan(our_log(-1.0)));
  EXPECT_TRUE(std::isnan(our_log(-inf)));
  EXPECT_TRUE(std::isnan(our_log(nan)));
  EXPECT_EQ(our_log(4.9406564584124654e-324), lib_log(4.9406564584124654e-324));
  EXPECT_EQ(our_sin(0.0), 0.0);
  EXPECT_TRUE(std::signbit(our_sin(-0.0)));
  EXPECT_EQ(our_sin(1e-310), 1e-310);
  EXPECT_EQ(our_cos(0.0), 1.0);
  EXPECT_TRUE(std::isnan(our_sin(inf)));
  EXPECT_TRUE(std::isnan(our_cos(-inf)));
  EXPECT_TRUE(std::isnan(our_sin(nan)));
  EXPECT_EQ(our_sin(1e10), lib_sin(1e10));  // beyond the reduction's range: the library's value
  EXPECT_EQ(our_cos(-1e10), lib_cos(-1e10));
}

// The dual numbers' slopes: e^x, 1/x, cos x, -sin x.
TEST(Elementary, DualNumbersCarryTheSlopes) {
  const auto x = saltation::Dual<1>::variable(0.7, 0);
  EXPECT_EQ(el::exp(x).d[0], our_exp(0.7));
  EXPECT_EQ(el::log(x).d[0], 1.0 / 0.7);
  EXPECT_EQ(el::sin(x).d[0], our_cos(0.7));
  EXPECT_EQ(el::cos(x).d[0], -our_sin(0.7));
  EXPECT_EQ(el::sin(x).v, our_sin(0.7));
}
