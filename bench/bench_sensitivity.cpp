// Sensitivity cost (results: bench/results/cpu/README.md): the cost of a solve with sensitivities over a forward
// solve on the same terrain-ball batch for P = 14, 77, 581 (K = 3, 24, 192), CPU backend, one
// thread. After the Google Benchmark cases run, prints the ratio per P and the least-squares line
// of the sensitivity-solve cost per trajectory against P (microseconds per parameter per
// trajectory, R^2). Every timing is of saltation::solve itself.
//
// The summary comes from a paired measurement run after the Google Benchmark cases: per K and
// round, every trajectory of the batch is solved forward and with sensitivities back to back
// (saltation::solve on a one-row batch, the order alternating F S / S F), each solve timed in
// thread CPU time; a round's ratio is sum(S) / sum(F), its costs sum / n, and the table shows
// medians over rounds. Pairing matters on a shared machine: its speed drifts by tens of percent
// within seconds, so the minima of separately run cases can pair a fast forward run with a slow
// sensitivity run.
// The Google Benchmark cases' own minimum-CPU-time ratio is printed alongside.
//
// Extra flags (removed before Google Benchmark sees argv):
//   --json FILE        write the summary as JSON
//   --trajectories N   batch size (default 64)
//   --rounds N         paired rounds per K (default 9 for K = 3, 24 and 3 for K = 192; 0: skip)
// Environment: SALTATION_BENCH_CSV=FILE writes the summary as CSV.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

