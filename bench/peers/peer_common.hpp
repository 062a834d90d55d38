#pragma once
// What the programs of bench/peers share (bench/README.md, "Peers"): arguments, the one JSON record
// each tool writes for bench/peers/run.py, the timing loop, and the dispatch from --model (and --K)
// to a problem of problems.hpp, so that one program serves the terrain ball and the model files.
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

#include "problems.hpp"

namespace peers {

struct Args {
  std::string model = "terrain_ball";  // terrain_ball, or a model of bench/models (problems.hpp)
  int K = 3;                           // terrain_ball's bumps
  std::size_t rows = 64;
  bool sens = false;
  int reps = 3;                 // timed runs over all rows, after one untimed run
  double dt = 1e-3;             // fixed-step tools
  int probes = 3;               // fixed-step tools: interior guard probes per step
  double time_tol = 1e-12;      // fixed-step tools: event-time bracket width of the bisection
  double rtol = 1e-10;          // adaptive tools
  std::string method = "rk4";   // saltation only: its options.method ("rk4" or "dopri5", with rtol and atol)
  double atol = -1.0;           // adaptive tools (< 0: atol = rtol)
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
    if (key == "--model") a.model = v;
    else if (key == "--K") a.K = std::stoi(v);
    else if (key == "--rows") a.rows = std::stoul(v);
    else if (key == "--reps") a.reps = std::stoi(v);
    else if (key == "--dt") a.dt = std::stod(v);
    else if (key == "--probes") a.probes = std::stoi(v);
    else if (key == "--time-tol") a.time_tol = std::stod(v);
    else if (key == "--rtol") a.rtol = std::stod(v);
    else if (key == "--method") a.method = v;
    else if (key == "--atol") a.atol = std::stod(v);
    else if (key == "--threads") a.threads = std::stoi(v);
    else if (key == "--backend") a.backend = v;
    else if (key == "--record-rows") a.record_rows = std::stoul(v);
    else if (key == "--out") a.out = v;
    else throw std::invalid_argument("unknown option " + key);
  }
  if (a.out.empty()) throw std::invalid_argument("--out is required");
  if (a.reps < 1 || a.rows < 1) throw std::invalid_argument("--reps and --rows must be >= 1");
  if (a.atol < 0.0) a.atol = a.rtol;
  return a;
}

// The rows of a batch of n whose results the record keeps (--record-rows; all are timed).
inline std::size_t kept_rows(const Args& args, std::size_t n) {
  return args.record_rows > 0 && args.record_rows < n ? args.record_rows : n;
}

// One trajectory as every tool reports it.
struct RowRecord {
  int status = 0;            // saltation::Status: 0 t_final, 1 event capacity, 2 settled
  std::vector<double> ev_t;  // each event's time
  std::vector<double> ev_q;  // each event's pre-event state, the problem's event_states first components
  std::vector<double> qf;    // the final state
  std::vector<double> dqf;   // d qf / dtheta, row-major N x P (with --sens)
};

// Runs `solve_all` (all rows, filling records) once untimed, then args.reps timed batches of as
// many runs as last about 0.1 s (on a loaded machine one short run times the scheduler, not the
// tool); returns the seconds per run of each batch. A first run of a second or more is itself the
// first batch: warming up matters for milliseconds, not seconds, and the model files' peers at
// 1024 rows would otherwise spend half their time untimed. `first_seconds`, where given, gets the
// first run's time: the process's first solve, which on a GPU also starts the device.
template <class F>
std::vector<double> timed_runs(const Args& args, F&& solve_all, double* first_seconds = nullptr) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  const auto t_first = Clock::now();
  solve_all();
  const double first = since(t_first);
  if (first_seconds) *first_seconds = first;
  const int runs = first >= 0.1 ? 1 : static_cast<int>(std::min(100.0, std::ceil(0.1 / std::max(first, 1e-6))));
  std::vector<double> seconds;
  if (first >= 1.0) seconds.push_back(first);
  while (static_cast<int>(seconds.size()) < args.reps) {
    const auto t0 = Clock::now();
    for (int k = 0; k < runs; ++k) solve_all();
    seconds.push_back(since(t0) / runs);
  }
  return seconds;
}

// The record of a run over all rows; it keeps the first kept_rows of them.
inline nlohmann::json record(const Args& args, const std::string& tool, const std::string& setting,
                             const std::vector<RowRecord>& rows, const std::vector<double>& seconds) {
  nlohmann::json j;
  j["tool"] = tool;
  j["setting"] = setting;
  j["model"] = args.model;
  j["K"] = args.K;
  j["sens"] = args.sens;
  j["rows"] = rows.size();
  j["seconds"] = seconds;
  auto& out = j["results"];
  out = nlohmann::json::array();
  for (std::size_t i = 0; i < kept_rows(args, rows.size()); ++i) {
    const RowRecord& r = rows[i];
    out.push_back({{"status", r.status}, {"ev_t", r.ev_t}, {"ev_q", r.ev_q}, {"qf", r.qf}, {"dqf", r.dqf}});
  }
  return j;
}

inline void save(const Args& args, const nlohmann::json& j) {
  std::ofstream f(args.out);
  f << j.dump();
  if (!f) throw std::runtime_error("cannot write " + args.out);
}

// Calls Runner<Problem>::run(args) for the problem that --model (and --K) name: the terrain ball at
// the bump counts the peers compare at (3 and 24), or a model of bench/models written out as a
// type (problems.hpp). `model_files`: whether this peer implements the model files.
template <template <class> class Runner>
int dispatch(int argc, char** argv, bool model_files = true) {
  try {
    const Args args = parse_args(argc, argv);
    if (args.model == "terrain_ball") {
      if (args.K == 3) return Runner<TerrainProblem<3>>::run(args);
      if (args.K == 24) return Runner<TerrainProblem<24>>::run(args);
      throw std::invalid_argument("--K must be 3 or 24");
    }
    if (model_files && args.model == "duffing_stop") return Runner<FileModelProblem<DuffingStop>>::run(args);
    if (model_files && args.model == "pendulum_drag") return Runner<FileModelProblem<PendulumDrag>>::run(args);
    throw std::invalid_argument("--model " + args.model + " is not implemented by this peer");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}

}  // namespace peers
