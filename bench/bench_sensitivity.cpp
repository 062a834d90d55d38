// Sensitivity cost (DESIGN.md section 6): the cost of a solve with sensitivities over a forward
// solve on the same terrain-ball batch for P = 14, 77, 581 (K = 3, 24, 192), CPU backend, one
// thread. After the Google Benchmark cases run, prints the ratio per P and the least-squares line
// of the sensitivity-solve cost per trajectory against P (microseconds per parameter per
// trajectory, R^2). Every timing is of saltation::solve itself.
//
// Extra flags (removed before Google Benchmark sees argv):
//   --json FILE        write the summary as JSON
//   --trajectories N   batch size (default 64)
// Environment: SALTATION_BENCH_CSV=FILE writes the summary as CSV.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

namespace {

std::size_t g_n = 64;

struct Case {
  int K = 0, P = 0;
  saltation_bench::BatchStats stats;
  bool same_events = true;  // forward and sensitivity solves saw the same events
};
std::map<int, Case> g_cases;  // by K

template <int K>
void register_k() {
  using Model = saltation::TerrainBall<K>;
  static const saltation::Batch batch = saltation_bench::terrain_batch(g_n, K);
  const Model model{};
  // Untimed characterisation run: events per trajectory, statuses, and a check that the
  // sensitivity run follows the same trajectory.
  Case c;
  c.K = K;
  c.P = Model::P;
  const saltation::Result rf = saltation::solve(model, batch, saltation_bench::seed_options(false, 1), saltation::Backend::Cpu);
  const saltation::Result rs = saltation::solve(model, batch, saltation_bench::seed_options(true, 1), saltation::Backend::Cpu);
  c.stats = saltation_bench::batch_stats(rf, 1e-3);
  for (std::size_t i = 0; i < batch.n; ++i)
    if (rf.n_events[i] != rs.n_events[i] || rf.status[i] != rs.status[i]) c.same_events = false;
  g_cases[K] = c;

  for (const bool sens : {false, true}) {
    const std::string name = std::string("sensitivity/K:") + std::to_string(K) + "/P:" + std::to_string(Model::P) +
                             (sens ? "/sens" : "/forward");
    benchmark::RegisterBenchmark(name.c_str(), [sens, model](benchmark::State& state) {
      const saltation::Options o = saltation_bench::seed_options(sens, 1);
      for (auto _ : state) {
        saltation::Result r = saltation::solve(model, batch, o, saltation::Backend::Cpu);
        benchmark::DoNotOptimize(r.qf.data());
        benchmark::ClobberMemory();
      }
      const double n = static_cast<double>(batch.n);
      state.counters["traj"] = n;
      // Seconds per trajectory (shown with an SI prefix, e.g. 512u = 512 microseconds).
      state.counters["s_per_traj"] =
          benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    })
        ->Unit(benchmark::kMillisecond)
        ->Repetitions(3)
        ->MinTime(K >= 192 ? 0.1 : 0.3);
  }
}

// Collects per-trajectory times (seconds) of every non-aggregate run by K and mode: thread CPU
// time (what the summary uses: the build machine is shared, and CPU time does not count the
// time the benchmark thread spends descheduled) and wall-clock time (reported alongside).
class Collector : public benchmark::ConsoleReporter {
 public:
  std::map<std::pair<int, bool>, std::vector<double>> seconds;       // (K, sens) -> per-run CPU s/traj
  std::map<std::pair<int, bool>, std::vector<double>> wall_seconds;  // (K, sens) -> per-run wall s/traj
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred || r.iterations == 0) continue;
      const std::string name = r.benchmark_name();
      int K = -1;
      if (std::sscanf(name.c_str(), "sensitivity/K:%d", &K) != 1) continue;
      const bool sens = name.find("/sens") != std::string::npos;
      const double per = static_cast<double>(r.iterations) * static_cast<double>(g_n);
      seconds[{K, sens}].push_back(r.cpu_accumulated_time / per);
      wall_seconds[{K, sens}].push_back(r.real_accumulated_time / per);
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

double minimum(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Fit {
  double slope = 0, intercept = 0, r2 = 0;
};
Fit least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
  }
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  Fit f;
  f.slope = sxx > 0 ? sxy / sxx : 0;
  f.intercept = my - f.slope * mx;
  double ss_res = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = y[i] - (f.intercept + f.slope * x[i]);
    ss_res += e * e;
  }
  f.r2 = syy > 0 ? 1.0 - ss_res / syy : 1.0;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else if (std::strcmp(argv[i], "--trajectories") == 0 && i + 1 < argc) {
      g_n = static_cast<std::size_t>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      args.push_back(argv[i]);
    }
  }
  int bargc = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&bargc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, args.data())) return 1;

  register_k<3>();
  register_k<24>();
  register_k<192>();

  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);

  struct Row {
    int K, P;
    double fwd_us, sens_us, ratio, fwd_wall_us, sens_wall_us;
    int reps_f, reps_s;
    const Case* c;
  };
  std::vector<Row> rows;
  for (const auto& [K, c] : g_cases) {
    const auto f = collector.seconds.find({K, false});
    const auto s = collector.seconds.find({K, true});
    if (f == collector.seconds.end() || s == collector.seconds.end()) continue;
    const double fu = minimum(f->second) * 1e6, su = minimum(s->second) * 1e6;
    const double fw = median(collector.wall_seconds[{K, false}]) * 1e6, sw = median(collector.wall_seconds[{K, true}]) * 1e6;
    rows.push_back({K, c.P, fu, su, su / fu, fw, sw, static_cast<int>(f->second.size()),
                    static_cast<int>(s->second.size()), &c});
  }
  if (rows.empty()) {
    std::printf("\n(no forward/sensitivity pair was run; nothing to summarise)\n");
    benchmark::Shutdown();
    return 0;
  }

  std::printf("\nSensitivity cost, CPU backend, 1 thread, %zu trajectories, dt = 1e-3, t_final = 3, probes = 3\n", g_n);
  std::printf("(per-trajectory CPU time of saltation::solve, minimum over repetitions; wall = median wall-clock)\n\n");
  std::printf("%5s %5s %12s %12s %8s %8s %15s %s\n", "K", "P", "forward[us]", "sens[us]", "ratio", "wall", "events/traj",
              "statuses fin/cap/settled/nonfinite/zeno");
  for (const Row& r : rows) {
    const auto& st = r.c->stats;
    std::printf("%5d %5d %12.1f %12.1f %7.3fx %7.3fx %5.2f [%d..%d]  %d/%d/%d/%d/%d%s\n", r.K, r.P, r.fwd_us, r.sens_us,
                r.ratio, r.sens_wall_us / r.fwd_wall_us,
                st.events_mean, st.events_min, st.events_max, st.status_count[0], st.status_count[1],
                st.status_count[2], st.status_count[3], st.status_count[5],
                r.c->same_events ? "" : "  (WARNING: sens run saw different events)");
  }
  std::vector<double> xp, ys, yd, yf;
  for (const Row& r : rows) {
    xp.push_back(r.P);
    ys.push_back(r.sens_us);
    yd.push_back(r.sens_us - r.fwd_us);
    yf.push_back(r.fwd_us);
  }
  Fit fs, fd, ff;
  if (rows.size() >= 2) {
    fs = least_squares(xp, ys);
    fd = least_squares(xp, yd);
    ff = least_squares(xp, yf);
    std::printf("\nLeast squares against P (%zu points):\n", rows.size());
    std::printf("  sensitivity solve:        %.4f us per parameter per trajectory + %.1f us, R^2 = %.5f\n", fs.slope,
                fs.intercept, fs.r2);
    std::printf("  forward solve:            %.4f us per parameter per trajectory + %.1f us, R^2 = %.5f\n", ff.slope,
                ff.intercept, ff.r2);
    std::printf("  sensitivity - forward:    %.4f us per parameter per trajectory + %.1f us, R^2 = %.5f\n", fd.slope,
                fd.intercept, fd.r2);
  }
  std::printf("\nSeed (contact-sim, Julia): ratio 3.3x at P = 14, 2.8x at P = 77; 15 us per parameter, R^2 = 0.998.\n");

  if (!json_path.empty()) {
    std::ofstream js(json_path);
    js << "{\n  \"trajectories\": " << g_n << ", \"threads\": 1, \"dt\": 1e-3, \"t_final\": 3, \"probes\": 3, \"v_stop\": "
       << saltation_bench::seed_options(false, 1).v_stop << ",\n  \"time\": \"thread CPU time, minimum over repetitions\",\n";
    js << "  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      js << "    {\"K\": " << r.K << ", \"P\": " << r.P << ", \"forward_us_per_traj\": " << r.fwd_us
         << ", \"sens_us_per_traj\": " << r.sens_us << ", \"ratio\": " << r.ratio
         << ", \"forward_wall_us_per_traj\": " << r.fwd_wall_us << ", \"sens_wall_us_per_traj\": " << r.sens_wall_us
         << ", \"events_per_traj\": " << r.c->stats.events_mean << ", \"events_min\": " << r.c->stats.events_min
         << ", \"events_max\": " << r.c->stats.events_max << ", \"repetitions\": " << std::min(r.reps_f, r.reps_s)
         << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    js << "  ],\n";
    js << "  \"fit_sens_vs_P\": {\"slope_us_per_param_per_traj\": " << fs.slope << ", \"intercept_us\": " << fs.intercept
       << ", \"r2\": " << fs.r2 << "},\n";
    js << "  \"fit_forward_vs_P\": {\"slope_us_per_param_per_traj\": " << ff.slope << ", \"intercept_us\": " << ff.intercept
       << ", \"r2\": " << ff.r2 << "},\n";
    js << "  \"fit_overhead_vs_P\": {\"slope_us_per_param_per_traj\": " << fd.slope
       << ", \"intercept_us\": " << fd.intercept << ", \"r2\": " << fd.r2 << "}\n}\n";
    std::printf("summary written to %s\n", json_path.c_str());
  }
  if (const char* csv = std::getenv("SALTATION_BENCH_CSV")) {
    std::ofstream cs(csv);
    cs << "K,P,trajectories,forward_us_per_traj,sens_us_per_traj,ratio,events_per_traj\n";
    for (const Row& r : rows)
      cs << r.K << "," << r.P << "," << g_n << "," << r.fwd_us << "," << r.sens_us << "," << r.ratio << ","
         << r.c->stats.events_mean << "\n";
    cs << "# fit sens vs P: slope_us_per_param_per_traj=" << fs.slope << " intercept_us=" << fs.intercept
       << " r2=" << fs.r2 << "\n";
    std::printf("summary CSV written to %s\n", csv);
  }
  benchmark::Shutdown();
  return 0;
}
