// The CUDA driver's launch shape (kernels/launch_shape.hpp), checked without a device: every SM
// gets a block once the batch has a warp of rows per SM, blocks are whole warps within the
// occupancy calculator's block, and large batches keep that block; a refilling grid is at most
// what the device holds; a large batch is cut into chunks that overlap, none of them small.
#include <gtest/gtest.h>

#include "../kernels/launch_shape.hpp"

using saltation::cuda::detail::kMinPipelinedChunk;
using saltation::cuda::detail::kPipelineChunks;
using saltation::cuda::detail::launch_block;
using saltation::cuda::detail::launch_grid;
using saltation::cuda::detail::pipeline_chunk;

TEST(LaunchShape, SmallBatchesSpreadOverEverySm) {
  for (const int sms : {108, 132})
    for (const int occupancy_block : {64, 96, 128, 256})
      for (std::size_t rows = 1; rows <= (std::size_t(1) << 21); rows = rows * 3 / 2 + 1) {
        const int block = launch_block(rows, sms, occupancy_block);
        SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(sms) + " SMs, occupancy block " +
                     std::to_string(occupancy_block) + ": block " + std::to_string(block));
        EXPECT_EQ(block % 32, 0);
        EXPECT_GE(block, 32);
        EXPECT_LE(block, occupancy_block);
        const std::size_t grid = (rows + block - 1) / block;
        if (rows >= 32 * static_cast<std::size_t>(sms)) {
          EXPECT_GE(grid, static_cast<std::size_t>(sms));
        }
        if (rows >= static_cast<std::size_t>(sms) * occupancy_block) {
          EXPECT_EQ(block, occupancy_block);
        }
      }
}

TEST(LaunchShape, TheIssuesCase) {
  // 2^14 rows on an H200's 132 SMs with the forward kernel's 256: 64 blocks before, 171 now.
  EXPECT_EQ(launch_block(std::size_t(1) << 14, 132, 256), 96);
  EXPECT_EQ(launch_block(std::size_t(1) << 20, 132, 256), 256);
}

TEST(LaunchShape, RefillingGridsHoldAtMostTheResidentBlocks) {
  EXPECT_EQ(launch_grid(1000, 256, 0), 4u);  // no refill: a thread per row
  EXPECT_EQ(launch_grid(1024, 256, 0), 4u);
  EXPECT_EQ(launch_grid(std::size_t(1) << 20, 256, 264), 264u);  // 132 SMs x 2 blocks
  EXPECT_EQ(launch_grid(1000, 256, 264), 4u);                    // fewer rows than the device holds: no fewer threads
}

TEST(LaunchShape, LargeBatchesRunInChunksThatOverlap) {
  for (std::size_t rows = 1; rows <= (std::size_t(1) << 24); rows = rows * 3 / 2 + 1) {
    const std::size_t chunk = pipeline_chunk(rows);
    SCOPED_TRACE(std::to_string(rows) + " rows: chunks of " + std::to_string(chunk));
    EXPECT_LE(chunk, rows);
    EXPECT_GE(chunk, std::min(rows, kMinPipelinedChunk));
    EXPECT_LE((rows + chunk - 1) / chunk, kPipelineChunks);
    if (rows >= kPipelineChunks * kMinPipelinedChunk) {
      EXPECT_EQ((rows + chunk - 1) / chunk, kPipelineChunks);
    }
  }
  EXPECT_EQ(pipeline_chunk(std::size_t(1) << 20), std::size_t(1) << 18);
  EXPECT_EQ(pipeline_chunk(std::size_t(1) << 16), std::size_t(1) << 16);  // one chunk
}
