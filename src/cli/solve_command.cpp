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

#include "cli/commands.hpp"
#include "saltation/builtin.hpp"
#include "saltation/errors.hpp"
#include "saltation/json_io.hpp"

namespace saltation::cli {
namespace {

struct SolveArgs {
  std::string input, out, backend;
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

void run_solve(const SolveArgs& a) {
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
  if (!a.out.empty()) {
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
