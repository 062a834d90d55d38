// Built without the CUDA backend: the built-in models' CUDA entry points exist (their headers
// declare a CUDA driver) and say why they cannot run.
#include "builtin_models.hpp"
#include "saltation/cuda.hpp"
#include "saltation/errors.hpp"

namespace saltation {

template <class Model>
void cuda::solve(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*) {
  throw CudaError("this saltation was built without the CUDA backend (SALTATION_ENABLE_CUDA=OFF or no nvcc)",
                  __FILE__, __LINE__);
}

#define SALTATION_INSTANTIATE_CUDA(Model) \
  template void cuda::solve<Model>(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*);
SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_INSTANTIATE_CUDA)

}  // namespace saltation
