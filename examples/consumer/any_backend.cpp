// Solves the relief valve with saltation::solve (saltation::core: the backend choice) on the CPU
// and, where this build compiled cuda_driver.cu and a device is present, on CUDA; checks the
// switching times on each. Exits 1 when a check fails.
#include <cstdio>
#include <exception>

#include "relief_valve.hpp"
#include "saltation/backend.hpp"
#include "saltation/solve.hpp"
#include "switching_times.hpp"

int main() {
  using saltation::Backend;
  int failures = 0;
  for (const Backend backend : {Backend::Cpu, Backend::Cuda}) {
    const char* name = saltation::backend_name(backend);
    if (backend == Backend::Cuda &&
        !(saltation::has_cuda_driver<vessel::ReliefValve>::value && saltation::cuda_device_available())) {
      std::printf("relief_valve_any_backend: %s not run (no CUDA driver built for the model, or no device)\n", name);
      continue;
    }
    try {
      const saltation::Batch batch = vessel::test_batch();
      const saltation::Result result = saltation::solve(vessel::ReliefValve{}, batch, vessel::test_options(), backend);
      const int backend_failures = vessel::check_switching_times(batch, result);
      std::printf("relief_valve_any_backend: %s: %d checks failed\n", name, backend_failures);
      failures += backend_failures;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "relief_valve_any_backend: %s: %s\n", name, e.what());
      ++failures;
    }
  }
  return failures ? 1 : 0;
}
