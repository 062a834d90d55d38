#pragma once
// The shape of a chunk's launch (kernels/solve.cuh) and the chunk size of a large batch, in plain
// C++ so that the CPU tests check them.
#include <algorithm>
#include <cstddef>

namespace saltation::cuda::detail {

// The occupancy calculator's block (`occupancy_block`: the most warps per SM the kernel's
// registers allow, in few blocks), made smaller in whole warps where `rows` would fill fewer
// blocks of it than the device has SMs (`sms`): a small batch then spreads over every SM instead
// of crowding a few (2^14 rows in blocks of 256 are 64 blocks for an H200's 132 SMs; in blocks of
// 96, 171). Rows fewer than a warp per SM leave SMs idle whatever the block.
inline int launch_block(std::size_t rows, int sms, int occupancy_block) {
  const std::size_t warps_per_sm = (rows + 31) / 32 / static_cast<std::size_t>(std::max(sms, 1));
  const std::size_t spread = 32 * std::max<std::size_t>(warps_per_sm, 1);
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(occupancy_block), spread));
}

// The grid over `rows` in blocks of `block`: one thread per row, or with refill
// (`resident_blocks` > 0) at most the blocks the device holds at once, whose lanes take the rows
// past the launch's own as their trajectories end (claim_row in solve.cuh). Launching more would
// only queue blocks that start late, behind a full device.
inline unsigned launch_grid(std::size_t rows, int block, std::size_t resident_blocks) {
  const std::size_t blocks = (rows + static_cast<std::size_t>(block) - 1) / static_cast<std::size_t>(block);
  return static_cast<unsigned>(resident_blocks > 0 ? std::min(blocks, resident_blocks) : blocks);
}

// A batch that fits the device at once still runs in kPipelineChunks chunks, so that with two
// slots one chunk's copies, packing and unpacking on the host overlap the next chunk's kernel;
// but no chunk is made smaller than kMinPipelinedChunk rows, which keeps each kernel filling the
// device. Returns the largest chunk that gives this.
constexpr std::size_t kPipelineChunks = 4;
constexpr std::size_t kMinPipelinedChunk = std::size_t(1) << 17;
inline std::size_t pipeline_chunk(std::size_t rows) {
  return std::max((rows + kPipelineChunks - 1) / kPipelineChunks, std::min(rows, kMinPipelinedChunk));
}

}  // namespace saltation::cuda::detail
