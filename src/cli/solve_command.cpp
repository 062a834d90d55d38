// `saltation solve`: a JSON request in, the result table out as JSON, NPY or CSV. A thin
// adapter: reading, the model registry, solving and writing are the library's. NPY output is
// solved and written in chunks sized from --memory-budget, so any batch size runs in bounded memory.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "saltation/cuda.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/npy.hpp"
#include "saltation/io/overrides.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/io/writers.hpp"
#include "saltation/registry.hpp"

namespace saltation::cli {
namespace {

struct SolveArgs {
  std::string input, out, backend, format = "json", memory_budget;
  bool summary = false;
  bool progress = false;
  bool keep_partial = false;
  Options overrides;                  // values of the option flags given
  std::map<std::string, bool> given;  // which option flags were given
};

// The readable summary, gathered chunk by chunk: statuses, event total, the first trajectories.
class SolveSummary {
 public:
  explicit SolveSummary(const ModelInfo& info) : info_(info) {}

  // `chunk` holds trajectories first, first + 1, ... of the batch.
  void add(const Result& chunk, std::size_t first) {
    for (std::size_t i = 0; i < chunk.n; ++i) {
      ++by_status_[status_name(chunk.status_of(i))];
      events_ += static_cast<std::size_t>(chunk.n_events[i]);
    }
    for (std::size_t i = 0; i < chunk.n && first + i < 3; ++i) {
      first_ << "  trajectory " << first + i << ": " << status_name(chunk.status_of(i)) << " at t=" << chunk.t_end[i]
             << ", " << chunk.n_events[i] << " events, qf = (";
      for (int k = 0; k < chunk.N; ++k) first_ << (k ? ", " : "") << info_.state_names[k] << "=" << chunk.qf_of(i, k);
      first_ << ")\n";
      for (int c = 0; c < chunk.n_events[i] && c < 3; ++c)
        first_ << "    event " << c << ": t=" << chunk.event_time(i, c) << " guard " << chunk.ev_guard[c * chunk.n + i]
               << "\n";
    }
  }

  std::string text(std::size_t n, Backend used, double seconds, std::size_t chunks) const {
    std::ostringstream s;
    s << "saltation solve: model " << info_.name << ", " << n << " trajectories on backend " << backend_name(used)
      << " in " << seconds << " s" << (chunks > 1 ? " (" + std::to_string(chunks) + " chunks)" : "") << "\n  statuses:";
    for (const auto& [name, count] : by_status_) s << " " << name << "=" << count;
    s << "\n  events: " << events_ << " in total\n" << first_.str();
    return s.str();
  }

