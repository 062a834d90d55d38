#pragma once
// Declaration of the CUDA driver. Its definition is in kernels/solve.cuh (compiled by nvcc);
// the library instantiates it for the built-in models, and a user model instantiates it by
// including kernels/solve.cuh in one of the user's .cu files.
#include <cstddef>

#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation::cuda {

// theta: host SoA batch. Copies it to the device, runs one thread per trajectory, copies the
// results into `out` (already sized). `options` must be normalized. With `progress`, the batch
// runs in chunks of launches and progress is reported after each. Throws CudaError.
template <class Model>
void solve(const Model& model, const double* theta, std::size_t n, const Options& options, Result& out,
           const Progress* progress);

}  // namespace saltation::cuda
