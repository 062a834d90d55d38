// saltation itself on the peers' rows: saltation::solve (CPU backend, one thread unless --threads)
// at the given dt, probes and time_tol, timed over all rows; the record also carries the rows (theta) that the
// Python peers of bench/peers/run.py integrate.
#include <string>
#include <vector>

#include "peer_common.hpp"
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
    saltation::Result r;
    const std::vector<double> seconds =
        peers::timed_runs(args, [&] { r = saltation::solve(model, batch, o, saltation::Backend::Cpu); });

    constexpr int P = saltation::TerrainBall<K>::P;
    std::vector<peers::RowRecord> rows(batch.n);
    std::vector<std::vector<double>> theta(batch.n, std::vector<double>(P));
    for (std::size_t i = 0; i < batch.n; ++i) {
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
                                " threads=" + std::to_string(args.threads);
    nlohmann::json j = peers::record(args, "saltation", setting, rows, seconds);
    j["theta"] = theta;
    j["dt"] = args.dt;
    j["probes"] = args.probes;
    peers::save(args, j);
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) { return peers::dispatch_bumps<Saltation>(argc, argv); }
