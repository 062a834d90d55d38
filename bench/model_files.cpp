// Model files against the hand-written models they describe (docs/models.md, bench/README.md
// "Model files"): the same batch solved through AnyModel on one CPU thread, forward and with
// sensitivities, best of `repeats`; and what finding or compiling the file's library took.
//   bench_model_files [n] [repeats]
// Run it twice in a fresh SALTATION_CACHE_DIR: the first run compiles, the second finds the cache.
#include <cstdio>
#include <cstdlib>

#include "../examples/impact_pendulum/impact_pendulum.hpp"
#include "file_models.hpp"
#include "saltation/models/bouncing_ball.hpp"

namespace {

using saltation::AnyModel;
using saltation::Batch;
using saltation_bench::uniform_rows;

saltation::Options options(bool sensitivities) {
  saltation::Options o;
  o.t_final = 5.0;
  o.dt = 1e-3;
  o.event_capacity = 16;
  o.threads = 1;
  o.sensitivities = sensitivities;
  return o;
}

template <class Written>
void compare(const char* what, const AnyModel& file, const Written& written, const Batch& batch, int repeats) {
  for (bool sens : {false, true}) {
    const double t_file = saltation_bench::best_seconds(file, batch, options(sens), repeats);
    const double t_written = saltation_bench::best_seconds(written, batch, options(sens), repeats);
    std::printf("%-16s %-15s n=%zu: model file %.4f s, hand-written %.4f s, ratio %.3f\n", what,
                sens ? "sensitivities" : "forward", batch.n, t_file, t_written, t_file / t_written);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const AnyModel pendulum_file = saltation_bench::model_file("examples/models/impact_pendulum.json");
  const AnyModel ball_file = saltation_bench::model_file("examples/models/bouncing_ball.json");
  // phi0, omega0, L, c, e, wall: swinging from below into a wall at 0.1 rad, with damping.
  compare("impact_pendulum", pendulum_file, pendulum::ImpactPendulum{},
          uniform_rows(n, {-1.0, -1.0, 0.5, 0.0, 0.5, 0.1}, {-0.3, 1.0, 2.0, 0.2, 0.9, 0.1}), repeats);
  // h0, v0, e
  compare("bouncing_ball", ball_file, saltation::BouncingBall{}, uniform_rows(n, {0.5, -1.0, 0.5}, {2.0, 1.0, 0.9}),
          repeats);
}
