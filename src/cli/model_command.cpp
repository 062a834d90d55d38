// `saltation model check FILE`: a model file parsed, compiled for every backend present, run on a
// small batch and its sensitivities held to finite differences of the whole solver.
// `saltation model cpp FILE`: the C++ model struct the file becomes, for a C++ project.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/registry.hpp"
#include "saltation/testing/check_sensitivities.hpp"
#include "saltation/user_model/user_model.hpp"
#include "user_model/codegen.hpp"

namespace saltation::cli {
namespace {

struct CheckArgs {
  std::string file, theta, config = "{}";
  double t_final = 2.0, dt = 1e-3;
  double tolerance = 1e-6;
};

// A row inside every parameter's domain, for a check the user gave no rows for.
std::vector<double> row_inside_domains(const user_model::ModelSpec& spec) {
  std::vector<double> row;
  for (const user_model::Parameter& p : spec.parameters) {
    const user_model::Domain& d = p.domain;
    if (d.has_lower && d.has_upper) row.push_back(0.5 * (d.lower + d.upper));
    else if (d.has_lower) row.push_back(d.lower + 1.0);
    else if (d.has_upper) row.push_back(d.upper - 1.0);
    else row.push_back(0.5);
  }
  return row;
}

// "a,b,c;d,e,f": rows of P numbers.
std::vector<std::vector<double>> parse_rows(const std::string& text, std::size_t P) {
  std::vector<std::vector<double>> rows;
  std::stringstream all(text);
  std::string row_text;
  while (std::getline(all, row_text, ';')) {
    std::vector<double> row;
    std::stringstream cells(row_text);
    std::string cell;
    while (std::getline(cells, cell, ',')) {
      std::size_t used = 0;
      double v = 0.0;
      try {
        v = std::stod(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || cell.find_first_not_of(" \t", used) != std::string::npos || !std::isfinite(v))
        throw InvalidInput("--theta", static_cast<long>(rows.size()), "\"" + cell + "\" is not a finite number");
      row.push_back(v);
    }
    if (row.size() != P)
      throw InvalidInput(
          "--theta", static_cast<long>(rows.size()),
          "has " + std::to_string(row.size()) + " numbers, the model has " + std::to_string(P) + " parameters");
    rows.push_back(row);
  }
  return rows;
}

// The rows solved; a row the check chose itself that the model refuses asks for --theta.
Result solve_rows(const AnyModel& model, const std::vector<std::vector<double>>& rows, const Options& options,
                  Backend backend, bool chosen) {
  try {
    return model.solve(Batch::from_rows(rows, rows[0].size()), options, backend);
  } catch (const InvalidInput& e) {
    if (!chosen) throw;
    throw InvalidInput("--theta", -1,
                       "the row chosen inside the parameters' domains cannot start (" + e.message() +
                           "): give rows that can with --theta \"a,b,c;d,e,f\"");
  }
}

std::vector<Backend> backends_present() {
  std::vector<Backend> b{Backend::Cpu};
  if (cuda_device_available()) b.push_back(Backend::Cuda);
  return b;
}

void check_model(const CheckArgs& a) {
  io::ModelChoice choice;
  choice.definition = std::make_shared<const user_model::ModelSpec>(io::read_model_file(a.file));
  choice.config = io::parse_json(a.config);
  choice.name = choice.definition->name;
  const user_model::ModelSpec& spec = *choice.definition;
  const AnyModel model = configure_model(choice);
  const user_model::Derived derived = user_model::derived_members(spec);
  std::cout << "model " << spec.name << ": " << spec.states.size() << " states, " << spec.parameters.size()
            << " parameters, " << spec.modes.size() << " modes, " << spec.guards.size() << " guards, "
            << spec.constants.size() << " constants\n"
            << "derived: the flow reads " << derived.flow_params << " of " << spec.parameters.size() << " parameters; "
            << (derived.affine_flow ? "affine" : "not affine") << " in the state; guards "
            << (derived.polynomial_guards ? "polynomial in the state (the curvature bound applies)"
                                          : "not all polynomial in the state (no curvature bound)")
            << "; analytic guard gradients, R_q and event partials\n";

  const std::vector<std::vector<double>> rows = a.theta.empty()
                                                    ? std::vector<std::vector<double>>{row_inside_domains(spec)}
                                                    : parse_rows(a.theta, spec.parameters.size());
  Options options;
  options.t_final = a.t_final;
  options.dt = a.dt;
  options.event_capacity = 64;
  bool all_ok = true;
  for (Backend backend : backends_present()) {
    const user_model::BuildReport build = user_model::build_model(spec, backend);
    std::cout << backend_name(backend) << ": " << (build.cached ? "found in the cache" : "compiled") << " in "
              << std::setprecision(3) << build.seconds << " s (" << build.library << ")\n";
    Options with_sens = options;
    with_sens.sensitivities = true;
    const Result r = solve_rows(model, rows, with_sens, backend, a.theta.empty());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::cout << "  row " << i << ": " << status_name(r.status_of(i)) << ", " << r.n_events[i] << " events";
      if (r.n_events[i] > 0) std::cout << ", first at t = " << std::setprecision(12) << r.event_time(i, 0);
      std::cout << "\n";
      const testing::SensitivityCheck check = testing::check_sensitivities(model, rows[i], options, backend);
      const bool ok = check.ok(a.tolerance);
      all_ok = all_ok && (ok || check.worst_error <= a.tolerance);
      std::cout << "    sensitivities against finite differences: " << (ok ? "agree" : "NOT CHECKED IN FULL") << ": "
                << std::setprecision(3) << check.summary() << "\n";
    }
  }
  if (!all_ok)
    throw std::runtime_error("model check: a derivative differs from its finite difference by more than " +
                             std::to_string(a.tolerance) + " (see above); please report it with the model file");
}

}  // namespace

void add_model_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("model", "Work with a model file (docs/models.md): check it, or print its C++");
  cmd->require_subcommand(1);

  auto check = std::make_shared<CheckArgs>();
  CLI::App* c = cmd->add_subcommand(
      "check", "Parse, compile for every backend present, run a small batch and check its sensitivities");
  c->add_option("file", check->file, "The model file (JSON)")->required();
  c->add_option("--theta", check->theta,
                "Parameter rows to run, \"a,b,c;d,e,f\" (default: one row inside every parameter's domain)");
  c->add_option("--config", check->config, "The constants, as a JSON object (default: the file's)");
  c->add_option("--t-final", check->t_final, "Horizon of the runs")->capture_default_str();
  c->add_option("--dt", check->dt, "RK4 step of the runs")->capture_default_str();
  c->add_option("--tolerance", check->tolerance, "Largest relative error against finite differences")
      ->capture_default_str();
  c->callback([check] { check_model(*check); });

  struct CppArgs {
    std::string file, out, space = "saltation_generated";
  };
  auto args = std::make_shared<CppArgs>();
  CLI::App* cpp = cmd->add_subcommand("cpp", "Print the C++ model struct the file becomes");
  cpp->add_option("file", args->file, "The model file (JSON)")->required();
  cpp->add_option("--namespace", args->space, "The namespace of struct Model")->capture_default_str();
  cpp->add_option("--out,-o", args->out, "Write it here (atomically) instead of standard output");
  cpp->callback([args] {
    const std::string header =
        "#pragma once\n" + user_model::model_header(io::read_model_file(args->file), args->space);
    if (args->out.empty()) std::cout << header;
    else io::write_file_atomically(args->out, header);
  });
}

}  // namespace saltation::cli
