// Scrambled Sobol' points (qmc.hpp): the unscrambled points are Boost's Sobol' sequence, the
// scrambled ones keep the net's stratification in every dimension and in the first two together,
// are random access, and integrate a smooth function far better than random points.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <boost/random/sobol.hpp>

#include "saltation/errors.hpp"
#include "saltation/sweep/qmc.hpp"

using saltation::sweep::ScrambledSobol;

TEST(ScrambledSobol, UnscrambledPointsAreBoostsSequenceWithPointZeroKept) {
  const std::uint32_t dims = 7;
  const ScrambledSobol points(dims, 1);
  boost::random::sobol_engine<std::uint32_t, 32> boost_points(dims);  // skips point 0
  for (std::uint32_t d = 0; d < dims; ++d) EXPECT_EQ(points.unscrambled(0, d), 0u);
  for (std::uint64_t i = 1; i < 5000; ++i)
    for (std::uint32_t d = 0; d < dims; ++d) ASSERT_EQ(points.unscrambled(i, d), boost_points()) << i << " " << d;
}

TEST(ScrambledSobol, EveryDimensionStratifiedOverTheFirstPowerOfTwoPoints) {
  const ScrambledSobol points(12, 20241202);
  for (int m : {4, 10}) {
    const std::uint64_t n = std::uint64_t(1) << m;
    for (std::uint32_t d = 0; d < 12; ++d) {
      std::vector<int> hits(n, 0);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double u = points.uniform(i, d, 0xdeadbeefu);
        ASSERT_GT(u, 0.0);
        ASSERT_LT(u, 1.0);
        ++hits[static_cast<std::size_t>(u * n)];
      }
      EXPECT_EQ(*std::min_element(hits.begin(), hits.end()), 1) << "m " << m << " dim " << d;
      EXPECT_EQ(*std::max_element(hits.begin(), hits.end()), 1) << "m " << m << " dim " << d;
    }
  }
}

TEST(ScrambledSobol, FirstTwoDimensionsFormAZeroNet) {
  // Sobol's first two dimensions are a (0, m, 2)-net: every 2^a x 2^(m - a) box holds one point.
  const ScrambledSobol points(2, 99);
  const int m = 8;
  const std::uint64_t n = std::uint64_t(1) << m;
  for (int a = 0; a <= m; ++a) {
    std::vector<int> hits(n, 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      // 64-bit shifts: a = 0 or a = m shifts a coordinate out entirely.
      const std::uint64_t x = std::uint64_t(points.scrambled(i, 0)) >> (32 - a),
                          y = std::uint64_t(points.scrambled(i, 1)) >> (32 - (m - a));
      ++hits[(static_cast<std::size_t>(x) << (m - a)) | y];
    }
    EXPECT_EQ(*std::max_element(hits.begin(), hits.end()), 1) << "boxes 2^" << a << " x 2^" << m - a;
  }
}

TEST(ScrambledSobol, SeedsGiveDifferentScramblesAndPointsAreRandomAccess) {
  const ScrambledSobol a(3, 1), b(3, 2);
  int equal = 0;
  for (std::uint64_t i = 0; i < 256; ++i) equal += a.scrambled(i, 1) == b.scrambled(i, 1);
  EXPECT_LT(equal, 3);
  const std::uint64_t far = (std::uint64_t(1) << 31) + 12345;
  EXPECT_EQ(ScrambledSobol(3, 1).scrambled(far, 2), a.scrambled(far, 2));
}

TEST(ScrambledSobol, SmoothIntegrandErrorFarBelowRandomPoints) {
  // E[prod_d (1 + (u_d - 1/2) / 2)] = 1 over [0, 1)^6; 4096 random points give an error of about
  // sd / 64 ~ 2e-3, scrambled Sobol' points (error ~ n^-1 log^s n, or better) about 1e-5 or less.
  const std::uint32_t dims = 6;
  const std::uint64_t n = 4096;
  double worst = 0.0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const ScrambledSobol points(dims, seed);
    double sum = 0.0;
    for (std::uint64_t i = 0; i < n; ++i) {
      double f = 1.0;
      for (std::uint32_t d = 0; d < dims; ++d) f *= 1.0 + 0.5 * (points.uniform(i, d, i * 7919u + d) - 0.5);
      sum += f;
    }
    worst = std::max(worst, std::fabs(sum / n - 1.0));
  }
  EXPECT_LT(worst, 5e-5);
}

TEST(ScrambledSobol, DimensionsOutsideTheTableAreRefused) {
  EXPECT_THROW(ScrambledSobol(0, 1), saltation::InvalidInput);
  EXPECT_THROW(ScrambledSobol(ScrambledSobol::max_dimensions + 1, 1), saltation::InvalidInput);
}
