// The one CUDA translation unit of the trajectory solver: the CUDA driver instantiated for
// every built-in model (builtin_models.hpp).
#include "builtin_models.hpp"
#include "solve.cuh"

// Every output policy: the full record, the final state, the objective observer.
#define SALTATION_INSTANTIATE_CUDA(Model)                                                                           \
  template void saltation::cuda::solve<Model>(const Model&, const double*, std::size_t, const Options&, Result&,    \
                                              const Progress*);                                                     \
  template void saltation::cuda::solve_final_state<Model>(const Model&, const double*, std::size_t, const Options&, \
                                                          Result&, const Progress*);                                \
  template void saltation::cuda::observe<Model>(const Model&, const double*, std::size_t, const Options&,           \
                                                Observation&, const Progress*);
namespace saltation {
SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_INSTANTIATE_CUDA)
}
