// The CUDA driver for the impact pendulum: one explicit instantiation of the library's driver
// template, compiled by nvcc only when the CUDA backend is enabled (impact_pendulum.hpp then
// declares has_cuda_driver, so saltation::solve can pick the CUDA backend for this model).
#include "impact_pendulum.hpp"
#include "solve.cuh"

template void saltation::cuda::solve<pendulum::ImpactPendulum>(const pendulum::ImpactPendulum&, const double*,
                                                               std::size_t, const saltation::Options&,
                                                               saltation::Result&, const saltation::Progress*);
