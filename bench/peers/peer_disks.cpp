// saltation's disk engine on the seed-002 problem of bench/peers/disk_peers.py: --rows systems of
// two disks (R 0.5, m 1, at -+0.54 with speeds +-v, v = 0.3 + 0.4 (s mod 997) / 997, stiffness
// k = 10 + 60 (s mod 101) / 101, k_ref 1), dt 0.002, 80 frames of 5 steps; observations from the
// same rollout at k = 40 (untimed); timed: the loss (mean of ((x - x_obs) / R)^2 over frames and
// disks) and its derivative along log k, saltation::dem::rollout on the CPU backend, no trajectory
// kept. Threads: OpenMP's default (run.py pins the process to one core).
#include <cmath>
#include <vector>

#include "peer_common.hpp"
#include "saltation/dem/engine.hpp"

namespace {

using namespace saltation::dem;

constexpr double kRadius = 0.5;

DiskBatch seed_pairs(int n_systems, bool true_stiffness) {
  DiskBatch b = DiskBatch::make(n_systems, 2);
  for (int s = 0; s < n_systems; ++s) {
    const double v = 0.3 + 0.4 * (s % 997) / 997.0;
    for (int d = 0; d < 2; ++d) b.r(s, d) = kRadius, b.m(s, d) = 1.0;
    b.x(s, 0, 0) = -0.54;
    b.x(s, 1, 0) = 0.54;
    b.v(s, 0, 0) = v;
    b.v(s, 1, 0) = -v;
    b.log_stiffness[s] = std::log(true_stiffness ? 40.0 : 10.0 + 60.0 * (s % 101) / 101.0);
  }
  return b;
}

RolloutOptions seed_options() {
  RolloutOptions o;
  o.dt = 0.002;
  o.n_frames = 80;
  o.stride = 5;
  o.neighbors = Neighbors::AllPairs;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const peers::Args args = peers::parse_args(argc, argv);
    const int n = static_cast<int>(args.rows);
    LossSpec loss;
    loss.observed = rollout(seed_pairs(n, true), seed_options(), saltation::Backend::Cpu).x;
    loss.scale.assign(n, kRadius);
    RolloutOptions o = seed_options();
    o.tangents = {{TangentKind::LogStiffness}};
    o.save_positions = o.save_velocities = o.save_tangents = false;
    const DiskBatch batch = seed_pairs(n, false);
    RolloutResult r;
    const std::vector<double> seconds =
        peers::timed_runs(args, [&] { r = rollout(batch, o, loss, saltation::Backend::Cpu); });
    nlohmann::json j{{"tool", "saltation"}, {"systems", n}, {"seconds", seconds}, {"loss", r.loss}, {"grad", r.grad}};
    peers::save(args, j);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}
