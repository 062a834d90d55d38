// Digest of every CPU result array on fixed batches of each built-in model and of a nonlinear
// user model (the impact pendulum of examples/, which takes the generic path: no affine flow, no
// analytic partials), forward and with sensitivities: a refactor that must not change results
// shows the same lines before and after. `result_digest [n]`. The terrain ball's batch is the
// benchmarks' (bench/terrain_batch.hpp); the current digests are in bench/README.md, "Result
// digests".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../examples/impact_pendulum/impact_pendulum.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

namespace {

template <class T>
void mix(std::uint64_t& h, const saltation::HostArray<T>& v) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t k = 0; k < v.size() * sizeof(T); ++k) h = (h ^ b[k]) * 1099511628211ull;
}

void print(const char* model, int P, std::size_t n, bool sens, const saltation::Result& r) {
  std::uint64_t h = 1469598103934665603ull;
  saltation::zip_arrays(r, r, [&h](const auto& array, const auto&) { mix(h, array); });  // every array, in order
  std::printf("%s P=%d n=%zu sensitivities=%d digest=%016llx\n", model, P, n, int(sens),
              static_cast<unsigned long long>(h));
}

template <int K>
void digest_terrain(std::size_t n) {
  const saltation::Batch batch = saltation_bench::terrain_batch(n, K);
  for (bool sens : {false, true}) {
    const saltation::Result r = saltation::solve(saltation::TerrainBall<K>{}, batch,
                                                 saltation_bench::seed_options(sens, 2), saltation::Backend::Cpu);
    char name[32];
    std::snprintf(name, sizeof name, "K=%d", K);
    print(name, 5 + 3 * K, n, sens, r);
  }
}

// Rows of `Model` with parameter p drawn from U(lo[p], hi[p]) by a fixed generator.
template <class Model>
void digest_model(const char* name, const Model& m, std::size_t n, const double (&lo)[Model::P],
                  const double (&hi)[Model::P], double t_final, double dt) {
  saltation::Batch batch(n, Model::P);
  std::mt19937_64 rng(20261206u);
  for (std::size_t i = 0; i < n; ++i)
    for (int p = 0; p < Model::P; ++p)
      batch.at(i, p) = lo[p] + (hi[p] - lo[p]) * (static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0));
  for (bool sens : {false, true}) {
    saltation::Options o;
    o.t_final = t_final;
    o.dt = dt;
    o.sensitivities = sens;
    o.threads = 2;
    print(name, Model::P, n, sens, saltation::solve(m, batch, o, saltation::Backend::Cpu));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
  digest_terrain<3>(n);
  digest_terrain<24>(n);
  digest_terrain<192>(n / 8);
  // h0, v0, e
  digest_model("bouncing_ball", saltation::BouncingBall{}, n, {0.5, -1.0, 0.5}, {2.0, 1.0, 0.9}, 3.0, 1e-3);
  // T0, T_env, tau, Q, T_low, T_high
  digest_model("thermostat", saltation::Thermostat{}, n, {18.0, 10.0, 0.5, 15.0, 19.0, 21.0},
               {22.0, 15.0, 2.0, 25.0, 19.5, 21.5}, 10.0, 1e-3);
  // phi0, omega0, L, c, e, wall
  digest_model("impact_pendulum", pendulum::ImpactPendulum{}, n, {-0.5, 0.5, 0.5, 0.0, 0.5, 0.2},
               {-0.1, 2.0, 2.0, 0.2, 0.9, 0.5}, 5.0, 1e-3);
  return 0;
}
