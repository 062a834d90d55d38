#pragma once
// The terrain of the terrain ball: a sum of Gaussian bumps h(x) = sum_k a_k exp(-(x - b_k)^2 / (2 w_k^2)),
// its slope and curvature, with bump k's parameters (a_k, b_k, w_k) at th[first + 3 k].
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/dual.hpp"
#include "saltation/numeric.hpp"

namespace saltation::terrain_ball {

// Locality: a bump contributes less than 1e-17 of its amplitude (value and slope alike, to within
// the factor |u| / w) beyond kReach widths from its centre, exp(-kReach^2 / 2) = 1e-17, so the
// terrain leaves it out there: the guard costs one compare per far bump instead of an exp, and the
// guard bound needs only the bumps within reach of the step (docs/models.md).
constexpr double kReach = 8.8477965;  // sqrt(2 ln 1e17)
template <class X, class S>
SALTATION_HD auto in_reach(const X& x, const S& b, const S& w) {
  const S d = x - b;
  return d * d <= (kReach * kReach) * (w * w);
}

// Height h and slope dh at x, the curvature h''(x) where `d2h` is given (an event's state Jacobian
// needs it), and each bump's exp(-u^2 / 2) where `bump_exp` is given (K entries, 0 past reach; an
// event's parameter partials need them again). The bumps go a group at a time (Group: four at once
// in host vectors), bump k into the group's partial sum k mod size, the partials joined pairwise at
// the end, so that the sum is no chain of K dependent additions (bench/README.md, "Fewer guard
// evaluations per event"); a group of one (dual numbers, the device) sums in the order of k.
template <int K, int First, class S, class Th>
SALTATION_HD void bump_terrain(const S& x, const Th& th, S& h, S& dh, S* d2h, double* bump_exp) {
  using Gr = Group<S>;
  using G = typename Gr::type;
  constexpr int L = Gr::size;
  G h_part = Gr::zero(), dh_part = Gr::zero(), d2h_part = Gr::zero();
  for (int k0 = 0; k0 < K; k0 += L) {
    S a[L], b[L], w[L];
    for (int e = 0; e < L; ++e) {
      const int k = k0 + e;
      a[e] = k < K ? S(th[First + 3 * k]) : S(0.0);  // past K: no bump
      b[e] = k < K ? S(th[First + 3 * k + 1]) : S(0.0);
      w[e] = k < K ? S(th[First + 3 * k + 2]) : S(1.0);
    }
    const G ag = Gr::make(a), bg = Gr::make(b), wg = Gr::make(w);
    const auto reach = in_reach(value_of(x), value_of(bg), value_of(wg));
    if (!Gr::any(reach)) {
      if (bump_exp)
        for (int k = k0; k < K && k < k0 + L; ++k) bump_exp[k] = 0.0;
      continue;
    }
    const G u = (x - bg) / wg;
    const G ex = exp_in_range(-0.5 * u * u);  // out of reach (out of range too) masked below
    if constexpr (std::is_same_v<S, double>) {
      if (bump_exp)
        for (int k = k0; k < K && k < k0 + L; ++k) bump_exp[k] = Gr::at(Gr::masked(reach, ex), k - k0);
    }
    const G bump = ag * ex;
    const G slope = bump * u / wg;
    h_part = h_part + Gr::masked(reach, bump);  // a bump past K has a = 0: it adds 0
    dh_part = dh_part - Gr::masked(reach, slope);
    if (d2h) d2h_part = d2h_part + Gr::masked(reach, bump * (u * u - 1.0) / (wg * wg));
  }
  h = Gr::sum(h_part);
  dh = Gr::sum(dh_part);
  if (d2h) *d2h = Gr::sum(d2h_part);
}

}  // namespace saltation::terrain_ball
