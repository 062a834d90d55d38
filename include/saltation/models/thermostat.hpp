#pragma once
// Thermostat with hysteresis (seed 003): q = (T), modes ON (0) and OFF (1),
// T' = -(T - T_env)/tau + Q/tau [ON]; guard 0 = T - T_high (rising, ON), guard 1 = T - T_low
// (falling, OFF); a switch flips the mode and leaves T unchanged.
// theta = [T0, T_env, tau, Q, T_low, T_high].
#include <cmath>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/model.hpp"
#include "saltation/model_config.hpp"

namespace saltation {

struct Thermostat {
  static constexpr int N = 1, P = 6, M = 2, F = 3;
  static constexpr const char* name = "thermostat";
  static constexpr bool affine_flow = true;
  static constexpr bool jump_at_start = true;  // e.g. ON with T0 >= T_high switches OFF at t = 0
  enum Param { T0 = 0, T_ENV = 1, TAU = 2, Q = 3, T_LOW = 4, T_HIGH = 5 };
  enum Mode { ON = 0, OFF = 1 };

  int initial_mode = ON;

  SALTATION_HD static int flow_param(int f) { return T_ENV + f; }  // T_env, tau, Q

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[T0];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int mode, const Th& th, S* f) const {
    const S tau = th[TAU];
    f[0] = -(q[0] - th[T_ENV]) / tau;
    if (mode == ON) f[0] = f[0] + th[Q] / tau;
  }
  template <class S, class Th>
  SALTATION_HD S guard(int j, const S* q, int, const Th& th) const {
    return j == 0 ? q[0] - th[T_HIGH] : q[0] - th[T_LOW];
  }
  SALTATION_HD int direction(int j, int mode) const {
    if (j == 0) return mode == ON ? +1 : 0;
    return mode == OFF ? -1 : 0;
  }
  template <class S, class Th>
  SALTATION_HD int reset(int j, const S* q, int, const Th&, S* q_plus) const {
    q_plus[0] = q[0];
    return j == 0 ? OFF : ON;
  }
  template <class Th>
  SALTATION_HD int invalid_param(const Th& th) const {
    for (int p = 0; p < P; ++p)
      if (!is_finite(th[p])) return p;
    if (!(th[TAU] > 0.0)) return TAU;
    if (!(th[T_LOW] < th[T_HIGH])) return T_HIGH;
    return -1;
  }
  static Thermostat from_config(const ModelConfig& config) {
    Thermostat m;
    m.initial_mode = config.choice("initial_mode", {"on", "off"}, "on", "the heater's mode at t = 0") == "on" ? ON : OFF;
    return m;
  }
  static std::string state_name(int) { return "T"; }
  static std::string param_name(int p) {
    static const char* names[] = {"T0", "T_env", "tau", "Q", "T_low", "T_high"};
    return names[p];
  }
  static std::string param_domain(int p) {
    return p == TAU ? "finite and > 0" : p == T_HIGH ? "finite and > T_low" : "finite";
  }
  void validate_config() const {
    if (initial_mode != ON && initial_mode != OFF)
      throw InvalidInput("config.initial_mode", -1, "must be \"on\" or \"off\"");
  }
};

template <>
struct has_cuda_driver<Thermostat> : std::true_type {};

}  // namespace saltation
