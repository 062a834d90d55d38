// The CUDA driver's block size (kernels/launch_shape.hpp), checked without a device: every SM gets
// a block once the batch has a warp of rows per SM, blocks are whole warps within the occupancy
// calculator's block, and large batches keep that block.
#include <gtest/gtest.h>

#include "../kernels/launch_shape.hpp"

using saltation::cuda::detail::launch_block;

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
