#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "saltation/core/options.hpp"

namespace saltation {

// Where a batch runs: the one place that chooses a backend and discovers devices, used by the
// trajectory solver and the disk engine alike (library saltation_core). Auto picks CUDA when the library was built with
// it and a device is present.
enum class Backend { Cpu, Cuda, Auto };

Backend parse_backend(const std::string& name);  // "cpu" | "cuda" | "auto"; throws InvalidInput
const char* backend_name(Backend b);

// What the CUDA runtime says about devices: their count, and its error text when it could not
// answer (no driver, a driver too old for this runtime, ...). "" when it answered.
struct CudaDevice {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  std::size_t memory = 0;    // bytes
  int multiprocessors = 0;
};
struct CudaDevices {
  int count = 0;
  std::string error;
  int driver_version = 0, runtime_version = 0;  // e.g. 13000 for 13.0; 0 when unknown
  std::vector<CudaDevice> devices;
};
CudaDevices query_cuda_devices();
// True when this build has the CUDA backend and at least one usable device is present.
bool cuda_device_available();
// True when this build compiled the CUDA backend (whether or not a device is present).
bool cuda_compiled();
// Resolves Auto to Cpu or Cuda; Cuda without a device throws CudaError.
Backend resolve_backend(Backend b);
// What a run of `options` asking for `requested` asks for: Auto is the CPU for dopri5, whose CUDA
// kernels (backend cuda) have yet to be checked and timed on a device; anything else as requested.
inline Backend backend_for_method(Backend requested, const Options& options) {
  return requested == Backend::Auto && options.method != Method::Rk4 ? Backend::Cpu : requested;
}
// The one backend dispatch of the trajectory solver, the disk engine and the sweep: runs on_cpu()
// or on_cuda() where `b` resolves to, and returns that backend.
template <class OnCpu, class OnCuda>
Backend run_on_backend(Backend b, OnCpu&& on_cpu, OnCuda&& on_cuda) {
  const Backend resolved = resolve_backend(b);
  if (resolved == Backend::Cuda) {
    on_cuda();
  } else {
    on_cpu();
  }
  return resolved;
}

// ---- Memory, checked before a run allocates (docs/reliability.md, "Resource limits"). The CUDA
// driver sizes its device chunks to the device's free memory (cudaMemGetInfo) and refuses a
// trajectory that does not fit with its own estimate; the host arrays of a run are checked here.

// Host bytes of one trajectory's full record (Result): status, t_end, qf, n_events, the event
// arrays of capacity C and, with sensitivities, dqf and the event derivatives.
std::uint64_t result_bytes_per_trajectory(int N, int P, int C, bool sensitivities);
// MemAvailable of /proc/meminfo in bytes; 0 where it cannot be read.
std::uint64_t available_host_memory();
// Throws InvalidInput("memory") when `rows` x `bytes_per_row` (what the run will allocate for
// `what`) exceed `budget` or, with budget 0, the host's available memory; the message gives the
// estimate, the limit and `way_out` (how to run it in less). Nothing is checked where neither is known.
void check_host_memory(std::uint64_t rows, std::uint64_t bytes_per_row, const std::string& what,
                       const std::string& way_out, std::uint64_t budget = 0);

}  // namespace saltation
