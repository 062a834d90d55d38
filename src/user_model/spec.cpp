// Reads a model definition into a ModelSpec, checking names, modes, domains and expressions;
// every refusal names the JSON path of its culprit.
#include "saltation/user_model/spec.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/io/json_object.hpp"

namespace saltation::user_model {

namespace {

using io::JsonObject;
using nlohmann::json;

std::string element(const std::string& array_path, std::size_t k) { return array_path + "[" + std::to_string(k) + "]"; }

std::string joined(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return list;
}

// Every name in a model is an identifier; `t` is refused because the flow is autonomous, and the
// function names because an expression could not tell them from the name.
void check_name(const std::string& name, const std::string& where) {
  bool identifier = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!identifier)
    throw InvalidInput(where, -1, "\"" + name + "\" is not a name: a name is a letter or _, then letters, digits or _");
  if (name == "t")
    throw InvalidInput(where, -1,
                       "\"t\" cannot be a name: the flow is autonomous; add a clock state under another name (e.g. "
                       "\"clock\" with flow 1)");
  for (const FunctionInfo& f : expression_functions())
    if (name == f.name) throw InvalidInput(where, -1, "\"" + name + "\" is a function, not a name");
}

// The one namespace of states, parameters and constants, with where each name was defined.
class Symbols {
 public:
  void add(const std::string& name, SymbolKind kind, int index, const std::string& where) {
    check_name(name, where);
    const auto found = symbols_.find(name);
    if (found != symbols_.end()) {
      const Symbol& first = found->second;
      if (first.kind == kind) throw InvalidInput(where, -1, "\"" + name + "\" is already " + first.where);
      throw InvalidInput(
          where, -1, "\"" + name + "\" is both a " + word(first.kind) + " (" + first.where + ") and a " + word(kind));
    }
    symbols_[name] = {kind, index, where};
  }

  NameResolver resolver() const {
    return [this](const std::string& name, SymbolKind& kind, int& index) {
      const auto found = symbols_.find(name);
      if (found == symbols_.end()) return false;
      kind = found->second.kind;
      index = found->second.index;
      return true;
    };
  }

 private:
  struct Symbol {
    SymbolKind kind;
    int index;
    std::string where;
  };
  static const char* word(SymbolKind kind) {
    switch (kind) {
      case SymbolKind::State: return "state";
      case SymbolKind::Parameter: return "parameter";
      case SymbolKind::Constant: return "constant";
    }
    return "";
  }
  std::map<std::string, Symbol> symbols_;
};

// A JSON number is an expression too; anything else must be text to parse.
ExprPtr read_expression(const json& value, const std::string& where, const NameResolver& resolve) {
  if (value.is_number()) {
    auto e = std::make_shared<Expr>();
    e->op = Op::Number;
    e->number = value.get<double>();
    if (!std::isfinite(e->number)) throw InvalidInput(where, -1, "must be a finite number");
    return e;
  }
  if (!value.is_string()) throw InvalidInput(where, -1, "must be an expression: a string or a number");
  return parse_expression(value.get<std::string>(), where, resolve);
}

std::vector<std::string> read_names(const JsonObject& object, const std::string& key, const std::string& noun) {
  const json& list = object.raw(key);
  const std::string where = object.path(key);
  if (!list.is_array()) throw InvalidInput(where, -1, "must be an array of names");
  if (list.empty()) throw InvalidInput(where, -1, "must list at least one " + noun);
  std::vector<std::string> names;
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (!list[k].is_string()) throw InvalidInput(element(where, k), -1, "must be a string");
    names.push_back(list[k].get<std::string>());
  }
  return names;
}

int find_mode(const std::vector<std::string>& modes, const std::string& name, const std::string& where) {
  for (std::size_t m = 0; m < modes.size(); ++m)
    if (modes[m] == name) return static_cast<int>(m);
  throw InvalidInput(where, -1, "unknown mode \"" + name + "\" (the modes are " + joined(modes) + ")");
}

// A bound of a domain: a finite decimal number (strtod would also take inf, nan and hex).
bool read_bound(const std::string& text, std::size_t& i, double& value) {
  const char* begin = text.c_str() + i;
  char* end = nullptr;
  value = std::strtod(begin, &end);
  if (end == begin) return false;
  for (const char* c = begin; c != end; ++c)
    if (!std::isspace(static_cast<unsigned char>(*c)) && !std::isdigit(static_cast<unsigned char>(*c)) &&
        std::string(".eE+-").find(*c) == std::string::npos)
      return false;
  i += static_cast<std::size_t>(end - begin);
  return std::isfinite(value);
}

void skip_spaces(const std::string& text, std::size_t& i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
}

// Skips spaces, then takes `c` if it is next.
bool take(const std::string& text, std::size_t& i, char c) {
  skip_spaces(text, i);
  if (i >= text.size() || text[i] != c) return false;
  ++i;
  return true;
}

