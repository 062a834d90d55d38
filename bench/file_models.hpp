#pragma once
// What the benchmarks of model files share: a model file loaded (compiled or found in the cache,
// saying which and how long it took), rows drawn uniformly in a box, the boxes of the two
// nonlinear model files in bench/models, and the best wall time of repeated CPU solves.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "saltation/any_model.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/user_model/user_model.hpp"

namespace saltation_bench {

// The model file at `path` (relative to the source tree), built for the CPU.
inline saltation::AnyModel model_file(const std::string& path) {
  const std::string full = std::string(SALTATION_SOURCE_DIR) + "/" + path;
  const auto spec = std::make_shared<const saltation::user_model::ModelSpec>(saltation::io::read_model_file(full));
  const saltation::user_model::BuildReport build = saltation::user_model::build_model(*spec, saltation::Backend::Cpu);
  std::printf("%s: %s in %.3f s\n", spec->name.c_str(), build.cached ? "found in the cache" : "compiled",
              build.seconds);
  return saltation::user_model::load_model(spec, nlohmann::json::object());
}

// n rows uniform in [lo[p], hi[p]] (a fixed seed).
inline saltation::Batch uniform_rows(std::size_t n, const std::vector<double>& lo, const std::vector<double>& hi) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  saltation::Batch b(n, lo.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < lo.size(); ++p) b.at(i, p) = lo[p] + (hi[p] - lo[p]) * u(rng);
  return b;
}

// The parameter box of a model file in bench/models: rows are uniform_rows(n, lo, hi). One box per
// model, shared by bench_probe_cost and the peers (bench/peers), so both solve the same rows.
struct ModelFileBox {
  std::string name;  // the model's name, its file bench/models/<name>.json
  std::vector<double> lo, hi;
  std::string path() const { return "bench/models/" + name + ".json"; }
};

inline const std::vector<ModelFileBox>& nonlinear_boxes() {
  static const std::vector<ModelFileBox> boxes = {
      // x0, v0, delta, alpha, beta, gamma, omega, e
      {"duffing_stop", {0.0, -0.5, 0.05, 0.5, 0.5, 0.8, 1.0, 0.6}, {0.9, 0.5, 0.2, 1.5, 1.5, 2.5, 1.4, 0.9}},
      // phi0, omega0, L, k, e
      {"pendulum_drag", {0.3, -1.0, 0.5, 0.05, 0.5}, {1.2, 1.0, 2.0, 0.5, 0.9}},
  };
  return boxes;
}

inline const ModelFileBox& nonlinear_box(const std::string& name) {
  for (const ModelFileBox& box : nonlinear_boxes())
    if (box.name == name) return box;
  throw std::invalid_argument("no parameter box for model " + name);
}

// A CPU solve of `model`: an AnyModel (a model file's) or a model type.
template <class Model>
saltation::Result solve_cpu(const Model& model, const saltation::Batch& batch, const saltation::Options& options) {
  if constexpr (std::is_same_v<Model, saltation::AnyModel>) return model.solve(batch, options, saltation::Backend::Cpu);
  else return saltation::solve(model, batch, options, saltation::Backend::Cpu);
}

// The best of `repeats` CPU solves.
template <class Model>
double best_seconds(const Model& model, const saltation::Batch& batch, const saltation::Options& options, int repeats) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    solve_cpu(model, batch, options);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace saltation_bench
