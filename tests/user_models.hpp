#pragma once
// Models the library does not build in (two test models, and TerrainBall<1>), used the way a
// user would use their own: on the CPU from the headers alone and, where the CUDA backend is
// compiled, on the device through the driver that tests/user_models.cu instantiates for them.
#include <cmath>
#include <string>
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/model.hpp"
#include "saltation/models/terrain_ball.hpp"

namespace saltation::testing {

// What the test models share: one mode, no flow parameters, falling guards, parameters named p0,
// p1, ... that may take any value, no configuration.
struct TestModel {
  static constexpr int F = 0;
  int initial_mode = 0;
  SALTATION_HD static int flow_param(int) { return -1; }
  SALTATION_HD int direction(int, int) const { return -1; }
  template <class Th>
  SALTATION_HD int invalid_param(const Th&) const {
    return -1;
  }
  static std::string param_name(int p) { return "p" + std::to_string(p); }
  static std::string param_domain(int) { return "finite"; }
  void validate_config() const {}
};

// A particle falling through two thresholds, both active, with a reflecting reset on each.
struct TwoThresholds : TestModel {
  static constexpr int N = 2, P = 3, M = 2;
  static constexpr const char* name = "two_thresholds";
  SALTATION_HD static int flow_param(int) { return -1; }
  template <class S, class Th>
  SALTATION_HD void initial_state(const Th&, S* q) const {
    q[0] = S(1.0);
    q[1] = S(-1.0);
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th&, S* f) const {
    f[0] = q[1];
    f[1] = S(0.0);
  }
  // Guard j at height theta[j]; theta[2] is the restitution.
  template <class S, class Th>
  SALTATION_HD S guard(int j, const S* q, int, const Th& th) const {
    return q[0] - th[j];
  }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* qp) const {
    qp[0] = q[0];
    qp[1] = -th[2] * q[1];
    return mode;
  }
};

// A pendulum (phi'' = -sin phi) over a floor at phi = theta[2], reflected there with restitution
// theta[3]; theta[0..1] is the initial (phi, omega). Nonlinear, with no guard bound: every step is
// probed.
struct PendulumFloor : TestModel {
  static constexpr int N = 2, P = 4, M = 1;
  static constexpr const char* name = "pendulum_floor";
  static constexpr bool polynomial_guards = true;
  template <class S, class Th>
  SALTATION_HD void initial_state(const Th& th, S* q) const {
    q[0] = th[0];
    q[1] = th[1];
  }
  template <class S, class Th>
  SALTATION_HD void flow(const S* q, int, const Th&, S* f) const {
    using std::sin;
    f[0] = q[1];
    f[1] = -sin(q[0]);
  }
  template <class S, class Th>
  SALTATION_HD S guard(int, const S* q, int, const Th& th) const {
    return q[0] - th[2];
  }
  template <class S, class Th>
  SALTATION_HD int reset(int, const S* q, int mode, const Th& th, S* qp) const {
    qp[0] = q[0];
    qp[1] = -th[3] * q[1];
    return mode;
  }
};

// The three-bump terrain ball without the affine-flow declaration: the generic tangent step everywhere.
struct GenericTerrain3 : TerrainBall<3> {
  static constexpr bool affine_flow = false;
};

// The three-bump terrain ball itself, as a type of its own whose CUDA driver comes from
// user_models.cu, compiled without contraction (-fmad=false) like GenericTerrain3: tests that hold
// two kernels to bitwise equality use these, so that where nvcc fuses a multiply-add cannot differ
// between the kernels (docs/agreement.md).
struct StrictTerrain3 : TerrainBall<3> {};

}  // namespace saltation::testing

#if SALTATION_HAVE_CUDA
namespace saltation {
template <>
struct has_cuda_driver<testing::TwoThresholds> : std::true_type {};
template <>
struct has_cuda_driver<testing::PendulumFloor> : std::true_type {};
template <>
struct has_cuda_driver<testing::GenericTerrain3> : std::true_type {};
template <>
struct has_cuda_driver<testing::StrictTerrain3> : std::true_type {};
// One bump: not among the built-in bump counts.
template <>
struct has_cuda_driver<TerrainBall<1>> : std::true_type {};
}  // namespace saltation
#endif
