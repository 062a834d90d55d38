#pragma once
// CUDA driver of the disk-contact engine: thin kernels around saltation::dem::rollout_system,
// the very function the CPU driver runs. Included only by code compiled with nvcc.
#include "saltation/dem/rollout.hpp"

namespace saltation::dem::cuda {

// The threads of one block work on the disks of one system.
struct BlockTeam {
  template <class F>
  __device__ void for_each(int n, F&& f) const {
    for (int i = (int)threadIdx.x; i < n; i += (int)blockDim.x) f(i);
    __syncthreads();
  }
  template <class F>
  __device__ void single(F&& f) const {
    if (threadIdx.x == 0) f();
    __syncthreads();
  }
  // A barrier that also ORs pred over the block, so every thread takes the same branch.
  __device__ bool any(bool pred) const { return __syncthreads_or(pred ? 1 : 0) != 0; }
};

// One thread per system; work memory interleaved (stride n_systems) so a warp reads
// consecutive words.
__global__ void rollout_thread_per_system(RolloutView c, double* work, int* iwork) {
  const int b = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (b < c.n_systems) rollout_system(SerialTeam{}, c, b, Work{work + b, c.n_systems, iwork + b, c.n_systems});
}

// One block per system, threads over disks; work memory contiguous per system.
__global__ void rollout_block_per_system(RolloutView c, double* work, int* iwork) {
  const int b = (int)blockIdx.x;
  rollout_system(BlockTeam{}, c, b, Work{work + (long)b * c.work_doubles(), 1, iwork + (long)b * c.work_ints(), 1});
}

}  // namespace saltation::dem::cuda
