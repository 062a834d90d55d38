#pragma once
// The hybrid model concept. A model is a small trivially-copyable struct (its configuration
// constants are its data members) passed by value to every backend. It provides, as
// SALTATION_HD members written once over a generic scalar S (double, or Dual<D> for partial
// derivatives) and a parameter view Th whose operator[] returns S:
//
//   static constexpr int N, P, M, F;   state size, parameter count, guard count, and the
//                                      number of parameters the flow depends on
//   static int flow_param(int f);      index in theta of the f-th flow parameter (f < F)
//   int initial_mode;                  discrete mode at t = 0
//   void initial_state(const Th& th, S* q) const;             q0(theta)
//   void flow(const S* q, int mode, const Th& th, S* f) const;  f = q'
//   S guard(int j, const S* q, int mode, const Th& th) const;   g_j
//   int direction(int j, int mode) const;   -1: event when g_j falls through 0, +1: rises,
//                                           0: guard j inactive in this mode
//   int reset(int j, const S* q, int mode, const Th& th, S* q_plus) const;  returns next mode
//   int invalid_param(const double* theta) const;   first parameter outside its domain or -1
//   static std::string param_name(int p);           host only, e.g. "e" or "w_3"
//   static std::string param_domain(int p);         host only, e.g. "in [0, 1]"
//   void validate_config() const;                   host only; throws InvalidInput
//   static std::string state_name(int k);           host only, e.g. "x"; AnyModel and the result
//                                                   writers name state k with it
//
// A built-in model (src/builtin_models.hpp) also provides, host only,
//   static Model from_config(const ModelConfig& config);   its constants from a request's "config"
// and, when it comes in compiled-in variants, variant_key ("bumps") and variant (K).
//
// The flow may read only the F parameters named by flow_param (a test checks this with
// dual numbers); this is what lets sensitivities skip P-wide work between events.
//
// Optional members, used when present:
//   static constexpr bool jump_at_start = true;
//       an initial state already past an active guard lies in that guard's jump set (seed 003's
//       thermostat: On and T >= T_high switches Off): the event is taken at t = 0, with its time
//       pinned (dt_e/dtheta = 0), instead of the row being invalid input.
//   static constexpr bool affine_flow = true;
//       the flow is affine in q in every mode (f_q independent of q; f_theta may depend on q):
//       full steps then advance the q-columns of the segment tangent by one precomputed N x N
//       step matrix (a test checks the declaration and the agreement with the generic step).
//   static constexpr bool polynomial_guards = true;
//       every guard is a polynomial in q (its coefficients any functions of theta), so that along
//       a trajectory a guard is as smooth as the trajectory the steps resolve: a model without a
//       guard bound then gets the curvature bound (core/guard_trend.hpp), which lets free flight
//       skip the probes from the guards at the step ends alone (a test holds its solves to the
//       bits of solves that probe every step). Not for a guard with features of its own (a
//       terrain's bumps), which only the probes can find.
//   bool guard_excluded(int j, int mode, const double* q0, const double* q1, const Th& th) const;
//       true only when guard j certainly does not cross on a step from q0 to q1: a cheap
//       conservative bound that lets free flight skip the exact guard and the probes.
//   double guard_gradient(int j, const double* q, int mode, const Th& th, double* g_q) const;
//       analytic d g_j / dq at q, returning g_j(q) (guard()'s value, bit for bit); replaces the
//       dual-number pass over the guard (Dual<N>) at each event and at each location trial
//       (a test checks it agrees with that pass to 1e-13, and the value with guard()).
//   int reset_from_gradient(int j, const double* q, int mode, const Th& th, const double* g_q,
//                           double* q_plus) const;
//       the reset at an event given g_q = d g_j / dq at q (the surface normal an impact law
//       needs), which the event computes anyway; the same q_plus as reset(), without evaluating
//       the guard's geometry again (a test checks they agree bit for bit).
//   EventContext event_context(int j, const double* q, int mode, const Th& th) const;
//   void event_param_partials(const EventContext&, int p0, int count, const Th& th,
//                             double* g_theta, double* R_theta, int stride) const;
//       analytic g_theta[c] and R_theta[r * stride + c] for parameters p0 + c, c < count, at an
//       event of guard j at pre-event state q; replaces the dual-number pass over chunks of
//       theta (a test checks they agree with it to 1e-13).
//   double event_guard_gradient(const EventContext&, double* g_q) const;
//       guard_gradient's g_q and value, bit for bit, from the event context, which a sensitivity
//       run forms anyway: the event then evaluates the guard's geometry once instead of twice.
#include <type_traits>
#include <utility>

#include "saltation/dual.hpp"
#include "saltation/params.hpp"

