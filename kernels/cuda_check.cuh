#pragma once
// Every CUDA runtime call and every launch goes through these: a failure becomes a
// saltation::CudaError carrying the call site, never an exit().
#include <cuda_runtime.h>

#include <string>

#include "saltation/errors.hpp"

#define SALTATION_CUDA_CHECK(call)                                                             \
  do {                                                                                          \
    cudaError_t saltation_err_ = (call);                                                        \
    if (saltation_err_ != cudaSuccess)                                                          \
      throw ::saltation::CudaError(std::string(#call) + ": " + cudaGetErrorString(saltation_err_), \
                                   __FILE__, __LINE__);                                         \
  } while (0)

// After a <<<...>>> launch: launch-configuration errors now, execution errors at the sync.
#define SALTATION_CUDA_CHECK_LAUNCH()                    \
  do {                                                   \
    SALTATION_CUDA_CHECK(cudaGetLastError());            \
    SALTATION_CUDA_CHECK(cudaDeviceSynchronize());       \
  } while (0)
