// Model files against the hand-written models they describe (docs/models.md, bench/README.md
// "Model files"): the same batch solved through AnyModel on one CPU thread, forward and with
// sensitivities, best of `repeats`; and what finding or compiling the file's library took.
//   bench_model_files [n] [repeats]
// Run it twice in a fresh SALTATION_CACHE_DIR: the first run compiles, the second finds the cache.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../examples/impact_pendulum/impact_pendulum.hpp"
#include "saltation/any_model.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/user_model/user_model.hpp"

namespace {

using saltation::AnyModel;
using saltation::Backend;
using saltation::Batch;

// `model` is an AnyModel (a model file's) or a hand-written model type: both end in saltation::solve.
template <class Model>
double best_seconds(const Model& model, const Batch& batch, bool sensitivities, int repeats) {
  saltation::Options o;
  o.t_final = 5.0;
  o.dt = 1e-3;
  o.event_capacity = 16;
  o.threads = 1;
  o.sensitivities = sensitivities;
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    saltation::Result result;
    if constexpr (std::is_same_v<Model, AnyModel>) result = model.solve(batch, o, Backend::Cpu);
    else result = saltation::solve(model, batch, o, Backend::Cpu);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Rows inside both models' domains: uniform in [lo[p], hi[p]].
Batch rows(std::size_t n, const std::vector<double>& lo, const std::vector<double>& hi) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Batch b(n, lo.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < lo.size(); ++p) b.at(i, p) = lo[p] + (hi[p] - lo[p]) * u(rng);
  return b;
}

AnyModel from_file(const std::string& name) {
  const std::string path = std::string(SALTATION_SOURCE_DIR) + "/examples/models/" + name + ".json";
  const auto spec = std::make_shared<const saltation::user_model::ModelSpec>(saltation::io::read_model_file(path));
  const saltation::user_model::BuildReport build = saltation::user_model::build_model(*spec, Backend::Cpu);
  std::printf("%s: %s in %.3f s\n", name.c_str(), build.cached ? "found in the cache" : "compiled", build.seconds);
  return saltation::user_model::load_model(spec, nlohmann::json::object());
}

template <class Written>
void compare(const char* what, const AnyModel& file, const Written& written, const Batch& batch, int repeats) {
  for (bool sens : {false, true}) {
    const double t_file = best_seconds(file, batch, sens, repeats);
    const double t_written = best_seconds(written, batch, sens, repeats);
    std::printf("%-16s %-15s n=%zu: model file %.4f s, hand-written %.4f s, ratio %.3f\n", what,
                sens ? "sensitivities" : "forward", batch.n, t_file, t_written, t_file / t_written);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const AnyModel pendulum_file = from_file("impact_pendulum");
  const AnyModel ball_file = from_file("bouncing_ball");
  // phi0, omega0, L, c, e, wall: swinging from below into a wall at 0.1 rad, with damping.
  compare("impact_pendulum", pendulum_file, pendulum::ImpactPendulum{},
          rows(n, {-1.0, -1.0, 0.5, 0.0, 0.5, 0.1}, {-0.3, 1.0, 2.0, 0.2, 0.9, 0.1}), repeats);
  // h0, v0, e
  compare("bouncing_ball", ball_file, saltation::BouncingBall{}, rows(n, {0.5, -1.0, 0.5}, {2.0, 1.0, 0.9}), repeats);
}
