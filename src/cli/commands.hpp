#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace saltation::cli {

// What a run stopped by an interrupt or a CUDA failure kept with --keep-partial (e.g. "rows [0, 4096)
// of 10000 kept in out.partial.json"), for main's message; empty when nothing was kept.
inline std::string& kept_partial_note() {
  static std::string note;
  return note;
}
// Each registers a subcommand whose callback does the work and throws on failure.
void add_solve_command(CLI::App& app);    // solve_command.cpp
void add_disks_command(CLI::App& app);    // disks_command.cpp
void add_models_command(CLI::App& app);   // models_command.cpp
void add_model_command(CLI::App& app);    // model_command.cpp: model check, model cpp
void add_devices_command(CLI::App& app);  // devices_command.cpp
void add_sweep_commands(CLI::App& app);   // sweep_command.cpp: sweep and merge
}  // namespace saltation::cli
