// What interior guard probes cost on nonlinear models without a guard bound (docs/models.md,
// "Probes"; bench/README.md, "Probe cost"): the same batch solved with probes 0 and probes 3 on one
// CPU thread, forward and with sensitivities, best of `repeats`, as ns per trajectory-step, with
// the events each finds. The models: the example's hand-written impact pendulum and two model
// files in bench/models (a forced Duffing oscillator with a stop, a pendulum with quadratic drag).
//   bench_probe_cost [n] [repeats]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../examples/impact_pendulum/impact_pendulum.hpp"
#include "file_models.hpp"

namespace {

constexpr double kTFinal = 20.0, kDt = 1e-3;

saltation::Options options(int probes, bool sensitivities) {
  saltation::Options o;
  o.t_final = kTFinal;
  o.dt = kDt;
  o.probes = probes;
  o.event_capacity = 64;
  o.threads = 1;
  o.sensitivities = sensitivities;
  return o;
}

long total_events(const saltation::Result& r) {
  long n = 0;
  for (int e : r.n_events) n += e;
  return n;
}

template <class Model>
void measure(const char* name, const Model& model, const saltation::Batch& batch, int repeats) {
  const double steps = static_cast<double>(batch.n) * (kTFinal / kDt);
  for (bool sens : {false, true}) {
    double ns[2];
    long events[2];
    for (int k = 0; k < 2; ++k) {
      const saltation::Options o = options(k == 0 ? 0 : 3, sens);
      ns[k] = 1e9 * saltation_bench::best_seconds(model, batch, o, repeats) / steps;
      events[k] = total_events(saltation_bench::solve_cpu(model, batch, o));
    }
    std::printf(
        "%-16s %-13s n=%zu: probes 0 %.1f ns/step (%ld events), probes 3 %.1f ns/step (%ld events), ratio %.3f\n", name,
        sens ? "sensitivities" : "forward", batch.n, ns[0], events[0], ns[1], events[1], ns[1] / ns[0]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  using saltation_bench::uniform_rows;
  // phi0, omega0, L, c, e, wall
  measure("impact_pendulum", pendulum::ImpactPendulum{},
          uniform_rows(n, {-1.0, -1.0, 0.5, 0.0, 0.5, 0.1}, {-0.3, 1.0, 2.0, 0.2, 0.9, 0.1}), repeats);
  for (const saltation_bench::ModelFileBox& box : saltation_bench::nonlinear_boxes())
    measure(box.name.c_str(), saltation_bench::model_file(box.path()), uniform_rows(n, box.lo, box.hi), repeats);
}
