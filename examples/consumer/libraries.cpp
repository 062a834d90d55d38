// One call into each compiled library, linked by its installed name: the built-in models
// (saltation::saltation), the disk engine (saltation::dem) and the sweeps' distributions
// (saltation::sweep). Exits 1 when one of them answers wrongly.
#include <cstdio>
#include <exception>

#include "saltation/dem/engine.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/distributions.hpp"

int main() {
  try {
    const std::size_t n_models = saltation::builtin_models().size();
    std::printf("libraries: %zu built-in models, the first %s\n", n_models,
                saltation::builtin_models().at(0).name.c_str());

    // Two disks of radius 0.5 one apart, the first moving away from the second at unit speed.
    saltation::dem::DiskBatch disks = saltation::dem::DiskBatch::make(1, 2);
    for (int d = 0; d < 2; ++d) disks.r(0, d) = 0.5, disks.m(0, d) = 1.0, disks.x(0, d, 0) = d;
    disks.v(0, 0, 0) = -1.0;
    saltation::dem::RolloutOptions options;
    options.dt = 1e-3;
    options.n_frames = 1;
    options.stride = 100;
    const saltation::dem::RolloutResult rollout = saltation::dem::rollout(disks, options, saltation::Backend::Cpu);
    const double x = rollout.pos(0, 0, 0, 0);
    std::printf("libraries: the disk is at x = %.6f after 0.1 s\n", x);

    saltation::sweep::validate_distribution(saltation::sweep::Distribution::uniform(0.0, 1.0), "u");
    return n_models > 0 && x < -0.09 && x > -0.11 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libraries: %s\n", e.what());
    return 1;
  }
}
