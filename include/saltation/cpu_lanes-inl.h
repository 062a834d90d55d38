// The CPU's SIMD-lane driver (docs/simd_lanes.md) for one vector target: a group of W lanes per
// thread, each lane a core::Trajectory of its own row, their free-flight steps in vectors. A
// per-target header in Highway's sense, for two kinds of program:
//   - the library (src/cpu_lanes.cpp) builds it once per target (hwy/foreach_target.h) for the
//     built-in models and picks one at run time;
//   - a program compiled for one vector target (-march=x86-64-v4 or -v3) builds it once for that
//     target (cpu_lanes_static.hpp): a model file's plugin does so for its model.
// Either way it must be compiled with -ffp-contract=off (see "bitwise" below).
//
// Lanes whose next step is a full dt (in one mode) fly: the group holds their states in vectors
// and advances them together by one vector RK4 step (rk4_step and the model's flow on LaneVec) per
// iteration, and keeps each lane's step where step() would take it without a guard evaluation
// (finite end state, the model's guard bound ruling the step out, checked per lane by
// Trajectory::guards_excluded, or for a model without one the screen of lanes_screened_step). A
// lane whose step is not free gets its state back (Trajectory::resume) and takes that step alone
// (step(), and take_bracketed_event() on a bracket), as does every lane not flying. A lane whose
// trajectory ends takes the next row.
//
// Why the results are bitwise the scalar driver's: a lane's trajectory goes through the same
// operations in the same order (the vector step is rk4_step's IEEE additions, multiplications
// and divisions lane by lane, elementary functions per lane from the same library; a step the
// vector path does not commit is recomputed by step()), and no multiply-add is fused.
#include <atomic>
#include <optional>
#include <type_traits>
#include <vector>

#include "hwy/highway.h"
#include "saltation/core/rk4.hpp"
#include "saltation/core/trajectory.hpp"
#include "saltation/cpu.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/params.hpp"
#include "saltation/progress_counter.hpp"

// The library's build per target flattens a lane's own step (step(), its event and all they call)
// into the lanes' target: called out of line, that code would be the baseline's. A build for one
// target (cpu_lanes_static.hpp) compiles all of it for that target, where flattening it would
// only double a model file plugin's compile time.
#ifndef SALTATION_LANES_FLATTEN_STEP
#define SALTATION_LANES_FLATTEN_STEP
#endif

#if defined(SALTATION_CPU_LANES_INL_H) == defined(HWY_TARGET_TOGGLE)
#ifdef SALTATION_CPU_LANES_INL_H
#undef SALTATION_CPU_LANES_INL_H
#else
#define SALTATION_CPU_LANES_INL_H
#endif

