// The one CUDA translation unit of the library: the CUDA driver instantiated for every
// built-in model, and device discovery.
#include "builtin_list.hpp"
#include "solve.cuh"

namespace saltation::detail {
int cuda_device_count() {
  int count = 0;
  // No driver or no device both mean "no CUDA here"; that is an answer, not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}
}  // namespace saltation::detail

#define SALTATION_INSTANTIATE_CUDA(Model) \
  template void saltation::cuda::solve<Model>(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*);
namespace saltation {
SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_INSTANTIATE_CUDA)
}
