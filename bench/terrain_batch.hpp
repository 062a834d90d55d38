#pragma once
// Deterministic terrain-ball batches for the benchmarks (the seed's setting: dt = 1e-3,
// t_final = 3, several bounces per trajectory over Gaussian bumps). Nothing here integrates:
// the benchmarks time the library's own saltation::solve.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "saltation/batch.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"

namespace saltation_bench {

// theta = [vx0, vy0, c, e, mu, a_1, b_1, w_1, ...]; config x0 = 0, y0 = 1, g = 9.81.
//   vx0 ~ U(1, 2), vy0 ~ U(0, 1), c ~ U(0.08, 0.12), e ~ U(0.65, 0.75), mu ~ U(0.15, 0.25);
//   bump centres b_k ~ U(0, 4.5) (the x-range the balls cover in 3 s), widths w_k ~ U(0.1, 0.5),
//   amplitudes a_k ~ U(0.05, 0.2) * min(1, 3 / K): for K > 3 the amplitudes shrink so that the
//   total bump volume (and hence the terrain height and the bounce count) stays that of K = 3;
//   otherwise 192 overlapping bumps would bury the start point.
// A fixed seed makes the batch identical on every run and machine (std::mt19937_64 is fully
// specified; the uniform_real_distribution mapping is the same in libstdc++ everywhere).
inline saltation::Batch terrain_batch(std::size_t n, int K, std::uint64_t seed = 20240611u) {
  const int P = 5 + 3 * K;
  saltation::Batch b(n, P);
  std::mt19937_64 rng(seed);
  auto U = [&rng](double lo, double hi) {
    const double u = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    return lo + (hi - lo) * u;
  };
  const double amp_scale = K > 3 ? 3.0 / K : 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    b.at(i, 0) = U(1.0, 2.0);
    b.at(i, 1) = U(0.0, 1.0);
    b.at(i, 2) = U(0.08, 0.12);
    b.at(i, 3) = U(0.65, 0.75);
    b.at(i, 4) = U(0.15, 0.25);
    for (int k = 0; k < K; ++k) {
      b.at(i, 5 + 3 * k) = U(0.05, 0.2) * amp_scale;
      b.at(i, 5 + 3 * k + 1) = U(0.0, 4.5);
      b.at(i, 5 + 3 * k + 2) = U(0.1, 0.5);
    }
  }
  return b;
}

inline saltation::Options seed_options(bool sensitivities, int threads) {
  saltation::Options o;
  o.t_final = 3.0;
  o.dt = 1e-3;
  o.probes = 3;
  o.event_capacity = 16;  // the default; no trajectory of these batches has more than 10 events
  // The seed's settling rule: a bounce that leaves the terrain slower than v_stop ends the
  // trajectory (status Settled). Without it every ball chatters into Zeno before t = 3 s
  // (e ~ 0.7 gives a Zeno time of about 5.7 x the first fall time, ~2.6-3.4 s).
  o.v_stop = 0.25;
  o.sensitivities = sensitivities;
  o.threads = threads;
  return o;
}

struct BatchStats {
  double events_mean = 0.0;
  int events_min = 0, events_max = 0;
  int status_count[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double steps_total = 0.0;  // sum over trajectories of t_end / dt (trajectory-steps actually taken)
};

inline BatchStats batch_stats(const saltation::Result& r, double dt) {
  BatchStats s;
  if (r.n == 0) return s;
  s.events_min = r.n_events[0];
  s.events_max = r.n_events[0];
  double sum = 0.0;
  for (std::size_t i = 0; i < r.n; ++i) {
    sum += r.n_events[i];
    s.events_min = std::min(s.events_min, r.n_events[i]);
    s.events_max = std::max(s.events_max, r.n_events[i]);
    const int st = r.status[i];
    if (st >= 0 && st < 8) ++s.status_count[st];
    s.steps_total += r.t_end[i] / dt;
  }
  s.events_mean = sum / static_cast<double>(r.n);
  return s;
}

}  // namespace saltation_bench
