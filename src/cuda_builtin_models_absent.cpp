// Built without the CUDA backend: the built-in models' CUDA entry points exist (their headers
// declare a CUDA driver) and say why they cannot run.
#include "builtin_models.hpp"
#include "saltation/cuda.hpp"
#include "saltation/errors.hpp"

namespace saltation {
namespace {
[[noreturn]] void no_cuda_backend() {
  throw CudaError("this saltation was built without the CUDA backend (SALTATION_ENABLE_CUDA=OFF or no nvcc)", __FILE__,
                  __LINE__);
}
}  // namespace

template <class Model>
void cuda::solve(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*) {
  no_cuda_backend();
}
template <class Model>
void cuda::solve_final_state(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*) {
  no_cuda_backend();
}
template <class Model>
void cuda::observe(const Model&, const double*, std::size_t, const Options&, Observation&, const Progress*) {
  no_cuda_backend();
}

#define SALTATION_INSTANTIATE_CUDA(Model)                                                                         \
  template void cuda::solve<Model>(const Model&, const double*, std::size_t, const Options&, Result&,             \
                                   const Progress*);                                                              \
  template void cuda::solve_final_state<Model>(const Model&, const double*, std::size_t, const Options&, Result&, \
                                               const Progress*);                                                  \
  template void cuda::observe<Model>(const Model&, const double*, std::size_t, const Options&, Observation&,      \
                                     const Progress*);
SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_INSTANTIATE_CUDA)

}  // namespace saltation
