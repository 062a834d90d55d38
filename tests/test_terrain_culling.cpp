// The terrain ball leaves out bumps beyond kReach widths of x (and its guard bound skips them):
// the culled terrain agrees with the full sum to within 1e-17 of the amplitudes, value and
// derivatives, and whole solves on the benchmark batches agree with solves of the full sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "../bench/terrain_batch.hpp"
#include "saltation/core/params.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"

namespace {

using saltation::TerrainBall;

// The same model with every bump evaluated everywhere (the terrain before culling).
template <int K>
struct FullTerrain : TerrainBall<K> {
  using Base = TerrainBall<K>;
  template <class S, class Th>
  SALTATION_HD void full_terrain(const S& x, const Th& th, S& h, S& dh) const {
    h = S(0.0);
    dh = S(0.0);
    for (int k = 0; k < K; ++k) {
      const S a = th[Base::Bump0 + 3 * k], b = th[Base::Bump0 + 3 * k + 1], w = th[Base::Bump0 + 3 * k + 2];
      const S u = (x - b) / w;
      const S bump = a * saltation::exp_by_table(-0.5 * u * u);
      h = h + bump;
      dh = dh - bump * u / w;
    }
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th& th) const {
    S h, dh;
    full_terrain(q[0], th, h, dh);
    return q[1] - h;
  }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    S h, dh;
    full_terrain(q[0], th, h, dh);
    Base::reset_at_slope(dh, q, th, q_plus);
    return mode;
  }
  // The gradient from the full sum too (the inherited reset_from_gradient takes its slope from it).
  template <class Th>
  SALTATION_HD double guard_gradient(int, const double* q, int, const Th& th, double* g_q) const {
    double h, dh;
    full_terrain(q[0], th, h, dh);
    saltation::terrain_ball::gradient_at_slope(dh, g_q);
    return q[1] - h;
  }
};

TEST(TerrainCulling, TerrainAgreesWithTheFullSumInValueAndDerivatives) {
  constexpr int K = 24;
  const saltation::Batch batch = saltation_bench::terrain_batch(16, K);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> x_of(-2.0, 7.0);
  const TerrainBall<K> culled;
  const FullTerrain<K> full;
  int culled_somewhere = 0;
  for (std::size_t i = 0; i < batch.n; ++i) {
    std::vector<double> row(TerrainBall<K>::P);
    double amplitudes = 0.0, narrowest = 1e300;
    for (int p = 0; p < TerrainBall<K>::P; ++p) row[p] = batch.at(i, p);
    for (int k = 0; k < K; ++k) {
      amplitudes += std::fabs(row[5 + 3 * k]);
      narrowest = std::min(narrowest, row[5 + 3 * k + 2]);
    }
    const saltation::RowParams th{row.data(), 1};
    for (int s = 0; s < 200; ++s) {
      const double x = x_of(rng);
      for (int k = 0; k < K; ++k)
        culled_somewhere += !saltation::terrain_ball::in_reach(x, row[5 + 3 * k + 1], row[5 + 3 * k + 2]);
      // Derivatives with respect to x and to the first 8 bump parameters, which dual numbers carry.
      using D = saltation::Dual<9>;
      const saltation::core::ChunkSeededParams<9, saltation::RowParams> seeded{th, 5};
      D hc, dhc, hf, dhf;
      culled.terrain(D::variable(x, 8), seeded, hc, dhc);
      full.full_terrain(D::variable(x, 8), seeded, hf, dhf);
      EXPECT_LE(std::fabs(hc.v - hf.v), 1e-17 * amplitudes + 1e-300);
      EXPECT_LE(std::fabs(dhc.v - dhf.v), 1e-17 * amplitudes * saltation::terrain_ball::kReach / narrowest);
      for (int d = 0; d < 9; ++d) {
        EXPECT_LE(std::fabs(hc.d[d] - hf.d[d]), 1e-15 * amplitudes / narrowest) << "slot " << d;
        EXPECT_LE(std::fabs(dhc.d[d] - dhf.d[d]), 1e-15 * amplitudes / (narrowest * narrowest)) << "slot " << d;
      }
    }
  }
  EXPECT_GT(culled_somewhere, 10000);  // the comparison covers points where bumps are left out
}

// Largest |a - b| / max(1, |b|) over two arrays of the same length.
template <class V>
double worst_relative(const V& a, const V& b) {
  double worst = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (std::isnan(a[k]) && std::isnan(b[k])) continue;
    worst = std::max(worst, std::fabs(a[k] - b[k]) / std::max(1.0, std::fabs(b[k])));
  }
  return worst;
}

