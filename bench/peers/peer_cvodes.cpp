// SUNDIALS CVODES on a problem of the peers (problems.hpp; the model files as the types of
// file_model_types.hpp): adaptive Adams with a fixed-point corrector (the problem is
// not stiff), rtol and atol swept by run.py, rootfinding on the falling guard, a restart
// (CVodeReInit) at every impact; with --sens, forward sensitivities (CVodeSens, simultaneous
// corrector, error control on them) of all P parameters, jumped at each impact by the same
// saltation formula the library uses (DESIGN.md section 3), with g_q, R_q, g_theta and R_theta
// from dual numbers over the model (all P at once, not the library's chunked or analytic path).
#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include <string>
#include <vector>

#include "peer_common.hpp"
#include "saltation/core/params.hpp"

namespace {

void check(int flag, const char* what) {
  if (flag < 0) throw std::runtime_error(std::string(what) + " failed with flag " + std::to_string(flag));
}

template <class Problem>
struct Cvodes {
  using Model = typename Problem::Model;
  static constexpr int N = Model::N, P = Model::P;

  struct Row {
    const Model* model;
    const double* th;
  };

  static int rhs(sunrealtype, N_Vector y, N_Vector ydot, void* data) {
    const Row& r = *static_cast<const Row*>(data);
    r.model->flow(N_VGetArrayPointer(y), 0, r.th, N_VGetArrayPointer(ydot));
    return 0;
  }
  static int guard(sunrealtype, N_Vector y, sunrealtype* g, void* data) {
    const Row& r = *static_cast<const Row*>(data);
    g[0] = r.model->guard(0, N_VGetArrayPointer(y), 0, r.th);
    return 0;
  }
  // s_p' = f_q s_p + df/dtheta_p, with f_q and the flow-parameter columns from one dual pass.
  static int sens_rhs(int, sunrealtype, N_Vector y, N_Vector, N_Vector* yS, N_Vector* ySdot, void* data, N_Vector,
                      N_Vector) {
    const Row& r = *static_cast<const Row*>(data);
    using D = saltation::Dual<N + Model::F>;
    const double* q = N_VGetArrayPointer(y);
    D qd[N], fd[N];
    for (int k = 0; k < N; ++k) qd[k] = D::variable(q[k], k);
    r.model->flow(qd, 0, saltation::core::FlowSeededParams<Model, const double*>{r.th}, fd);
    for (int p = 0; p < P; ++p) {
      const double* s = N_VGetArrayPointer(yS[p]);
      double* ds = N_VGetArrayPointer(ySdot[p]);
      int f_col = -1;
      for (int f = 0; f < Model::F; ++f)
        if (Model::flow_param(f) == p) f_col = N + f;
      for (int i = 0; i < N; ++i) {
        double acc = f_col >= 0 ? fd[i].d[f_col] : 0.0;
        for (int l = 0; l < N; ++l) acc += fd[i].d[l] * s[l];
        ds[i] = acc;
      }
    }
    return 0;
  }

  // The saltation jump at an impact with pre-event state q (sensitivities X in yS): returns
  // dq-_e/dtheta (N x P) in dq and R_q dq- + R_theta in total; X+ = total - f+ tau goes to yS.
  static void jump(const Model& m, const double* th, const double* q, N_Vector* yS, std::vector<double>& dq,
                   std::vector<double>& total) {
    using Dq = saltation::Dual<N>;
    using Dp = saltation::Dual<P>;
    Dq qd[N], qpd[N];
    for (int k = 0; k < N; ++k) qd[k] = Dq::variable(q[k], k);
    const Dq gd = m.guard(0, qd, 0, saltation::core::ConstantParams<Dq, const double*>{th});
    m.reset(0, qd, 0, saltation::core::ConstantParams<Dq, const double*>{th}, qpd);
    Dp qc[N], qpc[N];
    for (int k = 0; k < N; ++k) qc[k] = Dp(q[k]);
    const saltation::core::ChunkSeededParams<P, const double*> seeded{th, 0};
    const Dp gc = m.guard(0, qc, 0, seeded);
    m.reset(0, qc, 0, seeded, qpc);
    double f_minus[N], q_plus[N], f_plus[N];
    m.flow(q, 0, th, f_minus);
    for (int k = 0; k < N; ++k) q_plus[k] = qpd[k].v;
    m.flow(q_plus, 0, th, f_plus);
    double g_dot = 0.0;
    for (int k = 0; k < N; ++k) g_dot += gd.d[k] * f_minus[k];
    for (int p = 0; p < P; ++p) {
      double* x = N_VGetArrayPointer(yS[p]);
      double num = gc.d[p];
      for (int k = 0; k < N; ++k) num += gd.d[k] * x[k];
      const double tau = -num / g_dot;
      for (int k = 0; k < N; ++k) dq[k * P + p] = x[k] + f_minus[k] * tau;
      for (int r = 0; r < N; ++r) {
        double acc = qpc[r].d[p];
        for (int k = 0; k < N; ++k) acc += qpd[r].d[k] * dq[k * P + p];
        total[r * P + p] = acc;
        x[r] = acc - f_plus[r] * tau;
      }
    }
  }

  // X(0) = d q0 / dtheta, from one dual pass over the initial state.
  static void initial_sensitivities(const Model& m, const double* th, N_Vector* yS) {
    using Dp = saltation::Dual<P>;
    Dp q0[N];
    m.initial_state(saltation::core::ChunkSeededParams<P, const double*>{th, 0}, q0);
    for (int p = 0; p < P; ++p)
      for (int k = 0; k < N; ++k) N_VGetArrayPointer(yS[p])[k] = q0[k].d[p];
  }

