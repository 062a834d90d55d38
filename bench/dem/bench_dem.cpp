// Disk-contact engine throughput (CPU backend unless SALTATION_BENCH_BACKEND=cuda):
//  * n_disks = 2, the seed's problem (80 frames x 5 steps), batch 1 .. 1e6, with and without the
//    log-stiffness tangent (and the loss+gradient, as the fit uses it);
//  * 1024 disks in a box, all pairs vs cell list, with and without one tangent.
// Counters: rollouts/s and disk-steps/s.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "saltation/dem/engine.hpp"

using namespace saltation;
using namespace saltation::dem;

namespace {

Backend bench_backend() {
  const char* e = std::getenv("SALTATION_BENCH_BACKEND");
  return e ? parse_backend(e) : Backend::Cpu;
}

DiskBatch seed_pairs(int B) {
  DiskBatch b = DiskBatch::make(B, 2);
  for (int s = 0; s < B; ++s) {
    const double v = 0.3 + 0.4 * (s % 997) / 997.0;
    for (int d = 0; d < 2; ++d) b.r(s, d) = 0.5, b.m(s, d) = 1.0;
    b.x(s, 0, 0) = -0.54;
    b.x(s, 1, 0) = 0.54;
    b.v(s, 0, 0) = v;
    b.v(s, 1, 0) = -v;
    b.log_stiffness[s] = std::log(10.0 + 60.0 * (s % 101) / 101.0);
  }
  return b;
}

// mode 0: forward only; 1: + log-stiffness tangent (saved); 2: loss + gradient only (the fit)
void BM_SeedPair(benchmark::State& st) {
  const int B = (int)st.range(0), mode = (int)st.range(1);
  DiskBatch b = seed_pairs(B);
  RolloutOptions o;
  o.dt = 0.002;
  o.n_frames = 80;
  o.stride = 5;
  o.neighbors = Neighbors::AllPairs;
  const Backend backend = bench_backend();
  LossSpec l;
  if (mode >= 1) o.tangents = {{TangentKind::LogStiffness}};
  if (mode == 2) {
    o.save_positions = o.save_velocities = o.save_tangents = false;
    l.observed.assign((size_t)80 * 4 * B, 0.0);
    l.scale.assign(B, 0.5);
  }
  double engine = 0;
  for (auto _ : st) {
    RolloutResult r = mode == 2 ? rollout(b, o, l, backend) : rollout(b, o, backend);
    engine += r.seconds;
    benchmark::DoNotOptimize(r.status.data());
  }
  st.counters["rollouts_per_s"] = benchmark::Counter((double)B * st.iterations(), benchmark::Counter::kIsRate);
  st.counters["engine_rollouts_per_s"] = (double)B * st.iterations() / engine;
  st.counters["ns_per_disk_step"] = 1e9 * engine / ((double)B * st.iterations() * 400 * 2);
  st.SetLabel(mode == 0 ? "forward" : mode == 1 ? "forward+tangent" : "loss+gradient");
}
BENCHMARK(BM_SeedPair)->ArgsProduct({{1, 100, 10000}, {0, 1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SeedPair)
    ->ArgsProduct({{1000000}, {0, 1, 2}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// 1024 disks (radius 0.5, spacing 1.05) in a box, a dense gas.
void BM_M1024(benchmark::State& st) {
  const bool cells = st.range(0) != 0;
  const int n_tangents = (int)st.range(1);
  const int n_disks = 1024, side = 32, frames = 10, stride = 5;
  DiskBatch b = DiskBatch::make(1, n_disks);
  for (int d = 0; d < n_disks; ++d) {
    b.r(0, d) = 0.5;
    b.m(0, d) = 1.0;
    b.x(0, d, 0) = 1.05 * (d % side) + 0.6;
    b.x(0, d, 1) = 1.05 * (d / side) + 0.6;
    b.v(0, d, 0) = std::sin(1.3 * d);
    b.v(0, d, 1) = std::cos(0.7 * d);
  }
  RolloutOptions o;
  o.dt = 1e-3;
  o.n_frames = frames;
  o.stride = stride;
  o.materials = {Material{1000.0, 0.9}};
  o.walls = true;
  o.box_hi[0] = o.box_hi[1] = 1.05 * side + 0.6;
  o.neighbors = cells ? Neighbors::CellList : Neighbors::AllPairs;
  const Backend backend = bench_backend();
  if (n_tangents) o.tangents = {{TangentKind::LogStiffness}};
  double engine = 0;
  for (auto _ : st) {
    RolloutResult r = rollout(b, o, backend);
    engine += r.seconds;
    benchmark::DoNotOptimize(r.x.data());
  }
  st.counters["rollouts_per_s"] = benchmark::Counter((double)st.iterations(), benchmark::Counter::kIsRate);
  st.counters["ns_per_disk_step"] = 1e9 * engine / ((double)st.iterations() * frames * stride * n_disks);
  st.SetLabel(std::string(cells ? "cell list" : "all pairs") + (n_tangents ? ", 1 tangent" : ", forward") +
              ", 50 steps");
}
BENCHMARK(BM_M1024)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
