#pragma once
// What a model compiled at run time and the process loading it agree on. The plugin is built by
// the same compiler from the same headers as its cache key says (user_model/toolchain), so C++
// types cross the boundary; what crosses is this table and the plugin's one entry point.
#include <atomic>
#include <cstdint>
#include <string>

#include "saltation/backend.hpp"
#include "saltation/cpu_lanes.hpp"

namespace saltation {
class ModelDrivers;
}

namespace saltation::user_model {

constexpr int kPluginAbiVersion = 2;

// The loading process's state and services that the plugin's copy of the header-only drivers
// calls (the plugin links no saltation library): the interrupt request a signal sets, the backend
// choice that knows the devices, the host-memory checks and what SALTATION_SIMD asks of the lanes.
struct PluginHost {
  int abi_version = kPluginAbiVersion;
  std::atomic<int>* interrupt_request = nullptr;
  Backend (*resolve_backend)(Backend) = nullptr;
  std::uint64_t (*result_bytes_per_trajectory)(int N, int P, int C, bool sensitivities) = nullptr;
  void (*check_host_memory)(std::uint64_t rows, std::uint64_t bytes_per_row, const std::string& what,
                            const std::string& way_out, std::uint64_t budget) = nullptr;
  cpu::SimdRequest (*simd_request)() = nullptr;
};

// The plugin's entry point, `extern "C"`: the model's drivers for its constants (in the file's
// order), new-allocated, or null when `host` is of another ABI version. `key` returns the cache
// key the plugin was built for, which the loader compares before trusting it.
using MakeDrivers = const ModelDrivers* (*)(const PluginHost* host, const double* constants);
using PluginKey = const char* (*)();
constexpr const char* kMakeDriversSymbol = "saltation_user_model_make_drivers";
constexpr const char* kPluginKeySymbol = "saltation_user_model_key";

}  // namespace saltation::user_model
