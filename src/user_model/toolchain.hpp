#pragma once
// Compiling a generated model into a shared library and loading it, through a cache keyed by
// everything the library depends on: the generated source, the library's headers, the compiler
// and its flags, and the target.
#include <string>

#include "saltation/backend.hpp"
#include "saltation/user_model/plugin_abi.hpp"
#include "saltation/user_model/user_model.hpp"

namespace saltation::user_model {

struct LoadedPlugin {
  MakeDrivers make = nullptr;
  BuildReport report;
};

// The plugin of `spec` for `backend` (Cpu or Cuda): from this process's table, else the cache,
// else compiled now. Safe when several processes build the same one at once: a library enters the
// cache by an atomic rename, and one whose key does not match is rebuilt. Throws ToolchainError.
LoadedPlugin load_plugin(const ModelSpec& spec, Backend backend);

std::string default_include_dir();

// The SHA-256 of a checked model definition (ModelInfo::definition_digest): shards of one study
// must have run the same model.
std::string definition_digest(const ModelSpec& spec);

}  // namespace saltation::user_model