HWY_BEFORE_NAMESPACE();
namespace saltation::cpu_lanes {
namespace HWY_NAMESPACE {

#include "saltation/lane_vec-inl.h"

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
// Entry k of an array the group keeps transposed, entry k of lane l at [k * W + l], as one vector:
// its rows (parameter k; a lane's Trajectory reads the same numbers with stride W), and with
// sensitivities its step matrices and tangents.
struct LaneArray {
  const double* a;
  LaneVec operator[](int k) const { return LaneVec(hn::Load(Tag(), a + k * kW)); }
};

// One RK4 step of dt for all W lanes in `mode`: q and q_end as [k * W + l]. Flattened, so that
// rk4_step and the model's flow (templates compiled for the baseline) are inlined here and run
// in this target's vectors.
template <class Model>
__attribute__((flatten)) void lanes_rk4_step(const Model& m, const double* q, int mode, const double* rows, double dt,
                                             double* q_end) {
  constexpr int N = Model::N;
  LaneVec qv[N], out[N];
  for (int k = 0; k < N; ++k) qv[k] = LaneVec(hn::Load(Tag(), q + k * kW));
  core::rk4_step(m, qv, mode, LaneArray{rows}, dt, out);
  for (int k = 0; k < N; ++k) hn::Store(out[k].v, Tag(), q_end + k * kW);
}

// For a model without a guard bound: the flow at q for all W lanes (as lanes_rk4_step).
template <class Model>
__attribute__((flatten)) void lanes_flow(const Model& m, const double* q, int mode, const double* rows, double* f) {
  constexpr int N = Model::N;
  LaneVec qv[N], fv[N];
  for (int k = 0; k < N; ++k) qv[k] = LaneVec(hn::Load(Tag(), q + k * kW));
  m.flow(qv, mode, LaneArray{rows}, fv);
  for (int k = 0; k < N; ++k) hn::Store(fv[k].v, Tag(), f + k * kW);
}

// For a model without a guard bound: one RK4 step of dt for all W lanes from q with the flow f
// there (as lanes_rk4_step).
template <class Model>
__attribute__((flatten)) void lanes_rk4_step_from(const Model& m, const double* q, const double* f, int mode,
                                                  const double* rows, double dt, double* q_end) {
  constexpr int N = Model::N;
  LaneVec qv[N], fv[N], out[N];
  for (int k = 0; k < N; ++k) {
    qv[k] = LaneVec(hn::Load(Tag(), q + k * kW));
    fv[k] = LaneVec(hn::Load(Tag(), f + k * kW));
  }
  core::rk4_step_from(m, qv, fv, mode, LaneArray{rows}, dt, out);
  for (int k = 0; k < N; ++k) hn::Store(out[k].v, Tag(), q_end + k * kW);
}

// With sensitivities of a flow that is not affine: one RK4 step of dt for all W lanes with their
// whole segment tangents (core::rk4_tangent_step on duals of lane vectors), q and Y as [e * W + l].
// Flattened as lanes_rk4_step.
template <class Model>
__attribute__((flatten)) void lanes_tangent_step(const Model& m, const double* q, const double* Y, int mode,
                                                 const double* rows, double dt, double* q_end, double* Y_end) {
  constexpr int N = Model::N, NW = N * core::tangent_width<Model>();
  LaneVec qv[N], out[N], Yv[NW];
  for (int k = 0; k < N; ++k) qv[k] = LaneVec(hn::Load(Tag(), q + k * kW));
  for (int e = 0; e < NW; ++e) Yv[e] = LaneVec(hn::Load(Tag(), Y + e * kW));
  core::rk4_tangent_step(m, qv, mode, LaneArray{rows}, dt, out, Yv);
  for (int k = 0; k < N; ++k) hn::Store(out[k].v, Tag(), q_end + k * kW);
  for (int e = 0; e < NW; ++e) hn::Store(Yv[e].v, Tag(), Y_end + e * kW);
}

// Trial steps' errors (core::dopri5_step_error) for all W lanes, each part as [l]: log_err_prev
// the lanes' last accepted steps' (given), the others computed.
struct LaneErrors {
  HWY_ALIGN double err[kW], log_err[kW], growth[kW], log_err_prev[kW];
  template <int N, class S>
  void compute(const S* q0, const core::Dopri5Step<N, S>& st, const LaneVec& h, const Options& o, bool on_slots) {
    const auto e = core::dopri5_step_error(q0, st, h, o.rtol, o.atol, on_slots, LaneVec(hn::Load(Tag(), log_err_prev)));
    hn::Store(e.err.v, Tag(), err);
    hn::Store(e.log_err.v, Tag(), log_err);
    hn::Store(e.growth.v, Tag(), growth);
  }
  core::Dopri5Error<double> of(int l) const { return {err[l], log_err[l], growth[l]}; }
};

// Whether the lanes evaluate the guards at dopri5's probes in vectors: unless the model's guard
// bound rules most steps' probes out (then each lane evaluates those its bound leaves, as the
// scalar driver does).
template <class Model>
constexpr bool vector_probes() {
  return !has_guard_exclusion_with_slack<Model, RowParams>::value;
}

// The guards at the probes' points of the W lanes' trial steps from q0 (Trajectory::dense_crossing's
// points and operations, lane by lane): piece k = 1 .. pieces at [((k - 1) * M + j) * kW + l], the
// last at the step's end. S is the step's scalar, a lane vector or a dual number of them.
template <class Model, class S>
void lanes_probe_guards(const Model& m, int mode, const double* rows, const LaneVec* q0,
                        const core::Dopri5Step<Model::N, S>& st, const LaneVec& h, int pieces, double* g) {
  constexpr int N = Model::N, M = Model::M;
  const auto value = [](const S& x) { return value_of(x); };
  for (int k = 1; k <= pieces; ++k) {
    LaneVec qs[N];
    for (int i = 0; i < N; ++i)
      qs[i] = k == pieces ? value(st.q1[i])
                          : core::dopri5_dense_entry(i, static_cast<double>(k) / pieces, h, q0[i], st, value);
    for (int j = 0; j < M; ++j) {
      const LaneVec gj = m.direction(j, mode) != 0 ? m.guard(j, qs, mode, LaneArray{rows}) : LaneVec(0.0);
      hn::StoreU(gj.v, Tag(), g + ((k - 1) * M + j) * kW);  // g is a std::vector's: not aligned
    }
  }
}

// One Dormand-Prince trial step for all W lanes in `mode`, each of its own size h[l], from q with
// the flow k0 there (the first stage): the other stages to k as [(stage * N + k) * W + l] (stage
// 0 left alone), the end state to q1, the step's error to `errors` and, where vector_probes, the
// guards at the probes' points to probe_guards (lanes_probe_guards). core::dopri5_step's and
// core::dopri5_step_error's operations lane by lane; flattened as lanes_rk4_step.
template <class Model>
__attribute__((flatten)) void lanes_dopri5_step(const Model& m, const double* q, const double* k0, int mode,
                                                const double* rows, const double* h, const Options& o, double* k,
                                                double* q1, LaneErrors& errors, double* probe_guards) {
  constexpr int N = Model::N;
  LaneVec qv[N];
  core::Dopri5Step<N, LaneVec> st;
  for (int i = 0; i < N; ++i) {
    qv[i] = LaneVec(hn::Load(Tag(), q + i * kW));
    st.k[0][i] = LaneVec(hn::Load(Tag(), k0 + i * kW));
  }
  const LaneVec hv(hn::Load(Tag(), h));
  core::dopri5_step(m, qv, mode, LaneArray{rows}, hv, st);
  errors.compute(qv, st, hv, o, false);
  if constexpr (vector_probes<Model>()) lanes_probe_guards(m, mode, rows, qv, st, hv, o.probes + 1, probe_guards);
  for (int i = 0; i < N; ++i) {
    for (int stage = 1; stage < 7; ++stage) hn::Store(st.k[stage][i].v, Tag(), k + (stage * N + i) * kW);
    hn::Store(st.q1[i].v, Tag(), q1 + i * kW);
  }
}

// With sensitivities: one Dormand-Prince trial step for all W lanes as lanes_dopri5_step, on dual
// numbers of lane vectors seeded with the lanes' segment tangents Y ([(i * W + c) * kW + l]) and
// the flow parameters in their slots (Trajectory::tangent_start's). A dual entry i of the state
// keeps its value and its slots as entries i * E .. i * E + W (E = W + 1): q1 as [(i * E + e) * kW
// + l], the stages k as [((stage * N + i) * E + e) * kW + l]; the step's error and the probes'
// guards as lanes_dopri5_step's. The first stage is formed from q and Y unless `first_known` (k
// holds it already: the last accepted step's seventh).
template <class Model>
__attribute__((flatten)) void lanes_dopri5_tangent_step(const Model& m, const double* q, const double* Y, int mode,
                                                        const double* rows, const double* h, const Options& o,
                                                        bool first_known, double* k, double* q1, LaneErrors& errors,
                                                        double* probe_guards) {
  constexpr int N = Model::N, W = core::tangent_width<Model>(), E = W + 1;
  using D = Dual<W, LaneVec>;
  const Tag d;
  const core::FlowSeededParams<Model, LaneArray, N> th{LaneArray{rows}};
  auto load = [&](const double* a, int entry) {
    D x(LaneVec(hn::Load(d, a + entry * E * kW)));
    for (int c = 0; c < W; ++c) x.d[c] = LaneVec(hn::Load(d, a + (entry * E + 1 + c) * kW));
    return x;
  };
  auto store = [&](const D& x, double* a, int entry) {
    hn::Store(x.v.v, d, a + entry * E * kW);
    for (int c = 0; c < W; ++c) hn::Store(x.d[c].v, d, a + (entry * E + 1 + c) * kW);
  };
  D q0[N];
  core::Dopri5Step<N, D> st;
  for (int i = 0; i < N; ++i) {
    q0[i] = D(LaneVec(hn::Load(d, q + i * kW)));
    for (int c = 0; c < W; ++c) q0[i].d[c] = LaneVec(hn::Load(d, Y + (i * W + c) * kW));
  }
  if (first_known) {
    for (int i = 0; i < N; ++i) st.k[0][i] = load(k, i);
  } else {
    m.flow(q0, mode, th, st.k[0]);
  }
  const LaneVec hv(hn::Load(d, h));
  core::dopri5_step(m, q0, mode, th, hv, st);
  errors.compute(q0, st, hv, o, o.error_on_sensitivities);
  if constexpr (vector_probes<Model>()) {
    LaneVec q0v[N];
    for (int i = 0; i < N; ++i) q0v[i] = q0[i].v;
    lanes_probe_guards(m, mode, rows, q0v, st, hv, o.probes + 1, probe_guards);
  }
  for (int i = 0; i < N; ++i) {
    for (int stage = first_known ? 1 : 0; stage < 7; ++stage) store(st.k[stage][i], k, stage * N + i);
    store(st.q1[i], q1, i);
  }
}

// A guard value past its surface in the guard's (non-zero) direction, lane by lane (core::past_surface).
inline LaneMask lanes_past_surface(int direction, const LaneVec& g) {
  return direction < 0 ? g < LaneVec(0.0) : g > LaneVec(0.0);
}

// For a model without a guard bound, with probes: the guards at the flying lanes' states and at
// their steps' ends, with their trend over the steps before (core::GuardTrend lane by lane), as
// [j * W + l]. Bit l of g_known: g holds lane l's guards.
template <int M>
struct LaneGuards {
  HWY_ALIGN double g[M * kW] = {}, g_end[M * kW] = {}, g_back[M * kW] = {}, d2_back[M * kW] = {};
  int trend_steps[kW] = {};
  unsigned g_known = 0;

