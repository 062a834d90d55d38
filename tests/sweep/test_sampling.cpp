// Counter-based sampling: Philox known answers, the exact u01 mapping, the inverse normal CDF,
// streams that depend on nothing but (seed, stream, index, slot), and each distribution's moments.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/sweep/distributions.hpp"
#include "saltation/sweep/random.hpp"

using namespace saltation::sweep;

namespace {

// Random123's published known answers for philox2x64_10 (examples/kat_vectors in Random123 1.14):
// counter, key -> output.
struct PhiloxAnswer {
  std::uint64_t counter0, counter1, key, out0, out1;
};
constexpr PhiloxAnswer philox_answers[] = {
    {0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0xca00a0459843d731, 0x66c24222c9a845b5},
    {0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff, 0x65b021d60cd8310f, 0x4d02f3222f86df20},
    {0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x0a5e742c2997341c, 0xb0f883d38000de5d},
};

}  // namespace

TEST(SweepSampling, PhiloxKnownAnswersThroughOurCounterLayout) {
  for (const auto& answer : philox_answers) {
    r123::Philox2x64 philox;
    const auto out = philox({{answer.counter0, answer.counter1}}, {{answer.key}});
    EXPECT_EQ(out[0], answer.out0);
    EXPECT_EQ(out[1], answer.out1);
    // counter = {index, stream << 32 | slot}, key = {seed}: the same answer through philox_bits.
    const auto stream = static_cast<Stream>(answer.counter1 >> 32);
    const auto slot = static_cast<std::uint32_t>(answer.counter1 & 0xffffffffu);
    EXPECT_EQ(philox_bits(answer.key, stream, answer.counter0, slot), answer.out0);
  }
}

TEST(SweepSampling, U01MappingIsExactAndStaysInsideTheOpenInterval) {
  EXPECT_EQ(u01_from_bits(0), 0x1p-53);
  EXPECT_EQ(u01_from_bits(~std::uint64_t(0)), 1.0 - 0x1p-53);
  EXPECT_LT(u01_from_bits(~std::uint64_t(0)), 1.0);
  // The low 12 bits are dropped; k = bits >> 12 gives (k + 1/2) 2^-52 exactly.
  EXPECT_EQ(u01_from_bits(0xfff), 0x1p-53);
  EXPECT_EQ(u01_from_bits(std::uint64_t(3) << 12), 3.5 * 0x1p-52);
  EXPECT_EQ(u01_from_bits(std::uint64_t(1) << 63), 0.5 + 0x1p-53);
  EXPECT_EQ(uniform01(7, Stream::MonteCarlo, 11, 2), u01_from_bits(philox_bits(7, Stream::MonteCarlo, 11, 2)));
}

TEST(SweepSampling, InverseNormalCdfIsAccurateIntoBothTails) {
  EXPECT_EQ(inverse_normal_cdf(0.5), 0.0);
  EXPECT_NEAR(inverse_normal_cdf(0.975), 1.959963984540054, 1e-15);
  EXPECT_NEAR(inverse_normal_cdf(0.025), -1.959963984540054, 1e-15);
  EXPECT_NEAR(inverse_normal_cdf(1e-10), -6.361340902404056, 1e-14);
  // Phi(x(p)) = p, in relative terms. Phi's condition number in the lower tail is about x^2, so a
  // 1e-16 relative error in x shows as ~x^2 1e-16 in p: the tolerance follows it.
  for (int k = 1; k <= 1000; k += 3) {
    const double p = std::ldexp(1.0, -k);
    const double x = inverse_normal_cdf(p);
    EXPECT_NEAR(normal_cdf(x) / p, 1.0, 2e-15 * (1.0 + x * x)) << "p = 2^-" << k;
    EXPECT_EQ(inverse_normal_cdf(1.0 - p), p < 0x1p-53 ? HUGE_VAL : -inverse_normal_cdf(1.0 - (1.0 - p)))
        << "symmetry at 1 - 2^-" << k;
  }
  for (int i = 1; i < 1000; ++i) {
    const double p = i / 1000.0;
    EXPECT_NEAR(normal_cdf(inverse_normal_cdf(p)), p, 4e-16) << p;
  }
  EXPECT_EQ(inverse_normal_cdf(0.0), -HUGE_VAL);
  EXPECT_EQ(inverse_normal_cdf(1.0), HUGE_VAL);
}

TEST(SweepSampling, RowsDependOnlyOnSeedIndexAndParameter) {
  const std::vector<Distribution> dists = {Distribution::uniform(1.0, 2.0), Distribution::fixed(9.81),
                                           Distribution::normal(0.0, 1.0), Distribution::design(0.7),
                                           Distribution::lognormal(0.0, 0.5)};
  const std::uint32_t P = static_cast<std::uint32_t>(dists.size());
  const std::uint64_t seed = 20240531, first = 1000003, n = 10000;
  std::vector<double> reference(n * P);
  for (std::uint64_t i = 0; i < n; ++i) sample_parameters(dists.data(), P, seed, first + i, &reference[i * P]);
  // Chunked in several batch sizes, in reverse chunk order, and from two threads.
  for (std::uint64_t chunk : {1u, 37u, 4096u}) {
    std::vector<double> rows(n * P);
    const std::int64_t n_chunks = static_cast<std::int64_t>((n + chunk - 1) / chunk);
#pragma omp parallel for num_threads(2) schedule(dynamic, 1)
    for (std::int64_t c = n_chunks - 1; c >= 0; --c)
      for (std::uint64_t i = c * chunk; i < std::min<std::uint64_t>((c + 1) * chunk, n); ++i)
        sample_parameters(dists.data(), P, seed, first + i, &rows[i * P]);
    EXPECT_EQ(rows, reference) << "chunk " << chunk;
  }
  // Constants are not drawn; another seed changes every random column.
  std::vector<double> other(P);
  sample_parameters(dists.data(), P, seed + 1, first, other.data());
  EXPECT_EQ(other[1], 9.81);
  EXPECT_EQ(other[3], 0.7);
  EXPECT_NE(other[0], reference[0]);
  EXPECT_NE(other[2], reference[2]);
}

