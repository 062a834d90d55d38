#pragma once
// Ball on flat ground (seed 003): q = (h, v), theta = [h0, v0, e], gravity in the config.
#include <cmath>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/model.hpp"
#include "saltation/model_config.hpp"

namespace saltation {

struct BouncingBall {
  static constexpr int N = 2, P = 3, M = 1, F = 0;
  static constexpr const char* name = "bouncing_ball";
  static constexpr bool affine_flow = true;
  static constexpr bool polynomial_guards = true;  // the height
  enum Param { H0 = 0, V0 = 1, E = 2 };

  double gravity = 9.81;
  int initial_mode = 0;

  SALTATION_HD static int flow_param(int) { return -1; }

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[H0];
    q[1] = th[V0];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th&, S* f) const {
    f[0] = q[1];
    f[1] = S(-gravity);
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th&) const {
    return q[0];
  }
  SALTATION_HD int direction(int, int) const { return -1; }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    q_plus[0] = q[0];
    q_plus[1] = -th[E] * q[1];
    return mode;
  }
  template <class Th>
  SALTATION_HD int invalid_param(const Th& th) const {
    for (int p = 0; p < P; ++p)
      if (!is_finite(th[p])) return p;
    if (th[H0] < 0.0) return H0;
    if (!(th[E] >= 0.0 && th[E] <= 1.0)) return E;
    return -1;
  }
  static BouncingBall from_config(const ModelConfig& config) {
    BouncingBall m;
    m.gravity = config.number("g", m.gravity, "gravitational acceleration");
    return m;
  }
  static std::string state_name(int k) { return k == 0 ? "h" : "v"; }
  static std::string param_name(int p) {
    static const char* names[] = {"h0", "v0", "e"};
    return names[p];
  }
  static std::string param_domain(int p) {
    return p == H0 ? "finite and >= 0 (the ball starts on or above the ground)" : p == E ? "in [0, 1]" : "finite";
  }
  void validate_config() const {
    if (!std::isfinite(gravity)) throw InvalidInput("config.g", -1, "must be finite");
  }
};

template <>
struct has_cuda_driver<BouncingBall> : std::true_type {};
template <>
struct has_cpu_lanes<BouncingBall> : std::true_type {};

}  // namespace saltation