  // The lanes where the curvature bound applies (Trajectory::curvature_bound_clear).
  unsigned bound_ready() const {
    unsigned ready = 0;
    for (int l = 0; l < kW; ++l)
      if (trend_steps[l] == 2) ready |= 1u << l;
    return ready & g_known;
  }
  // Lane l's from its trajectory (when it boards) and back (when it lands).
  template <class Traj>
  void take_from(const Traj& tr, int l) {
    double gl[M];
    core::GuardTrend<M> trend;
    const bool known = tr.guards_at_state(gl, trend);
    for (int j = 0; j < M; ++j) {
      g[j * kW + l] = gl[j];
      g_back[j * kW + l] = trend.g_back[j];
      d2_back[j * kW + l] = trend.d2_back[j];
    }
    trend_steps[l] = trend.steps;
    g_known = known ? g_known | 1u << l : g_known & ~(1u << l);
  }
  template <class Traj>
  void hand_back(Traj& tr, int l) const {
    double gl[M];
    core::GuardTrend<M> trend;
    for (int j = 0; j < M; ++j) {
      gl[j] = g[j * kW + l];
      trend.g_back[j] = g_back[j * kW + l];
      trend.d2_back[j] = d2_back[j * kW + l];
    }
    trend.steps = trend_steps[l];
    tr.take_guards(gl, trend);
  }
  // After the step the lanes `taken` took, as Trajectory::advance_trend and step() do lane by lane.
  void advance(unsigned taken) {
    const Tag d;
    const auto moved = lanes_of_bits(taken).m, formed = lanes_of_bits(started()).m;
    for (int j = 0; j < M; ++j) {
      const auto g0 = hn::Load(d, g + j * kW), g1 = hn::Load(d, g_end + j * kW), gb = hn::Load(d, g_back + j * kW);
      const auto d2 =
          hn::IfThenElse(formed, core::second_difference(LaneVec(gb), LaneVec(g0), LaneVec(g1)).v, hn::Zero(d));
      hn::Store(hn::IfThenElse(moved, d2, hn::Load(d, d2_back + j * kW)), d, d2_back + j * kW);
      hn::Store(hn::IfThenElse(moved, g0, gb), d, g_back + j * kW);
      hn::Store(hn::IfThenElse(moved, g1, g0), d, g + j * kW);
    }
    for (unsigned b = taken; b; b &= b - 1) {
      const int l = __builtin_ctz(b);
      trend_steps[l] = g_known >> l & 1u ? (trend_steps[l] < 2 ? trend_steps[l] + 1 : 2) : 0;
    }
    g_known |= taken;
  }

