// The one CUDA translation unit of the trajectory solver: the CUDA driver instantiated for
// every built-in model (builtin_models.hpp).
#include "builtin_models.hpp"
#include "solve.cuh"

#define SALTATION_INSTANTIATE_CUDA(Model) \
  template void saltation::cuda::solve<Model>(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*);
namespace saltation {
SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_INSTANTIATE_CUDA)
}
