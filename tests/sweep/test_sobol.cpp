// Sobol indices: the Saltelli design's rows, the Ishigami function, and a dropped ball's second
// impact time t2 = sqrt(2 h0 / g) (1 + 2 e) against closed forms.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/sweep/block_reduction.hpp"
#include "saltation/sweep/sobol.hpp"
#include "saltation/sweep/summary.hpp"

using namespace saltation::sweep;

namespace {

constexpr double pi = 3.14159265358979323846;

// Runs the Saltelli design of `dists` through the block tree with model f(theta).
template <class Model>
SobolIndices sobol_study(const std::vector<Distribution>& dists, std::uint64_t seed, std::uint64_t n_base,
                         int n_resamples, Model f) {
  const std::uint32_t P = static_cast<std::uint32_t>(dists.size());
  const std::uint32_t k = count_factors(dists.data(), P);
  const auto fill = [&](std::uint64_t first, std::uint64_t count, double* out) {
    std::vector<double> theta(P);
    for (std::uint64_t i = 0; i < count; ++i)
      for (std::uint32_t m = 0; m < k + 2; ++m) {
        saltelli_parameters(dists.data(), P, seed, first + i, m, theta.data());
        out[m * count + i] = f(theta.data());
      }
  };
  const SobolAccumulator empty(static_cast<int>(k), seed, n_resamples);
  return reduce_all(empty, BlockLayout{n_base, 4096}, ExecutionPlan{4096, 2}, fill).indices(0.95);
}

void expect_within_intervals(const SobolIndices& s, const std::vector<double>& S1, const std::vector<double>& ST,
                             double max_conf) {
  for (std::size_t i = 0; i < S1.size(); ++i) {
    std::printf("  factor %zu: S1 = %.4f +- %.4f (exact %.4f), ST = %.4f +- %.4f (exact %.4f)\n", i, s.S1[i],
                s.S1_conf[i], S1[i], s.ST[i], s.ST_conf[i], ST[i]);
    // 95 % half-widths: two of them is about four standard deviations.
    EXPECT_NEAR(s.S1[i], S1[i], 2 * s.S1_conf[i]) << "S1 of factor " << i;
    EXPECT_NEAR(s.ST[i], ST[i], 2 * s.ST_conf[i]) << "ST of factor " << i;
    EXPECT_GT(s.S1_conf[i], 0.0);
    EXPECT_LT(s.S1_conf[i], max_conf);
    EXPECT_LT(s.ST_conf[i], max_conf);
  }
}

}  // namespace

TEST(SweepSobol, SaltelliRowsTakeColumnIFromB) {
  const std::vector<Distribution> dists = {Distribution::uniform(0, 1), Distribution::fixed(2.5),
                                           Distribution::normal(0, 1), Distribution::design(-1.0),
                                           Distribution::uniform(5, 6)};
  ASSERT_EQ(count_factors(dists.data(), 5), 3u);
  double a[5], b[5], ab[5];
  saltelli_parameters(dists.data(), 5, 11, 77, SaltelliA, a);
  saltelli_parameters(dists.data(), 5, 11, 77, SaltelliB, b);
  double mc[5];
  sample_parameters(dists.data(), 5, 11, 77, mc);
  for (int p = 0; p < 5; ++p) EXPECT_EQ(a[p], mc[p]) << "A is the plain Monte Carlo sample";
  const int factor_parameter[] = {0, 2, 4};
  for (std::uint32_t i = 0; i < 3; ++i) {
    saltelli_parameters(dists.data(), 5, 11, 77, saltelli_ab(i), ab);
    for (int p = 0; p < 5; ++p) EXPECT_EQ(ab[p], p == factor_parameter[i] ? b[p] : a[p]) << i << ", " << p;
  }
  EXPECT_EQ(b[1], 2.5);
  EXPECT_EQ(b[3], -1.0);
  for (int p : factor_parameter) EXPECT_NE(a[p], b[p]);
}

