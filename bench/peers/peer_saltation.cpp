// saltation itself on the peers' rows: saltation::solve_final_state (CPU backend, one thread unless
// --threads; or --backend cuda) at the given dt, probes and time_tol, timed over all rows; the record also
// carries the rows (theta) that the Python peers of bench/peers/run.py integrate, and the
// trajectory-steps taken (each row's steps of dt up to its end time), from which scripts/gpu-check's
// runner part reports trajectory-steps per second.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "peer_common.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/solve.hpp"

namespace {

template <int K>
struct Saltation {
  static int run(const peers::Args& args) {
    const saltation::TerrainBall<K> model;
    const saltation::Batch batch = saltation_bench::terrain_batch(args.rows, K);
    saltation::Options o = peers::problem_options(args.sens);
    o.dt = args.dt;
    o.probes = args.probes;
    o.time_tol = args.time_tol;
    o.threads = args.threads;
    const saltation::Backend backend = saltation::parse_backend(args.backend);
    // Timed: what the peers compute, final states and dqf/dtheta with every event located
    // (solve_final_state), not solve's per-event derivative record (dt_e/dtheta and dq-_e/dtheta
    // of every event slot, C (N + 1) P numbers per row, which no peer forms). The event times and
    // states the runner checks come from one untimed solve, whose final arrays are these bit for bit.
    saltation::Result final_only;
    const std::vector<double> seconds =
        peers::timed_runs(args, [&] { final_only = saltation::solve_final_state(model, batch, o, backend); });
    saltation::Result r = saltation::solve(model, batch, o, backend);
    const auto same_bits = [](const auto& a, const auto& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
    };
    if (!same_bits(r.qf, final_only.qf) || !same_bits(r.dqf, final_only.dqf) ||
        !same_bits(r.n_events, final_only.n_events)) {
      std::fprintf(stderr, "peer_saltation: solve and solve_final_state disagree\n");
      return 1;
    }

    double trajectory_steps = 0.0;
    for (std::size_t i = 0; i < batch.n; ++i) trajectory_steps += std::ceil(r.t_end[i] / o.dt);
    constexpr int P = saltation::TerrainBall<K>::P;
    const std::size_t kept = args.record_rows > 0 && args.record_rows < batch.n ? args.record_rows : batch.n;
    std::vector<peers::RowRecord> rows(kept);
    std::vector<std::vector<double>> theta(kept, std::vector<double>(P));
    for (std::size_t i = 0; i < kept; ++i) {
      peers::RowRecord& row = rows[i];
      row.status = r.status[i];
      for (int c = 0; c < r.n_events[i]; ++c) {
        row.ev_t.push_back(r.ev_t[r.view().ev_at(c, i)]);
        row.ev_x.push_back(r.ev_q[r.view().ev_q_at(c, 0, i)]);
        row.ev_y.push_back(r.ev_q[r.view().ev_q_at(c, 1, i)]);
      }
      for (int k = 0; k < peers::kN; ++k) row.qf[k] = r.qf[r.view().qf_at(k, i)];
      if (args.sens)
        for (int k = 0; k < peers::kN; ++k)
          for (int p = 0; p < P; ++p) row.dqf.push_back(r.dqf[r.view().dqf_at(k, p, i)]);
      for (int p = 0; p < P; ++p) theta[i][p] = batch.at(i, p);
    }
    const std::string setting = "dt=" + std::to_string(args.dt) + " probes=" + std::to_string(args.probes) +
                                " threads=" + std::to_string(args.threads) + " backend=" + args.backend;
    nlohmann::json j = peers::record(args, "saltation", setting, rows, seconds);
    j["rows_solved"] = batch.n;
    j["trajectory_steps"] = trajectory_steps;
    j["backend"] = args.backend;
    const saltation::cpu::LaneTarget lanes = saltation::cpu::lane_target();
    j["simd_lanes"] = std::string(lanes.name) + " (" + std::to_string(lanes.width) + " lanes)";
    j["threads"] = args.threads;
    j["theta"] = theta;
    j["dt"] = args.dt;
    j["probes"] = args.probes;
    peers::save(args, j);
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) { return peers::dispatch_bumps<Saltation>(argc, argv); }
