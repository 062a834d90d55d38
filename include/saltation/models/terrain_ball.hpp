#pragma once
// Point mass over Gaussian-bump terrain (seed 001, "contact-sim"): q = (x, y, vx, vy),
// x' = vx, y' = vy, vx' = -c vx, vy' = -g - c vy; terrain h(x) = sum_k a_k exp(-(x-b_k)^2/(2 w_k^2));
// guard y - h(x) (falling); at impact v+ = -e (v.n) n + (1 - mu) (v.t) t in the local frame.
// theta = [vx0, vy0, c, e, mu, a_1, b_1, w_1, ..., a_K, b_K, w_K]; config x0, y0, g.
#include <cmath>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/model.hpp"

namespace saltation {

template <int K>
struct TerrainBall {
  static_assert(K >= 0, "bump count K must be >= 0");
  static constexpr int N = 4, P = 5 + 3 * K, M = 1, F = 1;
  static constexpr int bumps = K;
  static constexpr const char* name = "terrain_ball";
  enum Param { VX0 = 0, VY0 = 1, C = 2, E = 3, MU = 4, BUMP0 = 5 };

  double x0 = 0.0, y0 = 1.0, gravity = 9.81;
  int initial_mode = 0;

  SALTATION_HD static int flow_param(int) { return C; }

  // Terrain height and slope at x.
  template <class S, class Th>
  SALTATION_HD void terrain(const S& x, const Th& th, S& h, S& dh) const {
    h = S(0.0);
    dh = S(0.0);
    for (int k = 0; k < K; ++k) {
      const S a = th[BUMP0 + 3 * k], b = th[BUMP0 + 3 * k + 1], w = th[BUMP0 + 3 * k + 2];
      const S u = (x - b) / w;
      const S bump = a * exp(-0.5 * u * u);
      h = h + bump;
      dh = dh - bump * u / w;
    }
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
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    S h, dh;
    terrain(q[0], th, h, dh);
    const S inv_norm = 1.0 / sqrt(1.0 + dh * dh);
    const S nx = -dh * inv_norm, ny = inv_norm;  // unit normal
    const S tx = inv_norm, ty = dh * inv_norm;   // unit tangent
    const S vn = q[2] * nx + q[3] * ny, vt = q[2] * tx + q[3] * ty;
    const S an = -th[E] * vn, at = (1.0 - th[MU]) * vt;
    q_plus[0] = q[0];
    q_plus[1] = q[1];
    q_plus[2] = an * nx + at * tx;
    q_plus[3] = an * ny + at * ty;
    return mode;
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

// The compiled-in bump counts (src/builtin_list.hpp).
template <>
struct has_cuda_driver<TerrainBall<0>> : std::true_type {};
template <>
struct has_cuda_driver<TerrainBall<3>> : std::true_type {};
template <>
struct has_cuda_driver<TerrainBall<24>> : std::true_type {};
template <>
struct has_cuda_driver<TerrainBall<192>> : std::true_type {};

}  // namespace saltation
