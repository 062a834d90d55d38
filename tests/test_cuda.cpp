// The CUDA backend against the CPU backend on the same batches: statuses and event counts
// equal, states and derivatives within 1e-12 relative. Skips where no device is present.
#include <cmath>
#include <random>

#include "backends.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "terrain_samples.hpp"
#include "saltation/models/thermostat.hpp"

using namespace saltation;

namespace {

void expect_close_arrays(const std::vector<double>& gpu, const std::vector<double>& cpu, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  double scale = 0.0;
  for (double x : cpu) scale = std::max(scale, std::fabs(x));
  std::size_t bad = 0;
  for (std::size_t k = 0; k < cpu.size(); ++k)
    if (!(std::fabs(gpu[k] - cpu[k]) <= 1e-12 * std::max(std::fabs(cpu[k]), 1e-3 * scale))) ++bad;
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cpu.size() << " entries differ beyond 1e-12 relative";
}

void expect_backends_agree(const Result& g, const Result& c) {
  EXPECT_EQ(g.status, c.status);
  EXPECT_EQ(g.n_events, c.n_events);
  EXPECT_EQ(g.ev_guard, c.ev_guard);
  expect_close_arrays(g.t_end, c.t_end, "t_end");
  expect_close_arrays(g.qf, c.qf, "qf");
  expect_close_arrays(g.ev_t, c.ev_t, "event times");
  expect_close_arrays(g.ev_q, c.ev_q, "pre-event states");
  expect_close_arrays(g.ev_q_plus, c.ev_q_plus, "post-event states");
  expect_close_arrays(g.dqf, c.dqf, "dqf/dtheta");
  expect_close_arrays(g.ev_dt, c.ev_dt, "dt_e/dtheta");
  expect_close_arrays(g.ev_dq, c.ev_dq, "dq-/dtheta");
}

template <class Model>
void compare(const Model& m, const Batch& b, Options o) {
  for (bool sens : {false, true}) {
    SCOPED_TRACE(sens ? "with sensitivities" : "forward only");
    o.sensitivities = sens;
    const Result cpu = solve(m, b, o, Backend::Cpu);
    const Result gpu = solve(m, b, o, Backend::Cuda);
    expect_backends_agree(gpu, cpu);
  }
}

Options options(double t_final, double dt, int capacity) {
  Options o;
  o.t_final = t_final;
  o.dt = dt;
  o.event_capacity = capacity;
  return o;
}

}  // namespace

TEST(Cuda, BouncingBallMatchesCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  Batch b(1000, 3);
  for (std::size_t i = 0; i < b.n; ++i) {
    b.at(i, 0) = 0.5 + 2.0 * i / b.n;
    b.at(i, 1) = -1.0 + 3.0 * ((i * 37) % 101) / 101.0;
    b.at(i, 2) = 0.3 + 0.65 * ((i * 13) % 97) / 97.0;
  }
  Options o = options(5.0, 1e-3, 32);
  o.v_stop = 0.05;
  compare(BouncingBall{}, b, o);
}

TEST(Cuda, ThermostatMatchesCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  Batch b(512, 6);
  for (std::size_t i = 0; i < b.n; ++i) {
    const double th[6] = {19.0 + 0.002 * i, 18.0, 10.0 + 0.01 * i, 8.0, 20.0, 22.0 + 0.001 * i};
    for (int p = 0; p < 6; ++p) b.at(i, p) = th[p];
  }
  compare(Thermostat{}, b, options(60.0, 1e-2, 16));
}

TEST(Cuda, TerrainBallK3MatchesCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare(TerrainBall<3>{}, sample_terrain_batch<3>(2048, 1), options(3.0, 1e-3, 16));
}

TEST(Cuda, TerrainBallK24MatchesCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare(TerrainBall<24>{}, sample_terrain_batch<24>(512, 2), options(3.0, 1e-3, 16));
}

TEST(Cuda, TerrainBallK192MatchesCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  compare(TerrainBall<192>{}, sample_terrain_batch<192>(128, 3), options(2.0, 1e-3, 8));
}

TEST(Cuda, StatusesMatchCpu) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  // Capacity, settled, Zeno and invalid rows in one batch.
  Options o = options(10.0, 1e-3, 6);
  o.v_stop = 0.5;
  o.mark_invalid_rows = true;
  Batch b = Batch::from_rows({{2.0, 0.0, 0.8}, {2.0, 0.0, 0.3}, {2.0, 0.0, 1.5}, {0.1, 0.0, 0.0}}, 3);
  compare(BouncingBall{}, b, o);
}

TEST(Cuda, AutoPicksCudaWithDevice) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  EXPECT_EQ(resolve_backend(Backend::Auto), Backend::Cuda);
}
