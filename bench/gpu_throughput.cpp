// Backend throughput: trajectory-steps per second of the CPU backend (all cores) and the CUDA
// backend on the same terrain-ball batches, forward and with sensitivities, and the speed-up.
// Without a device only the CPU rows are measured. Output: a table on stdout and, with
// --json FILE, the same numbers as JSON.
#include <omp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

using namespace saltation;

namespace {

// Median wall time of `reps` solves (after one warm-up), in seconds.
template <class Model>
double time_solve(const Model& m, const Batch& b, const Options& o, Backend backend, int reps) {
  solve(m, b, o, backend);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto s = std::chrono::steady_clock::now();
    solve(m, b, o, backend);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <int K>
void measure(nlohmann::json& rows, std::size_t cpu_n, std::size_t gpu_n, bool gpu, int reps) {
  TerrainBall<K> m;
  const double steps = 3.0 / 1e-3;
  for (bool sens : {false, true}) {
    const Options o = saltation_bench::seed_options(sens, 0);
    const Batch bc = saltation_bench::terrain_batch(cpu_n, K);
    const double tc = time_solve(m, bc, o, Backend::Cpu, reps);
    const double cpu_rate = cpu_n * steps / tc;
    nlohmann::json row = {{"K", K},
                          {"P", TerrainBall<K>::P},
                          {"sensitivities", sens},
                          {"cpu_n", cpu_n},
                          {"cpu_threads", omp_get_max_threads()},
                          {"cpu_seconds", tc},
                          {"cpu_traj_steps_per_s", cpu_rate}};
    std::printf("K=%3d P=%3d %-5s  CPU n=%7zu %8.3f s %10.3e traj-steps/s", K, TerrainBall<K>::P, sens ? "sens" : "fwd",
                cpu_n, tc, cpu_rate);
    if (gpu) {
      const Batch bg = saltation_bench::terrain_batch(gpu_n, K);
      const double tg = time_solve(m, bg, o, Backend::Cuda, reps);
      const double gpu_rate = gpu_n * steps / tg;
      row["gpu_n"] = gpu_n;
      row["gpu_seconds"] = tg;
      row["gpu_traj_steps_per_s"] = gpu_rate;
      row["speedup"] = gpu_rate / cpu_rate;
      std::printf("  GPU n=%8zu %8.3f s %10.3e traj-steps/s  speed-up %7.1fx", gpu_n, tg, gpu_rate,
                  gpu_rate / cpu_rate);
    }
    std::printf("\n");
    std::fflush(stdout);
    rows.push_back(row);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saltation backend throughput (terrain ball, bench/terrain_batch.hpp: dt = 1e-3, t_final = 3)"};
  std::string json_path;
  std::size_t cpu_n = 256, gpu_n = 1 << 20;
  int reps = 3;
  app.add_option("--json", json_path, "also write the numbers here");
  app.add_option("--cpu-n", cpu_n, "CPU batch size");
  app.add_option("--gpu-n", gpu_n, "GPU batch size for K = 3 (K = 24 uses a quarter, K = 192 a sixty-fourth)");
  app.add_option("--reps", reps, "timed repetitions (median)");
  CLI11_PARSE(app, argc, argv);
  const bool gpu = cuda_device_available();
  std::printf("saltation throughput: CPU %d threads, CUDA %s\n", omp_get_max_threads(), gpu ? "present" : "absent");
  nlohmann::json rows = nlohmann::json::array();
  measure<3>(rows, cpu_n, gpu_n, gpu, reps);
  measure<24>(rows, cpu_n, gpu_n / 4, gpu, reps);
  measure<192>(rows, cpu_n / 4, gpu_n / 64, gpu, reps);
  if (!json_path.empty()) std::ofstream(json_path) << nlohmann::json{{"rows", rows}}.dump(1) << "\n";
  return 0;
}
