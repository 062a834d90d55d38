// Counter-based sampling on the device: a kernel draws the same bits as the host for every
// (seed, stream, index, slot), and maps them through the same distribution code (values agree to
// the last bits: FMA contraction and the device math library). Skipped without a CUDA device
// (failed under SALTATION_REQUIRE_CUDA=1).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "backends.hpp"
#include "saltation/sweep/sobol.hpp"
#include "saltation/sweep/study.hpp"

namespace sweep_cuda_test {

using namespace saltation::sweep;

constexpr std::uint32_t n_params = 6;
constexpr std::uint64_t seed = 0x5eed5eed12345678ull;

// Per sample i: the raw bits of slot 0, and the parameter rows of A, B and AB_0 .. AB_3.
__global__ void draw_kernel(const Distribution* dists, std::uint64_t first, int n, std::uint64_t* bits, double* rows) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bits[i] = philox_bits(seed, Stream::MonteCarlo, first + i, 0);
  for (std::uint32_t m = 0; m < 6; ++m)
    saltelli_parameters(dists, n_params, seed, first + i, m, rows + (static_cast<std::size_t>(i) * 6 + m) * n_params);
}

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

TEST(SweepCuda, DeviceDrawsTheHostsBits) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  const std::vector<Distribution> dists = {Distribution::uniform(1, 2),
                                           Distribution::normal(0, 1),
                                           Distribution::fixed(9.81),
                                           Distribution::lognormal(0.1, 0.3),
                                           Distribution::truncnormal(0, 1, 2, 5),
                                           Distribution::design(0.5)};
  const int n = 4096;
  const std::uint64_t first = (std::uint64_t(1) << 40) + 17;
  Distribution* d_dists = nullptr;
  std::uint64_t* d_bits = nullptr;
  double* d_rows = nullptr;
  const std::size_t n_values = static_cast<std::size_t>(n) * 6 * n_params;
  ASSERT_CUDA(cudaMalloc(&d_dists, dists.size() * sizeof(Distribution)));
  ASSERT_CUDA(cudaMalloc(&d_bits, n * sizeof(std::uint64_t)));
  ASSERT_CUDA(cudaMalloc(&d_rows, n_values * sizeof(double)));
  ASSERT_CUDA(cudaMemcpy(d_dists, dists.data(), dists.size() * sizeof(Distribution), cudaMemcpyHostToDevice));
  draw_kernel<<<(n + 127) / 128, 128>>>(d_dists, first, n, d_bits, d_rows);
  ASSERT_CUDA(cudaGetLastError());
  std::vector<std::uint64_t> bits(n);
  std::vector<double> rows(n_values);
  ASSERT_CUDA(cudaMemcpy(bits.data(), d_bits, n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaMemcpy(rows.data(), d_rows, n_values * sizeof(double), cudaMemcpyDeviceToHost));
  cudaFree(d_dists);
  cudaFree(d_bits);
  cudaFree(d_rows);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(bits[i], philox_bits(seed, Stream::MonteCarlo, first + i, 0)) << i;
    for (std::uint32_t m = 0; m < 6; ++m) {
      double host[n_params];
      saltelli_parameters(dists.data(), n_params, seed, first + i, m, host);
      for (std::uint32_t p = 0; p < n_params; ++p) {
        const double device = rows[(static_cast<std::size_t>(i) * 6 + m) * n_params + p];
        // Constants are copied; uniform may differ by FMA contraction (nvcc's default), the rest
        // by the device's log/erfc/exp in the last bits.
        if (p == 2 || p == 5) EXPECT_EQ(device, host[p]) << i << " " << m << " " << p;
        else EXPECT_NEAR(device, host[p], 1e-13 * std::fabs(host[p]) + 1e-15) << i << " " << m << " " << p;
      }
    }
  }
}

// The device fold of a study's blocks (study_fold_cuda.cu) against the host's: the same study
// accumulator, bit for bit, block by block, with histograms, sketches, non-finite samples, Sobol
// replicates and a short last block.
TEST(SweepCuda, DeviceFoldIsTheHostsFoldBitForBit) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  const nlohmann::json study_json = nlohmann::json::parse(R"({"model": "bouncing_ball",
    "options": {"t_final": 3.0, "dt": 0.001, "event_capacity": 16},
    "parameters": {"h0": {"dist": "uniform", "low": 1.0, "high": 2.0}, "v0": 0.0, "e": {"dist": "uniform", "low": 0.6, "high": 0.8}},
    "objectives": [{"name": "t2", "event_time": 1}, {"name": "h", "final_state": "h"}],
    "samples": 10000, "seed": 3, "sobol": true})");
  saltation::ModelInfo info;
  info.name = "bouncing_ball";
  info.N = info.M = 2;
  info.P = 3;
  info.state_names = {"h", "v"};
  info.param_names = {"h0", "v0", "e"};
  const Study study = parse_study(study_json, info);
  const std::vector<HistogramRange> ranges(2, HistogramRange{0.0, 3.0, 64});
  const StudyAccumulator empty(study, 16, ranges);
  const int width = empty.input_width();
  // Samples 4096 .. 4096 + 9000: two whole blocks and a short one; some values non-finite.
  const std::uint64_t first = 4096, n = 9000, block = 4096;
  std::vector<double> outputs(static_cast<std::size_t>(width) * n);
  for (int r = 0; r < width; ++r)
    for (std::uint64_t i = 0; i < n; ++i) {
      const double u = uniform01(11, Stream::MonteCarlo, first + i, static_cast<std::uint32_t>(r));
      outputs[r * n + i] = r < 3 ? std::floor(4 * u) : 3.0 * u - 0.2;
      if (i % 997 == static_cast<std::uint64_t>(r)) outputs[r * n + i] = NAN;
    }
  const std::vector<StudyAccumulator> host = fold_blocks_on_host(empty, first, n, block, outputs.data(), n, 1);
  const std::vector<StudyAccumulator> device = fold_study_blocks_on_device(empty, first, n, block, outputs.data(), n);
  ASSERT_EQ(device.size(), host.size());
  for (std::size_t b = 0; b < host.size(); ++b)
    EXPECT_EQ(nlohmann::json::to_cbor(device[b].to_json()), nlohmann::json::to_cbor(host[b].to_json()))
        << "block " << b;
}

}  // namespace sweep_cuda_test
