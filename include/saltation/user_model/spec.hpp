#pragma once
// A hybrid model defined in a file (docs/models.md, "Your model in five minutes"): the parsed,
// checked form the generator prints C++ from. Everything a model file can get wrong is refused
// here, naming its JSON path, before anything is compiled.
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "saltation/user_model/expression.hpp"

namespace saltation::user_model {

// A parameter's domain: "finite" (the default), "> a", ">= a", "< a", "<= a", "[a, b]", "(a, b)",
// "[a, b)", "(a, b]". Every domain also requires a finite value.
struct Domain {
  bool has_lower = false, has_upper = false;
  double lower = 0.0, upper = 0.0;
  bool lower_closed = false, upper_closed = false;
  std::string text = "finite";  // as written, for messages
};

struct Parameter {
  std::string name;
  Domain domain;
};

struct Constant {
  std::string name;
  double value = 0.0;  // the default; a request's "config" overrides it by name
};

struct Guard {
  std::string name;            // "guards[j].name", default "guard_<j>"
  ExprPtr expression;          // g_j(q, theta, constants)
  int direction = -1;          // -1: "falling" (the default), +1: "rising"
  std::vector<bool> active;    // [mode]: the guard is active in that mode
  std::vector<ExprPtr> reset;  // [state]: post-event value from pre-event values; null: unchanged
  int next_mode = -1;          // the mode after the event; -1: the mode it fired in
};

constexpr int kMaxGuards = 32;

struct ModelSpec {
  std::string name;
  std::vector<std::string> states;    // q's order
  std::vector<Parameter> parameters;  // theta's column order
  std::vector<Constant> constants;    // sorted by name (the file gives them as an object)
  std::vector<std::string> modes;     // at least one ("default" when the file names none)
  int initial_mode = 0;
  std::vector<ExprPtr> initial_state;      // [state]: q0 from parameters and constants
  std::vector<std::vector<ExprPtr>> flow;  // [mode][state]
  std::vector<Guard> guards;
};

// Reads and checks a model definition. `path` is the JSON path of the definition in the input
// ("model.define", or "" for a model file of its own); every error is InvalidInput naming the
// culprit's full path, e.g. `model.define.guards[0].reset.omega: column 3: unknown name "omeg"`.
ModelSpec parse_model_spec(const nlohmann::json& definition, const std::string& path);

}  // namespace saltation::user_model
