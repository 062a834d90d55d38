#pragma once
// A model defined in a file (docs/models.md), made a model like any other: parsed and checked,
// printed as C++, compiled by the host C++ compiler (CPU) or nvcc (CUDA) into a shared library on
// first use, cached, and loaded. Its constants are run-time data: a "config" never recompiles.
#include <nlohmann/json.hpp>

#include <memory>
#include <stdexcept>
#include <string>

#include "saltation/any_model.hpp"
#include "saltation/user_model/spec.hpp"

namespace saltation::user_model {

// A model file could not be compiled: no compiler, no nvcc, or the compiler failed. The message
// says which, what to install or set, and where the compiler's log and the generated source are.
class ToolchainError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The folder compiled models are kept in: SALTATION_CACHE_DIR, else $XDG_CACHE_HOME/saltation,
// else ~/.cache/saltation.
std::string cache_dir();

// Where the library's headers are for compiling model files (a folder holding saltation/ and
// kernels/ or saltation/kernels/); by default SALTATION_INCLUDE_DIR, else where this library was
// installed or built from. The Python package sets its own.
void set_include_dir(const std::string& dir);

// The model of `spec` with its constants from `config` (an object of constant names; others
// are refused naming "config.<key>"). Nothing is compiled until a backend first runs it.
AnyModel load_model(std::shared_ptr<const ModelSpec> spec, const nlohmann::json& config);

// What building a model's library for a backend did (saltation model check, benchmarks).
struct BuildReport {
  std::string library;   // the shared library's path
  std::string compiler;  // the command that compiles it
  bool cached = false;   // found in the cache: nothing compiled
  double seconds = 0.0;  // wall time of finding or compiling and loading it
};
// Builds (or finds) and loads the library of `spec` for `backend` (Cpu or Cuda) now.
BuildReport build_model(const ModelSpec& spec, Backend backend);

}  // namespace saltation::user_model