 private:
  // The lanes whose trend holds g_back (a second difference can be formed).
  unsigned started() const {
    unsigned s = 0;
    for (int l = 0; l < kW; ++l)
      if (trend_steps[l] > 0) s |= 1u << l;
    return s & g_known;
  }
};

// For a model without a guard bound: the lanes whose step of dt from q (the flow f there; read
// with probes only) to q_end step() would take without a crossing: no active guard past its
// surface at the step's end, nor, with probes, unless the curvature bound rules the step out, at
// the interior points of its dense output (Trajectory::dense_output_clear, lane by lane; with no
// probes the end is what step() tests). With probes the flow at the end goes to f_end (the next
// step's first stage) and the guards there to guards.g_end; the interior points are skipped when
// the bound clears every flying lane whose end is clear. Flattened as lanes_rk4_step.
template <class Model>
__attribute__((flatten)) unsigned lanes_screened_step(const Model& m, const double* q, const double* f,
                                                      const double* q_end, int mode, const double* rows, double dt,
                                                      int probes, unsigned flying, LaneGuards<Model::M>& guards,
                                                      double* f_end) {
  constexpr int N = Model::N, M = Model::M;
  const Tag d;
  const LaneArray th{rows};
  LaneVec q0[N], f0[N], q1[N], f1[N];
  for (int k = 0; k < N; ++k) q1[k] = LaneVec(hn::Load(d, q_end + k * kW));
  auto past_at = [&](const LaneVec* at) {
    LaneMask past{hn::FirstN(d, 0)};
    for (int j = 0; j < M; ++j)
      if (m.direction(j, mode) != 0) past = past || lanes_past_surface(m.direction(j, mode), m.guard(j, at, mode, th));
    return past;
  };
  if (probes == 0) return lane_bits(!past_at(q1));
  for (int k = 0; k < N; ++k) {
    q0[k] = LaneVec(hn::Load(d, q + k * kW));
    f0[k] = LaneVec(hn::Load(d, f + k * kW));
  }
  LaneMask past{hn::FirstN(d, 0)};
  for (int j = 0; j < M; ++j) {
    const int dir = m.direction(j, mode);
    const LaneVec g1 = dir != 0 ? m.guard(j, q1, mode, th) : LaneVec(0.0);
    hn::Store(g1.v, d, guards.g_end + j * kW);
    if (dir != 0) past = past || lanes_past_surface(dir, g1);
  }
  m.flow(q1, mode, th, f1);
  for (int k = 0; k < N; ++k) hn::Store(f1[k].v, d, f_end + k * kW);
  unsigned bound = 0;  // the lanes the curvature bound clears (Trajectory::curvature_bound_clear)
  if constexpr (core::has_curvature_bound<Model>()) {
    LaneMask clear = lanes_of_bits(guards.bound_ready());
    for (int j = 0; j < M; ++j) {
      const int dir = m.direction(j, mode);
      if (dir == 0) continue;
      const LaneVec g0(hn::Load(d, guards.g + j * kW)), g1(hn::Load(d, guards.g_end + j * kW));
      const LaneVec d2 = core::second_difference(LaneVec(hn::Load(d, guards.g_back + j * kW)), g0, g1);
      clear = clear && core::curvature_clear(dir, g0, g1, d2, LaneVec(hn::Load(d, guards.d2_back + j * kW)));
    }
    bound = lane_bits(clear);
  }
  const unsigned end_clear = lane_bits(!past);
  if ((end_clear & flying & ~bound) == 0) return end_clear & bound;
  LaneMask dense_past{hn::FirstN(d, 0)};
  const int pieces = probes + 1;
  for (int k = 1; k < pieces; ++k) {
    LaneVec qs[N];
    core::hermite_point<N>(static_cast<double>(k) / pieces, dt, q0, f0, q1, f1, qs);
    dense_past = dense_past || past_at(qs);
  }
  return end_clear & (bound | lane_bits(!dense_past));
}

// core::advance_time for all W lanes. Flattened as lanes_rk4_step: a template compiled for the
// baseline cannot take this target's vectors.
__attribute__((flatten)) inline void lanes_advance_time(LaneVec& t, LaneVec& carry, double dt) {
  core::advance_time(t, carry, LaneVec(dt));
}

// With sensitivities of an affine flow, the flow-parameter columns of the W lanes' segment tangents
// after a full step from q (Trajectory::free_steps_tangent): Phi, Psi, psi, q and Y as [e * W + l], only
// the F columns of Y and Y_end. Flattened as lanes_rk4_step.
template <class Model>
__attribute__((flatten)) void lanes_flow_param_step(const double* Phi, const double* Psi, const double* psi,
                                                    const double* q, const double* Y, double* Y_end) {
  constexpr int N = Model::N, F = Model::F, W = core::tangent_width<Model>();
  LaneVec Y_out[N * W];
  core::affine_flow_param_columns<N, F, W>(LaneArray{Phi}, LaneArray{Psi}, LaneArray{psi}, LaneArray{q}, LaneArray{Y},
                                           Y_out);
  for (int i = 0; i < N; ++i)
    for (int f = 0; f < F; ++f) hn::Store(Y_out[i * W + N + f].v, Tag(), Y_end + (i * W + N + f) * kW);
}

// Whether the model's guard bound (with its summary of theta) takes lane vectors: then the group
// decides all candidates' steps at once; otherwise each lane's trajectory decides its own.
template <class Model, class = void>
struct has_lane_guard_bound : std::false_type {};
template <class Model>
struct has_lane_guard_bound<Model, std::void_t<decltype(std::declval<const Model&>().guard_excluded(
                                       0, 0, static_cast<const LaneVec*>(nullptr), static_cast<const LaneVec*>(nullptr),
                                       LaneArray{}, std::declval<const Model&>().guard_summary(LaneArray{})))>>
    : std::true_type {};

// One thread's group of W lanes, taking rows from the shared counter `next` until none is left.
// Stepping dopri5 takes each lane's trial steps together (adaptive_trials).
template <class Output, class Model, bool Sens, Method Stepping = Method::Rk4>
class LaneGroup {
 public:
  using Traj = core::Trajectory<Model, RowParams, Sens, Output, Stepping>;
  static constexpr int N = Model::N, P = Model::P, F = Model::F, W = core::tangent_width<Model>();
  // With sensitivities, an affine flow's free steps advance the flow-parameter columns of the
  // tangent from its step matrices (lanes_flow_param_step); any other flow's the whole tangent by
  // the stages on dual numbers (lanes_tangent_step), which give the step's end state too.
  static constexpr bool kAffineTangent = Sens && has_affine_flow<Model>::value;
  static constexpr bool kTangentStep = Sens && !has_affine_flow<Model>::value;
  // The first column of the tangent the flight carries: the flow parameters' for an affine flow.
  static constexpr int kFirstColumn = kAffineTangent ? N : 0;
  // dopri5's trial steps: their scalar, and the doubles it takes (with Sens a dual number's value and slots).
  using TrialScalar = std::conditional_t<Sens, Dual<W>, double>;
  static constexpr int kE = Sens ? W + 1 : 1;
  static constexpr bool kVectorProbes = Stepping == Method::Dopri5 && vector_probes<Model>();

