// saltation itself on a problem of the peers (problems.hpp): the terrain ball by
// saltation::solve_final_state, a model file of bench/models by AnyModel::solve (CPU backend, one
// thread unless --threads; or --backend cuda) at the given dt, probes and time_tol, timed over all
// rows; the record also carries the kept rows' theta, which the Python peers of bench/peers/run.py
// integrate, and the trajectory-steps taken (each row's steps of dt up to its end time), from which
// scripts/gpu-check's runner part reports trajectory-steps per second.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "peer_common.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/solve.hpp"

namespace {

// Solves the problem's rows once per timed run; returns the seconds per run and, in `r`, the
// result with every event located and recorded.
template <class Problem>
std::vector<double> timed_solve(const peers::Args& args, const saltation::Batch& batch, const saltation::Options& o,
                                saltation::Backend backend, saltation::Result& r, double& first_seconds) {
  if constexpr (Problem::from_file) {
    // A model file has no final-state-only path: the time includes solve's per-event derivative
    // record (dt_e/dtheta and dq-_e/dtheta of every event), which no peer forms.
    const saltation::AnyModel model =
        saltation_bench::model_file(saltation_bench::nonlinear_box(Problem::Model::name).path());
    return peers::timed_runs(
        args, [&] { r = model.solve(batch, o, backend); }, &first_seconds);
  } else {
    // Timed: what the peers compute, final states and dqf/dtheta with every event located
    // (solve_final_state), not solve's per-event derivative record (C (N + 1) P numbers per row,
    // which no peer forms). The event times and states the runner checks come from one untimed
    // solve, whose final arrays are these bit for bit.
    const typename Problem::Model model;
    saltation::Result final_only;
    const std::vector<double> seconds = peers::timed_runs(
        args, [&] { final_only = saltation::solve_final_state(model, batch, o, backend); }, &first_seconds);
    r = saltation::solve(model, batch, o, backend);
    const auto same_bits = [](const auto& a, const auto& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
    };
    if (!same_bits(r.qf, final_only.qf) || !same_bits(r.dqf, final_only.dqf) ||
        !same_bits(r.n_events, final_only.n_events))
      throw std::runtime_error("solve and solve_final_state disagree");
    return seconds;
  }
}

template <class Problem>
struct Saltation {
  static int run(const peers::Args& args) {
    const saltation::Batch batch = Problem::rows(args.rows);
    saltation::Options o = Problem::options(args.sens);
    o.dt = args.dt;
    o.probes = args.probes;
    o.time_tol = args.time_tol;
    o.threads = args.threads;
    o.method = saltation::method_from_name(args.method, "--method");
    o.rtol = args.rtol;
    o.atol = args.atol < 0.0 ? args.rtol : args.atol;
    saltation::Result r;
    double first_seconds = 0.0;
    const std::vector<double> seconds =
        timed_solve<Problem>(args, batch, o, saltation::parse_backend(args.backend), r, first_seconds);

    double trajectory_steps = 0.0;
    if (o.method == saltation::Method::Rk4)  // dopri5 chooses its own steps: not counted
      for (std::size_t i = 0; i < batch.n; ++i) trajectory_steps += std::ceil(r.t_end[i] / o.dt);
    const int N = r.N, P = batch.P;
    std::vector<peers::RowRecord> rows(peers::kept_rows(args, batch.n));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      peers::RowRecord& row = rows[i];
      row.status = r.status[i];
      for (int c = 0; c < r.n_events[i]; ++c) {
        row.ev_t.push_back(r.ev_t[r.view().ev_at(c, i)]);
        for (int k = 0; k < Problem::event_states; ++k) row.ev_q.push_back(r.ev_q[r.view().ev_q_at(c, k, i)]);
      }
      for (int k = 0; k < N; ++k) row.qf.push_back(r.qf[r.view().qf_at(k, i)]);
      if (args.sens)
        for (int k = 0; k < N; ++k)
          for (int p = 0; p < P; ++p) row.dqf.push_back(r.dqf[r.view().dqf_at(k, p, i)]);
    }
    std::vector<std::vector<double>> theta(rows.size(), std::vector<double>(P));
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (int p = 0; p < P; ++p) theta[i][p] = batch.at(i, p);
    const std::string setting = "dt=" + std::to_string(args.dt) + " probes=" + std::to_string(args.probes) +
                                " threads=" + std::to_string(args.threads) + " backend=" + args.backend;
    nlohmann::json j = peers::record(args, "saltation", setting, rows, seconds);
    j["rows_solved"] = batch.n;
    j["first_seconds"] = first_seconds;  // the process's first solve, apart from the timed ones
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

int main(int argc, char** argv) { return peers::dispatch<Saltation>(argc, argv); }
