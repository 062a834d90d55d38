// `saltation sweep` and `saltation merge`: a Monte Carlo study (docs/sweep.md) to DIR/summary.json,
// and shard partials merged into the whole study's summary; `sweep --optimize`: robust design of the
// study's design parameters, to DIR/optimization.json and the final design's DIR/summary.json.
// `sweep --mpi` (MPI builds): the same as one rank of an MPI job, over sweep/mpi.hpp.
// Thin adapters over sweep/study.hpp, sweep/robust_design.hpp and sweep/mpi.hpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/byte_size.hpp"
#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/robust_design.hpp"
#include "saltation/sweep/study.hpp"
#include "saltation/version.hpp"
#ifdef SALTATION_HAVE_MPI
#include "cli/exit_codes.hpp"
#include "sweep/mpi.hpp"
#endif

namespace saltation::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SweepArgs {
  std::string study, out, backend, shard, memory_budget, resume;  // out: "sweep", or the --resume folder
  long long samples = 0, seed = -1;
  int threads = -1;
  bool per_sample = false, progress = false, optimize = false, mpi = false, keep_partial = false;
};

// What a run of the command starts from: the study as read, its model and how it runs.
struct SweepSetup {
  SweepSetup(json request_, AnyModel model_) : request(std::move(request_)), model(std::move(model_)) {}
  json request;
  AnyModel model;
  sweep::Study study;
  sweep::StudyRun run;
  Backend used = Backend::Cpu;
  sweep::RobustDesignSettings settings;  // --optimize
};

void parse_shard(const std::string& text, sweep::StudyRun& run) {
  int i = -1, n = 0;
  char slash = 0;
  std::istringstream s(text);
  if (!(s >> i >> slash >> n) || slash != '/' || !s.eof() || n < 1 || i < 0 || i >= n)
    throw InvalidInput("shard", -1, "\"" + text + "\" is not i/N with 0 <= i < N (e.g. 0/4)");
  run.shard = i;
  run.n_shards = n;
}

