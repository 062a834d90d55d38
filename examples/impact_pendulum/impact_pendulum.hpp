#pragma once
// A pendulum striking a wall: the worked example of a model the library does not build in
// (docs/models.md walks through it). q = (phi, omega), the angle from the downward vertical
// and the angular velocity:
//   phi' = omega,   omega' = -(g / L) sin(phi) - c omega
// guard 0: wall - phi, falling (the bob reaches the wall swinging towards it);
// reset: phi unchanged, omega+ = -e omega (restitution e).
// theta = [phi0, omega0, L, c, e, wall]; the configuration constant is gravity.
#include <string>
#include <type_traits>

#include "saltation/dual.hpp"
#include "saltation/errors.hpp"
#include "saltation/model.hpp"

namespace pendulum {

// One sin for both scalars: saltation::sin(double) for S = double (a device function under
// nvcc); for S = Dual<D> argument-dependent lookup finds the dual overload anyway.
using saltation::sin;

struct ImpactPendulum {
  static constexpr int N = 2, P = 6, M = 1, F = 2;
  static constexpr const char* name = "impact_pendulum";
  // The guard is linear in phi: free flight skips the probes by the curvature bound.
  static constexpr bool polynomial_guards = true;
  enum Param { Phi0 = 0, Omega0 = 1, Length = 2, C = 3, E = 4, Wall = 5 };
  static constexpr double pi = 3.141592653589793;

  double gravity = 9.81;
  int initial_mode = 0;  // one mode: the wall is always there

  // The flow reads L and c only (F = 2): between impacts sensitivities carry 2 parameter columns, not 6.
  SALTATION_HD static int flow_param(int f) { return f == 0 ? Length : C; }

  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[Phi0];
    q[1] = th[Omega0];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th& th, S* f) const {
    f[0] = q[1];
    f[1] = -gravity / th[Length] * sin(q[0]) - th[C] * q[1];
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th& th) const {
    return th[Wall] - q[0];
  }
  SALTATION_HD int direction(int, int) const { return -1; }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* q_plus) const {
    q_plus[0] = q[0];
    q_plus[1] = -th[E] * q[1];
    return mode;
  }

  // Checked on the host for every row before any work (and per row on the device with
  // mark_invalid_rows); an initial angle past the wall is caught by the solver itself.
  template <class Th>
  SALTATION_HD int invalid_param(const Th& th) const {
    for (int p = 0; p < P; ++p)
      if (!saltation::is_finite(th[p])) return p;
    if (!(th[Length] > 0.0)) return Length;
    if (!(th[C] >= 0.0)) return C;
    if (!(th[E] >= 0.0 && th[E] <= 1.0)) return E;
    if (!(th[Wall] > -pi && th[Wall] < pi)) return Wall;
    return -1;
  }
  static std::string state_name(int k) { return k == 0 ? "phi" : "omega"; }
  static std::string param_name(int p) {
    static const char* names[] = {"phi0", "omega0", "L", "c", "e", "wall"};
    return names[p];
  }
  static std::string param_domain(int p) {
    switch (p) {
      case Length: return "finite and > 0";
      case C: return "finite and >= 0";
      case E: return "in [0, 1]";
      case Wall: return "in (-pi, pi)";
      default: return "finite";
    }
  }
  void validate_config() const {
    if (!(gravity > 0.0 && saltation::is_finite(gravity)))
      throw saltation::InvalidInput("config.gravity", -1, "must be finite and > 0");
  }
};

}  // namespace pendulum

// The CUDA driver exists where the build compiles cuda_driver.cu: with the CUDA backend.
#if SALTATION_HAVE_CUDA
namespace saltation {
template <>
struct has_cuda_driver<pendulum::ImpactPendulum> : std::true_type {};
}  // namespace saltation
#endif
