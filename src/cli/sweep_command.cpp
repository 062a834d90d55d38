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

#include "cli/commands.hpp"
#include "cli/output_folder.hpp"
#include "cli/progress_line.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/overrides.hpp"
#include "saltation/options.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/partial_file.hpp"
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
  std::string samples, seed, threads;  // as given (empty: not given), read by io/overrides.hpp's rule
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
  json p = {{"version", version()},
            {"git_hash", git_hash()},
            {"backend", backend_name(used)},
            {"seed", header.at("seed")},
            {"samples", header.at("samples")},
            {"options", header.at("options")},
            {"shard", std::to_string(run.shard) + "/" + std::to_string(run.n_shards)},
            {"wall_seconds", seconds}};
  if (mpi_ranks > 0) p["mpi_ranks"] = mpi_ranks;
  return p;
}

void write_outputs(const sweep::StudyResult& result, const std::string& dir, const json& prov, bool print) {
  io::write_file_atomically((fs::path(dir) / "partial.json").string(), sweep::seal_partial(result, prov).dump() + "\n");
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
  t << "  mean " << fixed(p.mean) << "  sd " << fixed(p.sd) << "  |grad| " << fixed(p.projected_gradient_norm) << " ("
    << estimators << ")  discontinuous near " << fixed(100.0 * p.discontinuity_fraction) << " %";
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
  return
      [names = design_names(s)](const sweep::DesignIterate& it) { std::cout << iterate_text(it, names) << std::flush; };
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
  // The flags first, by the one rule (io/overrides.hpp); the study's own values by the same ranges.
  const auto flag = [](const char* name, const std::string& text, std::uint64_t low, std::uint64_t high) {
    return text.empty() ? json() : json(io::parse_count(name, text, low, high));
  };
  const json samples = flag("--samples", a.samples, 1, io::kMaxStudyInteger);
  const json seed = flag("--seed", a.seed, 0, io::kMaxStudyInteger);
  const json threads = flag("--threads", a.threads, 0, static_cast<std::uint64_t>(max_threads()));
  const std::uint64_t budget = a.memory_budget.empty() ? 0 : io::parse_bytes("--memory-budget", a.memory_budget);
  const io::ShardSpec shard = a.shard.empty() ? io::ShardSpec{} : io::parse_shard("--shard", a.shard);
  json request = io::read_json_file(a.study);
  if (!samples.is_null()) request["samples"] = samples;
  if (!seed.is_null()) request["seed"] = seed;
  const AnyModel model = configure_model(io::parse_model_choice(request, io::parent_folder(a.study)));
  SweepSetup s(std::move(request), model);
  s.study = sweep::parse_study(s.request, s.model.info());
  if (!threads.is_null()) s.study.options.threads = threads.get<int>();
  if (!a.backend.empty()) s.run.backend = parse_backend(a.backend);
  s.used = s.model.backend_for(s.run.backend, s.study.options);
  s.run.backend = s.used;
  s.run.memory_budget = budget;
  s.run.shard = shard.index;
  s.run.n_shards = shard.count;
  if (a.optimize && (s.run.n_shards > 1 || a.per_sample || a.keep_partial || !a.resume.empty()))
    throw InvalidInput("optimize", -1,
                       "runs many whole sweeps: --shard, --per-sample, --keep-partial and --resume do not apply");
  if (a.optimize) s.settings = sweep::parse_robust_design(s.request, s.study, s.model.info());
  return s;
}

void run_sweep(const SweepArgs& a) {
  SweepSetup s = prepare_sweep(a);
  // --resume DIR: the partial an earlier run of this shard kept there; its wall time counts on.
  std::optional<sweep::StudyResult> resumed;
  double resumed_seconds = 0.0;
  if (!a.resume.empty()) {
    sweep::PartialFile kept = sweep::read_partial_file((fs::path(a.resume) / "partial.json").string());
    resumed = std::move(kept.result);
    resumed_seconds = kept.provenance.value("wall_seconds", 0.0);
    s.run.resume = &*resumed;
  }
  const OutputFolder folder(a.out);
  if (a.per_sample)
    s.run.per_sample_prefix =
        (fs::path(a.out) / (s.run.n_shards > 1 ? "samples_shard" + std::to_string(s.run.shard) : "samples")).string();
  if (a.progress) s.run.progress = progress_line("sweep", "samples");
  const auto start = std::chrono::steady_clock::now();
  if (a.optimize) {
    announce_optimization(s);
    const sweep::RobustDesignResult result =
        sweep::optimize_design(s.model, s.study, s.settings, s.run, print_iterate(s));
    return report_optimization(s, result, seconds_since(start), a.out, 0);
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
                            (a.samples.empty() ? "" : " --samples " + a.samples) +
                            (a.seed.empty() ? "" : " --seed " + a.seed) +
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
    case sweep::mpi::FailureKind::InvalidInput: return ExitInvalidInput;
    case sweep::mpi::FailureKind::Io: return ExitIo;
    case sweep::mpi::FailureKind::Cuda: return ExitCuda;
    case sweep::mpi::FailureKind::Interrupted: return 128 + f.signal;
    case sweep::mpi::FailureKind::Internal: return ExitInternal;
  }
  return ExitInternal;
}

