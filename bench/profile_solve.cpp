// A reduced run for profilers (callgrind, perf): `profile_solve K sens n reps` runs
// saltation::solve on the benchmark batch (bench/terrain_batch.hpp) `reps` times, one thread,
// nothing else. K is one of 3, 24, 192; sens 0 or 1.
#include <cstdio>
#include <cstdlib>

#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

template <int K>
int run(bool sens, std::size_t n, int reps) {
  const saltation::Batch batch = saltation_bench::terrain_batch(n, K);
  const saltation::Options o = saltation_bench::seed_options(sens, 1);
  double check = 0.0;
  int events = 0;
  for (int r = 0; r < reps; ++r) {
    const saltation::Result res = saltation::solve(saltation::TerrainBall<K>{}, batch, o, saltation::Backend::Cpu);
    check += res.qf[0];
    for (std::size_t i = 0; i < n; ++i) events += res.n_events[i];
  }
  std::printf("K=%d P=%d sens=%d n=%zu reps=%d events=%d checksum=%.17g\n", K, 5 + 3 * K, int(sens), n, reps, events, check);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s K(3|24|192) sens(0|1) n reps\n", argv[0]);
    return 2;
  }
  const int K = std::atoi(argv[1]);
  const bool sens = std::atoi(argv[2]) != 0;
  const std::size_t n = std::strtoul(argv[3], nullptr, 10);
  const int reps = std::atoi(argv[4]);
  if (K == 3) return run<3>(sens, n, reps);
  if (K == 24) return run<24>(sens, n, reps);
  if (K == 192) return run<192>(sens, n, reps);
  std::fprintf(stderr, "K must be 3, 24 or 192\n");
  return 2;
}
