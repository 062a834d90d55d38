#pragma once
// The CPU driver: an OpenMP loop over core::integrate_one. Each trajectory is independent and
// deterministic, so results do not depend on the thread count or the schedule.
#include <omp.h>

#include <cstddef>
#include <vector>

#include "saltation/core/integrate_one.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"

namespace saltation::cpu {

// theta is SoA: parameter p of trajectory i at theta[p * n + i]. `options` must be normalized.
template <class Model>
void solve(const Model& model, const double* theta, std::size_t n, const Options& options, const ResultView& out) {
  constexpr int P = Model::P;
  const long long count = static_cast<long long>(n);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
  {
    // Each thread gathers its row into a contiguous buffer: one trajectory reads its
    // parameters many times per step, and strided reads across a large batch would miss cache.
    std::vector<double> row(P);
#pragma omp for schedule(dynamic, 16)
    for (long long i = 0; i < count; ++i) {
      for (int p = 0; p < P; ++p) row[p] = theta[static_cast<std::size_t>(p) * n + i];
      const core::RowParams th{row.data(), 1};
      if (options.sensitivities)
        core::integrate_one<true>(model, options, th, static_cast<std::size_t>(i), out);
      else
        core::integrate_one<false>(model, options, th, static_cast<std::size_t>(i), out);
    }
  }
}

}  // namespace saltation::cpu
