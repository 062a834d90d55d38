// CUDA launch code of the disk-contact engine (the only CUDA translation unit of saltation_dem).
#include <cuda_runtime.h>

#include <type_traits>
#include <vector>

#include "cuda_check.cuh"
#include "dem_kernels.cuh"
#include "engine_internal.hpp"

namespace saltation::dem::detail {
namespace {

// Device memory for the arrays of one rollout, freed together.
class DeviceArrays {
 public:
  DeviceArrays() = default;
  DeviceArrays(const DeviceArrays&) = delete;
  DeviceArrays& operator=(const DeviceArrays&) = delete;
  ~DeviceArrays() {
    for (void* p : allocations_) cudaFree(p);
  }

  // A device copy of `host` (null when it is empty).
  template <class T>
  T* upload(const std::vector<T>& host) {
    T* device = allocate<T>(host.size());
    if (device) SALTATION_CUDA_CHECK(cudaMemcpy(device, host.data(), bytes(host), cudaMemcpyHostToDevice));
    return device;
  }
  template <class T>
  T* allocate(size_t count) {
    if (count == 0) return nullptr;
    void* p = nullptr;
    SALTATION_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    allocations_.push_back(p);
    return static_cast<T*>(p);
  }
  template <class T>
  static size_t bytes(const std::vector<T>& v) {
    return v.size() * sizeof(T);
  }

 private:
  std::vector<void*> allocations_;
};

}  // namespace

void run_cuda(Prepared& prep, int block_threshold, const Progress* progress) {
  const RolloutView& shape = prep.shape;
  DeviceArrays device;
  RolloutView view = shape;
  zip_inputs(prep.inputs, view, [&](const auto& host, auto& pointer) { pointer = device.upload(host); });
  // Every output entry is written by the kernel (saved, or NaN after a stop): no upload.
  zip_outputs(prep.result, view, [&](const auto& host, auto& pointer) {
    pointer = device.allocate<typename std::decay_t<decltype(host)>::value_type>(host.size());
  });
  double* work = device.allocate<double>((size_t)shape.work_doubles() * shape.n_systems);
  int* iwork = device.allocate<int>((size_t)shape.work_ints() * shape.n_systems);
  if (shape.n_disks <= block_threshold) {
    const int threads = 128;
    const int blocks = (shape.n_systems + threads - 1) / threads;
    cuda::rollout_thread_per_system<<<blocks, threads>>>(view, work, iwork);
  } else {
    const int threads = shape.n_disks >= 256 ? 256 : 64;
    cuda::rollout_block_per_system<<<(unsigned)shape.n_systems, threads>>>(view, work, iwork);
  }
  SALTATION_CUDA_CHECK_LAUNCH();
  zip_outputs(prep.result, view, [](auto& host, const auto& pointer) {
    if (!host.empty())
      SALTATION_CUDA_CHECK(cudaMemcpy(host.data(), pointer, DeviceArrays::bytes(host), cudaMemcpyDeviceToHost));
  });
  if (progress) (*progress)((std::size_t)shape.n_systems, (std::size_t)shape.n_systems);
}

}  // namespace saltation::dem::detail
