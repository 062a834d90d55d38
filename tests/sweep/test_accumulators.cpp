// Accumulators on their own: Welford/Chan co-moments against a two-pass reference, the quantile
// sketch against exact order statistics within its stated bound, histograms, serialisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/sweep/distributions.hpp"
#include "saltation/sweep/histogram.hpp"
#include "saltation/sweep/moments.hpp"
#include "saltation/sweep/summary.hpp"

using namespace saltation::sweep;

namespace {

// Three correlated outputs on a large offset (1e6), where the textbook sum-of-squares formula
// loses about 12 digits.
std::vector<double> correlated_rows(int n) {
  std::vector<double> rows(3 * n);
  for (int i = 0; i < n; ++i) {
    const double z0 = inverse_normal_cdf(uniform01(1, Stream::MonteCarlo, i, 0));
    const double z1 = inverse_normal_cdf(uniform01(1, Stream::MonteCarlo, i, 1));
    rows[3 * i] = 1e6 + z0;
    rows[3 * i + 1] = 1e6 + 0.5 * z0 + z1;
    rows[3 * i + 2] = -3.0 + 1e-3 * z1;
  }
  return rows;
}

}  // namespace

TEST(SweepAccumulators, WelfordAndChanMatchATwoPassReference) {
  const int n = 20000, dim = 3;
  const std::vector<double> rows = correlated_rows(n);
  // Two-pass reference in long double.
  long double mean[dim] = {0, 0, 0}, cov[dim][dim] = {};
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < dim; ++a) mean[a] += rows[dim * i + a];
  for (auto& m : mean) m /= n;
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < dim; ++a)
      for (int b = 0; b < dim; ++b) cov[a][b] += (rows[dim * i + a] - mean[a]) * (rows[dim * i + b] - mean[b]);

  CoMoments sequential(dim);
  for (int i = 0; i < n; ++i) sequential.add(&rows[dim * i]);
  // Uneven pieces merged left to right.
  CoMoments merged(dim);
  const int bounds[] = {0, 1, 7, 5000, 5001, 19999, n};
  for (int piece_index = 0; piece_index + 1 < 7; ++piece_index) {
    CoMoments piece(dim);
    for (int i = bounds[piece_index]; i < bounds[piece_index + 1]; ++i) piece.add(&rows[dim * i]);
    merged.merge(piece);
  }
  for (const CoMoments* m : {&sequential, &merged}) {
    EXPECT_EQ(m->weight(), n);
    for (int a = 0; a < dim; ++a) {
      EXPECT_NEAR(m->mean(a), static_cast<double>(mean[a]), 1e-13 * std::abs(static_cast<double>(mean[a])));
      for (int b = 0; b < dim; ++b) {
        const double reference = static_cast<double>(cov[a][b] / (n - 1));
        const double scale = std::sqrt(static_cast<double>(cov[a][a] * cov[b][b])) / (n - 1);
        EXPECT_NEAR(m->covariance(a, b), reference, 1e-9 * scale) << a << "," << b;
      }
    }
  }
  // The one-pass textbook formula (sum x^2 - n mean^2) loses most digits here; Welford does not.
  double sum = 0, sum_squares = 0;
  for (int i = 0; i < n; ++i) {
    sum += rows[dim * i];
    sum_squares += rows[dim * i] * rows[dim * i];
  }
  const double textbook = (sum_squares - sum * sum / n) / (n - 1);
  const double reference_variance = static_cast<double>(cov[0][0] / (n - 1));
  EXPECT_GT(std::abs(textbook - reference_variance), 1e3 * std::abs(sequential.variance(0) - reference_variance));
  EXPECT_NEAR(sequential.standard_error(0), std::sqrt(sequential.variance(0) / n), 0.0);
  // Merging an empty accumulator on either side changes nothing, bit for bit.
  CoMoments empty(dim), left = sequential;
  left.merge(empty);
  EXPECT_EQ(left.to_json(), sequential.to_json());
  empty.merge(sequential);
  EXPECT_EQ(empty.to_json(), sequential.to_json());
}

TEST(SweepAccumulators, WeightsCountAsRepeatedSamples) {
  const std::vector<double> rows = correlated_rows(50);
  CoMoments weighted(3), repeated(3);
  for (int i = 0; i < 50; ++i) {
    const double w = 1 + i % 3;
    weighted.add(&rows[3 * i], w);
    for (int r = 0; r < w; ++r) repeated.add(&rows[3 * i]);
  }
  EXPECT_EQ(weighted.weight(), repeated.weight());
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(weighted.mean(a), repeated.mean(a), 1e-9);
    EXPECT_NEAR(weighted.comoment(a, a), repeated.comoment(a, a), 1e-9 * repeated.comoment(a, a));
  }
}

