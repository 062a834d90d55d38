// The CPU's SIMD lanes against the scalar CPU driver (bench/README.md, "SIMD lanes"):
// `bench_simd_lanes n reps [free|batch]` times, on one thread, cpu::solve (one trajectory at a time) and
// cpu::solve_lanes (the target SALTATION_SIMD and the CPU choose) on
//   free flight: the rows of bench/terrain_batch.hpp with y0 = 100 (the ball never nears the
//     terrain), t_final 3, dt 1e-3: ns per trajectory-step;
//   the benchmark batch: the same rows from y0 = 1 with seed_options (bounces, settling), forward:
//     us per trajectory, and trajectory-steps per second;
// for K = 3 and 24 (only the free-flight or the batch rows when asked), the best of `reps` runs
// each, and checks that both give the same bits.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "saltation/cpu.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/models/terrain_ball.hpp"
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

template <int K>
void compare(const char* what, const saltation::TerrainBall<K>& model, std::size_t n, int reps) {
  const saltation::Batch batch = saltation_bench::terrain_batch(n, K);
  const saltation::Options o = saltation::normalize_options(saltation_bench::seed_options(false, 1));
  saltation::Result scalar(n, 4, model.P, o.event_capacity, false), lanes(n, 4, model.P, o.event_capacity, false);
  const double t_scalar = best_seconds(reps, [&] {
    saltation::cpu::solve<saltation::core::FullRecord>(model, batch.theta.data(), n, o, scalar.view());
  });
  bool ran = true;
  const double t_lanes = best_seconds(reps, [&] {
    ran = saltation::cpu::solve_lanes<saltation::core::FullRecord>(model, batch.theta.data(), n, o, lanes.view(),
                                                                   nullptr);
  });
  const double steps = saltation_bench::batch_stats(scalar, o.dt).steps_total;
  const saltation_bench::BatchStats stats = saltation_bench::batch_stats(scalar, o.dt);
  std::printf(
      "%-12s K=%-3d n=%zu steps/traj=%.0f events/traj=%.2f | scalar %8.3f us/traj %7.2f ns/step | "
      "lanes %8.3f us/traj %7.2f ns/step | speed-up %.2fx | bitwise %s\n",
      what, K, n, steps / n, stats.events_mean, t_scalar / n * 1e6, t_scalar / steps * 1e9, t_lanes / n * 1e6,
      t_lanes / steps * 1e9, t_scalar / t_lanes, ran ? (same_bits(scalar, lanes) ? "yes" : "NO") : "(lanes not run)");
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
  if (std::strcmp(only, "batch") != 0) {
    compare("free flight", high3, n, reps);
    compare("free flight", high24, n, reps);
  }
  if (std::strcmp(only, "free") != 0) {
    compare("batch", saltation::TerrainBall<3>{}, n, reps);
    compare("batch", saltation::TerrainBall<24>{}, n, reps);
  }
  return 0;
}
