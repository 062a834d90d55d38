#pragma once
// Point mass over Gaussian-bump terrain (the contact-sim method): q = (x, y, vx, vy),
// x' = vx, y' = vy, vx' = -c vx, vy' = -g - c vy; terrain h(x) = sum_k a_k exp(-(x-b_k)^2/(2 w_k^2));
// guard y - h(x) (falling); at impact v+ = -e (v.n) n + (1 - mu) (v.t) t in the local frame.
// theta = [vx0, vy0, c, e, mu, a_1, b_1, w_1, ..., a_K, b_K, w_K]; config x0, y0, g.
// Its fast paths (optional members, docs/models.md) live in terrain_ball/: the guard and
// departure bounds (bounds.hpp) and the analytic event partials (partials.hpp).
#include <cmath>
#include <string>
#include <type_traits>

#include "saltation/errors.hpp"
#include "saltation/model.hpp"
#include "saltation/model_config.hpp"
#include "saltation/models/terrain_ball/bounds.hpp"
#include "saltation/models/terrain_ball/bumps.hpp"
#include "saltation/models/terrain_ball/partials.hpp"

namespace saltation {

template <int K>
struct TerrainBall {
  static_assert(K >= 0, "bump count K must be >= 0");
  static constexpr int N = 4, P = 5 + 3 * K, M = 1, F = 1;
  static constexpr int bumps = K;
  static constexpr const char* name = "terrain_ball";
  static constexpr bool affine_flow = true;
  enum Param { Vx0 = 0, Vy0 = 1, C = 2, E = 3, Mu = 4, Bump0 = 5 };

  double x0 = 0.0, y0 = 1.0, gravity = 9.81;
  int initial_mode = 0;

  SALTATION_HD static int flow_param(int) { return C; }

  // Terrain height and slope at x (terrain_ball/bumps.hpp), its curvature where `d2h` is given and
  // each bump's exp(-u^2 / 2) where `bump_exp` is given.
  template <class S, class Th>
  SALTATION_HD void terrain(const S& x, const Th& th, S& h, S& dh, S* d2h = nullptr, double* bump_exp = nullptr) const {
    terrain_ball::bump_terrain<K, Bump0>(x, th, h, dh, d2h, bump_exp);
  }

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = S(x0);
    q[1] = S(y0);
    q[2] = th[Vx0];
    q[3] = th[Vy0];
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
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    S h, dh;
    terrain(q[0], th, h, dh);
    reset_at_slope(dh, q, th, q_plus);
    return mode;
  }
  // The impact at q on terrain of slope dh: position kept, v+ = -e (v.n) n + (1 - mu) (v.t) t.
  template <class S, class Th>
  SALTATION_HD static void reset_at_slope(const S& dh, const S* q, const Th& th, S* q_plus) {
    q_plus[0] = q[0];
    q_plus[1] = q[1];
    const terrain_ball::ImpactFrame<S> f = terrain_ball::impact_frame<S>(dh, q[2], q[3], th[E], th[Mu]);
    q_plus[2] = f.an * f.nx + f.at * f.tx;
    q_plus[3] = f.an * f.ny + f.at * f.ty;
  }

  // ---- Optional members: the fast paths (docs/models.md)

