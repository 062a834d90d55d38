// Backend choice and device discovery: the one place both engines ask.
#include "saltation/backend.hpp"

#include <string>

#include "saltation/errors.hpp"

#ifdef SALTATION_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace saltation {

Backend parse_backend(const std::string& name) {
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  if (name == "auto") return Backend::Auto;
  throw InvalidInput("backend", -1, "\"" + name + "\" is not one of \"cpu\", \"cuda\", \"auto\"");
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
    case Backend::Auto: return "auto";
  }
  return "?";
}

bool cuda_compiled() {
#ifdef SALTATION_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

CudaDevices query_cuda_devices() {
  CudaDevices d;
#ifdef SALTATION_HAVE_CUDA
  const cudaError_t e = cudaGetDeviceCount(&d.count);
  if (e != cudaSuccess) {
    // No driver, or one too old for this runtime: no device, but the reason is kept so that a
    // GPU check can tell "no GPU" from "broken driver".
    d.count = 0;
    d.error = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();
  }
  (void)cudaDriverGetVersion(&d.driver_version);
  (void)cudaRuntimeGetVersion(&d.runtime_version);
  for (int i = 0; i < d.count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      d.error = "cudaGetDeviceProperties failed for device " + std::to_string(i);
      (void)cudaGetLastError();
      continue;
    }
    d.devices.push_back({prop.name, prop.major, prop.minor, prop.totalGlobalMem, prop.multiProcessorCount});
  }
#else
  d.error = "this build has no CUDA backend";
#endif
  return d;
}

bool cuda_device_available() {
  static const bool available = query_cuda_devices().count > 0;
  return available;
}

Backend resolve_backend(Backend b) {
  if (b == Backend::Auto) return cuda_device_available() ? Backend::Cuda : Backend::Cpu;
  if (b == Backend::Cuda && !cuda_device_available()) {
    const CudaDevices d = query_cuda_devices();
    throw CudaError(cuda_compiled() ? "backend \"cuda\" was requested but no CUDA device is available" +
                                          (d.error.empty() ? std::string() : " (" + d.error + ")")
                                    : std::string("backend \"cuda\" was requested but this build has no CUDA backend"),
                    __FILE__, __LINE__);
  }
  return b;
}

}  // namespace saltation
