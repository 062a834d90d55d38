#pragma once
// Progress of an OpenMP loop over a batch (trajectories, disk systems), for the drivers that run
// one: finished items counted across the team's threads; only the calling thread (the team's
// master) reports, about every 1 % of the batch, and finish() once at the end.
#include <omp.h>

#include <atomic>
#include <cstddef>

#include "saltation/progress.hpp"

namespace saltation {

class ProgressCounter {
 public:
  ProgressCounter(const Progress* progress, std::size_t n)
      : progress_(progress), n_(n), report_every_(n / 100 > 0 ? n / 100 : 1) {}
  void one_done() {
    if (!progress_) return;
    const std::size_t d = ++done_;
    if (omp_get_thread_num() == 0 && d < n_ && d - reported_ >= report_every_) {
      reported_ = d;
      (*progress_)(d, n_);
    }
  }
  void finish() const {
    if (progress_) (*progress_)(n_, n_);
  }

 private:
  const Progress* progress_;
  const std::size_t n_, report_every_;
  std::atomic<std::size_t> done_{0};
  std::size_t reported_ = 0;
};

}  // namespace saltation
