#pragma once
// Every CUDA runtime call and every launch goes through these: a failure becomes a
// saltation::CudaError carrying the call site, never an exit(). A failed call also leaves its
// error in the runtime's per-thread last-error slot; it is cleared before the throw, so the next
// launch check (cudaGetLastError) of a caller that caught the CudaError and went on does not
// report the old failure as its own. Sticky errors (a device fault) cannot be cleared: every later
// call in the process fails with them, and says so.
#include <cuda_runtime.h>

#include <string>

#include "saltation/errors.hpp"

#define SALTATION_CUDA_CHECK(call)                                                                           \
  do {                                                                                                       \
    cudaError_t saltation_err_ = (call);                                                                     \
    if (saltation_err_ != cudaSuccess) {                                                                     \
      (void)cudaGetLastError();                                                                              \
      throw ::saltation::CudaError(std::string(#call) + ": " + cudaGetErrorString(saltation_err_), __FILE__, \
                                   __LINE__);                                                                \
    }                                                                                                        \
  } while (0)

// After a <<<...>>> launch: launch-configuration errors now, execution errors at the sync.
#define SALTATION_CUDA_CHECK_LAUNCH()              \
  do {                                             \
    SALTATION_CUDA_CHECK(cudaGetLastError());      \
    SALTATION_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)
