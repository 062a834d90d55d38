// The CUDA backend against the CPU backend on the agreement cases, by the stated policy
// (docs/agreement.md): statuses, event counts, guards and flags equal; values within each case's
// tolerance. Skips where no device is present (fails under SALTATION_REQUIRE_CUDA=1).
#include <string>

#include "agreement/agreement.hpp"
#include "agreement/agreement_cases.hpp"
#include "backends.hpp"
#include "saltation/models/bouncing_ball.hpp"

using namespace saltation;

namespace {

// dopri5's tolerances in the adaptive comparisons, and the agreement asked of them: the device's
// pow may round a step size differently from the C library's, and from there the two runs take
// different steps, each within the tolerance, so their values agree to its order, not to rounding.
// The steps are bounded by the case's RK4 step (dt_max).
constexpr double kAdaptiveTolerance = 1e-10, kAdaptiveAgreement = 1e-6;

// Runs `check` on the agreement case `wanted`, forward and with sensitivities, by `method`.
void compare_case(const std::string& wanted, Method method = Method::Rk4) {
  bool found = false;
  agreement::for_each_case([&](const char* name, const auto& model, const Batch& batch, Options o, double rtol) {
    if (wanted != name) return;
    found = true;
    if (method == Method::Dopri5) {
      o.method = method;
      o.rtol = kAdaptiveTolerance;
      o.atol = kAdaptiveTolerance;
      o.dt_max = o.dt;  // probes no farther apart than RK4's: a guard's narrow features found on both
      rtol = kAdaptiveAgreement;
    }
    for (bool sens : {false, true}) {
      SCOPED_TRACE(std::string(name) + (sens ? " with sensitivities" : " forward only"));
      o.sensitivities = sens;
      const Result cpu = solve(model, batch, o, Backend::Cpu);
      const Result gpu = solve(model, batch, o, Backend::Cuda);
      agreement::expect_agreement(gpu, cpu, rtol);
    }
  });
  EXPECT_TRUE(found) << wanted << " is not an agreement case";
}

}  // namespace

TEST(Cuda, BouncingBallAgreesWithCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare_case("bouncing_ball");
}

TEST(Cuda, ThermostatAgreesWithCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare_case("thermostat");
}

TEST(Cuda, TerrainBallK3AgreesWithCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare_case("terrain_ball_K3");
}

TEST(Cuda, TerrainBallK24AgreesWithCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare_case("terrain_ball_K24");
}

TEST(Cuda, TerrainBallK192AgreesWithCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare_case("terrain_ball_K192");
}

// dopri5 in warp lockstep, each lane with its own steps, against the CPU's scalar driver.
TEST(Cuda, AdaptiveStepsAgreeWithCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  for (const char* name : {"bouncing_ball", "thermostat", "terrain_ball_K3", "terrain_ball_K24"}) {
    SCOPED_TRACE(std::string("dopri5 on ") + name);
    compare_case(name, Method::Dopri5);
  }
}

TEST(Cuda, StatusesAgreeWithCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  // Capacity, settled, Zeno and invalid rows in one batch.
  Options o = agreement::options(10.0, 1e-3, 6);
  o.v_stop = 0.5;
  o.mark_invalid_rows = true;
  const Batch b = Batch::from_rows({{2.0, 0.0, 0.8}, {2.0, 0.0, 0.3}, {2.0, 0.0, 1.5}, {0.1, 0.0, 0.0}}, 3);
  for (bool sens : {false, true}) {
    o.sensitivities = sens;
    agreement::expect_agreement(solve(BouncingBall{}, b, o, Backend::Cuda), solve(BouncingBall{}, b, o, Backend::Cpu),
                                1e-9);
  }
}

TEST(Cuda, AutoPicksCudaWithDevice) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  EXPECT_EQ(resolve_backend(Backend::Auto), Backend::Cuda);
}