  // The guard bound (terrain_ball/bounds.hpp), with its summary of theta formed once per trajectory.
  template <class Th>
  SALTATION_HD auto guard_summary(const Th& th) const {
    return terrain_ball::guard_summary<K, Bump0>(th);
  }
  template <class S, class Th>
  SALTATION_HD auto guard_excluded(int, int, const S* q0, const S* q1, const Th& th,
                                   const terrain_ball::GuardSummary<S>& s) const {
    return terrain_ball::guard_excluded<K, Bump0>(gravity, S(th[C]), q0, q1, th, s);
  }
  template <class S, class Th>
  SALTATION_HD auto guard_excluded(int j, int mode, const S* q0, const S* q1, const Th& th) const {
    return guard_excluded(j, mode, q0, q1, th, guard_summary(th));
  }
  // The bound for a probed path whose states may lie up to slack[i] from the flow's (dopri5).
  template <class Th>
  SALTATION_HD bool guard_excluded(int, int, const double* q0, const double* q1, const Th& th,
                                   const terrain_ball::GuardSummary<double>& s, const double* slack) const {
    return terrain_ball::guard_excluded<K, Bump0>(gravity, double(th[C]), q0, q1, th, s, slack[0], slack[1]);
  }
  // The departure bound, for the step right after an impact.
  template <class Th>
  SALTATION_HD bool departure_excluded(int, int, const double* q0, double g0, const double* g_q0, double s_first,
                                       double step, const Th& th, const terrain_ball::GuardSummary<double>& s) const {
    return terrain_ball::departure_excluded(gravity, th[C], q0, g0, g_q0, s_first, step, s);
  }

  // The guard's gradient from one terrain pass in doubles, and the reset from the gradient the
  // event has already formed (h'(x) = -g_q[0]).
  template <class Th>
  SALTATION_HD double guard_gradient(int, const double* q, int, const Th& th, double* g_q) const {
    double h, dh;
    terrain(q[0], th, h, dh);
    terrain_ball::gradient_at_slope(dh, g_q);
    return q[1] - h;
  }
  template <class Th>
  SALTATION_HD int reset_from_gradient(int, const double* q, int mode, const Th& th, const double* g_q,
                                       double* q_plus) const {
    reset_at_slope(-g_q[0], q, th, q_plus);
    return mode;
  }

  // The analytic event partials (terrain_ball/partials.hpp), from a context formed once per event.
  using EventContext = terrain_ball::EventContext<K>;
  template <class Th>
  SALTATION_HD EventContext event_context(int, const double* q, int, const Th& th) const {
    EventContext ctx;
    ctx.x = q[0];
    double h;
    terrain(q[0], th, h, ctx.dh, &ctx.d2h, EventContext::kKeepsBumpExps ? ctx.bump_exp : nullptr);
    ctx.g = q[1] - h;
    terrain_ball::impact_velocity_partials(ctx.dh, q[2], q[3], th[E], th[Mu], ctx.dvx, ctx.dvy);
    return ctx;
  }
  SALTATION_HD double event_guard_gradient(const EventContext& ctx, double* g_q) const {
    terrain_ball::gradient_at_slope(ctx.dh, g_q);
    return ctx.g;
  }
  SALTATION_HD void event_state_jacobian(const EventContext& ctx, double* R_q) const {
    terrain_ball::event_state_jacobian(ctx, R_q);
  }
  template <class Th>
  SALTATION_HD void event_param_partials(const EventContext& ctx, int p0, int count, const Th& th, double* g_theta,
                                         double* R_theta, int stride) const {
    terrain_ball::event_param_partials<K, Bump0, E, Mu>(ctx, p0, count, th, g_theta, R_theta, stride);
  }

  template <class Th>
  SALTATION_HD int invalid_param(const Th& th) const {
    for (int p = 0; p < P; ++p)
      if (!is_finite(th[p])) return p;
    if (th[C] < 0.0) return C;
    if (!(th[E] >= 0.0 && th[E] <= 1.0)) return E;
    if (!(th[Mu] >= 0.0 && th[Mu] <= 1.0)) return Mu;
    for (int k = 0; k < K; ++k)
      if (!(th[Bump0 + 3 * k + 2] > 0.0)) return Bump0 + 3 * k + 2;
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
    if (p < Bump0) return head[p];
    static const char* bump[] = {"a_", "b_", "w_"};
    return bump[(p - Bump0) % 3] + std::to_string((p - Bump0) / 3 + 1);
  }
  static std::string param_domain(int p) {
    if (p == C) return "finite and >= 0";
    if (p == E || p == Mu) return "in [0, 1]";
    if (p >= Bump0 && (p - Bump0) % 3 == 2) return "finite and > 0 (bump width)";
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