  static int run(const peers::Args& args) {
    const Model model;
    const saltation::Batch batch = Problem::rows(args.rows);
    const saltation::Options o = Problem::options(args.sens);
    SUNContext ctx;
    check(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
    N_Vector y = N_VNew_Serial(N, ctx);
    N_Vector* yS = N_VCloneVectorArray(P, y);
    double* yv = N_VGetArrayPointer(y);
    for (int k = 0; k < N; ++k) yv[k] = 0.0;
    void* mem = CVodeCreate(CV_ADAMS, ctx);
    Row row_data{&model, nullptr};
    check(CVodeInit(mem, rhs, 0.0, y), "CVodeInit");
    check(CVodeSStolerances(mem, args.rtol, args.atol), "CVodeSStolerances");
    check(CVodeSetUserData(mem, &row_data), "CVodeSetUserData");
    check(CVodeSetMaxNumSteps(mem, 1000000), "CVodeSetMaxNumSteps");
    // No "t + h = t" warnings: with a tiny atol (run.py's pure-relative checks) the first step after
    // a restart can underflow the clock, which CVODES survives and reports on stderr per step.
    check(CVodeSetMaxHnilWarns(mem, -1), "CVodeSetMaxHnilWarns");
    SUNNonlinearSolver nls = SUNNonlinSol_FixedPoint(y, 0, ctx);
    check(CVodeSetNonlinearSolver(mem, nls), "CVodeSetNonlinearSolver");
    check(CVodeRootInit(mem, 1, guard), "CVodeRootInit");
    int falling = -1;
    check(CVodeSetRootDirection(mem, &falling), "CVodeSetRootDirection");
    SUNNonlinearSolver nls_sens = nullptr;
    if (args.sens) {
      for (int p = 0; p < P; ++p) N_VConst(0.0, yS[p]);
      check(CVodeSensInit(mem, P, CV_SIMULTANEOUS, sens_rhs, yS), "CVodeSensInit");
      check(CVodeSensEEtolerances(mem), "CVodeSensEEtolerances");
      check(CVodeSetSensErrCon(mem, SUNTRUE), "CVodeSetSensErrCon");
      nls_sens = SUNNonlinSol_FixedPointSens(P + 1, y, 0, ctx);
      check(CVodeSetNonlinearSolverSensSim(mem, nls_sens), "CVodeSetNonlinearSolverSensSim");
    }

    std::vector<peers::RowRecord> rows(batch.n);
    std::vector<double> th(P), dq(N * P), total(N * P);
    auto finish = [&](peers::RowRecord& row, saltation::Status status, const double* qf, const double* dqf) {
      row.status = static_cast<int>(status);
      row.qf.assign(qf, qf + N);
      if (args.sens) row.dqf.assign(dqf, dqf + N * P);
    };
    auto solve_row = [&](peers::RowRecord& row) {
      row = peers::RowRecord{};
      row_data.th = th.data();
      model.initial_state(th.data(), yv);
      check(CVodeReInit(mem, 0.0, y), "CVodeReInit");
      if (args.sens) {
        initial_sensitivities(model, th.data(), yS);
        check(CVodeSensReInit(mem, CV_SIMULTANEOUS, yS), "CVodeSensReInit");
      }
      for (;;) {
        double t = 0.0;
        const int flag = CVode(mem, o.t_final, y, &t, CV_NORMAL);
        check(flag, "CVode");
        if (args.sens) check(CVodeGetSens(mem, &t, yS), "CVodeGetSens");
        if (flag != CV_ROOT_RETURN) {
          for (int p = 0; p < P; ++p)
            for (int k = 0; k < N; ++k) dq[k * P + p] = N_VGetArrayPointer(yS[p])[k];
          finish(row, saltation::Status::Finished, yv, dq.data());
          return;
        }
        double q_minus[N];
        for (int k = 0; k < N; ++k) q_minus[k] = yv[k];
        if (args.sens) jump(model, th.data(), q_minus, yS, dq, total);
        if (static_cast<int>(row.ev_t.size()) >= o.event_capacity) {
          finish(row, saltation::Status::EventCapacity, q_minus, dq.data());
          return;
        }
        row.ev_t.push_back(t);
        row.ev_q.insert(row.ev_q.end(), q_minus, q_minus + Problem::event_states);
        const bool settled = Problem::settles(model, q_minus, th.data(), o);
        model.reset(0, q_minus, 0, th.data(), yv);
        if (settled) {
          finish(row, saltation::Status::Settled, yv, total.data());
          return;
        }
        check(CVodeReInit(mem, t, y), "CVodeReInit");
        if (args.sens) check(CVodeSensReInit(mem, CV_SIMULTANEOUS, yS), "CVodeSensReInit");
      }
    };

    const std::vector<double> seconds = peers::timed_runs(args, [&] {
      for (std::size_t i = 0; i < batch.n; ++i) {
        for (int p = 0; p < P; ++p) th[p] = batch.at(i, p);
        solve_row(rows[i]);
      }
    });
    if (nls_sens) SUNNonlinSolFree(nls_sens);
    SUNNonlinSolFree(nls);
    CVodeFree(&mem);
    N_VDestroyVectorArray(yS, P);
    N_VDestroy(y);
    SUNContext_Free(&ctx);

    char setting[64];
    std::snprintf(setting, sizeof setting, "rtol=%.0e atol=%.0e", args.rtol, args.atol);
    nlohmann::json j = peers::record(args, "cvodes", setting, rows, seconds);
    j["rtol"] = args.rtol;
    j["atol"] = args.atol;
    peers::save(args, j);
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) { return peers::dispatch<Cvodes>(argc, argv); }
