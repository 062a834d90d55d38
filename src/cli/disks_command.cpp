// `saltation disks`: batched disk-contact rollouts and stiffness fits, a JSON request in, the
// result table out as JSON, NPY or CSV. A thin adapter: reading, running, statistics and
// writing are the library's (saltation/dem/dem_io.hpp); the schema is in docs/disks.md.
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "saltation/backend.hpp"
#include "saltation/dem/dem_io.hpp"
#include "saltation/io/files.hpp"

namespace saltation::cli {
namespace {

struct DisksArgs {
  std::string input, out, format = "json", backend;
  bool progress = false;
  dem::DisksOverrides overrides;
};

void run_disks(const DisksArgs& a) {
  dem::DisksOverrides overrides = a.overrides;
  if (!a.backend.empty()) overrides.backend = parse_backend(a.backend);
  const dem::DisksRequest request = dem::parse_disks_request(io::read_json_file(a.input), overrides);
  dem::run_and_write(request, a.format, a.out, a.progress ? progress_line("disks", "systems") : Progress());
}

}  // namespace

void add_disks_command(CLI::App& app) {
  auto args = std::make_shared<DisksArgs>();
  CLI::App* cmd = app.add_subcommand("disks", "Batched 2D disk-contact rollouts and stiffness fits (docs/disks.md)");
  cmd->add_option("config", args->input, "JSON request file ('-' for standard input)")->required();
  cmd->add_option("-o,--out", args->out,
                  "output prefix: PREFIX.json (+ PREFIX_<array>.npy with npy, PREFIX.csv with csv); default: JSON on "
                  "standard output");
  cmd->add_option("-f,--format", args->format, "json, npy or csv")->check(CLI::IsMember({"json", "npy", "csv"}));
  cmd->add_option("-b,--backend", args->backend, "cpu, cuda or auto (overrides the request)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option_function<double>(
      "--dt", [args](double v) { args->overrides.dt = v; }, "time step (overrides the request)");
  cmd->add_option_function<int>(
      "--n-frames", [args](int v) { args->overrides.n_frames = v; }, "frames (overrides the request)");
  cmd->add_option_function<int>(
      "--stride", [args](int v) { args->overrides.stride = v; }, "steps per frame (overrides the request)");
  cmd->add_flag("--progress", args->progress, "Report progress on standard error (rollouts)");
  cmd->callback([args] { run_disks(*args); });
}

}  // namespace saltation::cli
