#pragma once
// Declaration of the CUDA driver. Its definition is in kernels/solve.cuh (compiled by nvcc);
// the library instantiates it for the built-in models, and a user model instantiates it by
// including kernels/solve.cuh in one of the user's .cu files.
#include <cstddef>

#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation::cuda {

// theta: host SoA batch. Runs one thread per trajectory on the current device, in chunks sized to
// fit its free memory, and copies the results into `out` (already sized, holding the defaults).
// `options` must be normalized. `progress`, when given, is called after each chunk (about 20
// then, more when memory asks). Throws InvalidInput when `out` is not sized for the batch and
// options, and CudaError (with the file and line of the first failed CUDA call) on a CUDA failure
// or when not even one trajectory fits in device memory; `out` then holds the results of the
// chunks finished before the failure and the defaults elsewhere. docs/gpu.md has the details.
template <class Model>
void solve(const Model& model, const double* theta, std::size_t n, const Options& options, Result& out,
           const Progress* progress);

// The same run for the other outputs (docs/architecture.md, "Outputs"): the final state only,
// into `out` sized for the batch with event capacity 0; the objective observations, into `out`
// sized for the batch and holding its objective and design lists. Instantiated for the built-in
// models; a user model instantiates those it calls as it instantiates solve.
template <class Model>
void solve_final_state(const Model& model, const double* theta, std::size_t n, const Options& options, Result& out,
                       const Progress* progress);
template <class Model>
void observe(const Model& model, const double* theta, std::size_t n, const Options& options, Observation& out,
             const Progress* progress);

}  // namespace saltation::cuda