namespace {

std::size_t g_n = 64;
int g_rounds = -1;  // -1: default per K

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Paired forward/sens timings of one K (seconds per trajectory, thread CPU time).
struct Paired {
  std::vector<double> fwd, sens, ratio;  // per round: mean s/traj of each mode, sum(S)/sum(F)
};
std::map<int, std::function<Paired(int)>> g_paired;  // by K

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
  const saltation::Result rf =
      saltation::solve(model, batch, saltation_bench::seed_options(false, 1), saltation::Backend::Cpu);
  const saltation::Result rs =
      saltation::solve(model, batch, saltation_bench::seed_options(true, 1), saltation::Backend::Cpu);
  c.stats = saltation_bench::batch_stats(rf, 1e-3);
  for (std::size_t i = 0; i < batch.n; ++i)
    if (rf.n_events[i] != rs.n_events[i] || rf.status[i] != rs.status[i]) c.same_events = false;
  g_cases[K] = c;
  g_paired[K] = [model](int rounds) {
    // One single-row batch per trajectory, so a forward and a sensitivity solve of the same
    // trajectory run back to back (milliseconds apart) and see the same machine speed.
    std::vector<saltation::Batch> rows;
    for (std::size_t i = 0; i < batch.n; ++i) {
      saltation::Batch b(1, batch.P);
      for (int p = 0; p < batch.P; ++p) b.at(0, p) = batch.at(i, p);
      rows.push_back(b);
    }
    Paired out;
    const saltation::Options of = saltation_bench::seed_options(false, 1), os = saltation_bench::seed_options(true, 1);
    auto timed = [&](const saltation::Batch& b, const saltation::Options& o) {
      const double t0 = thread_cpu_seconds();
      saltation::Result r = saltation::solve(model, b, o, saltation::Backend::Cpu);
      benchmark::DoNotOptimize(r.qf.data());
      return thread_cpu_seconds() - t0;
    };
    for (int k = 0; k < rounds; ++k) {
      double F = 0.0, S = 0.0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        double f, s;
        if (i % 2 == 0) {  // alternate the order: F S, S F, ...
          f = timed(rows[i], of);
          s = timed(rows[i], os);
        } else {
          s = timed(rows[i], os);
          f = timed(rows[i], of);
        }
        F += f;
        S += s;
      }
      const double n = static_cast<double>(rows.size());
      out.fwd.push_back(F / n);
      out.sens.push_back(S / n);
      out.ratio.push_back(S / F);
    }
    return out;
  };

  for (const bool sens : {false, true}) {
    const std::string name = std::string("sensitivity/K:") + std::to_string(K) + "/P:" + std::to_string(Model::P) +
                             (sens ? "/sens" : "/forward");
    benchmark::RegisterBenchmark(name.c_str(),
                                 [sens, model](benchmark::State& state) {
                                   const saltation::Options o = saltation_bench::seed_options(sens, 1);
                                   for (auto _ : state) {
                                     saltation::Result r = saltation::solve(model, batch, o, saltation::Backend::Cpu);
                                     benchmark::DoNotOptimize(r.qf.data());
                                     benchmark::ClobberMemory();
                                   }
                                   const double n = static_cast<double>(batch.n);
                                   state.counters["traj"] = n;
                                   // Seconds per trajectory (shown with an SI prefix, e.g. 512u = 512 microseconds).
                                   state.counters["s_per_traj"] = benchmark::Counter(
                                       n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
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
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      g_rounds = std::atoi(argv[++i]);
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
    double fwd_us, sens_us, ratio, ratio_lo, ratio_hi;  // paired (medians; ratio range over rounds)
    int rounds;
    double gb_fwd_us, gb_sens_us, gb_ratio;  // Google Benchmark cases (min CPU time), 0 if not run
    const Case* c;
  };
  std::vector<Row> rows;
  for (const auto& [K, c] : g_cases) {
    Row r{K, c.P, 0, 0, 0, 0, 0, 0, 0, 0, 0, &c};
    const auto f = collector.seconds.find({K, false});
    const auto s = collector.seconds.find({K, true});
    const bool gb = f != collector.seconds.end() && s != collector.seconds.end();
    if (gb) {
      r.gb_fwd_us = minimum(f->second) * 1e6;
      r.gb_sens_us = minimum(s->second) * 1e6;
      r.gb_ratio = r.gb_sens_us / r.gb_fwd_us;
    }
    const int rounds = g_rounds >= 0 ? g_rounds : (K >= 192 ? 3 : 9);
    // Pair only the K whose cases were selected (or all, when the filter ran none of them).
    if (rounds > 0 && (gb || collector.seconds.empty())) {
      const Paired pr = g_paired[K](rounds);
      r.rounds = rounds;
      r.fwd_us = median(pr.fwd) * 1e6;
      r.sens_us = median(pr.sens) * 1e6;
      r.ratio = median(pr.ratio);
      r.ratio_lo = *std::min_element(pr.ratio.begin(), pr.ratio.end());
      r.ratio_hi = *std::max_element(pr.ratio.begin(), pr.ratio.end());
    } else if (gb) {
      r.fwd_us = r.gb_fwd_us;
      r.sens_us = r.gb_sens_us;
      r.ratio = r.ratio_lo = r.ratio_hi = r.gb_ratio;
    } else {
      continue;
    }
    rows.push_back(r);
  }
  if (rows.empty()) {
    std::printf("\n(nothing to summarise)\n");
    benchmark::Shutdown();
    return 0;
  }

  std::printf(
      "\nSensitivity cost, CPU backend, 1 thread, %zu trajectories, dt = 1e-3, t_final = 3, probes = 3, v_stop = %g\n",
      g_n, saltation_bench::seed_options(false, 1).v_stop);
  std::printf("paired rounds (each trajectory solved forward and with sensitivities back to back), thread CPU\n");
  std::printf("time per trajectory, medians over rounds; ratio = median of sum(S)/sum(F) [min..max over rounds];\n");
  std::printf("gb ratio = the Google Benchmark cases above (64-trajectory solves), minimum CPU time each\n\n");
  std::printf("%5s %5s %12s %12s %8s %17s %7s %9s %15s %s\n", "K", "P", "forward[us]", "sens[us]", "ratio",
              "[min..max]", "rounds", "gb ratio", "events/traj", "statuses fin/cap/settled/nonfinite/zeno");
  for (const Row& r : rows) {
    const auto& st = r.c->stats;
    std::printf("%5d %5d %12.1f %12.1f %7.3fx  [%5.3f..%5.3f] %7d %8.3fx %5.2f [%d..%d]  %d/%d/%d/%d/%d%s\n", r.K, r.P,
                r.fwd_us, r.sens_us, r.ratio, r.ratio_lo, r.ratio_hi, r.rounds, r.gb_ratio, st.events_mean,
                st.events_min, st.events_max, st.status_count[0], st.status_count[1], st.status_count[2],
                st.status_count[3], st.status_count[5],
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
    std::printf("\nLeast squares against P (%zu points, the medians above):\n", rows.size());
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
    js << "{\n  \"trajectories\": " << g_n
       << ", \"threads\": 1, \"dt\": 1e-3, \"t_final\": 3, \"probes\": 3, \"v_stop\": "
       << saltation_bench::seed_options(false, 1).v_stop << ",\n"
       << "  \"time\": \"thread CPU time per trajectory; medians over paired rounds (each trajectory forward and sens "
          "back to back)\",\n";
    js << "  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      js << "    {\"K\": " << r.K << ", \"P\": " << r.P << ", \"forward_us_per_traj\": " << r.fwd_us
         << ", \"sens_us_per_traj\": " << r.sens_us << ", \"ratio\": " << r.ratio << ", \"ratio_min\": " << r.ratio_lo
         << ", \"ratio_max\": " << r.ratio_hi << ", \"rounds\": " << r.rounds
         << ", \"gb_forward_us_per_traj\": " << r.gb_fwd_us << ", \"gb_sens_us_per_traj\": " << r.gb_sens_us
         << ", \"gb_ratio\": " << r.gb_ratio << ", \"events_per_traj\": " << r.c->stats.events_mean
         << ", \"events_min\": " << r.c->stats.events_min << ", \"events_max\": " << r.c->stats.events_max << "}"
         << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    js << "  ],\n";
    js << "  \"fit_sens_vs_P\": {\"slope_us_per_param_per_traj\": " << fs.slope
       << ", \"intercept_us\": " << fs.intercept << ", \"r2\": " << fs.r2 << "},\n";
    js << "  \"fit_forward_vs_P\": {\"slope_us_per_param_per_traj\": " << ff.slope
       << ", \"intercept_us\": " << ff.intercept << ", \"r2\": " << ff.r2 << "},\n";
    js << "  \"fit_overhead_vs_P\": {\"slope_us_per_param_per_traj\": " << fd.slope
       << ", \"intercept_us\": " << fd.intercept << ", \"r2\": " << fd.r2 << "}\n}\n";
    std::printf("summary written to %s\n", json_path.c_str());
  }
  if (const char* csv = std::getenv("SALTATION_BENCH_CSV")) {
    std::ofstream cs(csv);
    cs << "K,P,trajectories,forward_us_per_traj,sens_us_per_traj,ratio,ratio_min,ratio_max,rounds,gb_ratio,events_per_"
          "traj\n";
    for (const Row& r : rows)
      cs << r.K << "," << r.P << "," << g_n << "," << r.fwd_us << "," << r.sens_us << "," << r.ratio << ","
         << r.ratio_lo << "," << r.ratio_hi << "," << r.rounds << "," << r.gb_ratio << "," << r.c->stats.events_mean
         << "\n";
    cs << "# fit sens vs P: slope_us_per_param_per_traj=" << fs.slope << " intercept_us=" << fs.intercept
       << " r2=" << fs.r2 << "\n";
    std::printf("summary CSV written to %s\n", csv);
  }
  benchmark::Shutdown();
  return 0;
}
