#pragma once
// The CPU driver: an OpenMP loop over core::integrate_one, for any output policy. Each trajectory is independent and
// deterministic, so results do not depend on the thread count or the schedule.
#include <omp.h>

#include <atomic>
#include <cstddef>
#include <vector>

#include "saltation/core/integrate_one.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation::cpu {

// theta is SoA: parameter p of trajectory i at theta[p * n + i]. `options` must be normalized.
// `Output` is what each trajectory keeps (core::FullRecord, FinalState or ObjectiveObserver) and
// `out` its view.
template <class Output = core::FullRecord, class Model>
void solve(const Model& model, const double* theta, std::size_t n, const Options& options,
           const typename Output::View& out, const Progress* progress = nullptr) {
  constexpr int P = Model::P;
  std::atomic<std::size_t> done{0};
  const std::size_t report_every = n / 100 > 0 ? n / 100 : 1;
  std::size_t reported = 0;
  const long long count = static_cast<long long>(n);
  const int wanted = options.threads > 0 ? options.threads : omp_get_max_threads();
  // No more threads than chunks of the schedule below: a thread beyond them gets no trajectory,
  // and on a busy machine waking it and waiting for it at the loop's end can cost more than a
  // small batch itself (a batch of 2: 24 ms with 2 threads, 0.7 ms with 1, load 12).
  constexpr long long chunk = 16;
  const long long chunks = (count + chunk - 1) / chunk;
  const int threads = chunks < wanted ? static_cast<int>(chunks) : wanted;
#pragma omp parallel num_threads(threads)
  {
    // Each thread gathers its row into a contiguous buffer: one trajectory reads its
    // parameters many times per step, and strided reads across a large batch would miss cache.
    std::vector<double> row(P);
#pragma omp for schedule(dynamic, chunk)
    for (long long i = 0; i < count; ++i) {
      // A requested stop skips the rest (an OpenMP loop cannot break); the results are then
      // incomplete, and Interrupted is thrown below.
      if (interrupt_requested()) continue;
      for (int p = 0; p < P; ++p) row[p] = theta[static_cast<std::size_t>(p) * n + i];
      const RowParams th{row.data(), 1};
      if (options.sensitivities)
        core::integrate_one<true, Output>(model, options, th, static_cast<std::size_t>(i), out);
      else
        core::integrate_one<false, Output>(model, options, th, static_cast<std::size_t>(i), out);
      if (progress) {
        const std::size_t d = ++done;
        // Only the calling thread (the team's master) reports.
        if (omp_get_thread_num() == 0 && d < n && d - reported >= report_every) {
          reported = d;
          (*progress)(d, n);
        }
      }
    }
  }
  throw_if_interrupted();
  if (progress) (*progress)(n, n);
}

}  // namespace saltation::cpu
