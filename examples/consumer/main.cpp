// Solves the relief valve on the CPU with the header-only library (saltation::headers alone) and
// checks the switching times against their closed forms. Exits 1 when a switching time is off.
#include <cstdio>
#include <exception>

#include "relief_valve.hpp"
#include "saltation/cpu.hpp"
#include "saltation/solve.hpp"  // validate_batch (saltation::solve itself needs saltation::core)
#include "switching_times.hpp"

int main() {
  using vessel::ReliefValve;
  try {
    const ReliefValve model;
    model.validate_config();
    const saltation::Batch batch = vessel::test_batch();
    const saltation::Options options = saltation::normalize_options(vessel::test_options());
    saltation::validate_batch(model, batch);
    saltation::Result result(batch.n, ReliefValve::N, ReliefValve::P, options.event_capacity, options.sensitivities);
    saltation::cpu::solve(model, batch.theta.data(), batch.n, options, result.view());
    const int failures = vessel::check_switching_times(batch, result);
    std::printf(
        failures ? "relief_valve: %d checks failed\n" : "relief_valve: switching times match the closed forms\n",
        failures);
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "relief_valve: %s\n", e.what());
    return 1;
  }
}
