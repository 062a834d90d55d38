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
// Disks (n_systems x n_disks) beyond which a request is not read: one listed disk broadcast to
// every system is a valid request, whose batch takes memory accordingly, past libFuzzer's limit.
constexpr double kMaxDisks = 1e6;
double count(const nlohmann::json& request, const char* key, double absent) {
  const auto it = request.find(key);
  return it == request.end() ? absent : it->is_number() ? it->get<double>() : 0.0;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace saltation;
  return fuzz::with_parsed_json(data, size, [](const nlohmann::json& request) {
    if (request.is_object() && !(count(request, "n_systems", 1) * count(request, "n_disks", 0) <= kMaxDisks)) return;
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
