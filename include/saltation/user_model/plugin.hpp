#pragma once
// Included first by every source the generator writes (codegen.cpp): a model file compiled at
// run time into a shared library that links no saltation library. The few functions the
// header-only drivers call out of line are the loading process's, reached through the host
// table it passes (plugin_abi.hpp); the entry point hands back the model's drivers.
#define SALTATION_RUNTIME_PLUGIN 1

#include <atomic>
#include <cstdint>
#include <new>
#include <string>

#include "saltation/model_drivers.hpp"
#include "saltation/user_model/plugin_abi.hpp"

namespace saltation::user_model {
inline const PluginHost*& plugin_host() {
  static const PluginHost* host = nullptr;
  return host;
}
}  // namespace saltation::user_model

namespace saltation {
std::atomic<int>& interrupt_request() { return *user_model::plugin_host()->interrupt_request; }
Backend resolve_backend(Backend b) { return user_model::plugin_host()->resolve_backend(b); }
std::uint64_t result_bytes_per_trajectory(int N, int P, int C, bool sensitivities) {
  return user_model::plugin_host()->result_bytes_per_trajectory(N, P, C, sensitivities);
}
void check_host_memory(std::uint64_t rows, std::uint64_t bytes_per_row, const std::string& what,
                       const std::string& way_out, std::uint64_t budget) {
  user_model::plugin_host()->check_host_memory(rows, bytes_per_row, what, way_out, budget);
}
namespace cpu {
SimdRequest simd_request() { return user_model::plugin_host()->simd_request(); }
}  // namespace cpu
}  // namespace saltation

// The entry points of a plugin for `Model` built for the cache key `key` (the only symbols it exports).
#define SALTATION_USER_MODEL_PLUGIN(Model, key)                                                                       \
  extern "C" __attribute__((visibility("default"))) const saltation::ModelDrivers* saltation_user_model_make_drivers( \
      const saltation::user_model::PluginHost* host, const double* constants) {                                       \
    if (!host || host->abi_version != saltation::user_model::kPluginAbiVersion) return nullptr;                       \
    saltation::user_model::plugin_host() = host;                                                                      \
    Model model;                                                                                                      \
    for (int k = 0; k < Model::kConstants; ++k) model.c[k] = constants[k];                                            \
    return new (std::nothrow) saltation::ModelDriversOf<Model>(model);                                                \
  }                                                                                                                   \
  extern "C" __attribute__((visibility("default"))) const char* saltation_user_model_key() { return key; }
