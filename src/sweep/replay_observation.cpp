#include "replay_observation.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "saltation/core/outputs.hpp"
#include "saltation/errors.hpp"

namespace saltation::sweep {

namespace {

// The observer reads states through core::entry<N>, which takes any N at least the model's: the
// states are padded to this many.
constexpr int kReplayStates = 64;

}  // namespace

Observation replay_observation(const Result& r, std::vector<ObjectiveSpec> specs, std::vector<int> design) {
  if (r.N > kReplayStates)
    throw InvalidInput(
        "model", -1,
        "a study with design parameters handles models of at most " + std::to_string(kReplayStates) + " states");
  Observation obs(r.n, std::move(specs), std::move(design));
  const ObservationView view = obs.view();
  std::array<double, kReplayStates> q_minus{}, q_plus{}, dq{}, qf{};
  for (std::size_t i = 0; i < r.n; ++i) {
    const core::ObjectiveObserver observer(view, i);
    const int recorded = std::min(r.n_events[i], r.C);
    for (int c = 0; c < recorded; ++c) {
      for (int k = 0; k < r.N; ++k) q_minus[k] = r.event_q(i, c, k), q_plus[k] = r.event_q_plus(i, c, k);
      observer.event<kReplayStates>(c, r.event_time(i, c), r.ev_guard[r.shape().at(c, i)], q_minus.data(),
                                    q_plus.data());
      if (!r.sensitivities) continue;
      for (int p = 0; p < r.P; ++p) {
        for (int k = 0; k < r.N; ++k) dq[k] = r.event_dq(i, c, k, p);
        observer.event_column<kReplayStates>(c, p, r.event_dt(i, c, p), q_minus.data(), dq.data());
      }
    }
    if (r.sensitivities)
      for (int k = 0; k < r.N; ++k)
        for (int p = 0; p < r.P; ++p) observer.final_dq(k, p, r.dqf_of(i, k, p));
    for (int k = 0; k < r.N; ++k) qf[k] = r.qf_of(i, k);
    observer.finish<kReplayStates>(r.status_of(i), r.t_end[i], qf.data(), r.n_events[i]);
  }
  return obs;
}

}  // namespace saltation::sweep