  LaneGroup(const Model& m, const Options& o, const double* theta, std::size_t n, const typename Output::View& out,
            std::atomic<std::size_t>& next, ProgressCounter& counter)
      : m_(m),
        o_(o),
        theta_(theta),
        n_(n),
        out_(out),
        next_(next),
        counter_(counter),
        probe_guards_(kVectorProbes ? static_cast<std::size_t>((o.probes + 1) * Model::M * kW) : 0),
        lane_probe_guards_(kVectorProbes ? static_cast<std::size_t>((o.probes + 1) * Model::M) : 0) {}

  // Each lane is in one of three states:
  //   empty     no row (none left, or a stop was requested): lane_[l] is empty;
  //   grounded  its trajectory steps alone (step_alone), as the scalar driver would;
  //   flying    its state is held in the flight's vectors (bit l of flight.flying) and advances
  //             with the others' by one vector step per iteration while its steps are free.
  // Each iteration the flight takes its step (fly: grounded again where a lane's step is not free
  // or t_final is reached), the grounded lanes that did not move take theirs (step_grounded), and
  // grounded lanes with a full step next in the flight's mode board it (board). A lane whose
  // trajectory ends takes the next row (end_and_refill).
  void run() {
    for (int l = 0; l < kW; ++l) refill(l);
    if constexpr (Stepping == Method::Dopri5) {
      while (adaptive_trials()) {
      }
    } else {
      Flight flight;
      for (;;) {
        unsigned moved = 0;  // lanes that took this iteration's step (or started a new row in it)
        if (flight.flying) moved = fly(flight);
        moved |= step_grounded(moved);
        if (!board(flight)) return;
      }
    }
  }

