// The CPU's SIMD lanes against the scalar CPU driver (bench/README.md, "SIMD lanes"):
// `bench_simd_lanes n reps [free|batch]` times, on one thread, cpu::solve (one trajectory at a time) and
// cpu::solve_lanes (the target SALTATION_SIMD and the CPU choose) on
//   free flight: the rows of bench/terrain_batch.hpp with y0 = 100 (the ball never nears the
//     terrain), t_final 3, dt 1e-3: ns per trajectory-step;
//   the benchmark batch: the same rows from y0 = 1 with seed_options (bounces, settling), forward:
//     us per trajectory, and trajectory-steps per second;
// for K = 3 and 24, and the models without a guard bound (the bouncing ball dropped and thrown
// with v_stop 0.25, the thermostat switching; t_final 3, dt 1e-3, probes 3, forward), only the
// free-flight, batch or those rows when asked (free, batch, models); the best of `reps` runs
// each, and checks that both give the same bits.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "saltation/cpu.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "terrain_batch.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class Solve>
double best_seconds(int reps, Solve&& solve) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const Clock::time_point start = Clock::now();
    solve();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (s < best) best = s;
  }
  return best;
}

bool same_bits(const saltation::Result& a, const saltation::Result& b) {
  bool same = true;
  saltation::zip_arrays(a, b, [&](const auto& x, const auto& y) {
    same = same && x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(*x.data())) == 0);
  });
  return same;
}

template <class Model>
void compare(const char* what, const Model& model, const saltation::Batch& batch, const saltation::Options& o,
             int reps) {
  const std::size_t n = batch.n;
  saltation::Result scalar(n, Model::N, Model::P, o.event_capacity, false),
      lanes(n, Model::N, Model::P, o.event_capacity, false);
  const double t_scalar = best_seconds(reps, [&] {
    saltation::cpu::solve<saltation::core::FullRecord>(model, batch.theta.data(), n, o, scalar.view());
  });
  bool ran = true;
  const double t_lanes = best_seconds(reps, [&] {
    ran = saltation::cpu::solve_lanes<saltation::core::FullRecord>(model, batch.theta.data(), n, o, lanes.view(),
                                                                   nullptr);
  });
  const saltation_bench::BatchStats stats = saltation_bench::batch_stats(scalar, o.dt);
  const double steps = stats.steps_total;
  std::printf(
      "%-12s %-14s n=%zu steps/traj=%.0f events/traj=%.2f | scalar %8.3f us/traj %7.2f ns/step | "
      "lanes %8.3f us/traj %7.2f ns/step | speed-up %.2fx | bitwise %s\n",
      what, Model::name, n, steps / n, stats.events_mean, t_scalar / n * 1e6, t_scalar / steps * 1e9, t_lanes / n * 1e6,
      t_lanes / steps * 1e9, t_scalar / t_lanes, ran ? (same_bits(scalar, lanes) ? "yes" : "NO") : "(lanes not run)");
}

template <int K>
void compare_terrain(const char* what, const saltation::TerrainBall<K>& model, std::size_t n, int reps) {
  const saltation::Options o = saltation::normalize_options(saltation_bench::seed_options(false, 1));
  compare(what, model, saltation_bench::terrain_batch(n, K), o, reps);
}

// The rows of the models without a guard bound, spread over their ranges.
saltation::Batch ball_rows(std::size_t n) {
  saltation::Batch b(n, saltation::BouncingBall::P);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = (i + 0.5) / n;
    b.at(i, 0) = 1.0 + u;                               // h0
    b.at(i, 1) = 2.0 * std::fmod(7.31 * u, 1.0) - 1.0;  // v0
    b.at(i, 2) = 0.7 + 0.2 * std::fmod(3.17 * u, 1.0);  // e
  }
  return b;
}
saltation::Batch thermostat_rows(std::size_t n) {
  saltation::Batch b(n, saltation::Thermostat::P);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = (i + 0.5) / n;
    const double row[] = {
        19.0 + 2.0 * u, 10.0, 0.5 + 0.5 * std::fmod(3.17 * u, 1.0), 20.0 + 5.0 * std::fmod(7.31 * u, 1.0), 19.0, 21.0};
    for (int p = 0; p < saltation::Thermostat::P; ++p) b.at(i, p) = row[p];
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const saltation::cpu::LaneTarget target = saltation::cpu::lane_target();
  std::printf("lanes: %s (%d per vector), one thread, dt = 1e-3, t_final = 3, best of %d\n", target.name, target.width,
              reps);
  saltation::TerrainBall<3> high3;
  high3.y0 = 100.0;
  saltation::TerrainBall<24> high24;
  high24.y0 = 100.0;
  const char* only = argc > 3 ? argv[3] : "";
  const bool all = only[0] == '\0';
  if (all || std::strcmp(only, "free") == 0) {
    compare_terrain("free flight", high3, n, reps);
    compare_terrain("free flight", high24, n, reps);
  }
  if (all || std::strcmp(only, "batch") == 0) {
    compare_terrain("batch", saltation::TerrainBall<3>{}, n, reps);
    compare_terrain("batch", saltation::TerrainBall<24>{}, n, reps);
  }
  if (all || std::strcmp(only, "models") == 0) {
    saltation::Options o;
    o.t_final = 3.0;
    o.dt = 1e-3;
    o.event_capacity = 64;
    o.v_stop = 0.25;
    o = saltation::normalize_options(o);
    compare("no bound", saltation::BouncingBall{}, ball_rows(n), o, reps);
    compare("no bound", saltation::Thermostat{}, thermostat_rows(n), o, reps);
  }
  return 0;
}
