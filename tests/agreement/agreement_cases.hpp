#pragma once
// The batches on which two builds or two backends must agree (docs/agreement.md): the same
// cases for CUDA against the CPU and for an FMA-contracted CPU build against the plain one.
#include <functional>
#include <string>

#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "saltation/options.hpp"
#include "terrain_samples.hpp"

namespace saltation::agreement {

inline Options options(double t_final, double dt, int capacity) {
  Options o;
  o.t_final = t_final;
  o.dt = dt;
  o.event_capacity = capacity;
  return o;
}

inline Batch ball_batch() {
  Batch b(1000, 3);
  for (std::size_t i = 0; i < b.n; ++i) {
    b.at(i, 0) = 0.5 + 2.0 * i / b.n;
    b.at(i, 1) = -1.0 + 3.0 * ((i * 37) % 101) / 101.0;
    b.at(i, 2) = 0.3 + 0.65 * ((i * 13) % 97) / 97.0;
  }
  return b;
}

inline Batch thermostat_batch() {
  Batch b(512, 6);
  for (std::size_t i = 0; i < b.n; ++i) {
    const double th[6] = {19.0 + 0.002 * i, 18.0, 10.0 + 0.01 * i, 8.0, 20.0, 22.0 + 0.001 * i};
    for (int p = 0; p < 6; ++p) b.at(i, p) = th[p];
  }
  return b;
}

// Calls f(name, model, batch, options, rtol) for each case; the caller solves it (forward and
// with sensitivities) on whatever it compares. rtol is the stated value tolerance of the case
// (docs/agreement.md): 100 x the larger of the spreads measured between the plain and the
// FMA-contracted CPU builds and between theta and theta moved by one ulp, rounded up to a power
// of ten. K = 192 is ill-conditioned (many bounces over rough terrain amplify a one-ulp change of
// theta to 2e-7 in qf), and its tolerance says so.
template <class F>
void for_each_case(F&& f) {
  Options ball = options(5.0, 1e-3, 32);
  ball.v_stop = 0.05;
  f("bouncing_ball", BouncingBall{}, ball_batch(), ball, 1e-9);                      // spread 5.0e-12
  f("thermostat", Thermostat{}, thermostat_batch(), options(60.0, 1e-2, 16), 1e-9);  // spread 1.8e-12
  f("terrain_ball_K3", TerrainBall<3>{}, sample_terrain_batch<3>(2048, 1), options(3.0, 1e-3, 16), 1e-8);    // 5.1e-11
  f("terrain_ball_K24", TerrainBall<24>{}, sample_terrain_batch<24>(512, 2), options(3.0, 1e-3, 16), 1e-9);  // 9.7e-12
  f("terrain_ball_K192", TerrainBall<192>{}, sample_terrain_batch<192>(128, 3), options(2.0, 1e-3, 8), 1e-4);  // 1.2e-6
}

}  // namespace saltation::agreement
