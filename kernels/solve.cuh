#pragma once
// The CUDA driver: a thin kernel (one thread per trajectory, calling the same
// core::integrate_one as the CPU backend) and its launch code. Include from a .cu file.
#include <thrust/device_vector.h>
#include <thrust/copy.h>

#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "saltation/core/integrate_one.hpp"
#include "saltation/cuda.hpp"

namespace saltation::cuda {
namespace detail {

// Trajectories [first, end) of a batch of n.
template <bool Sens, class Model>
__global__ void integrate_kernel(Model model, Options options, const double* theta, std::size_t n, std::size_t first,
                                 std::size_t end, ResultView out) {
  const std::size_t i = first + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < end) core::integrate_one<Sens>(model, options, RowParams{theta + i, n}, i, out);
}

// Device mirror of a Result: same SoA layout, Thrust-owned memory.
struct DeviceResult {
  thrust::device_vector<int> status, n_events, ev_guard, ev_flags;
  thrust::device_vector<double> t_end, qf, ev_t, ev_q, ev_q_plus, dqf, ev_dt, ev_dq;

  // Starts from the host defaults, so slots a trajectory never writes read the same on both backends.
  explicit DeviceResult(const Result& r) {
    zip_arrays(*this, r, [](auto& device, const auto& host) { device = host; });
  }
  ResultView view(const Result& r) {
    ResultView v = r.shape();
    zip_arrays(*this, v, [](auto& device, auto& pointer) { pointer = thrust::raw_pointer_cast(device.data()); });
    return v;
  }
  void copy_to(Result& r) const {
    zip_arrays(*this, r, [](const auto& device, auto& host) {
      if (!host.empty())
        SALTATION_CUDA_CHECK(cudaMemcpy(host.data(), thrust::raw_pointer_cast(device.data()),
                                        host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost));
    });
  }
};

}  // namespace detail

template <class Model>
void solve(const Model& model, const double* theta, std::size_t n, const Options& options, Result& out,
           const Progress* progress) {
  try {
    thrust::device_vector<double> d_theta(theta, theta + n * static_cast<std::size_t>(Model::P));
    detail::DeviceResult d_out(out);
    const ResultView view = d_out.view(out);
    const int block = 128;
    const double* th = thrust::raw_pointer_cast(d_theta.data());
    // One launch, or about 20 when progress is wanted (still thousands of blocks each at scale).
    const std::size_t chunk = progress ? (n + 19) / 20 : n;
    for (std::size_t first = 0; first < n; first += chunk) {
      const std::size_t end = first + chunk < n ? first + chunk : n;
      const unsigned grid = static_cast<unsigned>((end - first + block - 1) / block);
      if (options.sensitivities)
        detail::integrate_kernel<true><<<grid, block>>>(model, options, th, n, first, end, view);
      else
        detail::integrate_kernel<false><<<grid, block>>>(model, options, th, n, first, end, view);
      SALTATION_CUDA_CHECK_LAUNCH();
      if (progress) (*progress)(end, n);
    }
    d_out.copy_to(out);
  } catch (const thrust::system_error& e) {
    // Thrust's allocation and copy failures, reported like every other CUDA failure.
    throw CudaError(e.what(), __FILE__, __LINE__);
  } catch (const std::bad_alloc& e) {
    throw CudaError(std::string("device allocation failed: ") + e.what(), __FILE__, __LINE__);
  }
}

}  // namespace saltation::cuda