 private:
  // dopri5: one trial step of every lane whose trajectory is in the mode of the first, together
  // (lanes_dopri5_step, each lane with its own size; with sensitivities on dual numbers,
  // lanes_dopri5_tangent_step); each lane's trajectory then judges its own
  // (Trajectory::adaptive_trial_taken: accepted or not, the next size, a crossing on the dense
  // output) and takes an event it holds. A lane in another mode steps alone. Returns false when
  // every lane is empty.
  bool adaptive_trials() {
    HWY_ALIGN double q[N * kW], q1[N * kE * kW], h[kW], Y[N * W * kT + 1];
    double* k = trial_k_;
    LaneErrors errors;
    unsigned trying = 0;
    int mode = -1, first = -1;
    for (int l = 0; l < kW; ++l) {
      if (!lane_[l]) continue;
      if (mode < 0) mode = lane_[l]->mode();
      if (lane_[l]->mode() != mode) {
        if (step_alone(*lane_[l])) end_and_refill(l);
        continue;
      }
      if (!lane_[l]->adaptive_trial(h[l])) {  // its steps used up: ended
        end_and_refill(l);
        continue;
      }
      const double* s = lane_[l]->state();
      for (int i = 0; i < N; ++i) q[i * kW + l] = s[i];
      errors.log_err_prev[l] = lane_[l]->last_log_error();
      if constexpr (Sens) {
        const double* y = lane_[l]->tangent();
        for (int e = 0; e < N * W; ++e) Y[e * kW + l] = y[e];
      } else {
        const double* f = lane_[l]->first_stage();
        for (int i = 0; i < N; ++i) k[i * kW + l] = f[i];
      }
      trying |= 1u << l;
      if (first < 0) first = l;
    }
    first_known_ &= trying;  // a lane that did not try may have moved, or taken a new row
    if (mode < 0) return false;
    if (!trying) return true;
    for (int l = 0; l < kW; ++l) {  // the others compute the first's step, never read
      if (trying >> l & 1u) continue;
      h[l] = h[first];
      errors.log_err_prev[l] = errors.log_err_prev[first];
      for (int i = 0; i < N; ++i) q[i * kW + l] = q[i * kW + first];
      for (int e = 0; e < N * kE; ++e) k[e * kW + l] = k[e * kW + first];  // the first stage
      if constexpr (Sens)
        for (int e = 0; e < N * W; ++e) Y[e * kW + l] = Y[e * kW + first];
    }
    double* const probe_guards = kVectorProbes ? probe_guards_.data() : nullptr;
    if constexpr (Sens) {
      lanes_dopri5_tangent_step(m_, q, Y, mode, rows_, h, o_, (trying & ~first_known_) == 0, k, q1, errors,
                                probe_guards);
    } else {
      lanes_dopri5_step(m_, q, k, mode, rows_, h, o_, k, q1, errors, probe_guards);
    }
    // With Sens, the lanes whose first stage k holds for their next trial (forward, the trajectory holds it).
    unsigned known = 0;
    for (unsigned b = trying; b; b &= b - 1) {
      const int l = __builtin_ctz(b);
      core::Dopri5Step<N, TrialScalar> st;
      for (int i = 0; i < N; ++i) {
        for (int stage = 0; stage < 7; ++stage) st.k[stage][i] = trial_entry(k, stage * N + i, l);
        st.q1[i] = trial_entry(q1, i, l);
      }
      typename Traj::StepOutcome outcome;
      const double* lane_guards = nullptr;
      if (probe_guards) {
        for (std::size_t e = 0; e < lane_probe_guards_.size(); ++e) lane_probe_guards_[e] = probe_guards[e * kW + l];
        lane_guards = lane_probe_guards_.data();
      }
      // Rejected: retried shorter from the same state.
      if (!lane_[l]->adaptive_trial_taken(st, h[l], errors.of(l), lane_guards, outcome)) {
        known |= 1u << l;
        continue;
      }
      if (Sens && outcome == Traj::StepOutcome::Stepped) {  // the next step's first stage is this one's last
        for (int e = 0; e < N * kE; ++e) k[e * kW + l] = k[(6 * N * kE + e) * kW + l];
        known |= 1u << l;
      }
      if (outcome == Traj::StepOutcome::Ended ||
          (outcome == Traj::StepOutcome::Bracketed && lane_[l]->take_bracketed_event()))
        end_and_refill(l);
    }
    first_known_ = known;
    return true;
  }

  // A trial step's entry `index` on lane l, from arrays as lanes_dopri5_step's and lanes_dopri5_tangent_step's.
  static TrialScalar trial_entry(const double* a, int index, int l) {
    if constexpr (Sens) {
      TrialScalar x(a[index * kE * kW + l]);
      for (int c = 0; c < W; ++c) x.d[c] = a[(index * kE + 1 + c) * kW + l];
      return x;
    } else {
      return a[index * kW + l];
    }
  }

  // The flying lanes' states, held here between their free steps: q as [k * W + l], and t with its
  // carry (core::advance_time); with sensitivities also their segment tangents and, for an affine
  // flow, step matrices.
  static constexpr int kT = Sens ? kW : 0, kA = kAffineTangent ? kW : 0;
  struct Flight {
    HWY_ALIGN double q[N * kW] = {}, q_end[N * kW], t[kW] = {}, t_carry[kW] = {};
    HWY_ALIGN double Phi[N * N * kA + 1], Psi[F * N * N * kA + 1], psi[F * N * kA + 1];
    HWY_ALIGN double Y[N * W * kT + 1], Y_end[N * W * kT + 1];
    // For a model without a guard bound, the flow at q (the step's first stage) and at q_end.
    HWY_ALIGN double f[N * kW] = {}, f_end[N * kW] = {};
    LaneGuards<Model::M> guards;  // for a model without a guard bound, with probes
    int steps[kW] = {};           // free steps lane l has taken since it boarded
    unsigned flying = 0;          // bit l: lane l is flying
    unsigned f_known = 0;         // bit l: f holds lane l's flow at its q
    int mode = 0;                 // the flying lanes' mode
  };

