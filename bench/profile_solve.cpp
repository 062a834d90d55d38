// A reduced run for profilers (callgrind, perf) and the core's cost split (bench/README.md, "Core
// costs"): `profile_solve K sens n reps [dt] [final]` runs saltation::solve on the benchmark batch
// (bench/terrain_batch.hpp, seed options, dt = 1e-3 unless given) `reps` times, one thread, then
// drives the same per-trajectory routine (core::Trajectory, as the CPU driver does) once more over
// the batch with a clock around each event path, and prints per trajectory: the solve's time,
// steps and events, and the split into steps (the one that brackets an event included) and event
// paths (locate, step to the event, reset and jump), the latter also in steps. K is one of 3, 24, 192; sens 0 or 1.
// With `final`, solve_final_state and its output (core::FinalState: no per-event record, what
// bench/peers times) instead of solve's full record, whose per-event derivative columns are most
// of a sensitivity event's writes.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "saltation/core/trajectory.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Split {
  double step_s = 0.0, event_s = 0.0;
  long long steps = 0, events = 0;
};

// The CPU driver's loop for one trajectory (Trajectory::run), with the event paths timed apart.
template <bool Sens, class Output, int K>
void timed_trajectory(const saltation::TerrainBall<K>& m, const saltation::Options& o, const double* row,
                      saltation::ResultView out, std::size_t i, Split& split) {
  using Tr = saltation::core::Trajectory<saltation::TerrainBall<K>, saltation::RowParams, Sens, Output>;
  Tr tr(m, o, saltation::RowParams{row, 1}, i, out);
  Clock::time_point start = Clock::now();
  if (tr.begin()) return;
  for (;;) {
    const typename Tr::StepOutcome outcome = tr.step();
    ++split.steps;
    if (outcome == Tr::StepOutcome::Ended) break;
    if (outcome == Tr::StepOutcome::Bracketed) {
      split.step_s += seconds_since(start);
      start = Clock::now();
      const bool ended = tr.take_bracketed_event();
      ++split.events;
      split.event_s += seconds_since(start);
      start = Clock::now();
      if (ended) return;
    }
  }
  split.step_s += seconds_since(start);
}

template <int K>
int run(bool sens, std::size_t n, int reps, double dt, bool final_only) {
  const saltation::Batch batch = saltation_bench::terrain_batch(n, K);
  saltation::Options o = saltation_bench::seed_options(sens, 1);
  o.dt = dt;
  const saltation::TerrainBall<K> model;
  double check = 0.0;
  int events = 0;
  double steps = 0.0;
  const Clock::time_point start = Clock::now();
  for (int r = 0; r < reps; ++r) {
    const saltation::Result res = final_only ? saltation::solve_final_state(model, batch, o, saltation::Backend::Cpu)
                                             : saltation::solve(model, batch, o, saltation::Backend::Cpu);
    check += res.qf[0];
    for (std::size_t i = 0; i < n; ++i) events += res.n_events[i];
    steps += saltation_bench::batch_stats(res, dt).steps_total;
  }
  const double per_traj_us = seconds_since(start) / (double(reps) * n) * 1e6;
  std::printf("K=%d P=%d sens=%d n=%zu reps=%d dt=%g output=%s events=%d checksum=%.17g\n", K, 5 + 3 * K, int(sens), n,
              reps, dt, final_only ? "final" : "full", events, check);

  const saltation::Options on = saltation::normalize_options(o);
  saltation::Result res(n, 4, saltation::TerrainBall<K>::P, on.event_capacity, sens);
  Split split;
  std::vector<double> row(saltation::TerrainBall<K>::P);
  for (std::size_t i = 0; i < n; ++i) {
    for (int p = 0; p < saltation::TerrainBall<K>::P; ++p) row[p] = batch.at(i, p);
    using saltation::core::FinalState;
    using saltation::core::FullRecord;
    if (sens && final_only) timed_trajectory<true, FinalState>(model, on, row.data(), res.view(), i, split);
    else if (sens) timed_trajectory<true, FullRecord>(model, on, row.data(), res.view(), i, split);
    else if (final_only) timed_trajectory<false, FinalState>(model, on, row.data(), res.view(), i, split);
    else timed_trajectory<false, FullRecord>(model, on, row.data(), res.view(), i, split);
  }
  const double per_step_ns = split.step_s / split.steps * 1e9, per_event_ns = split.event_s / split.events * 1e9;
  std::printf("  per trajectory: %.1f us, %.0f steps (t_end / dt), %.2f events\n", per_traj_us,
              steps / (reps * double(n)), double(events) / (reps * double(n)));
  std::printf(
      "  split: plain step %.1f ns (%lld steps), event path %.0f ns = %.1f plain steps (%lld events), "
      "events %.0f %% of the time\n",
      per_step_ns, split.steps, per_event_ns, per_event_ns / per_step_ns, split.events,
      100.0 * split.event_s / (split.event_s + split.step_s));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s K(3|24|192) sens(0|1) n reps [dt] [final]\n", argv[0]);
    return 2;
  }
  const int K = std::atoi(argv[1]);
  const bool sens = std::atoi(argv[2]) != 0;
  const std::size_t n = std::strtoul(argv[3], nullptr, 10);
  const int reps = std::atoi(argv[4]);
  const double dt = argc > 5 ? std::atof(argv[5]) : 1e-3;
  const bool final_only = argc > 6 && std::string(argv[6]) == "final";
  if (argc > 6 && !final_only) {
    std::fprintf(stderr, "the sixth argument is `final` or nothing, not `%s`\n", argv[6]);
    return 2;
  }
  if (K == 3) return run<3>(sens, n, reps, dt, final_only);
  if (K == 24) return run<24>(sens, n, reps, dt, final_only);
  if (K == 192) return run<192>(sens, n, reps, dt, final_only);
  std::fprintf(stderr, "K must be 3, 24 or 192\n");
  return 2;
}
