// The pinned staging cache of kernels/device_buffer.cuh: a released block is handed out again
// (pinning is the dear part of a small solve), never one four times larger than asked for, and
// never one that a cudaDeviceReset has unpinned; solves before and after a reset agree; its bound
// comes from SALTATION_PINNED_CACHE_MIB. The device tests skip where no device is present (fail
// under SALTATION_REQUIRE_CUDA=1).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends.hpp"
#include "device_buffer.cuh"
#include "saltation/models/bouncing_ball.hpp"

using saltation::cuda::PinnedCache;

namespace {

bool pinned(void* p) {
  cudaPointerAttributes a{};
  const bool ok = cudaPointerGetAttributes(&a, p) == cudaSuccess && a.type == cudaMemoryTypeHost;
  (void)cudaGetLastError();
  return ok;
}

}  // namespace

TEST(CudaPinnedCache, ReleasedBlockIsReusedWithinFourTimesTheRequest) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  PinnedCache& cache = PinnedCache::instance();
  const std::size_t mib = std::size_t(1) << 20;
  void* a = cache.take(mib);
  ASSERT_TRUE(pinned(a));
  ASSERT_EQ(cache.give(a), cudaSuccess);
  void* again = cache.take(mib / 2);  // the same block serves a request half its size
  EXPECT_EQ(again, a);
  void* b = cache.take(mib);  // `a` is in use again: a new block
  EXPECT_NE(b, a);
  EXPECT_TRUE(pinned(b));
  ASSERT_EQ(cache.give(again), cudaSuccess);
  ASSERT_EQ(cache.give(b), cudaSuccess);
  void* small = cache.take(mib / 64);  // both held blocks are over four times this
  EXPECT_NE(small, a);
  EXPECT_NE(small, b);
  // The whole block is usable, not only what the smaller request asked for: copy through it.
  void* big = cache.take(mib);
  EXPECT_TRUE(big == a || big == b);
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, mib), cudaSuccess);
  std::memset(big, 7, mib);
  EXPECT_EQ(cudaMemcpy(device, big, mib, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  for (void* p : {small, big}) EXPECT_EQ(cache.give(p), cudaSuccess);
}

// The bound needs no device: read from SALTATION_PINNED_CACHE_MIB, strictly.
TEST(CudaPinnedCache, BoundFromEnvironment) {
  unsetenv("SALTATION_PINNED_CACHE_MIB");
  EXPECT_EQ(PinnedCache::bound_from_environment(), PinnedCache::kDefaultBytes);
  setenv("SALTATION_PINNED_CACHE_MIB", "0", 1);
  EXPECT_EQ(PinnedCache::bound_from_environment(), 0u);
  setenv("SALTATION_PINNED_CACHE_MIB", "512", 1);
  EXPECT_EQ(PinnedCache::bound_from_environment(), std::size_t(512) << 20);
  for (const char* bad : {"", "-1", "1.5", "64MiB", " 64", "99999999999999999999999"}) {
    setenv("SALTATION_PINNED_CACHE_MIB", bad, 1);
    try {
      (void)PinnedCache::bound_from_environment();
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const saltation::InvalidInput& e) {
      EXPECT_EQ(e.parameter(), "SALTATION_PINNED_CACHE_MIB");
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  unsetenv("SALTATION_PINNED_CACHE_MIB");
}

TEST(CudaPinnedCache, SolvesAgreeAcrossADeviceReset) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  using namespace saltation;
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 1000; ++i) rows.push_back({1.0 + 0.001 * i, 0.5, 0.8});
  Options o;
  o.t_final = 3.0;
  o.dt = 1e-3;
  o.sensitivities = true;
  const Result before = saltation::testing::solve_on(Backend::Cuda, BouncingBall{}, rows, o);
  // Every block the solve released is held by the cache; the reset unpins them all.
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  void* p = PinnedCache::instance().take(64);
  EXPECT_TRUE(pinned(p));
  ASSERT_EQ(PinnedCache::instance().give(p), cudaSuccess);
  const Result after = saltation::testing::solve_on(Backend::Cuda, BouncingBall{}, rows, o);
  EXPECT_EQ(before.qf, after.qf);
  EXPECT_EQ(before.dqf, after.dqf);
  EXPECT_EQ(before.ev_t, after.ev_t);
}
