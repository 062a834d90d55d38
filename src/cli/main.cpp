// saltation: command-line front end. Each subcommand lives in its own file; this one maps
// failures to the exit codes of exit_codes.hpp.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "saltation/config.hpp"
#include "saltation/errors.hpp"

int main(int argc, char** argv) {
  using namespace saltation::cli;
  CLI::App app{"saltation: batched hybrid-system trajectories with exact event-aware sensitivities"};
  app.set_version_flag("--version", SALTATION_VERSION_STRING);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 1 internal error, 2 invalid input, 3 I/O error, 4 CUDA error.");
  add_solve_command(app);
  add_disks_command(app);
  add_models_command(app);
  add_sweep_commands(app);
  add_devices_command(app);
  auto fail = [](const char* kind, const std::exception& e, int code) {
    std::cerr << "saltation: " << kind << ": " << e.what() << "\n";
    return code;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version or the argument error
    return code == 0 ? kExitOk : kExitInvalidInput;
  } catch (const saltation::InvalidInput& e) {
    std::cerr << "saltation: " << e.what() << "\n";  // what() starts with "invalid input: "
    return kExitInvalidInput;
  } catch (const saltation::IoError& e) {
    return fail("I/O error", e, kExitIo);
  } catch (const saltation::CudaError& e) {
    return fail("CUDA error", e, kExitCuda);
  } catch (const std::bad_alloc& e) {
    return fail("out of memory", e, kExitInternal);
  } catch (const std::exception& e) {
    return fail("internal error", e, kExitInternal);
  }
  return kExitOk;
}