// --mpi: this process is one rank of an MPI job (docs/scale-out.md). Every rank reads the study;
// rank 0 alone prints and writes. When any rank fails, rank 0 prints every failed rank's message
// and all ranks exit with the exit code of the lowest failed rank's error, having written nothing:
// they leave here rather than through main's handlers, which would repeat the message per rank.
void run_sweep_on_ranks(const SweepArgs& a) {
  sweep::mpi::Session session(nullptr, nullptr);
  const bool root = session.rank() == 0;
  const int ranks = session.size();
  std::optional<OutputFolder> folder;  // rank 0's; the others write into it after it exists
  try {
    std::optional<SweepSetup> setup;
    sweep::mpi::agree(session, [&] {
      if (!a.shard.empty()) throw InvalidInput("shard", -1, "--mpi gives each rank its slice: --shard does not apply");
      if (a.keep_partial || !a.resume.empty())
        throw InvalidInput("mpi", -1, "--keep-partial and --resume are for single-process runs (and their shards)");
      setup = prepare_sweep(a);
      SweepSetup& s = *setup;
      if (s.used == Backend::Cuda) sweep::mpi::select_device(session);
      if (root) folder.emplace(a.out);
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
    folder.reset();  // std::exit unwinds nothing
    session.finalize();
    std::exit(exit_code(failed.first()));
  }
}
#endif

bool same_folder(const std::string& a, const std::string& b) {
  std::error_code error;
  if (fs::equivalent(a, b, error)) return true;
  return fs::weakly_canonical(a, error) == fs::weakly_canonical(b, error) && !error;
}

// The block ranges [first, end) of the study's n_blocks that `files` (sorted by first block) leave
// out; InvalidInput naming both files when two overlap.
std::vector<sweep::BlockRange> missing_blocks(const std::vector<sweep::PartialFile>& files) {
  std::vector<sweep::BlockRange> gaps;
  std::uint64_t cursor = 0;
  const sweep::PartialFile* previous = nullptr;
  for (const sweep::PartialFile& f : files) {
    const sweep::BlockRange& b = f.result.partial.blocks;
    if (b.first < cursor)
      throw InvalidInput(f.path, -1,
                         "covers blocks [" + std::to_string(b.first) + ", " + std::to_string(b.end) +
                             "), which overlap those of " + previous->path + " (up to block " + std::to_string(cursor) +
                             "): give each shard once");
    if (b.first > cursor) gaps.push_back({cursor, b.first});
    cursor = b.end;
    previous = &f;
  }
  const std::uint64_t n_blocks = files.front().result.partial.layout.n_blocks();
  if (cursor < n_blocks) gaps.push_back({cursor, n_blocks});
  return gaps;
}

// The refusal of an incomplete set: which blocks (and samples) are missing and, when the partials
// came from --shard i/N runs of one N, the commands that run the missing shards.
InvalidInput incomplete_cover(const std::vector<sweep::PartialFile>& files,
                              const std::vector<sweep::BlockRange>& gaps) {
  const sweep::BlockLayout& layout = files.front().result.partial.layout;
  const json& header = files.front().result.header;
  std::string what = "the partials do not cover the study's " + std::to_string(layout.n_blocks()) + " blocks: missing";
  for (const sweep::BlockRange& g : gaps)
    what += " blocks [" + std::to_string(g.first) + ", " + std::to_string(g.end) + ") (samples [" +
            std::to_string(g.first * layout.block_size) + ", " +
            std::to_string(std::min(g.end * layout.block_size, layout.n_samples)) + "))";
  int n_shards = 0;
  for (const sweep::PartialFile& f : files) {
    int n = 0;
    try {
      n = io::parse_shard("shard", f.provenance.value("shard", std::string())).count;
    } catch (const InvalidInput&) {
    }
    n_shards = (n_shards == 0 || n_shards == n) ? n : -1;
  }
  if (n_shards < 1) return InvalidInput("partials", -1, what + "; run the shards that hold them, then merge them all");
  what += "; run them with:";
  const std::uint64_t n_blocks = layout.n_blocks();
  for (int i = 0; i < n_shards; ++i) {
    const std::uint64_t first = n_blocks * i / n_shards, end = n_blocks * (i + 1) / n_shards;
    for (const sweep::BlockRange& g : gaps)
      if (first < g.end && g.first < end) {
        what += " saltation sweep STUDY.json --samples " + header.value("samples", json()).dump() + " --seed " +
                header.value("seed", json()).dump() + " --shard " + std::to_string(i) + "/" + std::to_string(n_shards) +
                " --out SHARD_" + std::to_string(i) + ";";
        break;
      }
  }
  return InvalidInput("partials", -1, what + " then merge them all");
}

void run_merge(const std::vector<std::string>& dirs, const std::string& out) {
  // The merged partial.json would replace a shard's own.
  for (const std::string& dir : dirs)
    if (same_folder(dir, out))
      throw InvalidInput("--out", -1,
                         "\"" + out + "\" is one of the folders being merged (" + dir + "): merge into another folder");
  std::vector<sweep::PartialFile> files;
  for (const std::string& dir : dirs)
    files.push_back(sweep::read_partial_file((fs::path(dir) / "partial.json").string()));
  for (const sweep::PartialFile& f : files)
    if (f.header_hash != files.front().header_hash)
      throw InvalidInput(f.path, -1,
                         "belongs to another study than " + files.front().path + " (header_hash " + f.header_hash +
                             ", not " + files.front().header_hash + ")");
  std::stable_sort(files.begin(), files.end(), [](const sweep::PartialFile& x, const sweep::PartialFile& y) {
    return x.result.partial.blocks.first < y.result.partial.blocks.first;
  });
  const std::vector<sweep::BlockRange> gaps = missing_blocks(files);
  if (!gaps.empty()) throw incomplete_cover(files, gaps);
  std::vector<sweep::StudyResult> shards;
  double seconds = 0.0;
  for (const sweep::PartialFile& f : files) {
    shards.push_back(f.result);
    seconds += f.provenance.value("wall_seconds", 0.0);
  }
  const sweep::StudyResult whole = sweep::merge_results(shards);
  const OutputFolder folder(out);
  json prov = files.front().provenance;
  prov["backend"] = prov.value("backend", std::string("unknown"));  // a string: parse_partial checked
  prov["shard"] = "merged from " + std::to_string(dirs.size());
  prov["wall_seconds"] = seconds;  // the shards' wall times added up
  write_outputs(whole, out, prov, true);
}

}  // namespace

void add_sweep_commands(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Run a Monte Carlo design and sensitivity study (docs/sweep.md)");
  cmd->add_option("study", a->study, "Study JSON; - reads standard input")->required();
  cmd->add_option(
      "--out,-o", a->out,
      "Output folder: summary.json, partial.json, per-sample NPY files (default: sweep, or the --resume folder)");
  cmd->add_option("--backend", a->backend, "cpu | cuda | auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--samples", a->samples, "Override the study's sample count");
  cmd->add_option("--seed", a->seed, "Override the study's seed");
  cmd->add_option("--threads", a->threads, "CPU threads (0: OpenMP's default; at most 4x the hardware threads)");
  cmd->add_option("--memory-budget", a->memory_budget,
                  "Bytes for one chunk of trajectories (e.g. 512M, 2G; default 1G on the CPU, a quarter of the GPU's)");
  cmd->add_option("--shard", a->shard, "Run the i-th of N disjoint slices of the samples (i/N); combine with merge");
  cmd->add_flag("--per-sample", a->per_sample,
                "Also write per-sample NPY arrays (theta, status, n_events, objectives)");
  cmd->add_flag("--progress", a->progress, "Progress with rate and time left on standard error");
  cmd->add_flag("--keep-partial", a->keep_partial,
                "When interrupted or on a CUDA failure, keep the samples finished so far in OUT/partial.json "
                "(whole blocks; not with --per-sample); go on later with --resume");
  cmd->add_option("--resume", a->resume,
                  "Go on from DIR/partial.json, kept by --keep-partial (or a run of the same study's first blocks): "
                  "run the samples after it and write the whole study (or shard)");
  cmd->add_flag(
      "--optimize", a->optimize,
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
    throw InvalidInput("mpi", -1,
                       "this build has no MPI: configure with -DSALTATION_ENABLE_MPI=ON (docs/scale-out.md)");
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
