// libFuzzer target: a Monte Carlo study as `saltation sweep` reads it (model choice, registry,
// study: parameters and their distributions, objectives, design, Sobol and sampling settings, and
// the robust-design block of `sweep --optimize`); then, when its trajectories are short, a few of
// its samples run on the CPU through the accumulators to the summary and the merge record, so the
// statistics meet arbitrary distributions and objectives under ASan and UBSan.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz_json.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/robust_design.hpp"
#include "saltation/sweep/study.hpp"

namespace {
constexpr std::uint64_t kMaxRunSamples = 16;
// RK4 steps of one trajectory beyond which a study is only read, not run.
constexpr double kMaxRunSteps = 2000;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace saltation;
  return fuzz::with_parsed_json(data, size, [](const nlohmann::json& request) {
    const io::ModelChoice choice = io::parse_model_choice(request);
    const AnyModel model = configure_builtin_model(choice.name, choice.config);
    sweep::Study study = sweep::parse_study(request, model.info());
    if (request.contains("optimize")) sweep::parse_robust_design(request, study, model.info());
    const Options options = normalize_options(study.options);
    if (!(std::ceil(options.t_final / options.dt) <= kMaxRunSteps) || options.event_capacity > 64) return;
    study.samples = std::min(study.samples, kMaxRunSamples);
    study.pilot_samples = std::min(study.pilot_samples, study.samples);
    study.options.threads = 1;
    sweep::StudyRun run;
    run.backend = Backend::Cpu;
    const sweep::StudyResult result = sweep::run_study(model, study, run);
    sweep::summary_json(sweep::result_from_json(sweep::result_to_json(result)));
  });
}
