#pragma once
// Declaration of the CUDA driver. Its definition is in kernels/solve.cuh (compiled by nvcc);
// the library instantiates it for the built-in models, and a user model instantiates it by
// including kernels/solve.cuh in one of the user's .cu files.
#include <cstddef>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation::cuda {

// A CUDA failure in the middle of a chunked run: rows [0, completed()) of rows() had finished (in
// the driver, their results are in the output); the message is the failed call's (cause()), then
// the rows. Wrapping a ChunkFailure (an outer loop over the driver's runs) keeps its cause.
class ChunkFailure : public CudaError {
 public:
  ChunkFailure(const CudaError& failure, std::size_t completed, std::size_t rows)
      : CudaError(failure),
        completed_(completed),
        rows_(rows),
        cause_(cause_of(failure)),
        message_(cause_ + "; rows [0, " + std::to_string(completed) + ") of " + std::to_string(rows) +
                 " had completed") {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& cause() const { return cause_; }
  std::size_t completed() const { return completed_; }
  std::size_t rows() const { return rows_; }

 private:
  static std::string cause_of(const CudaError& failure) {
    const auto* chunk = dynamic_cast<const ChunkFailure*>(&failure);
    return chunk ? chunk->cause() : failure.what();
  }
  std::size_t completed_, rows_;
  std::string cause_, message_;
};

// Runs `chunks(completed)`, the chunk loop of a run of `rows` rows that advances `completed` as
// the rows' results land in order; a CudaError it throws comes out as a ChunkFailure naming the
// rows completed by then. The CUDA driver's loop runs through it (kernels/solve.cuh).
template <class Chunks>
void run_reporting_completed_rows(std::size_t rows, Chunks&& chunks) {
  std::size_t completed = 0;
  try {
    chunks(completed);
  } catch (const ChunkFailure&) {
    throw;
  } catch (const CudaError& failure) {
    throw ChunkFailure(failure, completed, rows);
  }
}

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