 private:
  const ModelInfo& info_;
  std::map<std::string, int> by_status_;
  std::size_t events_ = 0;
  std::ostringstream first_;
};

// normalize_options, its refusal of a value given as a flag blamed on the flag ("--threads").
Options normalize_given(const Options& options, const std::map<std::string, bool>& given) {
  try {
    return normalize_options(options);
  } catch (const InvalidInput& e) {
    const std::string key = e.parameter().rfind("options.", 0) == 0 ? e.parameter().substr(8) : "";
    if (!given.count(key)) throw;
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const std::string what = std::string(e.what()).substr(std::string("invalid input: " + e.parameter() + ": ").size());
    throw InvalidInput(flag, -1, what);
  }
}

void run_solve(const SolveArgs& a) {
  if (a.format != "json" && a.out.empty()) throw InvalidInput("out", -1, "--format " + a.format + " needs --out");
  if (a.keep_partial && a.format != "npy")
    throw InvalidInput("keep-partial", -1, "needs --format npy: JSON and CSV are written whole at the end");
  const std::uint64_t requested_budget =
      a.memory_budget.empty() ? 0 : io::parse_bytes("--memory-budget", a.memory_budget);
  const nlohmann::json request = io::read_json_file(a.input);
  const AnyModel model = configure_model(io::parse_model_choice(request, io::parent_folder(a.input)));
  const ModelInfo& info = model.info();
  io::SolveRequest req = io::parse_solve_request(request, info);
  // Flags override the file's options member by member, before normalisation.
  for_each_option(
      [&](const char* name, const char*, auto& member, const auto& flag) {
        if (a.given.count(name)) member = flag;
      },
      req.options, a.overrides);
  if (!a.backend.empty()) req.backend = parse_backend(a.backend);
  const Options options = normalize_given(req.options, a.given);
  const Backend used = model.backend_for(req.backend, options);
  const io::ArrayTable shape = io::result_shape(info, options, io::provenance(info, options, used));
  const std::size_t n = req.batch.n;

  // NPY streams: chunks of the budget's size, each appended and freed before the next is solved.
  // JSON and CSV are one table in memory, refused beyond their size limit before anything runs.
  const bool streamed = a.format == "npy";
  std::size_t chunk = n;
  std::unique_ptr<io::NpyTableWriter> npy;
  if (streamed) {
    const std::uint64_t budget = requested_budget ? requested_budget : io::default_memory_budget(used);
    chunk = std::min(n, io::chunk_rows(budget, io::bytes_per_trajectory(info, options)));
    npy = std::make_unique<io::NpyTableWriter>(a.out, shape, n);
  } else {
    if (requested_budget)
      check_host_memory(n, io::bytes_per_trajectory(info, options), "saltation solve --format " + a.format,
                        "use --format npy --out PREFIX, which solves and writes within the budget chunk by chunk",
                        requested_budget);
    io::refuse_large_text_output(shape, n, "format", "--format " + a.format,
                                 "use --format npy --out PREFIX, which streams the results chunk by chunk "
                                 "(docs/schema.md)");
  }

  const Progress progress = a.progress ? progress_line("solve", "trajectories") : Progress();
  SolveSummary summary(info);
  std::size_t chunks = 0;
  double seconds = 0.0;
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t count = std::min(chunk, n - first);
    Progress chunk_progress;
    if (progress) chunk_progress = [&](std::size_t done, std::size_t) { progress(first + done, n); };
    const auto start = std::chrono::steady_clock::now();
    // A stop or a CUDA failure in this chunk: the chunks before it are written, and with
    // --keep-partial they are kept as a marked partial result.
    auto keep_written_rows = [&] {
      if (!a.keep_partial || !npy) return;
      npy->commit_partial(a.out + ".partial");
      kept_partial_note() = "rows [0, " + std::to_string(npy->rows_appended()) + ") of " + std::to_string(n) +
                            " kept in " + a.out + ".partial.json and " + a.out + ".partial_*.npy";
    };
    Result result;
    try {
      result = count == n ? model.solve(req.batch, options, used, chunk_progress)
                          : model.solve(io::batch_rows(req.batch, first, count), options, used, chunk_progress);
    } catch (const Interrupted&) {
      keep_written_rows();
      throw;
    } catch (const CudaError& failure) {
      keep_written_rows();
      // Restated in the whole batch's rows; a failure before any row ran (no device) stays as it is.
      const auto* in_chunk = dynamic_cast<const cuda::ChunkFailure*>(&failure);
      if (first == 0 && !in_chunk) throw;
      throw cuda::ChunkFailure(failure, first + (in_chunk ? in_chunk->completed() : 0), n);
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++chunks;
    if (a.summary) summary.add(result, first);
    const io::ArrayTable table = io::result_table(info, result, shape.meta.at("provenance"));
    if (npy) npy->append(table);
    else if (a.format == "csv") io::write_csv(table, a.out);
    else if (!a.out.empty()) io::write_json(table, a.out);
    else if (!a.summary) io::write_json(table, "-");
  }
  std::string where = a.out;
  if (npy) {
    npy->commit();
    where = a.out + ".json and " + a.out + "_*.npy";
  }
  if (a.summary) {
    std::cout << summary.text(n, used, seconds, chunks);
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
  cmd->add_option(
      "--memory-budget", args->memory_budget,
      "With --format npy: bytes for one chunk of trajectories, solved and written before the next (e.g. "
      "512M, 2G; default 1G on the CPU, a quarter of the GPU's); with json or csv: the most the results may take");
  cmd->add_flag("--summary", args->summary, "Print a readable summary (instead of the JSON when no --out)");
  cmd->add_flag("--progress", args->progress, "Report progress on standard error");
  cmd->add_flag("--keep-partial", args->keep_partial,
                "With --format npy: when interrupted or on a CUDA failure, keep the chunks already written as "
                "PREFIX.partial.json and PREFIX.partial_<array>.npy (marked \"partial\") instead of nothing");
  // One flag per option (options.hpp), --t-final for t_final; a flag overrides the file.
  for_each_option(
      [&](const char* name, const char* meaning, auto& member) {
        std::string flag = std::string("--") + name;
        for (auto& ch : flag)
          if (ch == '_') ch = '-';
        const std::string key = name;
        const std::string help = std::string("Override options.") + name + ": " + meaning;
        if constexpr (std::is_same_v<std::decay_t<decltype(member)>, bool>)
          cmd->add_flag_callback(
              flag, [args, key, &member] { member = true, args->given[key] = true; }, help);
        else if constexpr (std::is_same_v<std::decay_t<decltype(member)>, Method>)
          cmd->add_option_function<std::string>(
              flag,
              [args, key, &member](const std::string& v) {
                member = method_from_name(v, "--" + key), args->given[key] = true;
              },
              help);
        else if constexpr (std::is_same_v<std::decay_t<decltype(member)>, AbsoluteTolerance>)
          cmd->add_option_function<std::string>(
              flag,
              [args, key, &member](const std::string& v) {
                member = atol_from_text(v, "--" + key), args->given[key] = true;
              },
              help + ", comma-separated");
        else
          cmd->add_option_function<std::decay_t<decltype(member)>>(
              flag, [args, key, &member](const auto& v) { member = v, args->given[key] = true; }, help);
      },
      args->overrides);
  cmd->callback([args] { run_solve(*args); });
}

}  // namespace saltation::cli
