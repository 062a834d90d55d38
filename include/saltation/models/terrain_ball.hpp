#pragma once
// Point mass over Gaussian-bump terrain (seed 001, "contact-sim"): q = (x, y, vx, vy),
// x' = vx, y' = vy, vx' = -c vx, vy' = -g - c vy; terrain h(x) = sum_k a_k exp(-(x-b_k)^2/(2 w_k^2));
// guard y - h(x) (falling); at impact v+ = -e (v.n) n + (1 - mu) (v.t) t in the local frame.
// theta = [vx0, vy0, c, e, mu, a_1, b_1, w_1, ..., a_K, b_K, w_K]; config x0, y0, g.
#include <cmath>
#include <string>
#include <type_traits>

#include "saltation/errors.hpp"
#include "saltation/model.hpp"
#include "saltation/model_config.hpp"

namespace saltation {

template <int K>
struct TerrainBall {
  static_assert(K >= 0, "bump count K must be >= 0");
  static constexpr int N = 4, P = 5 + 3 * K, M = 1, F = 1;
  static constexpr int bumps = K;
  static constexpr const char* name = "terrain_ball";
  static constexpr bool affine_flow = true;
  enum Param { VX0 = 0, VY0 = 1, C = 2, E = 3, MU = 4, BUMP0 = 5 };

  double x0 = 0.0, y0 = 1.0, gravity = 9.81;
  int initial_mode = 0;

  SALTATION_HD static int flow_param(int) { return C; }

  // Locality: a bump contributes less than 1e-17 of its amplitude (value and slope alike, to
  // within the factor |u| / w) beyond kReach widths from its centre, exp(-kReach^2 / 2) = 1e-17, so
  // the terrain leaves it out there: the guard costs one compare per far bump instead of an exp,
  // and the guard bound below needs only the bumps within reach of the step (docs/models.md).
  static constexpr double kReach = 8.8477965;  // sqrt(2 ln 1e17)
  template <class X, class S>
  SALTATION_HD static auto in_reach(const X& x, const S& b, const S& w) {
    const S d = x - b;
    return d * d <= (kReach * kReach) * (w * w);
  }