TEST(SweepAccumulators, QuantileSketchWithinItsStatedBound) {
  // Mixed signs, zeros, several decades: lognormal magnitudes, a fifth of them negative, some 0.
  const int n = 30001;
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) {
    const double magnitude = std::exp(3.0 * inverse_normal_cdf(uniform01(3, Stream::MonteCarlo, i, 0)));
    x[i] = i % 97 == 0 ? 0.0 : (i % 5 == 0 ? -magnitude : magnitude);
  }
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  for (int bits : {4, 7, 10}) {
    QuantileSketch sketch(bits), first_half(bits), second_half(bits);
    for (int i = 0; i < n; ++i) {
      sketch.add(x[i]);
      (i < n / 2 ? first_half : second_half).add(x[i]);
    }
    EXPECT_EQ(sketch.relative_error_bound(), std::ldexp(1.0, -(bits + 1)));
    for (double q : {0.0, 0.01, 0.05, 0.2, 0.5, 0.95, 0.99, 0.999, 1.0}) {
      const std::size_t k = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(q * n)));
      const double exact = sorted[k - 1];
      const double estimate = sketch.quantile(q);
      const double bound = std::max(sketch.relative_error_bound() * std::abs(exact), std::ldexp(1.0, -(1022 + bits)));
      EXPECT_LE(std::abs(estimate - exact), bound) << "q = " << q << ", m = " << bits;
    }
    // A coarse sketch is measurably off somewhere (the bound is not vacuous), yet within it.
    if (bits == 4) {
      EXPECT_NE(sketch.quantile(0.5), sorted[(n + 1) / 2 - 1]);
    }
    // Counts merge exactly: either order gives the same sketch.
    QuantileSketch forward = first_half, backward = second_half;
    forward.merge(second_half);
    backward.merge(first_half);
    EXPECT_EQ(forward.to_json(), sketch.to_json());
    EXPECT_EQ(backward.to_json(), sketch.to_json());
  }
}

TEST(SweepAccumulators, HistogramCountsBinsAndTails) {
  Histogram h({0.0, 1.0, 4});
  for (double v : {-0.1, 0.0, 0.2499, 0.25, 0.5, 0.99999999999999989, 1.0, 3.0}) h.add(v);
  EXPECT_EQ(h.below(), 1u);
  EXPECT_EQ(h.above(), 2u);
  EXPECT_EQ(h.counts(), (std::vector<std::uint64_t>{2, 1, 1, 1}));
  Histogram other({0.0, 1.0, 4});
  other.add(0.3);
  h.merge(other);
  EXPECT_EQ(h.counts()[1], 2u);
  EXPECT_THROW(h.merge(Histogram({0.0, 2.0, 4})), saltation::InvalidInput);
  EXPECT_EQ(Histogram::from_json(h.to_json()).to_json(), h.to_json());
}

TEST(SweepAccumulators, SummaryLeavesOutNonFiniteSamplesAndRoundTrips) {
  SummaryOptions options;
  options.n_outputs = 2;
  options.histograms = {{0.0, 10.0, 10}, {-1.0, 1.0, 5}};
  OutputSummary summary(options);
  const double rows[][2] = {{1.0, 0.5}, {NAN, 0.0}, {3.0, -0.5}, {2.0, HUGE_VAL}, {6.0, 0.25}};
  for (int i = 0; i < 5; ++i) summary.add(i, rows[i]);
  EXPECT_EQ(summary.n_samples(), 5u);
  EXPECT_EQ(summary.n_non_finite(), 2u);
  EXPECT_EQ(summary.moments().weight(), 3.0);
  EXPECT_DOUBLE_EQ(summary.moments().mean(0), 10.0 / 3.0);
  EXPECT_EQ(summary.min(0), 1.0);
  EXPECT_EQ(summary.max(1), 0.5);
  EXPECT_EQ(summary.quantiles(1).count(), 3u);
  EXPECT_EQ(summary.histogram(0).counts()[1], 1u);
  const auto report = summary.report();
  EXPECT_EQ(report["outputs"][0]["max"], 6.0);
  EXPECT_TRUE(report["outputs"][1].contains("q99"));
  // JSON text and CBOR both reproduce the state exactly, including the empty summary's +-inf.
  EXPECT_EQ(OutputSummary::from_json(nlohmann::json::parse(summary.to_json().dump())).to_json(), summary.to_json());
  const OutputSummary empty(options);
  EXPECT_EQ(OutputSummary::from_json(nlohmann::json::parse(empty.to_json().dump())).min(0), HUGE_VAL);
  EXPECT_EQ(
      nlohmann::json::to_cbor(
          OutputSummary::from_json(nlohmann::json::from_cbor(nlohmann::json::to_cbor(summary.to_json()))).to_json()),
      nlohmann::json::to_cbor(summary.to_json()));
}
