// `saltation devices`: what the CUDA runtime sees, with its own words when it sees nothing.
// Exit 0 with at least one device, 4 (CUDA error) without.
#include <iostream>

#include "cli/commands.hpp"
#include "saltation/backend.hpp"
#include "saltation/errors.hpp"

namespace saltation::cli {

void add_devices_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("devices", "List the CUDA devices this build can use (exit 4 when none)");
  cmd->callback([] {
    const CudaDevices d = query_cuda_devices();
    std::cout << "CUDA backend compiled: " << (cuda_compiled() ? "yes" : "no") << "\n";
    if (d.runtime_version || d.driver_version)
      std::cout << "CUDA runtime " << d.runtime_version / 1000 << "." << d.runtime_version % 1000 / 10
                << ", driver supports " << d.driver_version / 1000 << "." << d.driver_version % 1000 / 10 << "\n";
    for (std::size_t i = 0; i < d.devices.size(); ++i) {
      const CudaDevice& g = d.devices[i];
      std::cout << "device " << i << ": " << g.name << ", compute capability " << g.major << "." << g.minor << ", "
                << g.memory / (1024.0 * 1024 * 1024) << " GiB, " << g.multiprocessors << " multiprocessors\n";
    }
    if (d.count == 0)
      throw CudaError("no usable CUDA device" + (d.error.empty() ? std::string() : ": " + d.error), __FILE__, __LINE__);
  });
}

}  // namespace saltation::cli