  // Terrain height and slope at x, its curvature h''(x) where `d2h` is given (an event's state
  // Jacobian needs it), and each bump's exp(-u^2 / 2) where `bump_exp` is given (K entries, 0 past
  // reach; an event's parameter partials need them again).
  template <class S, class Th>
  SALTATION_HD void terrain(const S& x, const Th& th, S& h, S& dh, S* d2h = nullptr, double* bump_exp = nullptr) const {
    // The bumps a group at a time (Group: four at once in host vectors), summed as one partial sum
    // per element of the group (bump k into partial k mod size), the partials joined pairwise at
    // the end: one sum of K terms in the order of k is a chain of K dependent additions, which
    // made the host's guard evaluations latency-bound. A group of one (dual numbers, the device)
    // sums in the order of k.
    using Gr = Group<S>;
    using G = typename Gr::type;
    constexpr int L = Gr::size;
    G h_part = Gr::zero(), dh_part = Gr::zero(), d2h_part = Gr::zero();
    for (int k0 = 0; k0 < K; k0 += L) {
      S a[L], b[L], w[L];
      for (int e = 0; e < L; ++e) {
        const int k = k0 + e;
        a[e] = k < K ? S(th[BUMP0 + 3 * k]) : S(0.0);  // past K: no bump
        b[e] = k < K ? S(th[BUMP0 + 3 * k + 1]) : S(0.0);
        w[e] = k < K ? S(th[BUMP0 + 3 * k + 2]) : S(1.0);
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

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = S(x0);
    q[1] = S(y0);
    q[2] = th[VX0];
    q[3] = th[VY0];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th& th, S* f) const {
    const S c = th[C];
    f[0] = q[2];
    f[1] = q[3];
    f[2] = -c * q[2];
    f[3] = -gravity - c * q[3];
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th& th) const {
    S h, dh;
    terrain(q[0], th, h, dh);
    return q[1] - h;
  }
  SALTATION_HD int direction(int, int) const { return -1; }
  // Post-impact velocity for terrain slope dh: v+ = -e (v.n) n + (1 - mu) (v.t) t.
  template <class S>
  SALTATION_HD static void impact_velocity(const S& dh, const S& vx, const S& vy, const S& e, const S& mu, S& vx_plus,
                                           S& vy_plus) {
    const ImpactFrame<S> f = impact_frame(dh, vx, vy, e, mu);
    vx_plus = f.an * f.nx + f.at * f.tx;
    vy_plus = f.an * f.ny + f.at * f.ty;
  }
  // The impact's local frame on terrain of slope dh: r = 1 / sqrt(1 + dh^2), unit normal n and
  // tangent t, the velocity's normal and tangential parts vn, vt and theirs after the impact,
  // an = -e vn and at = (1 - mu) vt (impact_velocity and its partials).
  template <class S>
  struct ImpactFrame {
    S r, nx, ny, tx, ty, vn, vt, an, at;
  };
  template <class S>
  SALTATION_HD static ImpactFrame<S> impact_frame(const S& dh, const S& vx, const S& vy, const S& e, const S& mu) {
    const S r = 1.0 / sqrt(1.0 + dh * dh);
    const S nx = -dh * r, ny = r, tx = r, ty = dh * r;
    const S vn = vx * nx + vy * ny, vt = vx * tx + vy * ty;
    return {r, nx, ny, tx, ty, vn, vt, -e * vn, (1.0 - mu) * vt};
  }
  // d guard / dq = (-h'(x), 1, 0, 0) and the guard from one terrain pass in doubles (instead of
  // one on Dual<4>).
  template <class Th>
  SALTATION_HD double guard_gradient(int, const double* q, int, const Th& th, double* g_q) const {
    double h, dh;
    terrain(q[0], th, h, dh);
    gradient_at_slope(dh, g_q);
    return q[1] - h;
  }
  SALTATION_HD static void gradient_at_slope(double dh, double* g_q) {
    g_q[0] = -dh;
    g_q[1] = 1.0;
    g_q[2] = 0.0;
    g_q[3] = 0.0;
  }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    S h, dh;
    terrain(q[0], th, h, dh);
    reset_at_slope(dh, q, th, q_plus);
    return mode;
  }
  // The same reset from the guard gradient the event has already formed: h'(x) = -g_q[0].
  template <class Th>
  SALTATION_HD int reset_from_gradient(int, const double* q, int mode, const Th& th, const double* g_q,
                                       double* q_plus) const {
    reset_at_slope(-g_q[0], q, th, q_plus);
    return mode;
  }
  // The impact at q on terrain of slope dh: position kept, velocity by impact_velocity.
  template <class S, class Th>
  SALTATION_HD static void reset_at_slope(const S& dh, const S* q, const Th& th, S* q_plus) {
    q_plus[0] = q[0];
    q_plus[1] = q[1];
    impact_velocity(dh, q[2], q[3], th[E], th[MU], q_plus[2], q_plus[3]);
  }

  // The guard bound is generic over its scalar S: double, or the CPU's SIMD-lane vector (a
  // trajectory per lane, src/cpu_lanes.cpp), which decides W lanes' steps at once and gives each
  // lane the double code's answer (numeric.hpp: select, any_lane, all_lanes), or on AVX-512 one a
  // little looser (half_square_ratio): a valid bound only decides which steps skip the probes.
  //
  // What the guard bound needs of theta, formed once per trajectory (theta does not change along
  // it): the terrain's ceiling. (A bound per cell of x was tried: it made the forward CUDA kernel
  // use 168 registers instead of 122, over scripts/ptxas-check's 128.)
  template <class S>
  struct GuardSummary {
    S ceiling = S(0.0);    // sum of the positive amplitudes: no terrain point is higher
    S slope = S(0.0);      // bounds of |h'| and of h'' everywhere (departure_excluded)
    S curvature = S(0.0);
  };
  static constexpr double kMaxSlope = 0.60653066, kMaxCurvature = 0.44626033;  // e^(-1/2), 2 e^(-3/2), up
  template <class Th>
  SALTATION_HD auto guard_summary(const Th& th) const {
    using S = std::decay_t<decltype(th[0])>;
    GuardSummary<S> s;
    for (int k = 0; k < K; ++k) {
      const S a = th[BUMP0 + 3 * k], w = th[BUMP0 + 3 * k + 2];
      s.ceiling = select(a > 0.0, s.ceiling + a, s.ceiling);
      s.slope = s.slope + kMaxSlope * abs(a) / w;
      s.curvature = s.curvature + select(a > 0.0, kMaxCurvature * a, -a) / (w * w);
    }
    return s;
  }

  // Bound of the terrain over [x_lo, x_hi] from each bump's height at the point of the interval
  // nearest its centre, r widths from it, without an exp: bumps out of reach of the whole interval
  // contribute nothing, the others a e^(-r^2 / 2) bounded from above by exp_neg_upper_bound (at
  // most 6.2 % loose, no division and no table; the C library's exp was most of a step's cost
  // near the terrain, and the division by a Taylor polynomial that replaced it most of the lanes'
  // guard bound at K = 24). Stops as soon as the sum reaches `enough`.
  // (With lanes, a lane past `enough` goes on adding terms >= 0: its answer stays the same.)
  template <class S, class Th>
  SALTATION_HD S bump_bound(const S& x_lo, const S& x_hi, const Th& th, const S& enough = 1e300) const {
    S top = 0.0;
    for (int k = 0; k < K; ++k) {
      const S a = th[BUMP0 + 3 * k], b = th[BUMP0 + 3 * k + 1], w = th[BUMP0 + 3 * k + 2];
      const S d = select(b < x_lo, x_lo - b, select(b > x_hi, b - x_hi, S(0.0)));
      const auto counts = a > 0.0 && in_reach(d, S(0.0), w);
      if (!any_lane(counts)) continue;
      top = select(counts, top + a * exp_neg_upper_bound(half_square_ratio(d, w)), top);
      if (all_lanes(top >= enough)) break;
    }
    return top;
  }

  // Guard bound: x(t) is monotone on a step (vx' = -c vx), and with g >= 0, c >= 0 the height y(t)
  // has no interior minimum on a step, so y above a bound of the terrain over the step's x-range
  // at both ends rules the crossing out (the margin covers RK4's error on the probes). The bounds,
  // cheapest first: the ceiling (independent of K); the sum of bump_bound over the x-range.
  template <class S, class Th>
  SALTATION_HD auto guard_excluded(int, int, const S* q0, const S* q1, const Th& th,
                                   const GuardSummary<S>& s) const {
    const auto valid = S(gravity) >= 0.0 && th[C] >= 0.0;
    const S y_min = select(q0[1] < q1[1], q0[1], q1[1]) - 1e-9 * (1.0 + abs(q0[1]));
    const auto below_ceiling = s.ceiling < y_min;
    if (all_lanes(below_ceiling || !valid)) return valid && below_ceiling;
    const S x_lo = select(q0[0] < q1[0], q0[0], q1[0]), x_hi = select(q0[0] < q1[0], q1[0], q0[0]);
    return valid && (below_ceiling || bump_bound(x_lo, x_hi, th, y_min) < y_min);
  }
  template <class S, class Th>
  SALTATION_HD auto guard_excluded(int j, int mode, const S* q0, const S* q1, const Th& th) const {
    return guard_excluded(j, mode, q0, q1, th, guard_summary(th));
  }

  // Departure bound, for the step that starts on the terrain right after an impact, which the
  // guard bound cannot rule out (y starts at the terrain height): probed, it was about one in three
  // of the steps the SIMD lanes hand back to a lane alone (bench/README.md, "The step after an
  // impact"). The probes lie on the RK4 sub-steps from q0, for this affine flow the degree-4
  // Taylor polynomials x(s) = x0 + vx0 p1(s), y(s) = y0 + vy0 p1(s) - g p2(s),
  // p1 = s - c s^2/2 + c^2 s^3/6 - c^3 s^4/24, p2' = p1; with c h <= 1, 0 < p1' <= 1 and
  // -c <= p1'' <= 0 on [0, h]. So the guard G(s) = y(s) - h(x(s)) has G'(0) = vy0 - h'(x0) vx0 and
  // G'' >= -A, A = c |vy0| + |g| + H2 vx0^2 + c H1 |vx0|, where H1 and H2 bound |h'| and h'' (the
  // summary's, summed over the bumps: |h'| <= e^(-1/2) |a| / w, h'' <= 2 e^(-3/2) a / w^2 for
  // a > 0 and |a| / w^2 for a < 0; bounds over the step's x-range alone, a loop over the bumps per
  // impact, saved less time than these). Then G(s) >= G(0) + s (G'(0) - A h / 2) on [0, h]: above
  // the margin at the first probe (s_first) and rising, it is above it at every probe. The margin,
  // as the guard bound's, covers the rounding of the probes' guard values (the table exp, the
  // bumps culled beyond 1e-17 of their height).
  // g0 and g_q0, the guard and its gradient at the event's pre-event state, are those at q0: the
  // impact keeps the position, which is all the guard depends on (no terrain evaluation here).
  template <class Th>
  SALTATION_HD bool departure_excluded(int, int, const double* q0, double g0, const double* g_q0, double s_first,
                                       double step, const Th& th, const GuardSummary<double>& s) const {
    const double c = th[C];
    if (!(c >= 0.0 && c * step <= 1.0)) return false;
    const double dh0 = -g_q0[0];
    const double vx = q0[2], vy = q0[3];
    const double A = c * ::fabs(vy) + ::fabs(gravity) + s.curvature * vx * vx + c * s.slope * ::fabs(vx);
    const double rate = vy - dh0 * vx - 0.5 * A * step;
    return rate > 0.0 && g0 + s_first * rate > 1e-9 * (1.0 + ::fabs(q0[1]));
  }

  // Analytic event partials (the dual-number pass over 3K bump parameters costs O(K^2) per event,
  // and the one over q for R_q a terrain pass on Dual<4>). The context keeps the bumps' exps for
  // the partials where K <= 32: with K = 192 the array made the device's sensitivity kernel spill
  // (255 registers, a 23.7 KB stack frame, scripts/ptxas-check), so there they are computed again.
  static constexpr bool kKeepsBumpExps = K > 0 && K <= 32;
  struct EventContext {
    double x = 0.0, g = 0.0, dh = 0.0, d2h = 0.0;  // the event's position, guard, terrain slope and curvature
    double dvx[5] = {}, dvy[5] = {};  // d(vx+, vy+)/d(dh, e, mu, vx-, vy-)
    double bump_exp[kKeepsBumpExps ? K : 1] = {};  // each bump's exp(-u^2 / 2) at x, 0 past reach (terrain's)
  };

  template <class Th>
  SALTATION_HD EventContext event_context(int, const double* q, int, const Th& th) const {
    EventContext ctx;
    ctx.x = q[0];
    double h;
    terrain(q[0], th, h, ctx.dh, &ctx.d2h, kKeepsBumpExps ? ctx.bump_exp : nullptr);
    ctx.g = q[1] - h;
    impact_velocity_partials(ctx.dh, q[2], q[3], th[E], th[MU], ctx.dvx, ctx.dvy);
    return ctx;
  }
  // guard_gradient's, from the context (the same terrain sums: the same bits).
  SALTATION_HD double event_guard_gradient(const EventContext& ctx, double* g_q) const {
    gradient_at_slope(ctx.dh, g_q);
    return ctx.g;
  }
  // d(vx+, vy+)/d(dh, e, mu, vx-, vy-) of impact_velocity, by hand (on Dual<5> it was most of an
  // event's partials): with r = 1 / sqrt(1 + dh^2), dn/d dh = -r^2 t and dt/d dh = r^2 n, so
  // d vn/d dh = -r^2 vt and d vt/d dh = r^2 vn.
  SALTATION_HD static void impact_velocity_partials(double dh, double vx, double vy, double e, double mu, double* dvx,
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
  // R_q = d q+ / d q- (row-major N x N): the position is kept, and v+ moves with x through the
  // slope (dh/dx = h'') and with v- directly.
  SALTATION_HD void event_state_jacobian(const EventContext& ctx, double* R_q) const {
    for (int e = 0; e < N * N; ++e) R_q[e] = (e % (N + 1) == 0) ? 1.0 : 0.0;
    R_q[2 * N + 0] = ctx.dvx[0] * ctx.d2h;
    R_q[2 * N + 2] = ctx.dvx[3];
    R_q[2 * N + 3] = ctx.dvx[4];
    R_q[3 * N + 0] = ctx.dvy[0] * ctx.d2h;
    R_q[3 * N + 2] = ctx.dvy[3];
    R_q[3 * N + 3] = ctx.dvy[4];
  }
  // A bump's three parameters share its exp (the context's, from the terrain pass that found the
  // slope, where it keeps them) and most products, so the bumps are taken whole (the parameters
  // one at a time recomputed them for each).
  template <class Th>
  SALTATION_HD void event_param_partials(const EventContext& ctx, int p0, int count, const Th& th, double* g_theta,
                                         double* R_theta, int stride) const {
    // Column c from d h / d theta and d h' / d theta (the terrain's) and theta's direct part of d v+.
    const auto column = [&](int c, double dh_dp, double ddh_dp, double dv_direct_x, double dv_direct_y) {
      g_theta[c] = -dh_dp;
      R_theta[0 * stride + c] = 0.0;
      R_theta[1 * stride + c] = 0.0;
      R_theta[2 * stride + c] = ctx.dvx[0] * ddh_dp + dv_direct_x;
      R_theta[3 * stride + c] = ctx.dvy[0] * ddh_dp + dv_direct_y;
    };
    for (int c = 0; c < count && p0 + c < BUMP0; ++c) {
      const int p = p0 + c;
      const bool direct = p == E || p == MU;
      column(c, 0.0, 0.0, direct ? ctx.dvx[p == E ? 1 : 2] : 0.0, direct ? ctx.dvy[p == E ? 1 : 2] : 0.0);
    }
    const int first = p0 < BUMP0 ? BUMP0 : p0, last = p0 + count - 1;
    for (int k = (first - BUMP0) / 3; k < K && BUMP0 + 3 * k <= last; ++k) {
      const double a = th[BUMP0 + 3 * k], b = th[BUMP0 + 3 * k + 1], w = th[BUMP0 + 3 * k + 2];
      const double u = (ctx.x - b) / w;
      const double ex = kKeepsBumpExps ? ctx.bump_exp[k] : in_reach(ctx.x, b, w) ? exp_by_table(-0.5 * u * u) : 0.0;
      const double aex = a * ex, aexu = aex * u;
      // d h and d h' by amplitude, centre and width
      const double dh[3] = {ex, aexu / w, aexu * u / w};
      const double ddh[3] = {-ex * u / w, aex * (1.0 - u * u) / (w * w), aexu * (2.0 - u * u) / (w * w)};
      for (int which = 0; which < 3; ++which) {
        const int c = BUMP0 + 3 * k + which - p0;
        if (c >= 0 && c < count) column(c, dh[which], ddh[which], 0.0, 0.0);
      }
    }
  }

  template <class Th>
  SALTATION_HD int invalid_param(const Th& th) const {
    for (int p = 0; p < P; ++p)
      if (!is_finite(th[p])) return p;
    if (th[C] < 0.0) return C;
    if (!(th[E] >= 0.0 && th[E] <= 1.0)) return E;
    if (!(th[MU] >= 0.0 && th[MU] <= 1.0)) return MU;
    for (int k = 0; k < K; ++k)
      if (!(th[BUMP0 + 3 * k + 2] > 0.0)) return BUMP0 + 3 * k + 2;
    return -1;
  }
  // The registry picks the compiled-in K from the config key "bumps".
  static constexpr const char* variant_key = "bumps";
  static constexpr int variant = K;
  static TerrainBall from_config(const ModelConfig& config) {
    TerrainBall m;
    m.x0 = config.number("x0", m.x0, "initial x");
    m.y0 = config.number("y0", m.y0, "initial y (above the terrain)");
    m.gravity = config.number("g", m.gravity, "gravitational acceleration");
    return m;
  }
  static std::string state_name(int k) {
    static const char* names[] = {"x", "y", "vx", "vy"};
    return names[k];
  }
  static std::string param_name(int p) {
    static const char* head[] = {"vx0", "vy0", "c", "e", "mu"};
    if (p < BUMP0) return head[p];
    static const char* bump[] = {"a_", "b_", "w_"};
    return bump[(p - BUMP0) % 3] + std::to_string((p - BUMP0) / 3 + 1);
  }
  static std::string param_domain(int p) {
    if (p == C) return "finite and >= 0";
    if (p == E || p == MU) return "in [0, 1]";
    if (p >= BUMP0 && (p - BUMP0) % 3 == 2) return "finite and > 0 (bump width)";
    return "finite";
  }
  void validate_config() const {
    if (!std::isfinite(x0)) throw InvalidInput("config.x0", -1, "must be finite");
    if (!std::isfinite(y0)) throw InvalidInput("config.y0", -1, "must be finite");
    if (!std::isfinite(gravity)) throw InvalidInput("config.g", -1, "must be finite");
  }
};

// The bump counts the library compiles for both backends (src/builtin_models.hpp lists
// TerrainBall<K> for each); any other K runs with the CPU driver or a user's own .cu file.
constexpr bool terrain_ball_builtin(int K) { return K == 0 || K == 3 || K == 24 || K == 192; }
template <int K>
struct has_cuda_driver<TerrainBall<K>> : std::bool_constant<terrain_ball_builtin(K)> {};
template <int K>
struct has_cpu_lanes<TerrainBall<K>> : std::bool_constant<terrain_ball_builtin(K)> {};

}  // namespace saltation
