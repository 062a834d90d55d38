// saltation: command-line front end. Each subcommand lives in its own file.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "saltation/config.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"saltation: batched hybrid-system trajectories with exact event-aware sensitivities"};
  app.set_version_flag("--version", SALTATION_VERSION_STRING);
  app.require_subcommand(1);
  // subcommands
  saltation::cli::add_solve_command(app);
  saltation::cli::add_disks_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "saltation: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