TEST(SweepSampling, StreamsAndSlotsAreUncorrelated) {
  const int n = 100000;
  double sum_ab = 0, sum_slots = 0, sum_a = 0;
  for (int i = 0; i < n; ++i) {
    const double a = uniform01(5, Stream::MonteCarlo, i, 0) - 0.5;
    const double b = uniform01(5, Stream::SaltelliB, i, 0) - 0.5;
    const double a1 = uniform01(5, Stream::MonteCarlo, i, 1) - 0.5;
    sum_ab += a * b;
    sum_slots += a * a1;
    sum_a += a;
  }
  // Each product has sd 1/12; the mean of a uniform - 1/2 has sd sqrt(1/12).
  const double se_product = (1.0 / 12.0) / std::sqrt(n), se_mean = std::sqrt(1.0 / 12.0 / n);
  EXPECT_LT(std::abs(sum_ab / n), 4 * se_product);
  EXPECT_LT(std::abs(sum_slots / n), 4 * se_product);
  EXPECT_LT(std::abs(sum_a / n), 4 * se_mean);
}

namespace {

struct SampleMoments {
  double mean, variance, mean_se, variance_se, min, max;
};

SampleMoments draw_moments(const Distribution& d, int n) {
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = draw_parameter(d, 99, Stream::MonteCarlo, i, 3);
  double mean = 0;
  for (double v : x) mean += v;
  mean /= n;
  double m2 = 0, m4 = 0, lo = x[0], hi = x[0];
  for (double v : x) {
    m2 += (v - mean) * (v - mean);
    m4 += std::pow(v - mean, 4);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  m2 /= n;
  m4 /= n;
  return {mean, m2, std::sqrt(m2 / n), std::sqrt((m4 - m2 * m2) / n), lo, hi};
}

void expect_moments(const Distribution& d, double mean, double variance, const char* what) {
  const SampleMoments s = draw_moments(d, 200000);
  EXPECT_NEAR(s.mean, mean, 4 * s.mean_se) << what;
  EXPECT_NEAR(s.variance, variance, 4 * s.variance_se) << what;
}

}  // namespace

TEST(SweepSampling, DistributionMomentsWithinStandardErrors) {
  const double pi = 3.14159265358979323846;
  const auto phi = [&](double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * pi); };
  expect_moments(Distribution::uniform(-1.0, 3.0), 1.0, 16.0 / 12.0, "uniform");
  expect_moments(Distribution::normal(2.0, 0.5), 2.0, 0.25, "normal");
  const double mu = 0.3, sigma = 0.4;
  expect_moments(Distribution::lognormal(mu, sigma), std::exp(mu + sigma * sigma / 2),
                 (std::exp(sigma * sigma) - 1) * std::exp(2 * mu + sigma * sigma), "lognormal");
  // Truncated normal: mean m + s (phi(a) - phi(b)) / Z, variance
  // s^2 [1 + (a phi(a) - b phi(b)) / Z - ((phi(a) - phi(b)) / Z)^2].
  struct Truncation {
    double mean, sigma, low, high;
  };
  for (const Truncation t : {Truncation{1.0, 2.0, -1.0, 4.0}, Truncation{0.0, 1.0, 5.0, HUGE_VAL},
                             Truncation{0.0, 1.0, -HUGE_VAL, -3.0}, Truncation{10.0, 0.1, 10.05, 10.06}}) {
    const double a = (t.low - t.mean) / t.sigma, b = (t.high - t.mean) / t.sigma;
    const double z = a >= 0 ? normal_upper_tail(a) - normal_upper_tail(b) : normal_cdf(b) - normal_cdf(a);
    const double pa = std::isfinite(a) ? phi(a) : 0.0, pb = std::isfinite(b) ? phi(b) : 0.0;
    const double apa = std::isfinite(a) ? a * pa : 0.0, bpb = std::isfinite(b) ? b * pb : 0.0;
    const double shift = (pa - pb) / z;
    const Distribution d = Distribution::truncnormal(t.mean, t.sigma, t.low, t.high);
    expect_moments(d, t.mean + t.sigma * shift, t.sigma * t.sigma * (1 + (apa - bpb) / z - shift * shift),
                   "truncnormal");
    const SampleMoments s = draw_moments(d, 20000);
    EXPECT_GE(s.min, t.low);
    EXPECT_LE(s.max, t.high);
  }
}

TEST(SweepSampling, InvalidDistributionsAreRejected) {
  EXPECT_NO_THROW(validate_distribution(Distribution::truncnormal(0, 1, 5, HUGE_VAL), "x"));
  EXPECT_THROW(validate_distribution(Distribution::uniform(2, 1), "h0"), saltation::InvalidInput);
  EXPECT_THROW(validate_distribution(Distribution::normal(0, 0), "e"), saltation::InvalidInput);
  EXPECT_THROW(validate_distribution(Distribution::lognormal(0, -1), "e"), saltation::InvalidInput);
  EXPECT_THROW(validate_distribution(Distribution::fixed(NAN), "g"), saltation::InvalidInput);
  EXPECT_THROW(validate_distribution(Distribution::truncnormal(0, 1, 1, 1), "k"), saltation::InvalidInput);
  EXPECT_THROW(validate_distribution(Distribution::truncnormal(0, 1, 40, 41), "k"), saltation::InvalidInput);
}
