// Engine cost of the CPU backend (results and how to read them: bench/results/cpu/README.md):
//   perstep/*   ns per trajectory-step of saltation::solve (terrain ball K = 3, dt = 1e-3,
//               t_final = 3, probes 3 and 0), side by side with Boost.Odeint's runge_kutta4 on the
//               same flow without events, plain and with a straightforward guard check (end of
//               step + 3 probes, each probe an RK4 step from the left end, as the library does).
//   batch/*     how the cost grows with batch size (1 .. 65536 trajectories, 2 threads).
//   bumps/*     how it grows with bump count K (forward and with sensitivities, 1 thread).
//   events/*    how it grows with event density (restitution e sets the bounce count, 1 thread).
// Every saltation timing is of saltation::solve; Odeint only integrates the flow (it has no
// events), so it is timed on a batch that never reaches the terrain (y0 = 100: the ball falls
// under 45 m in 3 s), and so is the matching "noevents" saltation case.
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

#ifdef SALTATION_BENCH_HAVE_ODEINT
#include <boost/numeric/odeint.hpp>
#endif

namespace {

constexpr double kDt = 1e-3, kTFinal = 3.0;

// Trajectory-steps a result represents: sum over trajectories of t_end / dt (a trajectory that
// settles early took fewer steps; event steps count as the part of a step they cover).
double steps_of(const saltation::Result& r) { return saltation_bench::batch_stats(r, kDt).steps_total; }

void set_step_counters(benchmark::State& state, double steps_per_iter, std::size_t n, double events_mean) {
  const double total = steps_per_iter * static_cast<double>(state.iterations());
  // Seconds per trajectory-step, shown with an SI prefix (e.g. 231n = 231 ns).
  state.counters["t_per_step"] = benchmark::Counter(total, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["steps_per_s"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
  state.counters["traj"] = static_cast<double>(n);
  state.counters["events_per_traj"] = events_mean;
}

template <int K>
void run_saltation(benchmark::State& state, const saltation::TerrainBall<K>& model, const saltation::Batch& batch,
                   const saltation::Options& o) {
  saltation::Result r;
  for (auto _ : state) {
    r = saltation::solve(model, batch, o, saltation::Backend::Cpu);
    benchmark::DoNotOptimize(r.qf.data());
    benchmark::ClobberMemory();
  }
  set_step_counters(state, steps_of(r), batch.n, saltation_bench::batch_stats(r, kDt).events_mean);
}

// ---- per-step cost, K = 3 ------------------------------------------------------------------

constexpr std::size_t kPerStepN = 64;

const saltation::Batch& batch_k3() {
  static const saltation::Batch b = saltation_bench::terrain_batch(kPerStepN, 3);
  return b;
}

// args: probes, events (1: y0 = 1, bouncing; 0: y0 = 100, never reaches the terrain), sensitivities
void BM_perstep_saltation(benchmark::State& state) {
  saltation::TerrainBall<3> model;
  const bool events = state.range(1) != 0;
  if (!events) model.y0 = 100.0;
  saltation::Options o = saltation_bench::seed_options(state.range(2) != 0, 1);
  o.probes = static_cast<int>(state.range(0));
  run_saltation(state, model, batch_k3(), o);
}
BENCHMARK(BM_perstep_saltation)
    ->Name("perstep/saltation")
    ->ArgNames({"probes", "events", "sens"})
    ->Args({3, 0, 0})
    ->Args({0, 0, 0})
    ->Args({3, 1, 0})
    ->Args({0, 1, 0})
    ->Args({3, 0, 1})
    ->Args({3, 1, 1})
    ->MinTime(0.3)
    ->Unit(benchmark::kMicrosecond);

#ifdef SALTATION_BENCH_HAVE_ODEINT
using State4 = std::array<double, 4>;

struct Flow {
  double c, g;
  void operator()(const State4& q, State4& f, double /*t*/) const {
    f[0] = q[2];
    f[1] = q[3];
    f[2] = -c * q[2];
    f[3] = -g - c * q[3];
  }
};

// The terrain-ball guard y - h(x), written out directly for the Odeint baseline (K exp each).
struct Guard {
  const saltation::Batch* b;
  std::size_t i;
  int K;
  double operator()(const State4& q) const {
    double h = 0.0;
    for (int k = 0; k < K; ++k) {
      const double a = b->at(i, 5 + 3 * k), c = b->at(i, 5 + 3 * k + 1), w = b->at(i, 5 + 3 * k + 2);
      const double u = (q[0] - c) / w;
      h += a * std::exp(-0.5 * u * u);
    }
    return q[1] - h;
  }
};

// args: probes (-1: no guard check at all; 0..: guard at the step end plus that many probes)
void BM_perstep_odeint(benchmark::State& state) {
  namespace odeint = boost::numeric::odeint;
  const saltation::Batch& b = batch_k3();
  const int probes = static_cast<int>(state.range(0));
  const long steps = static_cast<long>(std::lround(kTFinal / kDt));
  odeint::runge_kutta4<State4> stepper;
  long crossings = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < b.n; ++i) {
      const Flow sys{b.at(i, 2), 9.81};
      const Guard guard{&b, i, 3};
      State4 q{0.0, 100.0, b.at(i, 0), b.at(i, 1)};
      double t = 0.0;
      double g_left = probes >= 0 ? guard(q) : 0.0;
      for (long s = 0; s < steps; ++s) {
        if (probes >= 0) {
          // Straightforward guard check: probe states by RK4 steps of k/(probes+1) dt from the
          // left end, then the end of the step; a falling sign change is counted (no events).
          for (int k = 1; k <= probes; ++k) {
            State4 qp;
            stepper.do_step(sys, q, t, qp, kDt * k / (probes + 1));
            const double gp = guard(qp);
            crossings += (g_left >= 0.0 && gp < 0.0);
          }
        }
        stepper.do_step(sys, q, t, kDt);
        t += kDt;
        if (probes >= 0) {
          const double ge = guard(q);
          crossings += (g_left >= 0.0 && ge < 0.0);
          g_left = ge;
        }
      }
      benchmark::DoNotOptimize(q);
    }
  }
  benchmark::DoNotOptimize(crossings);
  set_step_counters(state, static_cast<double>(steps) * static_cast<double>(b.n), b.n, 0.0);
}
BENCHMARK(BM_perstep_odeint)
    ->Name("perstep/odeint_rk4")
    ->ArgName("probes")
    ->Arg(-1)
    ->Arg(0)
    ->Arg(3)
    ->MinTime(0.3)
    ->Unit(benchmark::kMicrosecond);
#endif

// ---- batch size, 2 threads ------------------------------------------------------------------

void BM_batch(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const saltation::Batch batch = saltation_bench::terrain_batch(n, 3);
  const saltation::Options o = saltation_bench::seed_options(state.range(1) != 0, 2);
  run_saltation(state, saltation::TerrainBall<3>{}, batch, o);
  state.counters["traj_per_s"] =
      benchmark::Counter(static_cast<double>(n) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_batch)
    ->Name("batch/K:3/threads:2")
    ->ArgNames({"n", "sens"})
    ->ArgsProduct({{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536}, {0}})
    ->Args({4096, 1})
    ->MinTime(0.2)
    ->UseRealTime()  // two OpenMP threads: wall-clock is the cost
    ->Unit(benchmark::kMillisecond);

// ---- bump count, 1 thread -------------------------------------------------------------------

template <int K>
void BM_bumps(benchmark::State& state) {
  static const saltation::Batch batch = saltation_bench::terrain_batch(16, K);
  const saltation::Options o = saltation_bench::seed_options(state.range(0) != 0, 1);
  run_saltation(state, saltation::TerrainBall<K>{}, batch, o);
}
#define SALTATION_BENCH_BUMPS(K)  \
  BENCHMARK_TEMPLATE(BM_bumps, K) \
      ->Name("bumps/K:" #K)       \
      ->ArgName("sens")           \
      ->Arg(0)                    \
      ->Arg(1)                    \
      ->MinTime(0.2)              \
      ->Unit(benchmark::kMillisecond);
SALTATION_BENCH_BUMPS(0)
SALTATION_BENCH_BUMPS(1)
SALTATION_BENCH_BUMPS(3)
SALTATION_BENCH_BUMPS(8)
SALTATION_BENCH_BUMPS(24)
SALTATION_BENCH_BUMPS(64)
SALTATION_BENCH_BUMPS(192)

// ---- event density, 1 thread -----------------------------------------------------------------
// The K = 3 batch with every restitution set to e (per mille in the argument): more bounces
// before the ball settles below v_stop as e grows.
void BM_events(benchmark::State& state) {
  saltation::Batch batch = saltation_bench::terrain_batch(16, 3);
  for (std::size_t i = 0; i < batch.n; ++i) batch.at(i, 3) = static_cast<double>(state.range(0)) * 1e-3;
  const saltation::Options o = saltation_bench::seed_options(state.range(1) != 0, 1);
  run_saltation(state, saltation::TerrainBall<3>{}, batch, o);
}
BENCHMARK(BM_events)
    ->Name("events/K:3")
    ->ArgNames({"e_permille", "sens"})
    ->ArgsProduct({{300, 500, 700, 850}, {0, 1}})
    ->MinTime(0.2)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
