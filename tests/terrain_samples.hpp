#pragma once
// Deterministic sample parameter sets for the terrain ball, used by the tests: a ball launched from (x0, y0) = (0, 1)
// with vx0 in [1, 1.5] that bounces several times over K bumps spread across x in [0, 3]. Bump widths and amplitudes
// shrink with K so the terrain stays below the launch height for every K.
#include <algorithm>
#include <random>
#include <vector>

#include "saltation/batch.hpp"
#include "saltation/models/terrain_ball.hpp"

namespace saltation {

template <int K>
std::vector<double> sample_terrain_row(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> th = {1.0 + 0.5 * u(rng), 0.5 * u(rng), 0.05 + 0.1 * u(rng), 0.8 + 0.1 * u(rng),
                            0.1 + 0.2 * u(rng)};
  const double shrink = std::min(1.0, 24.0 / std::max(K, 1));
  for (int k = 0; k < K; ++k) {
    th.push_back((0.05 + 0.15 * u(rng)) * std::sqrt(shrink));   // amplitude
    th.push_back(3.0 * (k + 0.5) / K + 0.2 * shrink * u(rng));  // centre
    th.push_back((0.2 + 0.3 * u(rng)) * shrink);                // width
  }
  return th;
}

template <int K>
Batch sample_terrain_batch(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch b(n, TerrainBall<K>::P);
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<double> row = sample_terrain_row<K>(rng);
    for (int p = 0; p < TerrainBall<K>::P; ++p) b.at(i, p) = row[p];
  }
  return b;
}

}  // namespace saltation
