#pragma once
// Runs the saltation command (SALTATION_CLI, which ctest sets) with `args`, its output discarded;
// returns its exit code, or -1 when it did not run or did not exit.
#include <sys/wait.h>

#include <cstdlib>
#include <string>

namespace saltation::testing {

inline int run_cli(const std::string& args) {
  const char* bin = std::getenv("SALTATION_CLI");
  if (!bin) return -1;
  const int status = std::system(("'" + std::string(bin) + "' " + args + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace saltation::testing