std::string fixed(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

// One design parameter's gradient line: the estimate and its estimator, the share of samples near
// a discontinuity (with the boundary term's size), the likelihood-ratio estimate of a
// distribution's design, the referee when it ran.
std::string gradient_text(const std::string& param, const json& g) {
  std::ostringstream t;
  t << "    d/d" << param << ": " << fixed(g.at("mean")) << " +- " << fixed(g.at("std_error")) << " ("
    << g.at("estimator").get<std::string>() << ")";
  if (g.contains("discontinuity")) {
    const json& d = g.at("discontinuity");
    t << "; discontinuous near " << fixed(100.0 * d.at("fraction").get<double>()) << " % of samples, boundary term "
      << fixed(d.at("boundary_term")) << " +- " << fixed(d.at("boundary_term_std_error"));
    if (d.contains("unseen")) t << " (not seen: settling at v_stop)";
  }
  if (g.contains("likelihood_ratio"))
    t << "; likelihood ratio " << fixed(g.at("likelihood_ratio").at("mean")) << " +- "
      << fixed(g.at("likelihood_ratio").at("std_error"));
  if (g.contains("referee")) {
    const json& r = g.at("referee");
    t << "; referee " << fixed(r.at("mean")) << " +- " << fixed(r.at("std_error"))
      << (r.at("agrees").get<bool>() ? " agrees" : " DISAGREES");
  }
  return t.str() + "\n";
}

// The readable summary printed after a complete study.
std::string summary_text(const json& s, const std::string& dir) {
  std::ostringstream t;
  t << "saltation sweep: " << s.at("model").get<std::string>() << ", " << s.at("samples") << " samples"
    << (s.at("sobol").get<bool>() ? " (Saltelli design)" : "") << ", backend "
    << s.at("provenance").at("backend").get<std::string>() << ", " << fixed(s.at("provenance").at("wall_seconds"))
    << " s\n  statuses:";
  for (const auto& [name, count] : s.at("statuses").items()) t << " " << name << "=" << count;
  t << "\n  event counts:";
  for (const auto& [count, n] : s.at("event_counts").items()) t << " " << count << ":" << n;
  t << "\n  nominal trajectory: " << s.at("nominal").at("n_events") << " events; event count differs in "
    << fixed(100.0 * s.at("event_count_change_fraction").get<double>()) << " % of samples\n";
  for (const auto& [name, o] : s.at("objectives").items()) {
    t << "  " << name << ": mean " << fixed(o.at("mean")) << " +- " << fixed(o.at("std_error")) << " (sd "
      << fixed(o.at("sd")) << ", n " << o.at("n");
    if (o.at("n_undefined").get<long long>() > 0) t << ", undefined in " << o.at("n_undefined");
    t << ")";
    if (o.contains("q05")) t << ", 5-95 %: [" << fixed(o.at("q05")) << ", " << fixed(o.at("q95")) << "]";
    t << "\n";
    if (o.contains("gradient"))
      for (const auto& [param, g] : o.at("gradient").items()) t << gradient_text(param, g);
    if (o.contains("sobol"))
      for (const auto& [param, si] : o.at("sobol").items())
        t << "    Sobol " << param << ": S1 " << fixed(si.at("S1")) << " +- " << fixed(si.at("S1_conf")) << ", ST "
          << fixed(si.at("ST")) << " +- " << fixed(si.at("ST_conf")) << "\n";
  }
  t << "  summary: " << (fs::path(dir) / "summary.json").string() << "; plots: python3 scripts/plot_sweep.py " << dir
    << "\n";
  return t.str();
}

// mpi_ranks: the ranks of an MPI run (0: not one).
json provenance(const json& header, const sweep::StudyRun& run, Backend used, double seconds, int mpi_ranks = 0) {
  json p = {{"version", version()},         {"git_hash", git_hash()},    {"backend", backend_name(used)},
            {"seed", header.at("seed")},    {"samples", header.at("samples")}, {"options", header.at("options")},
            {"shard", std::to_string(run.shard) + "/" + std::to_string(run.n_shards)},
            {"wall_seconds", seconds}};
  if (mpi_ranks > 0) p["mpi_ranks"] = mpi_ranks;
  return p;
}

void create_output_folder(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw IoError(dir, "cannot create the output folder: " + error.message());
}

void write_outputs(const sweep::StudyResult& result, const std::string& dir, const json& prov, bool print) {
  json partial = sweep::result_to_json(result);
  partial["provenance"] = prov;
  io::write_file_atomically((fs::path(dir) / "partial.json").string(), partial.dump() + "\n");
  if (!result.partial.complete()) return;
  json summary = sweep::summary_json(result);
  summary["provenance"] = prov;
  io::write_file_atomically((fs::path(dir) / "summary.json").string(), summary.dump(1) + "\n");
  if (print) std::cout << summary_text(summary, dir);
}

// One line per accepted iterate: iteration, design, E[L], sd[L], |projected gradient|_inf and its
// estimator, the share of samples near a discontinuity of L.
std::string iterate_text(const sweep::DesignIterate& it, const std::vector<std::string>& names) {
  std::ostringstream t;
  const sweep::DesignPoint& p = it.point;
  t << "  iteration " << it.iteration << ":";
  for (std::size_t d = 0; d < names.size(); ++d) t << " " << names[d] << "=" << fixed(p.design[d]);
  std::string estimators;
  for (const std::string& e : p.estimators)
    if (estimators.find(e) == std::string::npos) estimators += (estimators.empty() ? "" : ", ") + e;
  t << "  mean " << fixed(p.mean) << "  sd " << fixed(p.sd) << "  |grad| " << fixed(p.projected_gradient_norm)
    << " (" << estimators << ")  discontinuous near "
    << fixed(100.0 * p.discontinuity_fraction) << " %";
  if (p.n_undefined > 0) t << "  (undefined in " << p.n_undefined << ")";
  t << "  [" << it.evaluations << " sweeps]\n";
  return t.str();
}

// --optimize: what is minimised, then iterations as they are accepted (print_iterate), then
// report_optimization: the final design, DIR/optimization.json and the final design's summary.
std::vector<std::string> design_names(const SweepSetup& s) { return s.study.gradient_names(s.model.info()); }

void announce_optimization(const SweepSetup& s) {
  std::cout << "saltation sweep --optimize: minimising E[" << s.study.objectives[s.settings.objective].name << "]";
  if (s.settings.lambda > 0) std::cout << " + " << fixed(s.settings.lambda) << " sd";
  std::cout << " over " << design_names(s).size() << " design parameters, " << s.study.samples
            << " samples per sweep (seed " << s.study.seed << ")\n";
}

sweep::DesignProgress print_iterate(const SweepSetup& s) {
  return [names = design_names(s)](const sweep::DesignIterate& it) { std::cout << iterate_text(it, names) << std::flush; };
}

void report_optimization(const SweepSetup& s, const sweep::RobustDesignResult& result, double seconds,
                         const std::string& out, int mpi_ranks) {
  const std::vector<std::string> names = design_names(s);
  const sweep::DesignIterate& last = result.history.back();
  std::cout << "  " << sweep::outcome_name(result.outcome) << " after " << last.iteration << " iterations, "
            << result.evaluations << " sweeps" << (result.message.empty() ? "" : " (" + result.message + ")")
            << "\n  final design:";
  for (std::size_t d = 0; d < names.size(); ++d) std::cout << " " << names[d] << "=" << fixed(last.point.design[d]);
  std::cout << "\n";
  const json prov = provenance(result.final_study.header, s.run, s.used, seconds, mpi_ranks);
  json optimization = sweep::optimization_json(result, s.settings, s.study);
  optimization["provenance"] = prov;
  io::write_file_atomically((fs::path(out) / "optimization.json").string(), optimization.dump(1) + "\n");
  std::cout << "  history: " << (fs::path(out) / "optimization.json").string() << "\n";
  write_outputs(result.final_study, out, prov, true);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Reads the study and the arguments (nothing is written). per_sample_prefix and progress are the
// caller's: they differ between a process and a rank.
SweepSetup prepare_sweep(const SweepArgs& a) {
  json request = io::read_json_file(a.study);
  if (a.samples > 0) request["samples"] = a.samples;
  if (a.seed >= 0) request["seed"] = a.seed;
  const io::ModelChoice choice = io::parse_model_choice(request);
  SweepSetup s(std::move(request), configure_builtin_model(choice.name, choice.config));
  s.study = sweep::parse_study(s.request, s.model.info());
  if (a.threads >= 0) s.study.options.threads = a.threads;
  if (!a.backend.empty()) s.run.backend = parse_backend(a.backend);
  s.used = resolve_backend(s.run.backend);
  s.run.backend = s.used;
  if (!a.memory_budget.empty()) s.run.memory_budget = parse_bytes(a.memory_budget);
  if (!a.shard.empty()) parse_shard(a.shard, s.run);
  if (a.optimize && (s.run.n_shards > 1 || a.per_sample || a.keep_partial || !a.resume.empty()))
    throw InvalidInput("optimize", -1,
                       "runs many whole sweeps: --shard, --per-sample, --keep-partial and --resume do not apply");
  if (a.optimize) s.settings = sweep::parse_robust_design(s.request, s.study, s.model.info());
  return s;
}

void run_sweep(const SweepArgs& a) {
  SweepSetup s = prepare_sweep(a);
  create_output_folder(a.out);
  if (a.per_sample)
    s.run.per_sample_prefix =
        (fs::path(a.out) / (s.run.n_shards > 1 ? "samples_shard" + std::to_string(s.run.shard) : "samples")).string();
  if (a.progress) s.run.progress = progress_line("sweep", "samples");
  const auto start = std::chrono::steady_clock::now();
  if (a.optimize) {
    announce_optimization(s);
    const sweep::RobustDesignResult result = sweep::optimize_design(s.model, s.study, s.settings, s.run, print_iterate(s));
    return report_optimization(s, result, seconds_since(start), a.out, 0);
  }
  // --resume DIR: the partial an earlier run of this shard kept there; its wall time counts on.
  std::optional<sweep::StudyResult> resumed;
  double resumed_seconds = 0.0;
  if (!a.resume.empty()) {
    const json kept = io::read_json_file((fs::path(a.resume) / "partial.json").string());
    resumed = sweep::result_from_json(kept);
    resumed_seconds = kept.value("provenance", json::object()).value("wall_seconds", 0.0);
    s.run.resume = &*resumed;
  }
  auto run_provenance = [&](const sweep::StudyResult& r) {
    json p = provenance(r.header, s.run, s.used, resumed_seconds + seconds_since(start));
    if (resumed) p["resumed_after_block"] = resumed->partial.blocks.end;
    return p;
  };
  if (a.keep_partial)
    s.run.keep_partial = [&](const sweep::StudyResult& kept) {
      write_outputs(kept, a.out, run_provenance(kept), false);
      const sweep::BlockLayout& layout = kept.partial.layout;
      kept_partial_note() = "samples [" + std::to_string(kept.partial.blocks.first * layout.block_size) + ", " +
                            std::to_string(std::min(kept.partial.blocks.end * layout.block_size, layout.n_samples)) +
                            ") of " + std::to_string(layout.n_samples) + " kept in " +
                            (fs::path(a.out) / "partial.json").string() + "; go on with: saltation sweep " + a.study +
                            (a.samples > 0 ? " --samples " + std::to_string(a.samples) : "") +
                            (a.seed >= 0 ? " --seed " + std::to_string(a.seed) : "") +
                            (a.shard.empty() ? "" : " --shard " + a.shard) + " --resume " + a.out;
    };
  const sweep::StudyResult result = sweep::run_study(s.model, s.study, s.run);
  write_outputs(result, a.out, run_provenance(result), true);
  if (!result.partial.complete())
    std::cout << "saltation sweep: shard " << s.run.shard << "/" << s.run.n_shards << " written to "
              << (fs::path(a.out) / "partial.json").string() << "; combine the shards with saltation merge\n";
}

#ifdef SALTATION_HAVE_MPI
int exit_code(const sweep::mpi::RankFailure& f) {
  switch (f.kind) {
    case sweep::mpi::FailureKind::InvalidInput: return kExitInvalidInput;
    case sweep::mpi::FailureKind::Io: return kExitIo;
    case sweep::mpi::FailureKind::Cuda: return kExitCuda;
    case sweep::mpi::FailureKind::Interrupted: return 128 + f.signal;
    case sweep::mpi::FailureKind::Internal: return kExitInternal;
  }
  return kExitInternal;
}

// --mpi: this process is one rank of an MPI job (docs/scale-out.md). Every rank reads the study;
// rank 0 alone prints and writes. When any rank fails, rank 0 prints every failed rank's message
// and all ranks exit with the exit code of the lowest failed rank's error, having written nothing:
// they leave here rather than through main's handlers, which would repeat the message per rank.
void run_sweep_on_ranks(const SweepArgs& a) {
  sweep::mpi::Session session(nullptr, nullptr);
  const bool root = session.rank() == 0;
  const int ranks = session.size();
  try {
    std::optional<SweepSetup> setup;
    sweep::mpi::agree(session, [&] {
      if (!a.shard.empty()) throw InvalidInput("shard", -1, "--mpi gives each rank its slice: --shard does not apply");
      if (a.keep_partial || !a.resume.empty())
        throw InvalidInput("mpi", -1, "--keep-partial and --resume are for single-process runs (and their shards)");
      setup = prepare_sweep(a);
      SweepSetup& s = *setup;
      if (s.used == Backend::Cuda) sweep::mpi::select_device(session);
      create_output_folder(a.out);
      if (a.per_sample) s.run.per_sample_prefix = (fs::path(a.out) / "samples").string();
      if (a.progress && root) s.run.progress = progress_line("sweep", "samples (rank 0)");
    });
    const SweepSetup& s = *setup;
    const auto start = std::chrono::steady_clock::now();
    if (a.optimize) {
      if (root) announce_optimization(s);
      const sweep::RobustDesignResult result = sweep::mpi::optimize_design_on_ranks(
          session, s.model, s.study, s.settings, s.run, root ? print_iterate(s) : sweep::DesignProgress{});
      const double seconds = seconds_since(start);
      sweep::mpi::agree(session, [&] {
        if (root) report_optimization(s, result, seconds, a.out, ranks);
      });
      return;
    }
    const sweep::StudyResult result = sweep::mpi::run_study_on_ranks(session, s.model, s.study, s.run);
    const double seconds = seconds_since(start);
    sweep::mpi::agree(session, [&] {
      if (root) write_outputs(result, a.out, provenance(result.header, s.run, s.used, seconds, ranks), true);
    });
  } catch (const sweep::mpi::RanksFailed& failed) {
    if (root)
      for (const sweep::mpi::RankFailure& f : failed.failures())
        std::cerr << "saltation: " << sweep::mpi::describe(f) << "\n";
    std::cout.flush();
    session.finalize();
    std::exit(exit_code(failed.first()));
  }
}
#endif

void run_merge(const std::vector<std::string>& dirs, const std::string& out) {
  std::vector<sweep::StudyResult> shards;
  json first_provenance;
  double seconds = 0.0;
  for (const std::string& dir : dirs) {
    const json j = io::read_json_file((fs::path(dir) / "partial.json").string());
    shards.push_back(sweep::result_from_json(j));
    if (j.contains("provenance")) {
      if (first_provenance.is_null()) first_provenance = j.at("provenance");
      seconds += j.at("provenance").value("wall_seconds", 0.0);
    }
  }
  const sweep::StudyResult whole = sweep::merge_results(shards);
  create_output_folder(out);
  json prov = first_provenance.is_null() ? json::object() : first_provenance;
  prov["shard"] = "merged from " + std::to_string(dirs.size());
  prov["wall_seconds"] = seconds;  // the shards' wall times added up
  write_outputs(whole, out, prov, true);
}

}  // namespace

void add_sweep_commands(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Run a Monte Carlo design and sensitivity study (docs/sweep.md)");
  cmd->add_option("study", a->study, "Study JSON; - reads standard input")->required();
  cmd->add_option("--out,-o", a->out,
                  "Output folder: summary.json, partial.json, per-sample NPY files (default: sweep, or the --resume folder)");
  cmd->add_option("--backend", a->backend, "cpu | cuda | auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--samples", a->samples, "Override the study's sample count");
  cmd->add_option("--seed", a->seed, "Override the study's seed");
  cmd->add_option("--threads", a->threads, "CPU threads (0: OpenMP's default)");
  cmd->add_option("--memory-budget", a->memory_budget,
                  "Bytes for one chunk of trajectories (e.g. 512M, 2G; default 1G on the CPU, a quarter of the GPU's)");
  cmd->add_option("--shard", a->shard, "Run the i-th of N disjoint slices of the samples (i/N); combine with merge");
  cmd->add_flag("--per-sample", a->per_sample, "Also write per-sample NPY arrays (theta, status, n_events, objectives)");
  cmd->add_flag("--progress", a->progress, "Progress with rate and time left on standard error");
  cmd->add_flag("--keep-partial", a->keep_partial,
                "When interrupted or on a CUDA failure, keep the samples finished so far in OUT/partial.json "
                "(whole blocks; not with --per-sample); go on later with --resume");
  cmd->add_option("--resume", a->resume,
                  "Go on from DIR/partial.json, kept by --keep-partial (or a run of the same study's first blocks): "
                  "run the samples after it and write the whole study (or shard)");
  cmd->add_flag("--optimize", a->optimize,
                "Robust design: minimise the study's \"optimize\" objective over its design parameters (docs/sweep.md)");
  cmd->add_flag("--mpi", a->mpi,
                "Run as one rank of an MPI job (mpirun, srun): each rank a slice of the samples, rank 0 writes "
                "(docs/scale-out.md)");
  cmd->callback([a] {
    if (a->out.empty()) a->out = a->resume.empty() ? "sweep" : a->resume;
    if (!a->mpi) return run_sweep(*a);
#ifdef SALTATION_HAVE_MPI
    run_sweep_on_ranks(*a);
#else
    throw InvalidInput("mpi", -1, "this build has no MPI: configure with -DSALTATION_ENABLE_MPI=ON (docs/scale-out.md)");
#endif
  });

  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>("merged");
  CLI::App* merge = app.add_subcommand("merge", "Combine the partials of sweep shards into the whole study's summary");
  merge->add_option("dirs", *dirs, "Output folders of the shards")->required();
  merge->add_option("--out,-o", *out, "Output folder for summary.json (default: merged)");
  merge->callback([dirs, out] { run_merge(*dirs, *out); });
}

}  // namespace saltation::cli
