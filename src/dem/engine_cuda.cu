// CUDA launch code of the disk-contact engine (the only CUDA translation unit of saltation_dem).
#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "cuda_check.cuh"
#include "dem_kernels.cuh"
#include "device_buffer.cuh"
#include "engine_internal.hpp"

namespace saltation::dem::detail {
namespace {

// Device memory for the arrays of one rollout, in the owners both drivers share
// (kernels/device_buffer.cuh): freed together, and never a throw from a destructor, so the first
// CudaError of a failed rollout reaches the caller.
class DeviceArrays {
 public:
  template <class T>
  T* allocate(std::size_t count) {
    buffers_.emplace_back(count * sizeof(T));
    return reinterpret_cast<T*>(buffers_.back().data());
  }

 private:
  std::vector<saltation::cuda::DeviceBuffer<unsigned char>> buffers_;  // cudaMalloc aligns every one
};

template <class Array>
std::size_t bytes(const Array& a) {
  return a.size() * sizeof(typename Array::value_type);
}

}  // namespace

void run_cuda(Prepared& prep, int block_threshold, const Progress* progress) {
  const RolloutView& shape = prep.shape;
  DeviceArrays device;
  // Declared after the arrays: its destructor waits for its work before they are freed.
  saltation::cuda::Stream stream;
  RolloutView view = shape;
  zip_inputs(prep.inputs, view, [&](const auto& host, auto& pointer) {
    auto* copy = device.allocate<typename std::decay_t<decltype(host)>::value_type>(host.size());
    if (copy)
      SALTATION_CUDA_CHECK(cudaMemcpyAsync(copy, host.data(), bytes(host), cudaMemcpyHostToDevice, stream.get()));
    pointer = copy;
  });
  // Every output entry is written by the kernel (saved, or NaN after a stop): no upload.
  zip_outputs(prep.result, view, [&](const auto& host, auto& pointer) {
    pointer = device.allocate<typename std::decay_t<decltype(host)>::value_type>(host.size());
  });
  double* work = device.allocate<double>((size_t)shape.work_doubles() * shape.n_systems);
  int* iwork = device.allocate<int>((size_t)shape.work_ints() * shape.n_systems);
  if (shape.n_disks <= block_threshold) {
    // As the trajectory driver does (docs/gpu.md): the block of highest occupancy, at most 256.
    int min_grid = 0, threads = 0;
    SALTATION_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &threads, cuda::rollout_thread_per_system));
    threads = threads > 256 ? 256 : threads;
    const int blocks = (shape.n_systems + threads - 1) / threads;
    cuda::rollout_thread_per_system<<<blocks, threads, 0, stream.get()>>>(view, work, iwork);
  } else {
    // Threads over the disks of one system (n_disks > block_threshold, 32 by default).
    const int threads = shape.n_disks >= 256 ? 256 : 64;
    cuda::rollout_block_per_system<<<(unsigned)shape.n_systems, threads, 0, stream.get()>>>(view, work, iwork);
  }
  SALTATION_CUDA_CHECK(cudaGetLastError());
  zip_outputs(prep.result, view, [&](auto& host, const auto& pointer) {
    if (!host.empty())
      SALTATION_CUDA_CHECK(cudaMemcpyAsync(host.data(), pointer, bytes(host), cudaMemcpyDeviceToHost, stream.get()));
  });
  stream.synchronize();
  if (progress) (*progress)((std::size_t)shape.n_systems, (std::size_t)shape.n_systems);
}

}  // namespace saltation::dem::detail
