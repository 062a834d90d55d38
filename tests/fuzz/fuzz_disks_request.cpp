// libFuzzer target: a disk-contact request as `saltation disks` reads it (rollout or fit: the
// systems, materials, tangents, observations, options) and the options in force it records;
// then, for a small rollout, the engine's own validation and the rollout itself on the CPU.
#include <cstddef>
#include <cstdint>

#include "fuzz_json.hpp"
#include "saltation/dem/dem_io.hpp"

namespace {
// Pair checks x steps x (1 + tangents) beyond which a rollout is only read, not run.
constexpr double kMaxRolloutWork = 50000;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace saltation;
  return fuzz::with_parsed_json(data, size, [](const nlohmann::json& request) {
    const dem::DisksRequest parsed = dem::parse_disks_request(request);
    dem::normalized_options(parsed);
    if (parsed.mode != dem::DisksMode::Rollout) return;
    const dem::RolloutOptions& o = parsed.options;
    const double disks = parsed.batch.n_disks;
    const double work = double(parsed.batch.n_systems) * disks * disks * double(o.n_frames) * double(o.stride) *
                        double(1 + o.tangents.size());
    if (!(work >= 0 && work <= kMaxRolloutWork)) return;
    if (parsed.loss) dem::rollout(parsed.batch, o, *parsed.loss, Backend::Cpu);
    else dem::rollout(parsed.batch, o, Backend::Cpu);
  });
}
