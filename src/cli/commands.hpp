#pragma once
#include <CLI/CLI.hpp>

namespace saltation::cli {
// Each registers a subcommand whose callback does the work and throws on failure.
void add_solve_command(CLI::App& app);
void add_disks_command(CLI::App& app);  // src/cli/disks_command.cpp
}  // namespace saltation::cli
