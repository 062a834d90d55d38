// Built without the CUDA backend: asking for it is an error that says so.
#include "builtin_list.hpp"
#include "saltation/cuda.hpp"
#include "saltation/errors.hpp"

namespace saltation {
namespace detail {
int cuda_device_count() { return 0; }
}  // namespace detail

template <class Model>
void cuda::solve(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*) {
  throw CudaError("this saltation was built without the CUDA backend (SALTATION_ENABLE_CUDA=OFF or no nvcc)",
                  __FILE__, __LINE__);
}

#define SALTATION_INSTANTIATE_CUDA(Model) \
  template void cuda::solve<Model>(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*);
SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_INSTANTIATE_CUDA)
}  // namespace saltation
