// Backend choice and device discovery: the one place both engines ask.
#include "saltation/backend.hpp"

#include <fstream>
#include <limits>
#include <sstream>
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

namespace {

// Saturating, so that a request of 10^10 rows x a large record cannot wrap around into "fits".
std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}

std::string gib(std::uint64_t bytes) {
  std::ostringstream s;
  s.precision(3);
  s << static_cast<double>(bytes) / double(std::uint64_t(1) << 30) << " GiB";
  return s.str();
}

}  // namespace

std::uint64_t result_bytes_per_trajectory(int N, int P, int C, bool sensitivities) {
  const std::uint64_t n = static_cast<std::uint64_t>(N), p = static_cast<std::uint64_t>(P),
                      c = static_cast<std::uint64_t>(C);
  // int: status, n_events, ev_guard[C], ev_flags[C]; double: t_end, qf[N], ev_t[C], ev_q[C][N], ev_q_plus[C][N].
  std::uint64_t bytes = sizeof(int) * (2 + 2 * c) + sizeof(double) * (1 + n + c + 2 * c * n);
  if (sensitivities) bytes += sizeof(double) * (n * p + c * p + c * n * p);  // dqf, ev_dt, ev_dq
  return bytes;
}

std::uint64_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  const std::string key = "MemAvailable:";
  for (std::string line; std::getline(meminfo, line);)
    if (line.compare(0, key.size(), key) == 0) return std::stoull(line.substr(key.size())) * 1024;  // in kB
  return 0;
}

void check_host_memory(std::uint64_t rows, std::uint64_t bytes_per_row, const std::string& what,
                       const std::string& way_out, std::uint64_t budget) {
  const std::uint64_t limit = budget ? budget : available_host_memory();
  const std::uint64_t bytes = times(rows, bytes_per_row);
  if (limit == 0 || bytes <= limit) return;
  throw InvalidInput("memory", -1,
                     what + " of " + std::to_string(rows) + " trajectories x " + std::to_string(bytes_per_row) +
                         " bytes would take about " + gib(bytes) + " of host memory, more than the " + gib(limit) +
                         (budget ? " of --memory-budget" : " available (MemAvailable)") + "; " + way_out);
}

}  // namespace saltation
