// The tests' one CUDA translation unit: the CUDA driver for the models of user_models.hpp,
// instantiated as a user instantiates it for a model of their own, without FMA contraction
// (-fmad=false, tests/CMakeLists.txt) so that bitwise comparisons between its kernels hold.
#include "solve.cuh"
#include "user_models.hpp"

namespace saltation::cuda {
#define SALTATION_INSTANTIATE_CUDA(Model) \
  template void solve<Model>(const Model&, const double*, std::size_t, const Options&, Result&, const Progress*);
SALTATION_INSTANTIATE_CUDA(testing::TwoThresholds)
SALTATION_INSTANTIATE_CUDA(testing::PendulumFloor)
SALTATION_INSTANTIATE_CUDA(testing::GenericTerrain3)
SALTATION_INSTANTIATE_CUDA(testing::StrictTerrain3)
SALTATION_INSTANTIATE_CUDA(TerrainBall<1>)
#undef SALTATION_INSTANTIATE_CUDA
}  // namespace saltation::cuda
