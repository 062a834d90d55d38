// The CUDA driver's launch choices (docs/gpu.md, "Switches"): each one turned off gives the same
// bits as all on, with a batch large enough that lanes refill and the pipeline cuts it into
// chunks; the stack limit stays after a solve unless SALTATION_CUDA_KEEP_STACK=0 asks for the old
// one back; the device pool keeps a solve's arrays for the next. Skipped without a device (fails
// under SALTATION_REQUIRE_CUDA=1).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "backends.hpp"
#include "expect_bitwise.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "terrain_samples.hpp"

// No `using namespace saltation` at file scope: its sqrt, exp, ... would make the CUDA math
// headers' calls ambiguous.
using saltation::Backend;
using saltation::Batch;
using saltation::Options;
using saltation::Result;
using saltation::TerrainBall;

namespace {

// More rows than an H200 holds threads of the forward kernel (132 SMs x 512), and over 2^17, so
// that the pipeline makes two chunks.
constexpr std::size_t kRows = 150000;

Options short_terrain_run(bool sensitivities) {
  Options o;
  o.t_final = 0.5;
  o.dt = 1e-3;
  o.v_stop = 0.25;
  o.sensitivities = sensitivities;
  return o;
}

std::size_t stack_limit() {
  std::size_t bytes = 0;
  EXPECT_EQ(cudaDeviceGetLimit(&bytes, cudaLimitStackSize), cudaSuccess);
  return bytes;
}

}  // namespace

TEST(CudaLaunch, EverySwitchGivesTheSameBits) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  const Batch batch = saltation::sample_terrain_batch<3>(kRows, 21);
  for (bool sens : {false, true}) {
    const Options o = short_terrain_run(sens);
    const Result all_on = solve(TerrainBall<3>{}, batch, o, Backend::Cuda);
    for (const char* variable : {"SALTATION_WARP_DEFER", "SALTATION_CUDA_REFILL", "SALTATION_CUDA_SPREAD",
                                 "SALTATION_CUDA_PIPELINE", "SALTATION_CUDA_KEEP_STACK"}) {
      SCOPED_TRACE(std::string(variable) + "=0" + (sens ? ", with sensitivities" : ", forward"));
      setenv(variable, "0", 1);
      const Result off = solve(TerrainBall<3>{}, batch, o, Backend::Cuda);
      unsetenv(variable);
      saltation::testing::expect_bitwise(off, all_on);
    }
  }
}

TEST(CudaLaunch, StackLimitStaysUnlessAskedToRestore) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  // TerrainBall<24> with sensitivities needs a stack frame of several KiB, over the 1 KiB set here.
  const Batch batch = saltation::sample_terrain_batch<24>(256, 22);
  const Options o = short_terrain_run(true);
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitStackSize, 1024), cudaSuccess);
  setenv("SALTATION_CUDA_KEEP_STACK", "0", 1);
  const Result restored = solve(TerrainBall<24>{}, batch, o, Backend::Cuda);
  unsetenv("SALTATION_CUDA_KEEP_STACK");
  EXPECT_EQ(stack_limit(), 1024u);
  const Result kept = solve(TerrainBall<24>{}, batch, o, Backend::Cuda);
  const std::size_t after = stack_limit();
  EXPECT_GT(after, 1024u);
  const Result again = solve(TerrainBall<24>{}, batch, o, Backend::Cuda);
  EXPECT_EQ(stack_limit(), after);  // nothing set the second time
  saltation::testing::expect_bitwise(kept, restored);
  saltation::testing::expect_bitwise(again, restored);
}

TEST(CudaLaunch, DevicePoolKeepsTheArraysOfASolve) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  if (std::getenv("SALTATION_DEVICE_CACHE_MIB") != nullptr) GTEST_SKIP() << "SALTATION_DEVICE_CACHE_MIB is set";
  const Batch batch = saltation::sample_terrain_batch<3>(4096, 23);
  const Result first = solve(TerrainBall<3>{}, batch, short_terrain_run(true), Backend::Cuda);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the pool gives back above its threshold here
  int device = 0;
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
  std::uint64_t reserved = 0, used = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), cudaSuccess);
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used), cudaSuccess);
  EXPECT_GT(reserved, used) << "the pool kept nothing of the solve's arrays";
  const Result second = solve(TerrainBall<3>{}, batch, short_terrain_run(true), Backend::Cuda);
  saltation::testing::expect_bitwise(second, first);
}
