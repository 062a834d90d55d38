// The host's share of a CUDA solve, timed without a device: what the CUDA driver does on the host
// around its kernels for a terrain-ball batch of final states (the runner's output), as it was and
// as it is. As it was: the Result filled with its defaults, the parameter rows packed and each
// chunk's results unpacked, all by one thread. As it is: the Result left unfilled (the unpacking
// is its first touch) and the packing and unpacking shared by every thread. The chunks are the
// driver's (pipeline_chunk); the staging stands for the pinned arrays, allocated once as the
// pinned cache keeps them. Each figure is the median of --reps, the Result's release included.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../kernels/launch_shape.hpp"
#include "saltation/batch.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/result.hpp"

using namespace saltation;

namespace {

// Seconds of one host pass: the Result, every chunk's parameter rows packed and results unpacked.
double host_pass(const Batch& batch, int N, std::size_t chunk, bool sens, Fill fill, std::vector<double>& theta_staging,
                 const Result& result_staging) {
  const auto start = std::chrono::steady_clock::now();
  {
    Result out(batch.n, N, batch.P, 0, sens, fill);
    for (std::size_t first = 0; first < batch.n; first += chunk) {
      const std::size_t count = std::min(chunk, batch.n - first);
      pack_chunk(batch.theta.data(), batch.n, batch.P, first, count, theta_staging.data());
      unpack_chunk(out, result_staging, first, count);
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <int K>
void measure(std::size_t n, int reps, int threads) {
  constexpr int N = TerrainBall<K>::N, P = TerrainBall<K>::P;
  const Batch batch(n, P);
  const std::size_t chunk = cuda::detail::pipeline_chunk(n);
  for (const bool sens : {false, true}) {
    std::vector<double> theta_staging(static_cast<std::size_t>(P) * chunk);
    const Result result_staging(chunk, N, P, 0, sens);
    // As it was; unfilled on one thread (the fill's share); as it is.
    const struct {
      int threads;
      Fill fill;
    } passes[3] = {{1, Fill::Defaults}, {1, Fill::None}, {threads, Fill::None}};
    double ms[3];
    for (int k = 0; k < 3; ++k) {
      omp_set_num_threads(passes[k].threads);
      std::vector<double> t;
      for (int r = 0; r < reps; ++r)
        t.push_back(host_pass(batch, N, chunk, sens, passes[k].fill, theta_staging, result_staging));
      std::sort(t.begin(), t.end());
      ms[k] = 1e3 * t[t.size() / 2];
    }
    std::printf(
        "K=%2d %-4s n=%7zu chunk=%6zu  as it was %7.1f ms  unfilled, 1 thread %7.1f ms  as it is, %d threads %7.1f "
        "ms\n",
        K, sens ? "sens" : "fwd", n, chunk, ms[0], ms[1], threads, ms[2]);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the host's share of a CUDA solve (terrain ball, final states), as it was and as it is"};
  std::size_t rows = std::size_t(1) << 20;
  int reps = 5;
  int threads = omp_get_max_threads();
  std::vector<int> bumps = {3, 24};
  app.add_option("--rows", rows, "trajectories");
  app.add_option("--reps", reps, "passes per figure (the median is printed)")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "threads of the pass as it is (default: OpenMP's)")->check(CLI::PositiveNumber);
  app.add_option("--K", bumps, "terrain bumps, any of 3 and 24")->check(CLI::IsMember({3, 24}));
  CLI11_PARSE(app, argc, argv);
  for (const int K : bumps) {
    if (K == 3) measure<3>(rows, reps, threads);
    if (K == 24) measure<24>(rows, reps, threads);
  }
  return 0;
}
