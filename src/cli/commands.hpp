#pragma once
#include <CLI/CLI.hpp>

namespace saltation::cli {
// Each registers a subcommand whose callback does the work and throws on failure.
void add_solve_command(CLI::App& app);   // solve_command.cpp
void add_disks_command(CLI::App& app);   // disks_command.cpp
void add_models_command(CLI::App& app);  // models_command.cpp
void add_devices_command(CLI::App& app); // devices_command.cpp
void add_sweep_commands(CLI::App& app);  // sweep_command.cpp: sweep and merge
}  // namespace saltation::cli
