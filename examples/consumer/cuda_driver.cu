// The CUDA driver for the relief valve: one explicit instantiation of the library's driver
// template, compiled (against saltation::cuda_driver) only where the installed saltation has the
// CUDA backend and nvcc is found; relief_valve.hpp then declares has_cuda_driver.
#include "relief_valve.hpp"
#include "solve.cuh"

template void saltation::cuda::solve<vessel::ReliefValve>(const vessel::ReliefValve&, const double*, std::size_t,
                                                          const saltation::Options&, saltation::Result&,
                                                          const saltation::Progress*);