namespace saltation {

// True for models whose CUDA driver is compiled into some linked translation unit (the
// library does it for the built-in models). A user model sets it after instantiating
// saltation::cuda::solve<Model> in a .cu file that includes kernels/solve.cuh.
template <class Model>
struct has_cuda_driver : std::false_type {};

// True for models whose CPU SIMD-lane driver (cpu_lanes.hpp) is compiled into the library: the
// built-in models, whose flow and guards (and guard bound, where they have one) are written for
// any scalar, so that W trajectories' free-flight steps run together in vectors.
template <class Model>
struct has_cpu_lanes : std::false_type {};

// True for a model whose SIMD-lane driver the calling program compiles itself, for the vector
// target it is built for (cpu_lanes_static.hpp): a model file's plugin sets it for its model.
template <class Model>
struct has_static_cpu_lanes : std::false_type {};

template <class Model, class = void>
struct has_guard_exclusion : std::false_type {};
template <class Model>
struct has_guard_exclusion<Model, std::void_t<decltype(std::declval<const Model&>().guard_excluded(
                                      0, 0, static_cast<const double*>(nullptr), static_cast<const double*>(nullptr),
                                      std::declval<const RowParams&>()))>> : std::true_type {};

// Optional member `guard_excluded(j, mode, q0, q1, th, summary, slack)`: the guard bound for a
// probed path whose states may lie up to slack[i] from the flow's, as dopri5's continuous
// extension does (within its step's tolerance). Without it, dopri5's steps probe every step.
template <class Model, class Th, class = void>
struct has_guard_exclusion_with_slack : std::false_type {};
template <class Model, class Th>
struct has_guard_exclusion_with_slack<
    Model, Th,
    std::void_t<decltype(std::declval<const Model&>().guard_excluded(
        0, 0, static_cast<const double*>(nullptr), static_cast<const double*>(nullptr), std::declval<const Th&>(),
        std::declval<const Model&>().guard_summary(std::declval<const Th&>()), static_cast<const double*>(nullptr)))>>
    : std::true_type {};

template <class Model, class = void>
struct has_departure_exclusion : std::false_type {};
template <class Model>
struct has_departure_exclusion<Model,
                               std::void_t<decltype(std::declval<const Model&>().departure_excluded(
                                   0, 0, static_cast<const double*>(nullptr), 0.0, static_cast<const double*>(nullptr),
                                   0.0, 0.0, std::declval<const RowParams&>(),
                                   std::declval<const Model&>().guard_summary(std::declval<const RowParams&>())))>>
    : std::true_type {};

template <class Model, class = void>
struct has_guard_gradient : std::false_type {};
template <class Model>
struct has_guard_gradient<Model, std::void_t<decltype(std::declval<const Model&>().guard_gradient(
                                     0, static_cast<const double*>(nullptr), 0, std::declval<const RowParams&>(),
                                     static_cast<double*>(nullptr)))>> : std::true_type {};

template <class Model, class = void>
struct has_reset_from_gradient : std::false_type {};
template <class Model>
struct has_reset_from_gradient<Model, std::void_t<decltype(std::declval<const Model&>().reset_from_gradient(
                                          0, static_cast<const double*>(nullptr), 0, std::declval<const RowParams&>(),
                                          static_cast<const double*>(nullptr), static_cast<double*>(nullptr)))>>
    : std::true_type {};

template <class Model, class = void>
struct has_event_partials : std::false_type {};
template <class Model>
struct has_event_partials<Model, std::void_t<decltype(std::declval<const Model&>().event_context(
                                     0, static_cast<const double*>(nullptr), 0, std::declval<const RowParams&>()))>>
    : std::true_type {};

template <class Model, class Context, class = void>
struct has_context_guard_gradient : std::false_type {};
template <class Model, class Context>
struct has_context_guard_gradient<Model, Context,
                                  std::void_t<decltype(std::declval<const Model&>().event_guard_gradient(
                                      std::declval<const Context&>(), static_cast<double*>(nullptr)))>>
    : std::true_type {};

template <class Model, class = void>
struct has_affine_flow : std::false_type {};
template <class Model>
struct has_affine_flow<Model, std::enable_if_t<Model::affine_flow>> : std::true_type {};

template <class Model, class = void>
struct has_polynomial_guards : std::false_type {};
template <class Model>
struct has_polynomial_guards<Model, std::enable_if_t<Model::polynomial_guards>> : std::true_type {};

template <class Model, class = void>
struct has_jump_at_start : std::false_type {};
template <class Model>
struct has_jump_at_start<Model, std::enable_if_t<Model::jump_at_start>> : std::true_type {};

struct NoEventContext {};
template <class Model, class Th, bool = has_event_partials<Model>::value>
struct event_context_of {
  using type = NoEventContext;
};
template <class Model, class Th>
struct event_context_of<Model, Th, true> {
  using type = decltype(std::declval<const Model&>().event_context(0, static_cast<const double*>(nullptr), 0,
                                                                   std::declval<const Th&>()));
};

// Optional member `guard_summary(th)`: what the model's guard bound needs of theta, formed once per
// trajectory (theta does not change along it) and passed to
// `guard_excluded(j, mode, q0, q1, th, summary)`, so the bound need not scan every parameter on
// every step (the terrain ball's ceiling, docs/models.md).
template <class Model, class Th, class = void>
struct guard_summary_of {
  struct type {};
  static constexpr bool present = false;
};
template <class Model, class Th>
struct guard_summary_of<Model, Th,
                        std::void_t<decltype(std::declval<const Model&>().guard_summary(std::declval<const Th&>()))>> {
  using type = decltype(std::declval<const Model&>().guard_summary(std::declval<const Th&>()));
  static constexpr bool present = true;
};

template <class Model>
constexpr bool check_model() {
  static_assert(std::is_trivially_copyable<Model>::value,
                "a saltation model must be trivially copyable: it is passed to GPU kernels by value");
  static_assert(Model::N >= 1, "a model needs at least one state (Model::N >= 1)");
  static_assert(Model::P >= 1, "a model needs at least one parameter (Model::P >= 1)");
  static_assert(Model::M >= 1, "a model needs at least one guard (Model::M >= 1)");
  static_assert(Model::M <= 32, "at most 32 guards (Model::M <= 32): crossing sets are 32-bit masks");
  static_assert(Model::F >= 0 && Model::F <= Model::P, "Model::F must lie in [0, P]");
  return true;
}

}  // namespace saltation
