// saltation: command-line front end. Each subcommand lives in its own file; this one maps
// failures to the exit codes of exit_codes.hpp.
#include <CLI/CLI.hpp>

#include <time.h>

#include <atomic>
#include <csignal>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "saltation/config.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/user_model/user_model.hpp"

namespace {

long long monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

// When the first stop signal arrived (monotonic ns). Lock-free, so the handler may use it.
std::atomic<long long> first_stop_signal_ns{0};

// SIGINT or SIGTERM asks the run to stop at the next trajectory or chunk, so that it cleans up.
// Another one more than a second later kills at once (the default action). One sooner is the same
// request delivered twice: timeout(1) signals the command and then its process group, and batch
// systems do alike; killing on it would leave temporary files behind.
extern "C" void on_stop_signal(int signal) {
  const long long now = monotonic_ns();
  if (!saltation::interrupt_requested()) {
    first_stop_signal_ns.store(now, std::memory_order_relaxed);
    saltation::request_interrupt(signal);
  } else if (now - first_stop_signal_ns.load(std::memory_order_relaxed) > 1000000000LL) {
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, nullptr);
    raise(signal);
  }
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A write past the file-size limit (ulimit -f) then fails with EFBIG, which the atomic writers
  // report as an I/O error with nothing left behind, instead of killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace saltation::cli;
  install_stop_handlers();
  CLI::App app{"saltation: batched hybrid-system trajectories with exact event-aware sensitivities"};
  app.set_version_flag("--version", SALTATION_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 internal error, 2 invalid input, 3 I/O error, 4 CUDA error or a model file that "
      "could not be compiled, "
      "130 / 143 interrupted by SIGINT / SIGTERM (nothing written, unless --keep-partial).");
  add_solve_command(app);
  add_disks_command(app);
  add_models_command(app);
  add_model_command(app);
  add_sweep_commands(app);
  add_devices_command(app);
  // Every failure is reported in one format (docs/reliability.md):
  //   saltation: <class>: <parameter or path> (row R[, line L, column C]): <what>
  auto fail = [](const char* kind, const std::exception& e, int code) {
    std::cerr << "saltation: " << kind << ": " << e.what() << "\n";
    return code;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help and --version end here too
    std::cerr << "saltation: invalid input: arguments: " << e.what() << "\nRun with --help for more information.\n";
    return ExitInvalidInput;
  } catch (const saltation::InvalidInput& e) {
    std::cerr << "saltation: " << e.what() << "\n";  // what() starts with "invalid input: "
    return ExitInvalidInput;
  } catch (const saltation::IoError& e) {
    return fail("I/O error", e, ExitIo);
  } catch (const saltation::Interrupted& e) {
    const std::string& kept = kept_partial_note();
    std::cerr << "saltation: interrupted: signal " << e.signal() << ": the run stopped before it finished; "
              << (kept.empty() ? "nothing was written" : kept) << "\n";
    return 128 + e.signal();
  } catch (const saltation::CudaError& e) {
    const std::string& kept = kept_partial_note();
    std::cerr << "saltation: CUDA error: " << e.what() << (kept.empty() ? "" : "; " + kept) << "\n";
    return ExitCuda;
  } catch (const saltation::user_model::ToolchainError& e) {
    return fail("compiler error", e, ExitCuda);
  } catch (const std::bad_alloc& e) {
    return fail("out of memory", e, ExitInternal);
  } catch (const std::exception& e) {
    return fail("internal error", e, ExitInternal);
  }
  return ExitOk;
}