TEST(SweepSobol, IshigamiIndicesWithinTheirIntervals) {
  // f = sin x1 + a sin^2 x2 + b x3^4 sin x1, x ~ U(-pi, pi)^3 (Ishigami & Homma 1990).
  const double a = 7.0, b = 0.1;
  const double v1 = 0.5 * std::pow(1 + b * std::pow(pi, 4) / 5, 2), v2 = a * a / 8;
  const double v13 = 8 * b * b * std::pow(pi, 8) / 225;
  const double v = v1 + v2 + v13;
  const std::vector<double> S1 = {v1 / v, v2 / v, 0.0}, ST = {(v1 + v13) / v, v2 / v, v13 / v};
  EXPECT_NEAR(S1[0], 0.3139, 1e-4);
  EXPECT_NEAR(ST[2], 0.2437, 1e-4);
  const std::vector<Distribution> dists(3, Distribution::uniform(-pi, pi));
  const auto start = std::chrono::steady_clock::now();
  const SobolIndices s = sobol_study(dists, 2010, 1 << 16, 100, [&](const double* x) {
    return std::sin(x[0]) + a * std::sin(x[1]) * std::sin(x[1]) + b * std::pow(x[2], 4) * std::sin(x[0]);
  });
  std::printf("  Ishigami, N = %llu, %.2f s\n", static_cast<unsigned long long>(s.n_base_samples),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_EQ(s.n_base_samples, 1u << 16);
  EXPECT_NEAR(s.variance, v, 0.02 * v);
  expect_within_intervals(s, S1, ST, 0.05);
  const auto j = s.to_json();
  for (const char* key : {"S1", "S1_conf", "ST", "ST_conf"}) EXPECT_EQ(j.at(key).size(), 3u) << key;
}

TEST(SweepSobol, DroppedBallSecondImpactAgainstClosedForms) {
  // t2 = X Y, X = sqrt(2 h0 / g), Y = 1 + 2 e, h0 ~ U(h_lo, h_hi), e ~ U(e_lo, e_hi), independent:
  // E[X] = sqrt(2/g) (2/3) (h_hi^1.5 - h_lo^1.5) / (h_hi - h_lo),  E[X^2] = (h_lo + h_hi) / g,
  // E[Y] = 1 + e_lo + e_hi,  Var Y = 4 (e_hi - e_lo)^2 / 12,
  // V = E[X^2] E[Y^2] - E[X]^2 E[Y]^2,  V_h0 = E[Y]^2 Var X,  V_e = E[X]^2 Var Y,
  // and with two factors ST_h0 = 1 - S1_e, ST_e = 1 - S1_h0.
  const double g = 9.81, h_lo = 1.0, h_hi = 2.0, e_lo = 0.5, e_hi = 0.9;
  const double ex = std::sqrt(2 / g) * (2.0 / 3.0) * (std::pow(h_hi, 1.5) - std::pow(h_lo, 1.5)) / (h_hi - h_lo);
  const double ex2 = (h_lo + h_hi) / g;
  const double ey = 1 + e_lo + e_hi, vy = 4 * (e_hi - e_lo) * (e_hi - e_lo) / 12, ey2 = vy + ey * ey;
  const double v = ex2 * ey2 - ex * ex * ey * ey;
  const double s_h = ey * ey * (ex2 - ex * ex) / v, s_e = ex * ex * vy / v;
  const std::vector<Distribution> dists = {Distribution::uniform(h_lo, h_hi), Distribution::uniform(e_lo, e_hi),
                                           Distribution::fixed(g)};
  const auto t2 = [](const double* theta) { return std::sqrt(2 * theta[0] / theta[2]) * (1 + 2 * theta[1]); };

  // The mean from a plain Monte Carlo summary.
  const std::uint64_t seed = 1979;
  const auto fill = [&](std::uint64_t first, std::uint64_t count, double* out) {
    for (std::uint64_t i = 0; i < count; ++i) {
      double theta[3];
      sample_parameters(dists.data(), 3, seed, first + i, theta);
      out[i] = t2(theta);
    }
  };
  SummaryOptions options;
  const OutputSummary summary = reduce_all(OutputSummary(options), BlockLayout{200000, 4096}, {4096, 2}, fill);
  EXPECT_NEAR(summary.moments().mean(0), ex * ey, 4 * summary.moments().standard_error(0));
  EXPECT_NEAR(summary.moments().variance(0), v, 0.02 * v);
  EXPECT_LT(summary.moments().standard_error(0), 1e-3);

  const SobolIndices s = sobol_study(dists, seed, 1 << 16, 100, t2);
  EXPECT_NEAR(s.mean, ex * ey, 4 * std::sqrt(v / s.n_base_samples));
  expect_within_intervals(s, {s_h, s_e}, {1 - s_e, 1 - s_h}, 0.02);
}

TEST(SweepSobol, IntervalsShrinkLikeOneOverRootN) {
  const std::vector<Distribution> dists = {Distribution::uniform(0, 1), Distribution::uniform(0, 1)};
  const auto f = [](const double* x) { return x[0] + 2 * x[1] * x[1] + x[0] * x[1]; };
  const SobolIndices small = sobol_study(dists, 5, 1 << 12, 200, f);
  const SobolIndices large = sobol_study(dists, 5, 1 << 14, 200, f);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(small.S1_conf[i] / large.S1_conf[i], 2.0, 0.6) << i;
    EXPECT_NEAR(small.ST_conf[i] / large.ST_conf[i], 2.0, 0.6) << i;
  }
}

TEST(SweepSobol, AccumulatorRoundTripsAndSkipsNonFiniteSamples) {
  SobolAccumulator acc(2, 3, 10);
  const double rows[][4] = {{1, 2, 3, 4}, {NAN, 1, 1, 1}, {2, 0, 1, 5}, {0.5, 1.5, 2.5, 0}};
  for (int i = 0; i < 4; ++i) acc.add(i, rows[i]);
  const SobolIndices s = acc.indices();
  EXPECT_EQ(s.n_base_samples, 3u);
  EXPECT_EQ(s.n_non_finite, 1u);
  EXPECT_EQ(SobolAccumulator::from_json(nlohmann::json::parse(acc.to_json().dump())).to_json(), acc.to_json());
  EXPECT_THROW(acc.merge(SobolAccumulator(2, 4, 10)), saltation::InvalidInput);
}
