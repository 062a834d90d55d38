// Boost.Odeint's runge_kutta4 with the straightforward event handling a user would add around it:
// fixed steps of dt, the guard at the step end and at `probes` interior points (each an RK4 step
// from the step's start, as the library probes), bisection to time_tol with one secant step,
// then the reset; forward only (Odeint has no sensitivities). No guard culling: that is the
// library's own lever.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <boost/numeric/odeint.hpp>

#include "peer_common.hpp"

namespace {

template <class Problem>
struct Odeint {
  using Model = typename Problem::Model;
  using State = std::array<double, Model::N>;

  static int run(const peers::Args& args) {
    const Model model;
    const saltation::Batch batch = Problem::rows(args.rows);
    const saltation::Options o = Problem::options(false);
    constexpr int P = Model::P;
    const int pieces = args.probes + 1;
    const double bracket = args.dt / pieces;
    const int bisections =
        bracket > args.time_tol ? static_cast<int>(std::ceil(std::log2(bracket / args.time_tol))) : 0;
    std::vector<peers::RowRecord> rows(batch.n);

    auto solve_row = [&](const double* th, peers::RowRecord& row) {
      row = peers::RowRecord{};
      boost::numeric::odeint::runge_kutta4<State> stepper;
      auto system = [&](const State& q, State& f, double) { model.flow(q.data(), 0, th, f.data()); };
      auto guard = [&](const State& q) { return model.guard(0, q.data(), 0, th); };
      // The state s after the step start (q, t): one RK4 step of size s.
      auto advance = [&](const State& q, double t, double s) {
        State out;
        stepper.do_step(system, q, t, out, s);
        return out;
      };
      State q;
      model.initial_state(th, q.data());
      double t = 0.0, g_left = guard(q);
      while (t < o.t_final) {
        const double h = o.t_final - t <= args.dt ? o.t_final - t : args.dt;
        double a = 0.0, ga = g_left, b = 0.0, gb = 0.0;
        bool crossed = false;
        State q_end{};
        for (int k = 1; k <= pieces && !crossed; ++k) {
          b = k == pieces ? h : h * k / pieces;
          q_end = advance(q, t, b);
          gb = guard(q_end);
          crossed = ga >= 0.0 && gb < 0.0;
          if (!crossed) {
            a = b;
            ga = gb;
          }
        }
        if (!crossed) {
          q = q_end;
          t = h == args.dt ? t + h : o.t_final;
          g_left = gb;
          continue;
        }
        for (int it = 0; it < bisections; ++it) {
          const double mid = 0.5 * (a + b);
          const double gm = guard(advance(q, t, mid));
          if (ga >= 0.0 && gm < 0.0) {
            b = mid;
            gb = gm;
          } else {
            a = mid;
            ga = gm;
          }
        }
        double s = a + (b - a) * (ga / (ga - gb));
        if (!(s >= a && s <= b)) s = b;
        const State q_minus = advance(q, t, s);
        if (static_cast<int>(row.ev_t.size()) >= o.event_capacity) {
          row.status = static_cast<int>(saltation::Status::EventCapacity);
          row.qf.assign(q_minus.begin(), q_minus.end());
          return;
        }
        row.ev_t.push_back(t + s);
        row.ev_q.insert(row.ev_q.end(), q_minus.begin(), q_minus.begin() + Problem::event_states);
        const bool settled = Problem::settles(model, q_minus.data(), th, o);
        model.reset(0, q_minus.data(), 0, th, q.data());
        t += s;
        g_left = 0.0;  // on the guard after the reset
        if (settled) {
          row.status = static_cast<int>(saltation::Status::Settled);
          row.qf.assign(q.begin(), q.end());
          return;
        }
      }
      row.status = static_cast<int>(saltation::Status::Finished);
      row.qf.assign(q.begin(), q.end());
    };

    std::vector<double> th(P);
    const std::vector<double> seconds = peers::timed_runs(args, [&] {
      for (std::size_t i = 0; i < batch.n; ++i) {
        for (int p = 0; p < P; ++p) th[p] = batch.at(i, p);
        solve_row(th.data(), rows[i]);
      }
    });
    const std::string setting = "dt=" + std::to_string(args.dt) + " probes=" + std::to_string(args.probes);
    nlohmann::json j = peers::record(args, "odeint_rk4", setting, rows, seconds);
    j["dt"] = args.dt;
    j["probes"] = args.probes;
    peers::save(args, j);
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) { return peers::dispatch<Odeint>(argc, argv, /*model_files=*/false); }
