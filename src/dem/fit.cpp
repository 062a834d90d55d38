// Batched 1-D bounded L-BFGS-B fits of the log stiffness, driven in lockstep.
//
// LBFGSpp's solver is a blocking loop that calls f(x, grad). To give every system its own
// unmodified LBFGSBSolver and still evaluate all of them in one batched rollout, each solver
// runs in a fiber (POSIX ucontext, a small private stack): when a solver asks for f(x) its
// fiber records x and yields to the scheduler; once every live fiber is waiting, the
// scheduler runs ONE batched loss-and-gradient evaluation over the waiting systems and
// resumes each fiber with its value. Fibers are cooperative and run on the calling thread only.
//
// A fiber's stack holds the solver's objects (Eigen vectors on the heap), so a fiber is never
// abandoned while suspended: when anything fails, every waiting fiber is resumed with a
// cancellation that unwinds it to its entry function before the failure is reported.
#include "saltation/dem/fit.hpp"

#include <ucontext.h>

#include <LBFGSB.h>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <stdexcept>

#include "../recording_line_search.hpp"
#include "engine_internal.hpp"
#include "lockstep.hpp"
#include "saltation/errors.hpp"

namespace saltation::dem {
namespace detail {
namespace {

constexpr size_t kFiberStack = 256 * 1024;

// Thrown inside a fiber to unwind it; deliberately not a std::exception, so nothing on the
// way (LBFGSpp, the line-search hook) mistakes it for a failure of its own.
struct FiberCancelled {};
// The objective has no value for this system (engine status, non-finite loss).
struct NoValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// LBFGSpp's line search could not make progress.
struct LineSearchFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

thread_local int g_live_solvers = 0;

struct Fiber {
  ucontext_t ctx;
  ucontext_t* main = nullptr;
  std::unique_ptr<char[]> stack;
  const LBFGSpp::LBFGSBParam<double>* param = nullptr;
  double x0 = 0, lo = 0, hi = 0;
  // request / reply
  bool waiting = false, done = false, cancel = false;
  double x_req = 0, f_rep = 0, g_rep = 0;
  std::string no_value;        // nonempty: the objective has no value for this request
  std::exception_ptr failure;  // an unexpected exception inside the fiber, reported by the scheduler
  // results
  double x = 0, fx = 0, g = 0, f_initial = NAN;
  int nit = 0, nev = 0;
  int outcome = FitError;
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
    if (fb->cancel) throw FiberCancelled{};
    if (!fb->no_value.empty()) throw NoValue(fb->no_value);
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
  void accepted(const Eigen::VectorXd& at, double fx) {
    const double x = at[0];
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

thread_local Fiber* g_starting = nullptr;

void fiber_entry() {
  Fiber* fb = g_starting;
  ++g_live_solvers;
  try {
    LBFGSpp::LBFGSBSolver<double, RecordingLineSearch<LineSearchFailed, NoValue>::Type> solver(*fb->param);
    Eigen::VectorXd x(1), lb(1), ub(1);
    x[0] = fb->x0;
    lb[0] = fb->lo;
    ub[0] = fb->hi;
    YieldingObjective obj{fb};
    double fx = 0;
    fb->nit = solver.minimize(obj, x, fx, lb, ub);
    fb->x = x[0];
    fb->fx = fx;
    fb->outcome = FitConverged;
    if (fb->param->max_iterations != 0 && fb->nit >= fb->param->max_iterations) {
      fb->outcome = FitMaxIterations;
      fb->message = "max_iterations reached";
    }
  } catch (const FiberCancelled&) {
    fb->message = "cancelled";
  } catch (const NoValue& e) {
    fb->outcome = FitError;
    fb->message = e.what();
  } catch (const LineSearchFailed& e) {
    // Typically at the noise/rounding floor: report the last accepted iterate, as scipy's
    // ABNORMAL_TERMINATION_IN_LNSRCH does.
    fb->outcome = FitLineSearchStalled;
    fb->message = e.what();
    fb->x = fb->acc_x;
    fb->fx = fb->acc_f;
    fb->g = fb->acc_g;
    fb->nit = fb->n_accepted;
  } catch (...) {
    fb->failure = std::current_exception();
  }
  --g_live_solvers;
  fb->done = true;
  fb->waiting = false;
  // returning resumes uc_link (the scheduler)
}

}  // namespace

int live_solvers() { return g_live_solvers; }

FitResult minimize_in_lockstep(const std::vector<double>& theta0, const std::vector<double>& lower,
                               const std::vector<double>& upper, const FitOptions& fo,
                               const BatchedObjective& objective) {
  const auto t0 = std::chrono::steady_clock::now();
  const int n_systems = (int)theta0.size();
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
  std::vector<Fiber> fibers((size_t)n_systems);
  for (int b = 0; b < n_systems; ++b) {
    Fiber& f = fibers[b];
    f.lo = lower[b];
    f.hi = upper[b];
    f.x0 = theta0[b];
    f.param = &param;
    f.main = &main_ctx;
    f.record = fo.record_history;
  }
  auto resume = [&](Fiber& f) {
    swapcontext(&main_ctx, &f.ctx);
    if (f.done) f.stack.reset();
    if (f.failure) std::rethrow_exception(f.failure);
  };

  FitResult res;
  std::exception_ptr failure;
  try {
    // Start every fiber: each runs until its first f(x) request.
    for (int b = 0; b < n_systems; ++b) {
      Fiber& f = fibers[b];
      f.stack.reset(new char[kFiberStack]);
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack.get();
      f.ctx.uc_stack.ss_size = kFiberStack;
      f.ctx.uc_link = &main_ctx;
      makecontext(&f.ctx, fiber_entry, 0);
      g_starting = &f;
      resume(f);
    }
    std::vector<int> idx;
    std::vector<double> theta;
    for (;;) {
      idx.clear();
      theta.clear();
      for (int b = 0; b < n_systems; ++b)
        if (fibers[b].waiting) {
          idx.push_back(b);
          theta.push_back(fibers[b].x_req);
        }
      if (idx.empty()) break;
      // One batched loss + gradient evaluation over the waiting systems.
      const BatchValues values = objective(idx, theta);
      res.engine_seconds += values.seconds;
      ++res.rounds;
      res.round_sizes.push_back((int)idx.size());
      for (size_t j = 0; j < idx.size(); ++j) {
        Fiber& f = fibers[idx[j]];
        f.waiting = false;
        f.f_rep = values.loss[j];
        f.g_rep = values.grad[j];
        f.no_value = values.failure[j];
        if (f.no_value.empty() && (!std::isfinite(f.f_rep) || !std::isfinite(f.g_rep)))
          f.no_value = "non-finite loss or gradient";
        resume(f);
      }
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    // Unwind every suspended solver (its objects live on its fiber's stack), then report.
    for (Fiber& f : fibers) {
      if (!f.waiting) continue;
      f.cancel = true;
      swapcontext(&main_ctx, &f.ctx);
      f.stack.reset();
    }
    std::rethrow_exception(failure);
  }

  res.theta.resize(n_systems);
  res.loss.resize(n_systems);
  res.initial_loss.resize(n_systems);
  res.grad.resize(n_systems);
  res.iterations.resize(n_systems);
  res.evaluations.resize(n_systems);
  res.outcome.resize(n_systems);
  res.message.resize(n_systems);
  if (fo.record_history) {
    res.history_theta.resize(n_systems);
    res.history_loss.resize(n_systems);
  }
  for (int b = 0; b < n_systems; ++b) {
    Fiber& f = fibers[b];
    const bool have = f.outcome != FitError;
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

}  // namespace detail

namespace {
template <class T>
std::vector<T> gather(const std::vector<T>& in, long n_systems, const std::vector<int>& idx) {
  if (in.empty()) return {};
  const long K = (long)in.size() / n_systems, n = (long)idx.size();
  std::vector<T> out((size_t)(K * n));
  for (long k = 0; k < K; ++k)
    for (long j = 0; j < n; ++j) out[k * n + j] = in[k * n_systems + idx[j]];
  return out;
}
}  // namespace

const char* fit_outcome_name(int o) {
  switch (o) {
    case FitConverged: return "converged";
    case FitMaxIterations: return "max_iterations";
    case FitLineSearchStalled: return "line_search_stalled";
    default: return "error";
  }
}

FitResult fit_log_stiffness(const DiskBatch& batch, const RolloutOptions& options_in, const LossSpec& loss,
                            const FitOptions& fo, Backend backend) {
  const int n_systems = batch.n_systems;
  RolloutOptions options = options_in;
  options.tangents = {TangentParam{TangentKind::LogStiffness, 0, 0}};
  options.save_positions = options.save_velocities = options.save_tangents = false;
  detail::prepare(batch, options, &loss);  // validate everything once, before any fiber starts
  if (fo.max_iterations < 0) throw InvalidInput("max_iterations", -1, "must be >= 0");
  if (!(fo.epsilon >= 0) || !(fo.epsilon_rel >= 0) || !(fo.delta >= 0) || fo.past < 0 || fo.memory < 1 ||
      fo.max_linesearch < 1)
    throw InvalidInput("fit", -1, "tolerances must be >= 0, memory and max_linesearch >= 1");
  auto bounds = [&](const std::vector<double>& v, double dflt, const char* name) {
    if (v.empty()) return std::vector<double>(n_systems, dflt);
    if ((long)v.size() != n_systems) throw InvalidInput(name, -1, "expected one value per system");
    return v;
  };
  const std::vector<double> lower = bounds(fo.lower_per_system, fo.lower, "lower");
  const std::vector<double> upper = bounds(fo.upper_per_system, fo.upper, "upper");
  for (int b = 0; b < n_systems; ++b)
    if (!(lower[b] <= upper[b]) || !std::isfinite(lower[b]) || !std::isfinite(upper[b]))
      throw InvalidInput("bounds", b, "need finite lower <= upper");
  const std::vector<double> theta0 =
      batch.log_stiffness.empty() ? std::vector<double>(n_systems, 0.0) : batch.log_stiffness;
  const Backend resolved = resolve_backend(backend);

  auto objective = [&](const std::vector<int>& idx, const std::vector<double>& theta) {
    DiskBatch sub;
    sub.n_systems = (int)idx.size();
    sub.n_disks = batch.n_disks;
    sub.radius = gather(batch.radius, n_systems, idx);
    sub.mass = gather(batch.mass, n_systems, idx);
    sub.material = gather(batch.material, n_systems, idx);
    sub.x0 = gather(batch.x0, n_systems, idx);
    sub.v0 = gather(batch.v0, n_systems, idx);
    sub.damping_ratio = gather(batch.damping_ratio, n_systems, idx);
    sub.log_stiffness = theta;
    LossSpec sub_loss;
    sub_loss.observed = gather(loss.observed, n_systems, idx);
    sub_loss.components = loss.components;
    sub_loss.scale = gather(loss.scale, n_systems, idx);
    const RolloutResult r = rollout(sub, options, sub_loss, resolved);
    detail::BatchValues values;
    values.loss = r.loss;
    values.grad = r.grad;
    values.seconds = r.seconds;
    values.failure.resize(idx.size());
    for (size_t j = 0; j < idx.size(); ++j)
      if (r.status_of((int)j) != Status::Finished)
        values.failure[j] = std::string("engine: ") + status_name(r.status_of((int)j));
    return values;
  };
  return detail::minimize_in_lockstep(theta0, lower, upper, fo, objective);
}

}  // namespace saltation::dem
