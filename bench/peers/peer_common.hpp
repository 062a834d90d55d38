#pragma once
// What the programs of bench/peers share (bench/README.md, "Peers"): the rows (bench/terrain_batch.hpp),
// the problem every tool solves (seed_options: t_final 3, v_stop 0.25, event capacity 16), the
// termination rule, arguments, and the one JSON record each tool writes for bench/peers/run.py.
// The dynamics come from saltation::TerrainBall itself (flow, guard, reset, terrain), so a peer
// differs from the library only in how it integrates and finds events.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../terrain_batch.hpp"
#include "saltation/models/terrain_ball.hpp"

namespace peers {

constexpr int kN = 4;

struct Args {
  int K = 3;
  std::size_t rows = 64;
  bool sens = false;
  int reps = 3;                 // timed runs over all rows, after one untimed run
  double dt = 1e-3;             // fixed-step tools
  int probes = 3;               // fixed-step tools: interior guard probes per step
  double time_tol = 1e-12;      // fixed-step tools: event-time bracket width of the bisection
  double rtol = 1e-10;          // adaptive tools (atol = rtol)
  int threads = 1;              // saltation only: the CPU driver's threads
  std::string backend = "cpu";  // saltation only: "cpu" or "cuda" (scripts/gpu-check's runner part)
  std::size_t record_rows = 0;  // rows whose results the record keeps (0: all); all rows are timed
  std::string out;              // the JSON record
};

inline Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "--sens") {
      a.sens = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(key + " needs a value");
    const std::string v = argv[++i];
    if (key == "--K") a.K = std::stoi(v);
    else if (key == "--rows") a.rows = std::stoul(v);
    else if (key == "--reps") a.reps = std::stoi(v);
    else if (key == "--dt") a.dt = std::stod(v);
    else if (key == "--probes") a.probes = std::stoi(v);
    else if (key == "--time-tol") a.time_tol = std::stod(v);
    else if (key == "--rtol") a.rtol = std::stod(v);
    else if (key == "--threads") a.threads = std::stoi(v);
    else if (key == "--backend") a.backend = v;
    else if (key == "--record-rows") a.record_rows = std::stoul(v);
    else if (key == "--out") a.out = v;
    else throw std::invalid_argument("unknown option " + key);
  }
  if (a.out.empty()) throw std::invalid_argument("--out is required");
  if (a.reps < 1 || a.rows < 1) throw std::invalid_argument("--reps and --rows must be >= 1");
  return a;
}

// The settings of saltation_bench::seed_options that every tool follows.
inline saltation::Options problem_options(bool sens) { return saltation_bench::seed_options(sens, 1); }

// One trajectory as every tool reports it.
struct RowRecord {
  int status = 0;                        // saltation::Status: 0 t_final, 1 event capacity, 2 settled
  std::vector<double> ev_t, ev_x, ev_y;  // each impact: time and pre-impact position
  double qf[kN] = {0, 0, 0, 0};
  std::vector<double> dqf;  // d qf / dtheta, row-major N x P (with --sens)
};

// Normal speed |v . n| of the pre-impact state q: below v_stop the impact settles the ball
// (the library's impact_speed for this guard).
template <int K>
double normal_speed(const saltation::TerrainBall<K>& m, const double* q, const double* th) {
  double h, dh;
  m.terrain(q[0], th, h, dh);
  return std::fabs(q[3] - dh * q[2]) / std::sqrt(1.0 + dh * dh);
}

// Runs `solve_all` (all rows, filling records) once untimed, then args.reps timed batches of as
// many runs as last about 0.1 s (on a loaded machine one short run times the scheduler, not the
// tool); returns the seconds per run of each batch.
template <class F>
std::vector<double> timed_runs(const Args& args, F&& solve_all) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  const auto t_first = Clock::now();
  solve_all();
  const double first = since(t_first);
  const int runs = first >= 0.1 ? 1 : static_cast<int>(std::min(100.0, std::ceil(0.1 / std::max(first, 1e-6))));
  std::vector<double> seconds;
  for (int r = 0; r < args.reps; ++r) {
    const auto t0 = Clock::now();
    for (int k = 0; k < runs; ++k) solve_all();
    seconds.push_back(since(t0) / runs);
  }
  return seconds;
}

inline nlohmann::json record(const Args& args, const std::string& tool, const std::string& setting,
                             const std::vector<RowRecord>& rows, const std::vector<double>& seconds) {
  nlohmann::json j;
  j["tool"] = tool;
  j["setting"] = setting;
  j["K"] = args.K;
  j["sens"] = args.sens;
  j["rows"] = rows.size();
  j["seconds"] = seconds;
  auto& out = j["results"];
  for (const RowRecord& r : rows)
    out.push_back({{"status", r.status},
                   {"ev_t", r.ev_t},
                   {"ev_x", r.ev_x},
                   {"ev_y", r.ev_y},
                   {"qf", std::vector<double>(r.qf, r.qf + kN)},
                   {"dqf", r.dqf}});
  return j;
}

inline void save(const Args& args, const nlohmann::json& j) {
  std::ofstream f(args.out);
  f << j.dump();
  if (!f) throw std::runtime_error("cannot write " + args.out);
}

// Calls run<K>(args) for the bump counts the peers compare at (those of the issue: 3 and 24).
template <template <int> class Runner>
int dispatch_bumps(int argc, char** argv) {
  try {
    const Args args = parse_args(argc, argv);
    if (args.K == 3) return Runner<3>::run(args);
    if (args.K == 24) return Runner<24>::run(args);
    throw std::invalid_argument("--K must be 3 or 24");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}

}  // namespace peers
