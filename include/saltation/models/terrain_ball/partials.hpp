#pragma once
// The terrain ball's analytic event partials (optional model members, docs/models.md): the guard
// gradient, R_q and the parameter partials g_theta, R_theta at an impact, by hand instead of by
// dual-number passes (over 3K bump parameters those cost O(K^2) per event; bench/README.md, "The
// sensitivity event, cheaper"). A test holds each to the dual-number pass at 1e-13.
#include <cmath>

#include "saltation/config.hpp"
#include "saltation/models/terrain_ball/bumps.hpp"
#include "saltation/numeric.hpp"

namespace saltation::terrain_ball {

// The impact's local frame on terrain of slope dh: r = 1 / sqrt(1 + dh^2), unit normal n and
// tangent t, the velocity's normal and tangential parts vn, vt and theirs after the impact,
// an = -e vn and at = (1 - mu) vt.
template <class S>
struct ImpactFrame {
  S r, nx, ny, tx, ty, vn, vt, an, at;
};
template <class S>
SALTATION_HD ImpactFrame<S> impact_frame(const S& dh, const S& vx, const S& vy, const S& e, const S& mu) {
  const S r = 1.0 / sqrt(1.0 + dh * dh);
  const S nx = -dh * r, ny = r, tx = r, ty = dh * r;
  const S vn = vx * nx + vy * ny, vt = vx * tx + vy * ty;
  return {r, nx, ny, tx, ty, vn, vt, -e * vn, (1.0 - mu) * vt};
}

// The context keeps the bumps' exps for the partials where K <= 32; with more the array made the
// device's sensitivity kernel spill (scripts/ptxas-check), so there they are computed again.
template <int K>
struct EventContext {
  static constexpr bool kKeepsBumpExps = K > 0 && K <= 32;
  double x = 0.0, g = 0.0, dh = 0.0, d2h = 0.0;  // the event's position, guard, terrain slope and curvature
  double dvx[5] = {}, dvy[5] = {};               // d(vx+, vy+)/d(dh, e, mu, vx-, vy-)
  double bump_exp[kKeepsBumpExps ? K : 1] = {};  // each bump's exp(-u^2 / 2) at x, 0 past reach (the terrain's)
};

// d(vx+, vy+)/d(dh, e, mu, vx-, vy-) of the impact law v+ = an n + at t: with r = 1 / sqrt(1 + dh^2),
// dn/d dh = -r^2 t and dt/d dh = r^2 n, so d vn/d dh = -r^2 vt and d vt/d dh = r^2 vn.
SALTATION_HD inline void impact_velocity_partials(double dh, double vx, double vy, double e, double mu, double* dvx,
                                                  double* dvy) {
  const ImpactFrame<double> f = impact_frame(dh, vx, vy, e, mu);
  const double r2 = f.r * f.r, nx = f.nx, ny = f.ny, tx = f.tx, ty = f.ty, vn = f.vn, vt = f.vt, an = f.an, at = f.at;
  // by dh: v+ = an n + at t, each factor moving
  const double dan = e * r2 * vt, dat = (1.0 - mu) * r2 * vn;
  dvx[0] = dan * nx + an * (-r2 * tx) + dat * tx + at * (r2 * nx);
  dvy[0] = dan * ny + an * (-r2 * ty) + dat * ty + at * (r2 * ny);
  dvx[1] = -vn * nx;  // by e
  dvy[1] = -vn * ny;
  dvx[2] = -vt * tx;  // by mu
  dvy[2] = -vt * ty;
  dvx[3] = -e * nx * nx + (1.0 - mu) * tx * tx;  // by vx-: d vn = nx, d vt = tx
  dvy[3] = -e * nx * ny + (1.0 - mu) * tx * ty;
  dvx[4] = -e * ny * nx + (1.0 - mu) * ty * tx;  // by vy-: d vn = ny, d vt = ty
  dvy[4] = -e * ny * ny + (1.0 - mu) * ty * ty;
}

// d guard / dq = (-h'(x), 1, 0, 0).
SALTATION_HD inline void gradient_at_slope(double dh, double* g_q) {
  g_q[0] = -dh;
  g_q[1] = 1.0;
  g_q[2] = 0.0;
  g_q[3] = 0.0;
}

// R_q = d q+ / d q- (row-major 4 x 4): the position is kept, and v+ moves with x through the slope
// (dh/dx = h'') and with v- directly.
template <int K>
SALTATION_HD void event_state_jacobian(const EventContext<K>& ctx, double* R_q) {
  constexpr int N = 4;
  for (int e = 0; e < N * N; ++e) R_q[e] = (e % (N + 1) == 0) ? 1.0 : 0.0;
  R_q[2 * N + 0] = ctx.dvx[0] * ctx.d2h;
  R_q[2 * N + 2] = ctx.dvx[3];
  R_q[2 * N + 3] = ctx.dvx[4];
  R_q[3 * N + 0] = ctx.dvy[0] * ctx.d2h;
  R_q[3 * N + 2] = ctx.dvy[3];
  R_q[3 * N + 3] = ctx.dvy[4];
}

// g_theta[c] and R_theta[r * stride + c] for parameters p0 + c, c < count: restitution E and
// friction Mu move v+ directly, the bumps (from index First) move the terrain's height and slope.
// A bump's three parameters share its exp (the context's, where it keeps them) and most products,
// so the bumps are taken whole.
template <int K, int First, int E, int Mu, class Th>
SALTATION_HD void event_param_partials(const EventContext<K>& ctx, int p0, int count, const Th& th, double* g_theta,
                                       double* R_theta, int stride) {
  // Column c from d h / d theta and d h' / d theta (the terrain's) and theta's direct part of d v+.
  const auto column = [&](int c, double dh_dp, double ddh_dp, double dv_direct_x, double dv_direct_y) {
    g_theta[c] = -dh_dp;
    R_theta[0 * stride + c] = 0.0;
    R_theta[1 * stride + c] = 0.0;
    R_theta[2 * stride + c] = ctx.dvx[0] * ddh_dp + dv_direct_x;
    R_theta[3 * stride + c] = ctx.dvy[0] * ddh_dp + dv_direct_y;
  };
  for (int c = 0; c < count && p0 + c < First; ++c) {
    const int p = p0 + c;
    const bool direct = p == E || p == Mu;
    column(c, 0.0, 0.0, direct ? ctx.dvx[p == E ? 1 : 2] : 0.0, direct ? ctx.dvy[p == E ? 1 : 2] : 0.0);
  }
  const int first = p0 < First ? First : p0, last = p0 + count - 1;
  for (int k = (first - First) / 3; k < K && First + 3 * k <= last; ++k) {
    const double a = th[First + 3 * k], b = th[First + 3 * k + 1], w = th[First + 3 * k + 2];
    const double u = (ctx.x - b) / w;
    const double ex = EventContext<K>::kKeepsBumpExps ? ctx.bump_exp[k]
                      : in_reach(ctx.x, b, w)         ? exp_by_table(-0.5 * u * u)
                                                      : 0.0;
    const double aex = a * ex, aexu = aex * u;
    // d h and d h' by amplitude, centre and width
    const double dh[3] = {ex, aexu / w, aexu * u / w};
    const double ddh[3] = {-ex * u / w, aex * (1.0 - u * u) / (w * w), aexu * (2.0 - u * u) / (w * w)};
    for (int which = 0; which < 3; ++which) {
      const int c = First + 3 * k + which - p0;
      if (c >= 0 && c < count) column(c, dh[which], ddh[which], 0.0, 0.0);
    }
  }
}

}  // namespace saltation::terrain_ball
