#pragma once
// The CPU driver: an OpenMP loop over core::integrate_one, for any output policy. Each trajectory is independent and
// deterministic, so results do not depend on the thread count or the schedule.
#include <omp.h>

#include <cstddef>
#include <vector>

#include "saltation/core/trajectory.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/progress_counter.hpp"
#include "saltation/result.hpp"

namespace saltation::cpu {

namespace detail {

// Rows the scalar driver's dynamic schedule hands a thread at a time.
constexpr long long kScheduleChunk = 16;

// Threads for n trajectories: the option, else OpenMP's default; no more than chunks of
// kScheduleChunk rows: a thread beyond them gets no trajectory, and on a busy machine waking it and
// waiting for it can cost more than a small batch itself (bench/README.md, "Small batches").
inline int thread_count(const Options& options, std::size_t n) {
  const long long chunks = (static_cast<long long>(n) + kScheduleChunk - 1) / kScheduleChunk;
  const int wanted = options.threads > 0 ? options.threads : omp_get_max_threads();
  return chunks < wanted ? static_cast<int>(chunks) : wanted;
}

}  // namespace detail

// theta is SoA: parameter p of trajectory i at theta[p * n + i]. `options` must be normalized.
// `Output` is what each trajectory keeps (core::FullRecord, FinalState or ObjectiveObserver) and
// `out` its view. One trajectory at a time per thread (the SIMD lanes are cpu_lanes.hpp's), with
// the step method of options.method.
template <class Output = core::FullRecord, class Model>
void solve(const Model& model, const double* theta, std::size_t n, const Options& options,
           const typename Output::View& out, const Progress* progress = nullptr) {
  constexpr int P = Model::P;
  ProgressCounter counter(progress, n);
  const long long count = static_cast<long long>(n);
#pragma omp parallel num_threads(detail::thread_count(options, n))
  {
    // Each thread gathers its row into a contiguous buffer: one trajectory reads its
    // parameters many times per step, and strided reads across a large batch would miss cache.
    std::vector<double> row(P);
#pragma omp for schedule(dynamic, detail::kScheduleChunk)
    for (long long i = 0; i < count; ++i) {
      // A requested stop skips the rest (an OpenMP loop cannot break); the results are then
      // incomplete, and Interrupted is thrown below.
      if (interrupt_requested()) continue;
      for (int p = 0; p < P; ++p) row[p] = theta[static_cast<std::size_t>(p) * n + i];
      const RowParams th{row.data(), 1};
      const auto at = static_cast<std::size_t>(i);
      if (options.method == Method::Dopri5) {
        if (options.sensitivities) core::integrate_one<true, Output, Method::Dopri5>(model, options, th, at, out);
        else core::integrate_one<false, Output, Method::Dopri5>(model, options, th, at, out);
      } else if (options.sensitivities) {
        core::integrate_one<true, Output>(model, options, th, at, out);
      } else {
        core::integrate_one<false, Output>(model, options, th, at, out);
      }
      counter.one_done();
    }
  }
  throw_if_interrupted();
  counter.finish();
}

}  // namespace saltation::cpu
