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

// Runs `check` on the agreement case `wanted`, forward and with sensitivities.
void compare_case(const std::string& wanted) {
  bool found = false;
  agreement::for_each_case([&](const char* name, const auto& model, const Batch& batch, Options o, double rtol) {
    if (wanted != name) return;
    found = true;
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
