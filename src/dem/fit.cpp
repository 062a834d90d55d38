// Batched 1-D bounded L-BFGS-B fits of the log stiffness, driven in lockstep.
//
// LBFGSpp's solver is a blocking loop that calls f(x, grad). To give every system its own
// unmodified LBFGSBSolver and still evaluate all of them in one batched rollout, each solver
// runs in a fiber (POSIX ucontext, a small private stack): when a solver asks for f(x) its
// fiber records x and yields to the scheduler; once every live fiber is waiting, the
// scheduler runs ONE batched loss-and-gradient rollout over the waiting systems and resumes
// each fiber with its value. Fibers are cooperative and run on the calling thread only.
#include "saltation/dem/fit.hpp"

#include <ucontext.h>

#include <LBFGSB.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "saltation/errors.hpp"

namespace saltation::dem {
namespace {

constexpr size_t kFiberStack = 256 * 1024;

struct Fiber {
  ucontext_t ctx;
  ucontext_t* main = nullptr;
  std::unique_ptr<char[]> stack;
  const LBFGSpp::LBFGSBParam<double>* param = nullptr;
  double x0 = 0, lo = 0, hi = 0;
  // request / reply
  bool waiting = false, done = false;
  double x_req = 0, f_rep = 0, g_rep = 0;
  std::string abort;  // nonempty: the engine failed for this system
  // results
  double x = 0, fx = 0, g = 0, f_initial = NAN;
  int nit = 0, nev = 0;
  int outcome = kFitError;
  double acc_x = NAN, acc_f = NAN, acc_g = NAN;  // last accepted iterate
  int n_accepted = 0;
  std::string message;
  bool record = false;
  std::vector<double> hist_x, hist_f;
};

// The objective seen by LBFGSpp: yields to the scheduler for every evaluation.
struct YieldingObjective {
  Fiber* fb;
  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    fb->x_req = x[0];
    fb->waiting = true;
    swapcontext(&fb->ctx, fb->main);
    if (!fb->abort.empty()) throw std::runtime_error(fb->abort);
    ++fb->nev;
    if (fb->nev == 1) {
      fb->f_initial = fb->f_rep;
      fb->acc_x = x[0];
      fb->acc_f = fb->f_rep;
      fb->acc_g = fb->g_rep;
      if (fb->record) {
        fb->hist_x.push_back(x[0]);
        fb->hist_f.push_back(fb->f_rep);
      }
    }
    grad[0] = fb->g_rep;
    fb->g = fb->g_rep;
    return fb->f_rep;
  }
  void accepted(double x, double fx) {
    fb->acc_x = x;
    fb->acc_f = fx;
    fb->acc_g = fb->g_rep;
    ++fb->n_accepted;
    if (fb->record) {
      fb->hist_x.push_back(x);
      fb->hist_f.push_back(fx);
    }
  }
};

// More-Thuente line search plus a hook that records the accepted iterate.
template <typename Scalar>
class RecordingMoreThuente {
 public:
  template <typename Foo, typename Vector>
  static void LineSearch(Foo& f, Scalar& fx, Vector& x, Vector& grad, Scalar& step, const Scalar& step_max,
                         const Vector& drt, const Vector& xp, const LBFGSpp::LBFGSBParam<Scalar>& param) {
    LBFGSpp::LineSearchMoreThuente<Scalar>::LineSearch(f, fx, x, grad, step, step_max, drt, xp, param);
    f.accepted(x[0], fx);
  }
};

thread_local Fiber* g_starting = nullptr;

void fiber_entry() {
  Fiber* fb = g_starting;
  try {
    LBFGSpp::LBFGSBSolver<double, RecordingMoreThuente> solver(*fb->param);
    Eigen::VectorXd x(1), lb(1), ub(1);
    x[0] = fb->x0;
    lb[0] = fb->lo;
    ub[0] = fb->hi;
    YieldingObjective obj{fb};
    double fx = 0;
    fb->nit = solver.minimize(obj, x, fx, lb, ub);
    fb->x = x[0];
    fb->fx = fx;
    fb->outcome = kFitConverged;
    if (fb->param->max_iterations != 0 && fb->nit >= fb->param->max_iterations) {
      fb->outcome = kFitMaxIterations;
      fb->message = "max_iterations reached";
    }
  } catch (const std::exception& e) {
    fb->message = e.what();
    if (fb->abort.empty() && fb->nev > 0) {
      // LBFGSpp's line search could not make progress (typically at the noise/rounding floor):
      // report the last accepted iterate, as scipy's ABNORMAL_TERMINATION_IN_LNSRCH does.
      fb->outcome = kFitLineSearchStalled;
      fb->x = fb->acc_x;
      fb->fx = fb->acc_f;
      fb->g = fb->acc_g;
      fb->nit = fb->n_accepted;
    } else {
      fb->outcome = kFitError;
    }
  }
  fb->done = true;
  fb->waiting = false;
  // returning resumes uc_link (the scheduler)
}

template <class T>
std::vector<T> gather(const std::vector<T>& in, long B, const std::vector<int>& idx) {
  if (in.empty()) return {};
  const long K = (long)in.size() / B, n = (long)idx.size();
  std::vector<T> out((size_t)(K * n));
  for (long k = 0; k < K; ++k)
    for (long j = 0; j < n; ++j) out[k * n + j] = in[k * B + idx[j]];
  return out;
}

}  // namespace

const char* fit_outcome_name(int o) {
  switch (o) {
    case kFitConverged: return "converged";
    case kFitMaxIterations: return "max_iterations";
    case kFitLineSearchStalled: return "line_search_stalled";
    default: return "error";
  }
}