Domain read_domain(const std::string& text, const std::string& where) {
  Domain d;
  d.text = text;
  std::size_t i = 0;
  skip_spaces(text, i);
  bool read = false;
  if (text.compare(i, 6, "finite") == 0) {
    read = true;
    i += 6;
  } else if (take(text, i, '>') || take(text, i, '<')) {
    const bool lower = text[i - 1] == '>';
    const bool closed = take(text, i, '=');
    double bound = 0.0;
    read = read_bound(text, i, bound);
    (lower ? d.has_lower : d.has_upper) = true;
    (lower ? d.lower : d.upper) = bound;
    (lower ? d.lower_closed : d.upper_closed) = closed;
  } else if (take(text, i, '[') || take(text, i, '(')) {
    d.has_lower = d.has_upper = true;
    d.lower_closed = text[i - 1] == '[';
    read = read_bound(text, i, d.lower) && take(text, i, ',') && read_bound(text, i, d.upper);
    d.upper_closed = take(text, i, ']');
    read = read && (d.upper_closed || take(text, i, ')'));
    if (read && !(d.lower < d.upper))
      throw InvalidInput(where, -1, "\"" + text + "\" is empty: an interval's lower end must be below its upper end");
  }
  skip_spaces(text, i);
  if (!read || i < text.size())
    throw InvalidInput(where, -1,
                       "\"" + text +
                           "\" is not a domain: write finite, > a, >= a, < a, <= a, [a, b], (a, b), [a, b) or (a, b] "
                           "with finite numbers a < b");
  return d;
}

// A map {state: expression}: a key that is not a state is refused; a missing state is refused
// with `missing` as the reason, or left null when `missing` is empty.
std::vector<ExprPtr> read_state_map(const JsonObject& map, const std::vector<std::string>& states,
                                    const NameResolver& resolve, const std::string& missing) {
  for (const auto& item : map.value().items()) {
    bool known = false;
    for (const std::string& s : states) known = known || s == item.key();
    if (!known)
      throw InvalidInput(map.path(item.key()), -1,
                         "\"" + item.key() + "\" is not a state (the states are " + joined(states) + ")");
  }
  std::vector<ExprPtr> exprs(states.size());
  for (std::size_t k = 0; k < states.size(); ++k) {
    if (map.has(states[k])) exprs[k] = read_expression(map.raw(states[k]), map.path(states[k]), resolve);
    else if (!missing.empty()) throw InvalidInput(map.path(states[k]), -1, "is required: " + missing);
  }
  return exprs;
}

// The first state an expression reads, or null.
const Expr* first_state(const Expr& e) {
  if (e.op == Op::Symbol && e.symbol == SymbolKind::State) return &e;
  for (const ExprPtr& arg : e.args)
    if (const Expr* found = first_state(*arg)) return found;
  return nullptr;
}

// The flow is one map for every mode, or an object per mode: the per-mode form is recognised
// by every value being an object, since a state's flow never is one.
std::vector<std::vector<ExprPtr>> read_flow(const JsonObject& flow, const ModelSpec& spec,
                                            const NameResolver& resolve) {
  bool per_mode = !flow.value().empty();
  for (const auto& item : flow.value().items()) per_mode = per_mode && item.value().is_object();
  if (!per_mode) {
    const auto shared = read_state_map(flow, spec.states, resolve, "every state needs a flow expression");
    return std::vector<std::vector<ExprPtr>>(spec.modes.size(), shared);
  }
  for (const auto& item : flow.value().items()) find_mode(spec.modes, item.key(), flow.path(item.key()));
  std::vector<std::vector<ExprPtr>> per_mode_flow;
  for (const std::string& mode : spec.modes) {
    if (!flow.has(mode)) throw InvalidInput(flow.path(mode), -1, "is required: a per-mode flow gives every mode one");
    per_mode_flow.push_back(read_state_map(JsonObject(flow.raw(mode), flow.path(mode)), spec.states, resolve,
                                           "every state needs a flow expression in every mode"));
  }
  return per_mode_flow;
}

