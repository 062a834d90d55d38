// libFuzzer target: the solve request as `saltation solve` reads it (model choice, registry,
// request, option normalisation), then, when the request is small, its solve on the CPU and the
// result table, so the models meet arbitrary configs and parameter rows under ASan and UBSan.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz_json.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/registry.hpp"

namespace {
// RK4 steps (over all rows) and events per row beyond which a request is only read, not solved,
// so that one input stays well under a millisecond's work.
constexpr double kMaxSolvedSteps = 20000;
constexpr int kMaxSolvedEvents = 64;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace saltation;
  return fuzz::with_parsed_json(data, size, [](const nlohmann::json& request) {
    const io::ModelChoice choice = io::parse_model_choice(request);
    const AnyModel model = configure_builtin_model(choice.name, choice.config);
    const io::SolveRequest req = io::parse_solve_request(request, model.info());
    Options options = normalize_options(req.options);
    const io::ArrayTable shape =
        io::result_shape(model.info(), options, io::provenance(model.info(), options, Backend::Cpu));
    const double steps = std::ceil(options.t_final / options.dt) * static_cast<double>(req.batch.n);
    if (steps > kMaxSolvedSteps || options.event_capacity > kMaxSolvedEvents) return;
    options.threads = 1;
    const Result result = model.solve(req.batch, options, Backend::Cpu);
    io::result_table(model.info(), result, shape.meta.at("provenance"));
  });
}
