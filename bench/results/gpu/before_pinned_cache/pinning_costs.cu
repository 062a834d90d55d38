// What pinning, copying and freeing host and device memory cost on the device machine, the
// measurement behind kernels/device_buffer.cuh's PinnedCache (output: pinning_costs.txt).
// Not part of the build: nvcc -O2 -arch=sm_90 -o pinning_costs pinning_costs.cu && ./pinning_costs
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#define T(label, stmt)                                          \
  {                                                             \
    double t0 = now();                                          \
    stmt;                                                       \
    cudaDeviceSynchronize();                                    \
    std::printf("%-40s %9.3f ms\n", label, (now() - t0) * 1e3); \
  }
int main() {
  cudaFree(0);
  for (size_t mb : {16, 200, 800}) {
    size_t b = mb << 20;
    void *h = nullptr, *d = nullptr;
    std::printf("== %zu MB\n", mb);
    for (int r = 0; r < 2; ++r) {
      T("cudaMallocHost", cudaMallocHost(&h, b));
      T("memset host (first touch of pinned)", std::memset(h, 1, b));
      T("cudaMalloc", cudaMalloc(&d, b));
      T("cudaMemset", cudaMemset(d, 0, b));
      T("H2D pinned", cudaMemcpy(d, h, b, cudaMemcpyHostToDevice));
      T("D2H pinned", cudaMemcpy(h, d, b, cudaMemcpyDeviceToHost));
      std::vector<char> v(b, 1);
      T("H2D pageable", cudaMemcpy(d, v.data(), b, cudaMemcpyHostToDevice));
      T("D2H pageable", cudaMemcpy(v.data(), d, b, cudaMemcpyDeviceToHost));
      T("cudaFree", cudaFree(d));
      T("cudaFreeHost", cudaFreeHost(h));
    }
  }
  for (size_t s : {2464, 4480, 20608}) {
    T("setlimit stack up", cudaDeviceSetLimit(cudaLimitStackSize, s));
    T("setlimit stack back 1024", cudaDeviceSetLimit(cudaLimitStackSize, 1024));
  }
  size_t f, t;
  cudaMemGetInfo(&f, &t);
  std::printf("free %zu total %zu\n", f, t);
  return 0;
}
