#pragma once
// The block size of a launch of one thread per row (kernels/solve.cuh), in plain C++ so that the
// CPU tests check it.
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

}  // namespace saltation::cuda::detail
