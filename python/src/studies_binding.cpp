// saltation.sweep and saltation.disks: a study or a disk request as JSON text in (read by the
// library's readers), the summary or the result table out.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "bridge.hpp"
#include "saltation/dem/dem_io.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/overrides.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/study.hpp"
#include "saltation/version.hpp"

namespace saltation::python {
namespace {

using nlohmann::json;

// The summary of a whole study (docs/sweep.md), as `saltation sweep` writes it to summary.json.
// The overrides come as text ("" when not given), read by the command line's rule (io/overrides.hpp).
std::string sweep(const std::string& study_json, const std::string& samples, const std::string& seed,
                  const std::string& backend, const std::string& memory_budget, nb::object progress) {
  json request = io::parse_json(study_json);
  if (!samples.empty()) request["samples"] = io::parse_count("samples", samples, 1, io::kMaxStudyInteger);
  if (!seed.empty()) request["seed"] = io::parse_count("seed", seed, 0, io::kMaxStudyInteger);
  const AnyModel model = configure_model(io::parse_model_choice(request));
  const sweep::Study study = sweep::parse_study(request, model.info());
  sweep::StudyRun run;
  run.backend = model.backend_for(parse_backend(backend), study.options);
  run.memory_budget = memory_budget.empty() ? 0 : io::parse_bytes("memory_budget", memory_budget);
  PythonProgress bridge(std::move(progress));
  run.progress = bridge.hook();
  const auto start = std::chrono::steady_clock::now();
  const sweep::StudyResult result = bridge.run([&] { return sweep::run_study(model, study, run); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  json summary = sweep::summary_json(result);
  summary["provenance"] = {{"version", version()},
                           {"git_hash", git_hash()},
                           {"backend", backend_name(run.backend)},
                           {"seed", result.header.at("seed")},
                           {"samples", result.header.at("samples")},
                           {"options", result.header.at("options")},
                           {"wall_seconds", seconds}};
  return summary.dump();
}

// What a disk table views, kept alive by the arrays.
struct DiskRun {
  dem::RolloutResult rollout;
  dem::FitResult fit;
  std::unique_ptr<io::ArrayTable> table;
};

std::tuple<nb::dict, std::string> disks(const std::string& request_json, const std::string& backend,
                                        nb::object progress) {
  dem::DisksOverrides overrides;
  if (!backend.empty()) overrides.backend = parse_backend(backend);
  const dem::DisksRequest r = dem::parse_disks_request(io::parse_json(request_json), overrides);
  const Backend used = resolve_backend(r.backend);
  PythonProgress bridge(std::move(progress));
  auto run = std::make_shared<DiskRun>();
  if (r.mode == dem::DisksMode::Rollout) {
    run->rollout = bridge.run([&] {
      const Progress hook = bridge.hook();
      return r.loss ? dem::rollout(r.batch, r.options, *r.loss, used, hook)
                    : dem::rollout(r.batch, r.options, used, hook);
    });
    run->table = std::make_unique<io::ArrayTable>(dem::rollout_table(r, run->rollout, used));
  } else {
    run->fit = bridge.run([&] { return dem::fit_log_stiffness(r.batch, r.options, *r.loss, r.fit, used); });
    run->table = std::make_unique<io::ArrayTable>(dem::fit_table(r, run->fit, used));
  }
  nb::dict arrays = table_arrays(*run->table, run);
  return {arrays, run->table->meta.dump()};
}

}  // namespace

void bind_studies(nb::module_& m) {
  m.def("sweep", &sweep, nb::arg("study_json"), nb::arg("samples"), nb::arg("seed"), nb::arg("backend"),
        nb::arg("memory_budget"), nb::arg("progress").none(), "Run a whole study; returns the summary as JSON text");
  m.def("disks", &disks, nb::arg("request_json"), nb::arg("backend"), nb::arg("progress").none(),
        "Run a disk request (rollout or fit); returns (arrays, meta JSON)");
}

}  // namespace saltation::python
