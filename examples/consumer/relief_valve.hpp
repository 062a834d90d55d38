#pragma once
// A relief valve on a vessel: the consumer project's own model. q = (p), the pressure; modes
// Closed (0) and Open (1); C p' = Q - [Open] G p (inflow Q, capacity C, valve conductance G).
// The valve opens when p rises through p_open and closes when p falls through p_close; a switch
// leaves p unchanged. theta = [p0, Q, C, G, p_open, p_close].
#include <string>

#include "saltation/model.hpp"
#include "saltation/numeric.hpp"

namespace vessel {

struct ReliefValve {
  static constexpr int N = 1, P = 6, M = 2, F = 3;
  static constexpr const char* name = "relief_valve";
  static constexpr bool affine_flow = true;  // linear in p in both modes
  enum Param { P0 = 0, Inflow = 1, Capacity = 2, Conductance = 3, POpen = 4, PClose = 5 };
  enum Mode { Closed = 0, Open = 1 };

  int initial_mode = Closed;

  SALTATION_HD static int flow_param(int f) { return Inflow + f; }  // Q, C, G

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[P0];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int mode, const Th& th, S* f) const {
    f[0] = th[Inflow] / th[Capacity];
    if (mode == Open) f[0] = f[0] - th[Conductance] * q[0] / th[Capacity];
  }
  template <class S, class Th>
  SALTATION_HD S guard(int j, const S* q, int, const Th& th) const {
    return j == 0 ? q[0] - th[POpen] : q[0] - th[PClose];
  }
  // Guard 0 (open) is watched while closed, rising; guard 1 (close) while open, falling.
  SALTATION_HD int direction(int j, int mode) const {
    if (j == 0) return mode == Closed ? +1 : 0;
    return mode == Open ? -1 : 0;
  }
  template <class S, class Th>
  SALTATION_HD int reset(int j, const S* q, int, const Th&, S* q_plus) const {
    q_plus[0] = q[0];
    return j == 0 ? Open : Closed;
  }
  template <class Th>
  SALTATION_HD int invalid_param(const Th& th) const {
    for (int p = 0; p < P; ++p)
      if (!saltation::is_finite(th[p])) return p;
    if (!(th[Capacity] > 0.0)) return Capacity;
    if (!(th[Conductance] >= 0.0)) return Conductance;
    if (!(th[PClose] < th[POpen])) return PClose;
    return -1;
  }
  static std::string state_name(int) { return "p"; }
  static std::string param_name(int p) {
    static const char* names[] = {"p0", "Q", "C", "G", "p_open", "p_close"};
    return names[p];
  }
  static std::string param_domain(int p) {
    return p == Capacity      ? "finite and > 0"
           : p == Conductance ? "finite and >= 0"
           : p == PClose      ? "finite and < p_open"
                              : "finite";
  }
  void validate_config() const {}  // no configuration constants besides the initial mode
};

}  // namespace vessel

// Where the build compiles cuda_driver.cu (CMakeLists.txt), saltation::solve may run the model on CUDA.
#if VESSEL_CUDA_DRIVER
namespace saltation {
template <>
struct has_cuda_driver<vessel::ReliefValve> : std::true_type {};
}  // namespace saltation
#endif
