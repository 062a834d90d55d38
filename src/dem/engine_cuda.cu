// CUDA launch code of the disk-contact engine (the only CUDA translation unit of saltation_dem).
#include <cuda_runtime.h>

#include <vector>

#include "cuda_check.cuh"
#include "dem_kernels.cuh"
#include "saltation/dem/engine.hpp"

namespace saltation::dem::detail {
namespace {

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  size_t n = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : n(count) {
    if (count) SALTATION_CUDA_CHECK(cudaMalloc(&ptr, count * sizeof(T)));
  }
  DeviceBuffer(const T* host, size_t count) : DeviceBuffer(host ? count : 0) {
    if (host && count) SALTATION_CUDA_CHECK(cudaMemcpy(ptr, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  void to_host(T* host) const {
    if (host && n) SALTATION_CUDA_CHECK(cudaMemcpy(host, ptr, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
};

}  // namespace

void run_cuda(const RolloutConfig& h, int block_threshold) {
  const size_t B = h.B, M = h.M, P = h.P, nm2 = (size_t)h.n_mat * h.n_mat;
  const size_t frame_vals = (size_t)h.n_frames * 2 * M * B;
  RolloutConfig d = h;
  DeviceBuffer<double> pk(h.pair_k, nm2), pz(h.pair_zeta, nm2), pmu(h.pair_mu, nm2), pgt(h.pair_gt, nm2);
  DeviceBuffer<double> rad(h.radius, M * B), mass(h.mass, M * B);
  DeviceBuffer<int> mat(h.material, M * B);
  DeviceBuffer<double> th(h.theta, B), ze(h.zeta, B), x0(h.x0, 2 * M * B), v0(h.v0, 2 * M * B);
  DeviceBuffer<int> tk(h.tan_kind, P), ti(h.tan_index, P);
  DeviceBuffer<double> ox(h.out_x ? frame_vals : 0), ov(h.out_v ? frame_vals : 0);
  DeviceBuffer<double> odx(h.out_dx ? frame_vals * P : 0), odv(h.out_dv ? frame_vals * P : 0);
  DeviceBuffer<double> obs(h.obs, frame_vals), sc(h.loss_scale, B);
  DeviceBuffer<double> loss(h.loss ? B : 0), grad(h.grad ? P * B : 0);
  DeviceBuffer<int> st(B);
  d.pair_k = pk.ptr;
  d.pair_zeta = pz.ptr;
  d.pair_mu = pmu.ptr;
  d.pair_gt = pgt.ptr;
  d.radius = rad.ptr;
  d.mass = mass.ptr;
  d.material = mat.ptr;
  d.theta = th.ptr;
  d.zeta = ze.ptr;
  d.x0 = x0.ptr;
  d.v0 = v0.ptr;
  d.tan_kind = tk.ptr;
  d.tan_index = ti.ptr;
  d.out_x = ox.ptr;
  d.out_v = ov.ptr;
  d.out_dx = odx.ptr;
  d.out_dv = odv.ptr;
  d.obs = obs.ptr;
  d.loss_scale = sc.ptr;
  d.loss = loss.ptr;
  d.grad = grad.ptr;
  d.status = st.ptr;
  DeviceBuffer<double> work((size_t)h.work_doubles() * B);
  DeviceBuffer<int> iwork((size_t)h.work_ints() * B);
  if ((int)M <= block_threshold) {
    const int threads = 128;
    const int blocks = (int)((B + threads - 1) / threads);
    cuda::rollout_thread_per_system<<<blocks, threads>>>(d, work.ptr, iwork.ptr);
  } else {
    const int threads = M >= 256 ? 256 : 64;
    cuda::rollout_block_per_system<<<(unsigned)B, threads>>>(d, work.ptr, iwork.ptr);
  }
  SALTATION_CUDA_CHECK_LAUNCH();
  ox.to_host(h.out_x);
  ov.to_host(h.out_v);
  odx.to_host(h.out_dx);
  odv.to_host(h.out_dv);
  loss.to_host(h.loss);
  grad.to_host(h.grad);
  st.to_host(h.status);
}

}  // namespace saltation::dem::detail