  // One vector step of the flight; each lane keeps it where step() would take it without a
  // crossing: a full step, a finite end state, and the guard bound ruling it out, or for a model
  // without one the guards clear at its end and dense output (lanes_screened_step). Lanes whose
  // step was not free are grounded and take it alone; lanes that reached t_final are grounded and
  // end. Returns the lanes that moved.
  unsigned fly(Flight& f) {
    const Tag d;
    const auto t_final = hn::Set(d, o_.t_final), dt = hn::Set(d, o_.dt);
    unsigned clear = ~0u;
    if constexpr (kTangentStep) lanes_tangent_step(m_, f.q, f.Y, f.mode, rows_, o_.dt, f.q_end, f.Y_end);
    if constexpr (has_guard_exclusion<Model>::value) {
      if constexpr (!kTangentStep) lanes_rk4_step(m_, f.q, f.mode, rows_, o_.dt, f.q_end);
    } else {
      // The flow at q: the step's first stage, and with probes the dense output's slope.
      if ((!kTangentStep || o_.probes > 0) && (f.flying & ~f.f_known)) lanes_flow(m_, f.q, f.mode, rows_, f.f);
      if constexpr (!kTangentStep) lanes_rk4_step_from(m_, f.q, f.f, f.mode, rows_, o_.dt, f.q_end);
      clear = lanes_screened_step(m_, f.q, f.f, f.q_end, f.mode, rows_, o_.dt, o_.probes, f.flying, f.guards, f.f_end);
    }
    if constexpr (kAffineTangent) lanes_flow_param_step<Model>(f.Phi, f.Psi, f.psi, f.q, f.Y, f.Y_end);
    auto candidate = hn::Gt(hn::Sub(t_final, hn::Load(d, f.t)), dt);
    for (int k = 0; k < N; ++k) candidate = hn::And(candidate, hn::IsFinite(hn::Load(d, f.q_end + k * kW)));
    const unsigned free = free_lanes(bits(candidate) & f.flying & clear, f.mode, f.q, f.q_end);
    for (unsigned c = free; c; c &= c - 1) ++f.steps[__builtin_ctz(c)];
    const auto taken = mask(free);
    for (int k = 0; k < N; ++k)
      hn::Store(hn::IfThenElse(taken, hn::Load(d, f.q_end + k * kW), hn::Load(d, f.q + k * kW)), d, f.q + k * kW);
    if constexpr (!has_guard_exclusion<Model>::value) {
      // With probes the end's flow is the next step's first stage; without, it is formed then.
      if (o_.probes > 0) {
        for (int k = 0; k < N; ++k)
          hn::Store(hn::IfThenElse(taken, hn::Load(d, f.f_end + k * kW), hn::Load(d, f.f + k * kW)), d, f.f + k * kW);
        f.f_known = f.flying;
        if constexpr (core::has_curvature_bound<Model>()) f.guards.advance(free);
      } else {
        f.f_known = 0;
      }
    }
    if constexpr (Sens) {
      for (int i = 0; i < N; ++i)
        for (int c = kFirstColumn; c < W; ++c) {
          double* y = f.Y + (i * W + c) * kW;
          hn::Store(hn::IfThenElse(taken, hn::Load(d, f.Y_end + (i * W + c) * kW), hn::Load(d, y)), d, y);
        }
    }
    LaneVec t(hn::Load(d, f.t)), t_carry(hn::Load(d, f.t_carry));
    lanes_advance_time(t, t_carry, o_.dt);
    const auto t_next = hn::IfThenElse(taken, t.v, hn::Load(d, f.t));
    hn::Store(t_next, d, f.t);
    hn::Store(hn::IfThenElse(taken, t_carry.v, hn::Load(d, f.t_carry)), d, f.t_carry);
    const unsigned grounded = (f.flying & ~free) | (bits(hn::Ge(t_next, t_final)) & free);
    const unsigned moved = f.flying;
    f.flying &= ~grounded;
    for (unsigned b = grounded; b; b &= b - 1) land(f, __builtin_ctz(b), free);
    return moved;
  }

  // Lane l leaves the flight: its state after its free steps back to its trajectory, then the
  // step that was not free taken alone. A lane that has not moved keeps its own state (and what
  // its last event set).
  void land(const Flight& f, int l, unsigned free) {
    bool ended = false;
    if (f.steps[l] > 0) {
      double ql[N];
      for (int k = 0; k < N; ++k) ql[k] = f.q[k * kW + l];
      ended = resume(l, ql, f.t[l], f.t_carry[l], f.Y, f.steps[l]);
      if constexpr (core::has_curvature_bound<Model>())
        if (!ended && o_.probes > 0) f.guards.hand_back(*lane_[l], l);
    }
    if (!ended && !(free >> l & 1u)) ended = step_alone(*lane_[l]);
    if (ended) end_and_refill(l);
  }

  // The grounded lanes that have not moved this iteration take their step alone; returns the
  // lanes that moved, `moved` included.
  unsigned step_grounded(unsigned moved) {
    for (int l = 0; l < kW; ++l) {
      if (!lane_[l] || (moved >> l & 1u)) continue;
      if (step_alone(*lane_[l])) {
        end_and_refill(l);
        moved |= 1u << l;
      }
    }
    return moved;
  }

  // Grounded lanes with a full step next, in the flight's mode (any mode when none flies), board
  // the flight. Returns false when every lane is empty.
  bool board(Flight& f) {
    bool running = false;
    for (int l = 0; l < kW; ++l) {
      if (!lane_[l]) continue;
      running = true;
      if ((f.flying >> l & 1u) || !lane_[l]->full_step_next()) continue;
      if (!f.flying) f.mode = lane_[l]->mode();
      if (lane_[l]->mode() != f.mode) continue;
      const double* s = lane_[l]->state();
      for (int k = 0; k < N; ++k) f.q[k * kW + l] = s[k];
      f.t[l] = lane_[l]->time();
      f.t_carry[l] = lane_[l]->time_carry();
      if constexpr (Sens) {
        const auto& tg = lane_[l]->free_steps_tangent();
        if constexpr (kAffineTangent) {
          if (matrices_mode_[l] != f.mode) {  // functions of the row and the mode only
            for (int e = 0; e < N * N; ++e) f.Phi[e * kW + l] = tg.Phi[e];
            for (int e = 0; e < F * N * N; ++e) f.Psi[e * kW + l] = tg.Psi[e];
            for (int e = 0; e < F * N; ++e) f.psi[e * kW + l] = tg.psi[e];
            matrices_mode_[l] = f.mode;
          }
        }
        for (int i = 0; i < N; ++i)
          for (int c = kFirstColumn; c < W; ++c) f.Y[(i * W + c) * kW + l] = tg.Y[i * W + c];
      }
      if constexpr (core::has_curvature_bound<Model>())
        if (o_.probes > 0) f.guards.take_from(*lane_[l], l);
      f.flying |= 1u << l;
      f.f_known &= ~(1u << l);
      f.steps[l] = 0;
    }
    return running;
  }

  static unsigned bits(hn::Mask<Tag> m) { return lane_bits(LaneMask{m}); }
  static hn::Mask<Tag> mask(unsigned lanes) { return lanes_of_bits(lanes).m; }