template <int K>
void expect_solves_unchanged(std::size_t n) {
  const saltation::Batch batch = saltation_bench::terrain_batch(n, K);
  for (bool sens : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "K = " << K << ", sensitivities " << sens);
    const saltation::Options o = saltation_bench::seed_options(sens, 2);
    const saltation::Result c = saltation::solve(TerrainBall<K>{}, batch, o, saltation::Backend::Cpu);
    const saltation::Result f = saltation::solve(FullTerrain<K>{}, batch, o, saltation::Backend::Cpu);
    ASSERT_EQ(c.status, f.status);
    ASSERT_EQ(c.n_events, f.n_events);
    ASSERT_EQ(c.ev_guard, f.ev_guard);
    const double ev_t = worst_relative(c.ev_t, f.ev_t), qf = worst_relative(c.qf, f.qf),
                 ev_q = worst_relative(c.ev_q, f.ev_q), dqf = worst_relative(c.dqf, f.dqf),
                 ev_dt = worst_relative(c.ev_dt, f.ev_dt);
    std::printf("K = %d, sensitivities %d: largest differences ev_t %.2g, qf %.2g, ev_q %.2g, dqf %.2g, ev_dt %.2g\n",
                K, int(sens), ev_t, qf, ev_q, dqf, ev_dt);
    EXPECT_LE(ev_t, 1e-13);
    EXPECT_LE(qf, 1e-13);
    EXPECT_LE(ev_q, 1e-13);
    EXPECT_LE(dqf, 1e-11);
    EXPECT_LE(ev_dt, 1e-11);
  }
}

// In doubles the terrain evaluates its bumps four at a time in host vectors (numeric.hpp, Group),
// summing bump k into partial sum k mod 4 and joining the partials pairwise; on dual numbers one
// at a time in the order of k. The doubles are the bits of that partial-sum order over each
// bump's scalar terms (the vector exp gives the scalar's bits), and the dual numbers' values agree
// with them to rounding, at points where some bumps are culled and others not.
template <int K>
void expect_grouped_bumps_give_the_partial_sums_bits() {
  using D = saltation::Dual<1>;
  using M = TerrainBall<K>;
  constexpr int L = saltation::Group<double>::size;
  const M m;
  const auto batch = saltation_bench::terrain_batch(8, K);
  long differing = 0, points = 0;
  double worst_dual = 0.0;
  for (std::size_t i = 0; i < batch.n; ++i) {
    const saltation::RowParams th{batch.theta.data() + i, batch.n};
    double amplitudes = 0.0, narrowest = 1e300;
    for (int k = 0; k < K; ++k) {
      amplitudes += std::fabs(th[M::Bump0 + 3 * k]);
      narrowest = std::min(narrowest, th[M::Bump0 + 3 * k + 2]);
    }
    for (double x = -3.0; x <= 7.5; x += 0.0137, ++points) {
      double part[3][L] = {};  // h, h', h'' by k mod L
      for (int k = 0; k < K; ++k) {
        const double a = th[M::Bump0 + 3 * k], b = th[M::Bump0 + 3 * k + 1], w = th[M::Bump0 + 3 * k + 2];
        if (!saltation::terrain_ball::in_reach(x, b, w)) continue;
        const double u = (x - b) / w, bump = a * saltation::exp_by_table(-0.5 * u * u);
        part[0][k % L] = part[0][k % L] + bump;
        part[1][k % L] = part[1][k % L] - bump * u / w;
        part[2][k % L] = part[2][k % L] + bump * (u * u - 1.0) / (w * w);
      }
      double expected[3];
      for (int f = 0; f < 3; ++f) {
        if constexpr (L == 4) {
          expected[f] = (part[f][0] + part[f][1]) + (part[f][2] + part[f][3]);
        } else {
          expected[f] = part[f][0];
        }
      }
      double got[3];
      m.terrain(x, th, got[0], got[1], &got[2]);
      differing += std::memcmp(expected, got, sizeof got) != 0;
      D hd, dhd, d2hd;
      m.terrain(D::variable(x, 0), th, hd, dhd, &d2hd);
      worst_dual = std::max({worst_dual, std::fabs(hd.v - got[0]) / amplitudes,
                             std::fabs(dhd.v - got[1]) * narrowest / amplitudes,
                             std::fabs(d2hd.v - got[2]) * narrowest * narrowest / amplitudes});
    }
  }
  EXPECT_GT(points, 6000);
  EXPECT_EQ(differing, 0);
  EXPECT_LE(worst_dual, 1e-15);
}
TEST(TerrainCulling, GroupedBumpsGiveThePartialSumsBits) {
  expect_grouped_bumps_give_the_partial_sums_bits<3>();
  expect_grouped_bumps_give_the_partial_sums_bits<24>();
  expect_grouped_bumps_give_the_partial_sums_bits<192>();
}

TEST(TerrainCulling, SolvesOfTheBenchmarkBatchesAreUnchangedK3) { expect_solves_unchanged<3>(256); }
TEST(TerrainCulling, SolvesOfTheBenchmarkBatchesAreUnchangedK24) { expect_solves_unchanged<24>(128); }
TEST(TerrainCulling, SolvesOfTheBenchmarkBatchesAreUnchangedK192) { expect_solves_unchanged<192>(16); }

}  // namespace