FitResult fit_log_stiffness(const DiskBatch& batch, const RolloutOptions& options_in, const LossSpec& loss,
                            const FitOptions& fo) {
  const auto t0 = std::chrono::steady_clock::now();
  const int B = batch.n_systems;
  RolloutOptions options = options_in;
  options.tangents = {TangentParam{TangentKind::LogStiffness, 0, 0}};
  options.save_positions = options.save_velocities = options.save_tangents = false;
  {  // validate everything once, before any fiber starts
    RolloutResult probe;
    detail::Prepared prep;
    detail::prepare(batch, options, &loss, probe, prep);
  }
  if (fo.max_iterations < 0) throw InvalidInput("max_iterations", -1, "must be >= 0");
  if (!(fo.epsilon >= 0) || !(fo.epsilon_rel >= 0) || !(fo.delta >= 0) || fo.past < 0 || fo.memory < 1 || fo.max_linesearch < 1)
    throw InvalidInput("fit", -1, "tolerances must be >= 0, memory and max_linesearch >= 1");
  auto bound = [&](const std::vector<double>& v, double dflt, int b, const char* name) {
    if (v.empty()) return dflt;
    if ((long)v.size() != B) throw InvalidInput(name, -1, "expected one value per system");
    return v[b];
  };
  LBFGSpp::LBFGSBParam<double> param;
  param.m = fo.memory;
  param.epsilon = fo.epsilon;
  param.epsilon_rel = fo.epsilon_rel;
  param.past = fo.past;
  param.delta = fo.delta;
  param.max_iterations = fo.max_iterations;
  param.max_linesearch = fo.max_linesearch;
  param.check_param();

  ucontext_t main_ctx;
  std::vector<Fiber> fibers((size_t)B);
  std::vector<double> theta0 = batch.log_stiffness.empty() ? std::vector<double>(B, 0.0) : batch.log_stiffness;
  for (int b = 0; b < B; ++b) {
    Fiber& f = fibers[b];
    f.lo = bound(fo.lower_per_system, fo.lower, b, "lower");
    f.hi = bound(fo.upper_per_system, fo.upper, b, "upper");
    if (!(f.lo <= f.hi) || !std::isfinite(f.lo) || !std::isfinite(f.hi))
      throw InvalidInput("bounds", b, "need finite lower <= upper");
    f.x0 = theta0[b];
    f.param = &param;
    f.main = &main_ctx;
    f.record = fo.record_history;
  }

  FitResult res;
  // Start every fiber: each runs until its first f(x) request.
  for (int b = 0; b < B; ++b) {
    Fiber& f = fibers[b];
    f.stack.reset(new char[kFiberStack]);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.get();
    f.ctx.uc_stack.ss_size = kFiberStack;
    f.ctx.uc_link = &main_ctx;
    makecontext(&f.ctx, fiber_entry, 0);
    g_starting = &f;
    swapcontext(&main_ctx, &f.ctx);
    if (f.done) f.stack.reset();
  }
  std::vector<int> idx;
  for (;;) {
    idx.clear();
    for (int b = 0; b < B; ++b)
      if (fibers[b].waiting) idx.push_back(b);
    if (idx.empty()) break;
    // One batched loss + gradient evaluation over the waiting systems.
    DiskBatch sub;
    sub.n_systems = (int)idx.size();
    sub.n_disks = batch.n_disks;
    sub.radius = gather(batch.radius, B, idx);
    sub.mass = gather(batch.mass, B, idx);
    sub.material = gather(batch.material, B, idx);
    sub.x0 = gather(batch.x0, B, idx);
    sub.v0 = gather(batch.v0, B, idx);
    sub.damping_ratio = gather(batch.damping_ratio, B, idx);
    sub.log_stiffness.resize(idx.size());
    for (size_t j = 0; j < idx.size(); ++j) sub.log_stiffness[j] = fibers[idx[j]].x_req;
    LossSpec sl;
    sl.observed = gather(loss.observed, B, idx);
    sl.components = loss.components;
    sl.scale = gather(loss.scale, B, idx);
    const RolloutResult r = rollout(sub, options, &sl);
    res.engine_seconds += r.seconds;
    ++res.rounds;
    res.round_sizes.push_back((int)idx.size());
    for (size_t j = 0; j < idx.size(); ++j) {
      Fiber& f = fibers[idx[j]];
      f.waiting = false;
      f.f_rep = r.loss[j];
      f.g_rep = r.grad[j];
      if (r.status[j] != kOk) f.abort = std::string("engine: ") + status_message(r.status[j]);
      else if (!std::isfinite(f.f_rep) || !std::isfinite(f.g_rep)) f.abort = "engine: non-finite loss or gradient";
      swapcontext(&main_ctx, &f.ctx);
      if (f.done) f.stack.reset();
    }
  }
  res.theta.resize(B);
  res.loss.resize(B);
  res.initial_loss.resize(B);
  res.grad.resize(B);
  res.iterations.resize(B);
  res.evaluations.resize(B);
  res.outcome.resize(B);
  res.message.resize(B);
  if (fo.record_history) {
    res.history_theta.resize(B);
    res.history_loss.resize(B);
  }
  for (int b = 0; b < B; ++b) {
    Fiber& f = fibers[b];
    const bool have = f.outcome != kFitError;
    res.theta[b] = have ? f.x : f.x_req;
    res.loss[b] = have ? f.fx : NAN;
    res.initial_loss[b] = f.f_initial;
    res.grad[b] = f.g;
    res.iterations[b] = f.nit;
    res.evaluations[b] = f.nev;
    res.outcome[b] = f.outcome;
    res.message[b] = f.message;
    if (fo.record_history) {
      res.history_theta[b] = std::move(f.hist_x);
      res.history_loss[b] = std::move(f.hist_f);
    }
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace saltation::dem