  // The candidates whose step the guard bound rules out (all of them for a model without one,
  // whose candidates lanes_screened_step has screened). Flattened so that the model's bound is
  // inlined here (bench/README.md, "The guard bound in vectors").
  __attribute__((flatten)) unsigned free_lanes(unsigned candidates, int mode, const double* q,
                                               const double* q_end) const {
    if constexpr (!has_guard_exclusion<Model>::value) {
      return candidates;
    } else if constexpr (has_lane_guard_bound<Model>::value) {
      if (!candidates) return 0;
      LaneVec q0[N], q1[N];
      for (int k = 0; k < N; ++k) {
        q0[k] = LaneVec(hn::Load(Tag(), q + k * kW));
        q1[k] = LaneVec(hn::Load(Tag(), q_end + k * kW));
      }
      unsigned free = candidates;  // as Trajectory::all_guards_excluded, lane by lane
      for (int j = 0; j < Model::M; ++j)
        if (m_.direction(j, mode) != 0)
          free &= lane_bits(m_.guard_excluded(j, mode, q0, q1, LaneArray{rows_}, summary_));
      return free;
    }
    unsigned free = 0;
    for (unsigned c = candidates; c; c &= c - 1) {
      const int l = __builtin_ctz(c);
      double q0[N], q1[N];
      for (int k = 0; k < N; ++k) {
        q0[k] = q[k * kW + l];
        q1[k] = q_end[k * kW + l];
      }
      if (lane_[l]->guards_excluded(q0, q1)) free |= 1u << l;
    }
    return free;
  }

  // Lane l's state after its free steps (and with Sens their tangent) back to its trajectory.
  bool resume(int l, const double* ql, double tl, double t_carry, const double* Y, int steps) {
    if constexpr (Sens) {
      double Yl[N * W];
      for (int i = 0; i < N; ++i)
        for (int c = kFirstColumn; c < W; ++c) Yl[i * W + c] = Y[(i * W + c) * kW + l];
      return lane_[l]->resume(ql, tl, t_carry, Yl, steps);
    } else {
      return lane_[l]->resume(ql, tl, t_carry);
    }
  }

  void end_and_refill(int l) {
    counter_.one_done();
    refill(l);
  }

  // The routine's own step, and its event on a bracket (as run()); flattened where the build
  // asks for it (SALTATION_LANES_FLATTEN_STEP, above).
  SALTATION_LANES_FLATTEN_STEP static bool step_alone(Traj& tr) {
    const typename Traj::StepOutcome outcome = tr.step();
    if (outcome == Traj::StepOutcome::Ended) return true;
    return outcome == Traj::StepOutcome::Bracketed && tr.take_bracketed_event();
  }

  // Starts lane l on the next row (past rows that end in begin()); leaves it empty when no row is
  // left or a stop was requested.
  void refill(int l) {
    lane_[l].reset();
    matrices_mode_[l] = -1;
    for (;;) {
      if (interrupt_requested()) return;
      const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= n_) return;
      for (int p = 0; p < P; ++p)
        rows_[static_cast<std::size_t>(p) * kW + l] = theta_[static_cast<std::size_t>(p) * n_ + i];
      lane_[l].emplace(m_, o_, RowParams{rows_ + l, kW}, i, out_);
      if constexpr (has_lane_guard_bound<Model>::value) summarize();
      if (!lane_[l]->begin()) return;
      counter_.one_done();
      lane_[l].reset();
    }
  }

  // The guard bound's summary of the lanes' rows. Flattened as lanes_rk4_step: called out of line,
  // the model's template is compiled for the baseline, which passes lane vectors differently.
  __attribute__((flatten)) void summarize() { summary_ = m_.guard_summary(LaneArray{rows_}); }

  const Model& m_;
  const Options& o_;
  const double* theta_;
  const std::size_t n_;
  const typename Output::View& out_;
  std::atomic<std::size_t>& next_;
  ProgressCounter& counter_;
  HWY_ALIGN double rows_[P * kW] = {};  // the lanes' parameter rows, transposed
  // dopri5's trial stages (adaptive_trials), kept for the first stage of a lane's next trial: with
  // Sens the lanes whose first stage it holds are first_known_'s.
  HWY_ALIGN double trial_k_[Stepping == Method::Dopri5 ? 7 * N * kE * kW : 1];
  unsigned first_known_ = 0;
  // With kVectorProbes: the guards at the trial steps' probes (lanes_probe_guards), and one lane's.
  std::vector<double> probe_guards_, lane_probe_guards_;
  std::optional<Traj> lane_[kW];
  int matrices_mode_[kW];  // for an affine tangent: the mode whose step matrices lane l's columns hold, or -1
  // The guard bound's summary of the lanes' rows (what each lane's trajectory holds for its own).
  typename guard_summary_of<Model, LaneArray>::type summary_{};
};

template <class Output, class Model, bool Sens, Method Stepping = Method::Rk4>
void run_lanes(const Model& model, const double* theta, std::size_t n, const Options& options,
               const typename Output::View& out, const Progress* progress) {
  std::atomic<std::size_t> next{0};
  ProgressCounter counter(progress, n);
#pragma omp parallel num_threads(cpu::detail::thread_count(options, n))
  LaneGroup<Output, Model, Sens, Stepping>(model, options, theta, n, out, next, counter).run();
  throw_if_interrupted();
  counter.finish();
}
#endif  // HWY_TARGET

}  // namespace HWY_NAMESPACE
}  // namespace saltation::cpu_lanes
HWY_AFTER_NAMESPACE();

#endif  // SALTATION_CPU_LANES_INL_H
