#pragma once
#include <CLI/CLI.hpp>

namespace saltation::cli {
// Each registers a subcommand whose callback does the work and throws on failure.
void add_solve_command(CLI::App& app);
}  // namespace saltation::cli
