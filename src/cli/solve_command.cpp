// `saltation solve`: a JSON request in, the result table out as JSON, NPY or CSV. A thin
// adapter: reading, the model registry, solving and writing are the library's.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/io/writers.hpp"
#include "saltation/registry.hpp"

namespace saltation::cli {
namespace {

struct SolveArgs {
  std::string input, out, backend, format = "json";
  bool summary = false;
  bool progress = false;
  Options overrides;               // values of the option flags given
  std::map<std::string, bool> given;  // which option flags were given
};

std::string summary_text(const ModelInfo& info, const Result& r, Backend used, double seconds) {
  std::ostringstream s;
  std::map<std::string, int> by_status;
  std::size_t events = 0;
  for (std::size_t i = 0; i < r.n; ++i) {
    ++by_status[status_name(r.status_of(i))];
    events += static_cast<std::size_t>(r.n_events[i]);
  }
  s << "saltation solve: model " << info.name << ", " << r.n << " trajectories on backend " << backend_name(used)
    << " in " << seconds << " s\n  statuses:";
  for (const auto& [name, count] : by_status) s << " " << name << "=" << count;
  s << "\n  events: " << events << " in total\n";
  for (std::size_t i = 0; i < r.n && i < 3; ++i) {
    s << "  trajectory " << i << ": " << status_name(r.status_of(i)) << " at t=" << r.t_end[i] << ", "
      << r.n_events[i] << " events, qf = (";
    for (int k = 0; k < r.N; ++k) s << (k ? ", " : "") << info.state_names[k] << "=" << r.qf_of(i, k);
    s << ")\n";
    for (int c = 0; c < r.n_events[i] && c < 3; ++c)
      s << "    event " << c << ": t=" << r.event_time(i, c) << " guard " << r.ev_guard[c * r.n + i] << "\n";
  }
  return s.str();
}

void run_solve(const SolveArgs& a) {
  if (a.format != "json" && a.out.empty()) throw InvalidInput("out", -1, "--format " + a.format + " needs --out");
  const nlohmann::json request = io::read_json_file(a.input);
  const io::ModelChoice choice = io::parse_model_choice(request);
  const AnyModel model = configure_builtin_model(choice.name, choice.config);
  io::SolveRequest req = io::parse_solve_request(request, model.info());
  // Flags override the file's options member by member, before normalisation.
  for_each_option([&](const char* name, const char*, auto& member, const auto& flag) {
    if (a.given.count(name)) member = flag;
  }, req.options, a.overrides);
  if (!a.backend.empty()) req.backend = parse_backend(a.backend);
  const Options options = normalize_options(req.options);
  const Backend used = resolve_backend(req.backend);
  const Progress progress = a.progress ? progress_line("solve", "trajectories") : Progress();
  const auto start = std::chrono::steady_clock::now();
  const Result result = model.solve(req.batch, options, used, progress);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const io::ArrayTable table = io::result_table(model.info(), result, io::provenance(model.info(), options, used));
  std::string where;
  if (a.format == "npy") {
    io::write_npy(table, a.out);
    where = a.out + ".json and " + a.out + "_*.npy";
  } else if (a.format == "csv") {
    io::write_csv(table, a.out);
    where = a.out;
  } else if (!a.out.empty()) {
    io::write_json(table, a.out);
    where = a.out;
  } else if (!a.summary) {
    io::write_json(table, "-");
  }
  if (a.summary) {
    std::cout << summary_text(model.info(), result, used, seconds);
    if (!where.empty()) std::cout << "  results written to " << where << "\n";
  }
}

}  // namespace

void add_solve_command(CLI::App& app) {
  auto args = std::make_shared<SolveArgs>();
  CLI::App* cmd = app.add_subcommand("solve", "Integrate a batch of hybrid trajectories described by a JSON file");
  cmd->add_option("input", args->input, "Request JSON (docs/schema.md); - reads standard input")->required();
  cmd->add_option("--out,-o", args->out, "Write the results here (atomically) instead of standard output");
  cmd->add_option("--backend", args->backend, "cpu | cuda | auto (overrides the file)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--format,-f", args->format,
                  "json (one file), npy (PREFIX.json + PREFIX_<array>.npy; needs --out PREFIX) or csv (one line per "
                  "trajectory; needs --out)")
      ->check(CLI::IsMember({"json", "npy", "csv"}));
  cmd->add_flag("--summary", args->summary, "Print a readable summary (instead of the JSON when no --out)");
  cmd->add_flag("--progress", args->progress, "Report progress on standard error");
  // One flag per option (options.hpp), --t-final for t_final; a flag overrides the file.
  for_each_option([&](const char* name, const char* meaning, auto& member) {
    std::string flag = std::string("--") + name;
    for (auto& ch : flag)
      if (ch == '_') ch = '-';
    const std::string key = name;
    const std::string help = std::string("Override options.") + name + ": " + meaning;
    if constexpr (std::is_same_v<std::decay_t<decltype(member)>, bool>)
      cmd->add_flag_callback(flag, [args, key, &member] { member = true, args->given[key] = true; }, help);
    else
      cmd->add_option_function<std::decay_t<decltype(member)>>(
          flag, [args, key, &member](const auto& v) { member = v, args->given[key] = true; }, help);
  }, args->overrides);
  cmd->callback([args] { run_solve(*args); });
}

}  // namespace saltation::cli
