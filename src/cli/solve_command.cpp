// `saltation solve`: JSON request in, JSON results out (docs/schema.md).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "saltation/builtin.hpp"
#include "saltation/errors.hpp"
#include "saltation/json_io.hpp"
#include "saltation/npy.hpp"

namespace saltation::cli {
namespace {

struct SolveArgs {
  std::string input, out, backend, format = "json";
  bool summary = false;
  bool progress = false;
  // Scalar option overrides, applied on top of the file's "options".
  std::map<std::string, double> numbers;
  std::map<std::string, int> integers;
  bool sensitivities = false;
};


std::string summary_text(const nlohmann::json& out, double seconds) {
  std::ostringstream s;
  const auto& trajectories = out.at("trajectories");
  std::map<std::string, int> by_status;
  std::size_t events = 0;
  for (const auto& t : trajectories) {
    ++by_status[t.at("status_name").get<std::string>()];
    events += t.at("events").size();
  }
  s << "saltation solve: model " << out.at("model").get<std::string>() << ", " << trajectories.size()
    << " trajectories on backend " << out.at("provenance").at("backend").get<std::string>() << " in " << seconds
    << " s\n  statuses:";
  for (const auto& [name, count] : by_status) s << " " << name << "=" << count;
  s << "\n  events: " << events << " in total\n";
  const std::size_t show = trajectories.size() < 3 ? trajectories.size() : 3;
  const auto& names = out.at("state_names");
  for (std::size_t i = 0; i < show; ++i) {
    const auto& t = trajectories[i];
    s << "  trajectory " << i << ": " << t.at("status_name").get<std::string>() << " at t=" << t.at("t_end").get<double>()
      << ", " << t.at("events").size() << " events, qf = (";
    for (std::size_t k = 0; k < names.size(); ++k)
      s << (k ? ", " : "") << names[k].get<std::string>() << "=" << t.at("qf")[k].get<double>();
    s << ")\n";
    const auto& ev = t.at("events");
    for (std::size_t c = 0; c < ev.size() && c < 3; ++c)
      s << "    event " << c << ": t=" << ev[c].at("t").get<double>() << " guard " << ev[c].at("guard").get<int>() << "\n";
  }
  return s.str();
}

// Row-major copy [i][rest...] of an SoA array [rest...][n].
template <class T>
std::vector<T> by_trajectory(const std::vector<T>& soa, std::size_t n) {
  const std::size_t rest = n ? soa.size() / n : 0;
  std::vector<T> out(soa.size());
  for (std::size_t r = 0; r < rest; ++r)
    for (std::size_t i = 0; i < n; ++i) out[i * rest + r] = soa[r * n + i];
  return out;
}

// --format npy: PREFIX.json (everything but the per-trajectory arrays, plus an index of them) and
// one PREFIX_NAME.npy per array, trajectory-major. Event slots past a trajectory's n_events hold
// no event (time 0, guard -1).
void write_npy_results(const std::string& prefix, nlohmann::json summary, const Result& r) {
  summary.erase("trajectories");
  nlohmann::json index = nlohmann::json::object();
  std::vector<std::pair<std::string, std::string>> files;
  const long n = static_cast<long>(r.n), N = r.N, P = r.P, C = r.C;
  auto add = [&](const std::string& name, const auto& soa, std::vector<long> shape) {
    const std::string file = prefix + "_" + name + ".npy";
    files.push_back({file, npy_bytes(by_trajectory(soa, r.n), shape)});
    index[name] = {{"file", file}, {"shape", shape}};
  };
  add("status", r.status, {n});
  add("t_end", r.t_end, {n});
  add("qf", r.qf, {n, N});
  add("n_events", r.n_events, {n});
  add("events_t", r.ev_t, {n, C});
  add("events_guard", r.ev_guard, {n, C});
  add("events_grazing_flags", r.ev_flags, {n, C});
  add("events_q", r.ev_q, {n, C, N});
  add("events_q_plus", r.ev_q_plus, {n, C, N});
  if (r.sensitivities) {
    add("dqf_dtheta", r.dqf, {n, N, P});
    add("events_dt_dtheta", r.ev_dt, {n, C, P});
    add("events_dq_dtheta", r.ev_dq, {n, C, N, P});
  }
  summary["arrays"] = index;
  for (const auto& [file, bytes] : files) write_file_atomically(file, bytes);
  write_file_atomically(prefix + ".json", summary.dump(1) + "\n");
}

void run_solve(const SolveArgs& a) {
  if (a.format == "npy" && a.out.empty()) throw InvalidInput("out", -1, "--format npy needs --out PREFIX");
  SolveRequest req = parse_solve_request(read_json_input(a.input));
  nlohmann::json overrides = nlohmann::json::object();
  for (const auto& [k, v] : a.numbers) overrides[k] = v;
  for (const auto& [k, v] : a.integers) overrides[k] = v;
  if (a.sensitivities) overrides["sensitivities"] = true;
  req.options = options_from_json(overrides, req.options);
  if (!a.backend.empty()) req.backend = parse_backend(a.backend);
  const ModelInfo info = builtin_model_info(req.model, req.config);
  const Backend used = resolve_backend(req.backend);
  const auto start = std::chrono::steady_clock::now();
  Progress progress;
  if (a.progress)
    progress = [](std::size_t done, std::size_t total) {
      std::fprintf(stderr, "\rsaltation solve: %3.0f%% (%zu of %zu trajectories)%s", 100.0 * done / total, done, total,
                   done == total ? "\n" : "");
      std::fflush(stderr);
    };
  const Result result = solve_builtin(req.model, req.config, req.batch, req.options, used, progress);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const nlohmann::json out = result_to_json(req, info, result, used);
  if (a.format == "npy") {
    write_npy_results(a.out, out, result);
    if (a.summary) std::cout << summary_text(out, seconds) << "  results written to " << a.out << ".json and " << a.out << "_*.npy\n";
  } else if (!a.out.empty()) {
    write_file_atomically(a.out, out.dump(1) + "\n");
    if (a.summary) std::cout << summary_text(out, seconds) << "  results written to " << a.out << "\n";
  } else if (a.summary) {
    std::cout << summary_text(out, seconds);
  } else {
    std::cout << out.dump(1) << "\n";
  }
}

}  // namespace

void add_solve_command(CLI::App& app) {
  auto args = std::make_shared<SolveArgs>();
  CLI::App* cmd = app.add_subcommand("solve", "Integrate a batch of hybrid trajectories described by a JSON file");
  cmd->add_option("input", args->input, "Request JSON (docs/schema.md); - reads standard input")->required();
  cmd->add_option("--out,-o", args->out, "Write the results JSON here (atomically) instead of standard output");
  cmd->add_option("--backend", args->backend, "cpu | cuda | auto (overrides the file)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--format,-f", args->format, "json (one file) or npy (PREFIX.json + PREFIX_*.npy arrays; needs --out PREFIX)")
      ->check(CLI::IsMember({"json", "npy"}));
  cmd->add_flag("--summary", args->summary, "Print a readable summary (instead of the JSON when no --out)");
  cmd->add_flag("--progress", args->progress, "Report progress on standard error");
  cmd->add_flag("--sensitivities", args->sensitivities, "Also compute derivatives with respect to theta");
  for (const char* k : {"t_final", "dt", "v_stop", "time_tol", "graze_tol", "zeno_window"}) {
    std::string flag = std::string("--") + k;
    for (auto& ch : flag) if (ch == '_') ch = '-';
    cmd->add_option_function<double>(flag, [args, k](double v) { args->numbers[k] = v; },
                                     std::string("Override options.") + k);
  }
  for (const char* k : {"event_capacity", "probes", "zeno_events", "threads"}) {
    std::string flag = std::string("--") + k;
    for (auto& ch : flag) if (ch == '_') ch = '-';
    cmd->add_option_function<int>(flag, [args, k](int v) { args->integers[k] = v; },
                                  std::string("Override options.") + k);
  }
  cmd->callback([args] { run_solve(*args); });
}

}  // namespace saltation::cli