std::vector<Guard> read_guards(const JsonObject& model, const ModelSpec& spec, const NameResolver& resolve) {
  std::vector<Guard> guards;
  const std::string where = model.path("guards");
  // The solver is for hybrid systems: without an event there is nothing for it to do that an ODE solver would not.
  if (!model.has("guards"))
    throw InvalidInput(where, -1, "is required: a hybrid model has at least one guard (an event surface)");
  const json& list = model.raw("guards");
  if (!list.is_array()) throw InvalidInput(where, -1, "must be an array of guards");
  if (list.empty()) throw InvalidInput(where, -1, "must list at least one guard (an event surface)");
  if (list.size() > static_cast<std::size_t>(kMaxGuards))
    throw InvalidInput(
        where, -1, "has " + std::to_string(list.size()) + " guards; a model has at most " + std::to_string(kMaxGuards));
  std::map<std::string, std::string> named;  // guard name -> where it was given
  for (std::size_t j = 0; j < list.size(); ++j) {
    const JsonObject g(list[j], element(where, j));
    Guard guard;
    const std::string name_where = g.has("name") ? g.path("name") : g.where();
    guard.name = g.string("name", "guard_" + std::to_string(j));
    check_name(guard.name, name_where);
    if (named.count(guard.name))
      throw InvalidInput(name_where, -1, "\"" + guard.name + "\" is already the name of " + named[guard.name]);
    named[guard.name] = name_where;
    guard.expression = read_expression(g.raw("expression"), g.path("expression"), resolve);
    guard.direction = g.choice("direction", {"falling", "rising"}, "falling") == "rising" ? +1 : -1;
    guard.active.assign(spec.modes.size(), !g.has("modes"));
    if (g.has("modes")) {
      const json& modes = g.raw("modes");
      if (!modes.is_array()) throw InvalidInput(g.path("modes"), -1, "must be an array of mode names");
      if (modes.empty())
        throw InvalidInput(g.path("modes"), -1,
                           "is empty: a guard must be active in some mode (leave modes out for every mode)");
      for (std::size_t i = 0; i < modes.size(); ++i) {
        const std::string at = element(g.path("modes"), i);
        if (!modes[i].is_string()) throw InvalidInput(at, -1, "must be a string");
        guard.active[find_mode(spec.modes, modes[i].get<std::string>(), at)] = true;
      }
    }
    guard.reset.assign(spec.states.size(), nullptr);
    if (g.has("reset"))
      guard.reset = read_state_map(JsonObject(g.raw("reset"), g.path("reset")), spec.states, resolve, "");
    if (g.has("next_mode")) guard.next_mode = find_mode(spec.modes, g.string("next_mode"), g.path("next_mode"));
    g.reject_unknown("a guard");
    guards.push_back(std::move(guard));
  }
  return guards;
}

}  // namespace

ModelSpec parse_model_spec(const json& definition, const std::string& path) {
  const JsonObject model(definition, path);
  ModelSpec spec;
  Symbols symbols;
  const NameResolver resolve = symbols.resolver();

  spec.name = model.string("name");
  if (spec.name.empty()) throw InvalidInput(model.path("name"), -1, "must not be empty");
  model.string("description", "");

  spec.states = read_names(model, "states", "state");
  for (std::size_t k = 0; k < spec.states.size(); ++k)
    symbols.add(spec.states[k], SymbolKind::State, static_cast<int>(k), element(model.path("states"), k));

  const json& parameters = model.raw("parameters");
  if (!parameters.is_array()) throw InvalidInput(model.path("parameters"), -1, "must be an array of parameters");
  if (parameters.empty()) throw InvalidInput(model.path("parameters"), -1, "must list at least one parameter");
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const JsonObject p(parameters[k], element(model.path("parameters"), k));
    Parameter parameter;
    parameter.name = p.string("name");
    symbols.add(parameter.name, SymbolKind::Parameter, static_cast<int>(k), p.path("name"));
    if (p.has("domain")) parameter.domain = read_domain(p.string("domain"), p.path("domain"));
    p.reject_unknown("a parameter");
    spec.parameters.push_back(parameter);
  }

  // Constants are numbered in the order nlohmann::json keeps an object's keys (sorted by name).
  const JsonObject constants = model.object("constants");
  for (const auto& item : constants.value().items()) {
    symbols.add(item.key(), SymbolKind::Constant, static_cast<int>(spec.constants.size()), constants.path(item.key()));
    const double value = constants.number(item.key());
    if (!std::isfinite(value)) throw InvalidInput(constants.path(item.key()), -1, "must be a finite number");
    spec.constants.push_back({item.key(), value});
  }

  spec.modes = model.has("modes") ? read_names(model, "modes", "mode") : std::vector<std::string>{"default"};
  for (std::size_t m = 0; m < spec.modes.size(); ++m) {
    const std::string where = element(model.path("modes"), m);
    check_name(spec.modes[m], where);
    for (std::size_t before = 0; before < m; ++before)
      if (spec.modes[before] == spec.modes[m])
        throw InvalidInput(where, -1, "\"" + spec.modes[m] + "\" is already " + element(model.path("modes"), before));
  }
  if (model.has("initial_mode"))
    spec.initial_mode = find_mode(spec.modes, model.string("initial_mode"), model.path("initial_mode"));

  const JsonObject initial(model.raw("initial_state"), model.path("initial_state"));
  spec.initial_state = read_state_map(initial, spec.states, resolve, "every state needs an initial value");
  for (std::size_t k = 0; k < spec.states.size(); ++k)
    if (const Expr* state = first_state(*spec.initial_state[k]))
      throw InvalidInput(initial.path(spec.states[k]), -1,
                         "\"" + state->name + "\" is a state: initial_state may use only parameters and constants");

  spec.flow = read_flow(JsonObject(model.raw("flow"), model.path("flow")), spec, resolve);
  spec.guards = read_guards(model, spec, resolve);
  model.reject_unknown("a model definition");
  return spec;
}

}  // namespace saltation::user_model
