#pragma once
// Thermostat with hysteresis (seed 003): q = (T), modes On (0) and Off (1),
// T' = -(T - T_env)/tau + Q/tau [ON]; guard 0 = T - T_high (rising, On), guard 1 = T - T_low
// (falling, Off); a switch flips the mode and leaves T unchanged.
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
  static constexpr bool polynomial_guards = true;  // the temperature against its thresholds
  static constexpr bool jump_at_start = true;      // e.g. On with T0 >= T_high switches Off at t = 0
  enum Param { T0 = 0, TEnv = 1, Tau = 2, Q = 3, TLow = 4, THigh = 5 };
  enum Mode { On = 0, Off = 1 };

  int initial_mode = On;

  SALTATION_HD static int flow_param(int f) { return TEnv + f; }  // T_env, tau, Q

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[T0];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int mode, const Th& th, S* f) const {
    const S tau = th[Tau];
    f[0] = -(q[0] - th[TEnv]) / tau;
    if (mode == On) f[0] = f[0] + th[Q] / tau;
  }
  template <class S, class Th>
  SALTATION_HD S guard(int j, const S* q, int, const Th& th) const {
    return j == 0 ? q[0] - th[THigh] : q[0] - th[TLow];
  }
  SALTATION_HD int direction(int j, int mode) const {
    if (j == 0) return mode == On ? +1 : 0;
    return mode == Off ? -1 : 0;
  }
  template <class S, class Th>
  SALTATION_HD int reset(int j, const S* q, int, const Th&, S* q_plus) const {
    q_plus[0] = q[0];
    return j == 0 ? Off : On;
  }
  template <class Th>
  SALTATION_HD int invalid_param(const Th& th) const {
    for (int p = 0; p < P; ++p)
      if (!is_finite(th[p])) return p;
    if (!(th[Tau] > 0.0)) return Tau;
    if (!(th[TLow] < th[THigh])) return THigh;
    return -1;
  }
  static Thermostat from_config(const ModelConfig& config) {
    Thermostat m;
    m.initial_mode =
        config.choice("initial_mode", {"on", "off"}, "on", "the heater's mode at t = 0") == "on" ? On : Off;
    return m;
  }
  static std::string state_name(int) { return "T"; }
  static std::string param_name(int p) {
    static const char* names[] = {"T0", "T_env", "tau", "Q", "T_low", "T_high"};
    return names[p];
  }
  static std::string param_domain(int p) {
    return p == Tau ? "finite and > 0" : p == THigh ? "finite and > T_low" : "finite";
  }
  void validate_config() const {
    if (initial_mode != On && initial_mode != Off)
      throw InvalidInput("config.initial_mode", -1, "must be \"on\" or \"off\"");
  }
};

template <>
struct has_cuda_driver<Thermostat> : std::true_type {};
template <>
struct has_cpu_lanes<Thermostat> : std::true_type {};

}  // namespace saltation
