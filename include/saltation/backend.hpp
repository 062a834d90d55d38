#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace saltation {

// Where a batch runs: the one place that chooses a backend and discovers devices, used by the
// trajectory solver and the disk engine alike (library saltation_core). Auto picks CUDA when the library was built with it and a device is present.
enum class Backend { Cpu, Cuda, Auto };

Backend parse_backend(const std::string& name);  // "cpu" | "cuda" | "auto"; throws InvalidInput
const char* backend_name(Backend b);

// What the CUDA runtime says about devices: their count, and its error text when it could not
// answer (no driver, a driver too old for this runtime, ...). "" when it answered.
struct CudaDevice {
  std::string name;
  int major = 0, minor = 0;    // compute capability
  std::size_t memory = 0;      // bytes
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

}  // namespace saltation
