#pragma once
// Host storage for per-trajectory results (Result) and objective observations (Observation),
// laid out as the views of core/result_views.hpp describe.
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "saltation/core/result_views.hpp"
#include "saltation/host_arrays.hpp"
#include "saltation/status.hpp"

namespace saltation {

// f(a.x, b.x) for a member x: the body of every zip over a list of arrays below (LIST(X) calls X
// on each array's name), with a, b and f the zip's arguments.
#define SALTATION_ZIP_MEMBER(x) f(a.x, b.x);

// The twelve result arrays: the one list of them, named alike in Result, ResultView and the CUDA
// driver's device mirror.
#define SALTATION_RESULT_ARRAYS(X) \
  X(status) X(t_end) X(qf) X(n_events) X(ev_t) X(ev_guard) X(ev_flags) X(ev_q) X(ev_q_plus) X(dqf) X(ev_dt) X(ev_dq)

// Calls f(a.x, b.x) for each result array x, for any two of Result, ResultView and the device mirror.
template <class A, class B, class F>
void zip_arrays(A& a, B& b, F&& f) {
  SALTATION_RESULT_ARRAYS(SALTATION_ZIP_MEMBER)
}

// Whether a new Result's or Observation's arrays start at their defaults, or uninitialized for a
// backend that writes every entry (the CUDA driver copies whole device arrays back).
enum class Fill { Defaults, None };

// Host storage for a batch's results, laid out as ResultView describes.
struct Result {
  std::size_t n = 0;
  int N = 0, P = 0, C = 0;
  bool sensitivities = false;
  HostArray<int> status, n_events, ev_guard, ev_flags;
  HostArray<double> t_end, qf, ev_t, ev_q, ev_q_plus, dqf, ev_dt, ev_dq;

  Result() = default;
  Result(std::size_t n_, int N_, int P_, int C_, bool sens, Fill fill = Fill::Defaults)
      : n(n_),
        N(N_),
        P(P_),
        C(C_),
        sensitivities(sens),
        status(n_),
        n_events(n_),
        ev_guard(n_ * C_),
        ev_flags(n_ * C_),
        t_end(n_),
        qf(n_ * N_),
        ev_t(n_ * C_),
        ev_q(n_ * C_ * N_),
        ev_q_plus(n_ * C_ * N_),
        dqf(sens ? n_ * N_ * P_ : 0),
        ev_dt(sens ? n_ * C_ * P_ : 0),
        ev_dq(sens ? n_ * C_ * N_ * P_ : 0) {
    if (fill == Fill::Defaults) fill_defaults();
  }
  // Zero everywhere but in ev_guard, whose -1 means "no event" (slots a trajectory never writes).
  void fill_defaults() {
    zip_arrays(*this, *this, [this](auto& array, auto&) {
      using T = typename std::decay_t<decltype(array)>::value_type;
      fill_in_parallel(array, static_cast<const void*>(&array) == &ev_guard ? T(-1) : T(0));
    });
  }
  ResultView view() {
    ResultView v = shape();
    zip_arrays(*this, v, [](auto& array, auto& pointer) { pointer = array.data(); });
    return v;
  }
  // zip_arrays, under the name every host storage (Result, Observation) gives its arrays' list.
  template <class A, class B, class F>
  static void zip(A& a, B& b, F&& f) {
    zip_arrays(a, b, f);
  }
  // The view's sizes, with no arrays yet.
  ResultView shape() const {
    ResultView v;
    v.n = n;
    v.N = N;
    v.P = P;
    v.C = C;
    v.sensitivities = sensitivities;
    return v;
  }

  Status status_of(std::size_t i) const { return static_cast<Status>(status[i]); }
  double qf_of(std::size_t i, int k) const { return qf[k * n + i]; }
  double event_time(std::size_t i, int c) const { return ev_t[c * n + i]; }
  double event_q(std::size_t i, int c, int k) const { return ev_q[(std::size_t(c) * N + k) * n + i]; }
  double event_q_plus(std::size_t i, int c, int k) const { return ev_q_plus[(std::size_t(c) * N + k) * n + i]; }
  double dqf_of(std::size_t i, int k, int p) const { return dqf[(std::size_t(k) * P + p) * n + i]; }
  double event_dt(std::size_t i, int c, int p) const { return ev_dt[(std::size_t(c) * P + p) * n + i]; }
  double event_dq(std::size_t i, int c, int k, int p) const {
    return ev_dq[((std::size_t(c) * N + k) * P + p) * n + i];
  }
};

// Host storage for a batch's observations, laid out as ObservationView describes.
struct Observation {
  std::size_t n = 0;
  std::vector<ObjectiveSpec> objectives;
  std::vector<int> design;
  int n_outputs = 0;
  HostArray<int> status, n_events;
  HostArray<double> values;

  Observation() = default;
  Observation(std::size_t n_, std::vector<ObjectiveSpec> objectives_, std::vector<int> design_,
              Fill fill = Fill::Defaults)
      : n(n_), objectives(std::move(objectives_)), design(std::move(design_)), status(n_), n_events(n_) {
    for (const ObjectiveSpec& o : objectives)
      n_outputs += 1 + (o.differentiable() ? static_cast<int>(design.size()) : 0);
    values.resize(n * n_outputs);
    if (fill == Fill::Defaults) fill_defaults();
  }
  void fill_defaults() {
    zip(*this, *this, [](auto& array, auto&) { fill_in_parallel(array, {}); });
  }
  // The view's sizes and objective lists, with no arrays yet.
  ObservationView shape() const {
    ObservationView v;
    v.n = n;
    v.n_objectives = static_cast<int>(objectives.size());
    v.objectives = objectives.data();
    v.n_design = static_cast<int>(design.size());
    v.design = design.data();
    v.n_outputs = n_outputs;
    return v;
  }
  ObservationView view() {
    ObservationView v = shape();
    zip(*this, v, [](auto& array, auto& pointer) { pointer = array.data(); });
    return v;
  }
  // Calls f(a.x, b.x) for each of the three arrays x, as zip_arrays does for Result.
  template <class A, class B, class F>
  static void zip(A& a, B& b, F&& f) {
    f(a.status, b.status);
    f(a.n_events, b.n_events);
    f(a.values, b.values);
  }

  double value(std::size_t i, int row) const { return values[static_cast<std::size_t>(row) * n + i]; }
};

// Copies trajectories [0, count) of `chunk` (arrays named as `out`'s, with `count` trajectories
// each: a device chunk's staging) into trajectories [first, first + count) of `out`, on all threads.
template <class Host, class Chunk>
void unpack_chunk(Host& out, const Chunk& chunk, std::size_t first, std::size_t count) {
  std::vector<HostCopy> rows;
  Host::zip(out, chunk, [&](auto& host, const auto& part) {
    const std::size_t per_trajectory = host.size() / out.n;
    for (std::size_t r = 0; r < per_trajectory; ++r)
      rows.push_back({host.data() + r * out.n + first, part.data() + r * count, count * sizeof(*host.data())});
  });
  copy_in_parallel(rows);
}

}  // namespace saltation
