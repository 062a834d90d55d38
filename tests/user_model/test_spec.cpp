// Model files: the parsed tree of good ones, and every refusal naming its JSON path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/user_model/spec.hpp"

using namespace saltation;
using namespace saltation::user_model;
using nlohmann::json;

namespace {

json pendulum() {
  return json::parse(R"json({"name": "impact_pendulum",
    "states": ["phi", "omega"],
    "parameters": [{"name": "phi0"}, {"name": "omega0"}, {"name": "L", "domain": "> 0"}, {"name": "e", "domain": "[0, 1]"}],
    "constants": {"g": 9.81},
    "modes": ["swing"],
    "initial_mode": "swing",
    "initial_state": {"phi": "phi0", "omega": "omega0"},
    "flow": {"phi": "omega", "omega": "-g / L * sin(phi)"},
    "guards": [{"name": "wall", "expression": "phi", "direction": "falling", "modes": ["swing"],
                "reset": {"omega": "-e * omega"}, "next_mode": "swing"}]})json");
}

json thermostat() {
  return json::parse(R"json({"name": "thermostat",
    "description": "a room heated between two temperatures",
    "states": ["T"],
    "parameters": [{"name": "T0"}, {"name": "tau", "domain": "> 0"}, {"name": "low"}, {"name": "high"}],
    "constants": {"T_heat": 30, "T_out": 10},
    "modes": ["on", "off"],
    "initial_mode": "on",
    "initial_state": {"T": "T0"},
    "flow": {"on": {"T": "(T_heat - T) / tau"}, "off": {"T": "(T_out - T) / tau"}},
    "guards": [{"name": "too_hot", "expression": "high - T", "modes": ["on"], "next_mode": "off"},
               {"name": "too_cold", "expression": "T - low", "modes": ["off"], "next_mode": "on"}]})json");
}

// Parses `model` at "model.define" and expects InvalidInput naming `parameter`, its message
// containing `phrase`.
testing::AssertionResult refused(const json& model, const std::string& parameter, const std::string& phrase,
                                 const std::string& path = "model.define") {
  try {
    parse_model_spec(model, path);
  } catch (const InvalidInput& e) {
    if (e.parameter() != parameter)
      return testing::AssertionFailure() << "named " << e.parameter() << " instead of " << parameter << ": "
                                         << e.what();
    if (std::string(e.what()).find(phrase) == std::string::npos)
      return testing::AssertionFailure() << "message lacks \"" << phrase << "\": " << e.what();
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "accepted; expected a refusal at " << parameter;
}

// An expression's value, its names looked up in `values`.
double evaluate(const Expr& e, const std::map<std::string, double>& values) {
  auto arg = [&](std::size_t k) { return evaluate(*e.args.at(k), values); };
  switch (e.op) {
    case Op::Number: return e.number;
    case Op::Symbol: return values.at(e.name);
    case Op::Negate: return -arg(0);
    case Op::Add: return arg(0) + arg(1);
    case Op::Subtract: return arg(0) - arg(1);
    case Op::Multiply: return arg(0) * arg(1);
    case Op::Divide: return arg(0) / arg(1);
    case Op::Power: return std::pow(arg(0), arg(1));
    case Op::Call: break;
  }
  const std::map<std::string, double (*)(double)> unary = {{"sin", std::sin}, {"sqrt", std::sqrt}, {"exp", std::exp}};
  const std::map<std::string, double (*)(double, double)> binary = {
      {"pow", std::pow}, {"hypot", std::hypot}, {"atan2", std::atan2}, {"fmin", std::fmin}, {"fmax", std::fmax}};
  return e.args.size() == 1 ? unary.at(e.name)(arg(0)) : binary.at(e.name)(arg(0), arg(1));
}

double value_of(const std::string& text) {
  const std::map<std::string, double> values = {{"x", 3.0}, {"a", 10.0}, {"b", 3.0}, {"c", 2.0}};
  const ExprPtr e = parse_expression(text, "expr", [&](const std::string& name, SymbolKind& kind, int& index) {
    kind = SymbolKind::Parameter;
    index = 0;
    return values.count(name) > 0;
  });
  return evaluate(*e, values);
}

void expect_symbol(const ExprPtr& e, SymbolKind kind, int index, const std::string& name) {
  ASSERT_TRUE(e);
  EXPECT_EQ(e->op, Op::Symbol);
  EXPECT_EQ(e->symbol, kind);
  EXPECT_EQ(e->index, index);
  EXPECT_EQ(e->name, name);
}

}  // namespace

TEST(ModelSpec, ParsesTheImpactPendulum) {
  const ModelSpec spec = parse_model_spec(pendulum(), "model.define");
  EXPECT_EQ(spec.name, "impact_pendulum");
  EXPECT_EQ(spec.states, (std::vector<std::string>{"phi", "omega"}));
  ASSERT_EQ(spec.parameters.size(), 4u);
  EXPECT_EQ(spec.parameters[2].name, "L");
  EXPECT_FALSE(spec.parameters[0].domain.has_lower || spec.parameters[0].domain.has_upper);
  const Domain& positive = spec.parameters[2].domain;
  EXPECT_TRUE(positive.has_lower && !positive.lower_closed && !positive.has_upper);
  EXPECT_EQ(positive.lower, 0.0);
  const Domain& unit = spec.parameters[3].domain;
  EXPECT_TRUE(unit.has_lower && unit.lower_closed && unit.has_upper && unit.upper_closed);
  EXPECT_EQ(unit.upper, 1.0);
  EXPECT_EQ(unit.text, "[0, 1]");
  ASSERT_EQ(spec.constants.size(), 1u);
  EXPECT_EQ(spec.constants[0].name, "g");
  EXPECT_EQ(spec.constants[0].value, 9.81);
  EXPECT_EQ(spec.modes, (std::vector<std::string>{"swing"}));
  EXPECT_EQ(spec.initial_mode, 0);

  ASSERT_EQ(spec.initial_state.size(), 2u);
  expect_symbol(spec.initial_state[0], SymbolKind::Parameter, 0, "phi0");
  expect_symbol(spec.initial_state[1], SymbolKind::Parameter, 1, "omega0");

  ASSERT_EQ(spec.flow.size(), 1u);
  ASSERT_EQ(spec.flow[0].size(), 2u);
  expect_symbol(spec.flow[0][0], SymbolKind::State, 1, "omega");
  // -g / L * sin(phi) is ((-g) / L) * sin(phi).
  const Expr& f = *spec.flow[0][1];
  ASSERT_EQ(f.op, Op::Multiply);
  const Expr& quotient = *f.args[0];
  ASSERT_EQ(quotient.op, Op::Divide);
  ASSERT_EQ(quotient.args[0]->op, Op::Negate);
  expect_symbol(quotient.args[0]->args[0], SymbolKind::Constant, 0, "g");
  expect_symbol(quotient.args[1], SymbolKind::Parameter, 2, "L");
  const Expr& sine = *f.args[1];
  EXPECT_EQ(sine.op, Op::Call);
  EXPECT_EQ(sine.name, "sin");
  ASSERT_EQ(sine.args.size(), 1u);
  expect_symbol(sine.args[0], SymbolKind::State, 0, "phi");

  ASSERT_EQ(spec.guards.size(), 1u);
  const Guard& wall = spec.guards[0];
  EXPECT_EQ(wall.name, "wall");
  expect_symbol(wall.expression, SymbolKind::State, 0, "phi");
  EXPECT_EQ(wall.direction, -1);
  EXPECT_EQ(wall.active, std::vector<bool>{true});
  EXPECT_EQ(wall.next_mode, 0);
  ASSERT_EQ(wall.reset.size(), 2u);
  EXPECT_FALSE(wall.reset[0]);
  ASSERT_TRUE(wall.reset[1]);
  EXPECT_EQ(wall.reset[1]->op, Op::Multiply);
  ASSERT_EQ(wall.reset[1]->args[0]->op, Op::Negate);
  expect_symbol(wall.reset[1]->args[0]->args[0], SymbolKind::Parameter, 3, "e");
  expect_symbol(wall.reset[1]->args[1], SymbolKind::State, 1, "omega");
}

TEST(ModelSpec, ParsesAPerModeFlow) {
  const ModelSpec spec = parse_model_spec(thermostat(), "");
  EXPECT_EQ(spec.modes, (std::vector<std::string>{"on", "off"}));
  ASSERT_EQ(spec.constants.size(), 2u);
  EXPECT_EQ(spec.constants[1].name, "T_out");
  ASSERT_EQ(spec.flow.size(), 2u);
  const std::map<std::string, double> at = {{"T", 20.0}, {"tau", 5.0}, {"T_heat", 30.0}, {"T_out", 10.0}};
  EXPECT_EQ(evaluate(*spec.flow[0][0], at), 2.0);
  EXPECT_EQ(evaluate(*spec.flow[1][0], at), -2.0);
  expect_symbol(spec.flow[1][0]->args[0]->args[0], SymbolKind::Constant, 1, "T_out");
  ASSERT_EQ(spec.guards.size(), 2u);
  EXPECT_EQ(spec.guards[0].active, (std::vector<bool>{true, false}));
  EXPECT_EQ(spec.guards[0].next_mode, 1);
  EXPECT_EQ(spec.guards[1].active, (std::vector<bool>{false, true}));
  EXPECT_EQ(spec.guards[1].next_mode, 0);
  EXPECT_EQ(spec.guards[1].reset, std::vector<ExprPtr>(1));
}

TEST(ModelSpec, SharesOneFlowMapAcrossModes) {
  json model = thermostat();
  model["flow"] = {{"T", "-T / tau"}};
  const ModelSpec spec = parse_model_spec(model, "");
  ASSERT_EQ(spec.flow.size(), 2u);
  EXPECT_EQ(spec.flow[0][0], spec.flow[1][0]);
}

TEST(ModelSpec, FillsDefaults) {
  const json model = json::parse(R"json({"name": "ball", "states": ["h", "v"], "parameters": [{"name": "h0"}],
    "initial_state": {"h": "h0", "v": 0}, "flow": {"h": "v", "v": -9.81},
    "guards": [{"expression": "h", "direction": "rising"}]})json");
  const ModelSpec spec = parse_model_spec(model, "");
  EXPECT_EQ(spec.modes, std::vector<std::string>{"default"});
  EXPECT_EQ(spec.initial_mode, 0);
  EXPECT_TRUE(spec.constants.empty());
  EXPECT_EQ(spec.parameters[0].domain.text, "finite");
  ASSERT_EQ(spec.flow[0][1]->op, Op::Number);
  EXPECT_EQ(spec.flow[0][1]->number, -9.81);
  const Guard& g = spec.guards.at(0);
  EXPECT_EQ(g.name, "guard_0");
  EXPECT_EQ(g.direction, +1);
  EXPECT_EQ(g.active, std::vector<bool>{true});
  EXPECT_EQ(g.next_mode, -1);
  EXPECT_EQ(g.reset, std::vector<ExprPtr>(2));
}

TEST(Expression, FollowsPrecedenceAndAssociativity) {
  EXPECT_EQ(value_of("-x^2"), -9.0);
  EXPECT_EQ(value_of("(-x)^2"), 9.0);
  EXPECT_EQ(value_of("a-b-c"), 5.0);
  EXPECT_EQ(value_of("a/b/c"), 10.0 / 3.0 / 2.0);
  EXPECT_EQ(value_of("2^3^2"), 512.0);
  EXPECT_EQ(value_of("2^-1"), 0.5);
  EXPECT_EQ(value_of("1 + 2 * 3"), 7.0);
  EXPECT_EQ(value_of("(1 + 2) * 3"), 9.0);
  EXPECT_EQ(value_of("a - -b"), 13.0);
  EXPECT_EQ(value_of("--x"), 3.0);
  EXPECT_EQ(value_of("2 * -x^2"), -18.0);
  EXPECT_EQ(value_of("pow(2, 3) + hypot(b, 4)"), 13.0);
  EXPECT_EQ(value_of("fmin(a, fmax(b, c))"), 3.0);
  EXPECT_DOUBLE_EQ(value_of("4 * atan2(1, 1)"), std::acos(-1.0));
  EXPECT_EQ(value_of("1e-3 + .5 + 2. + 1E+2"), 0.001 + 0.5 + 2.0 + 100.0);
  EXPECT_EQ(value_of("1e-400"), 0.0);
}

TEST(Expression, KeepsUnaryMinusAndLiteralsAsWritten) {
  const ExprPtr e = parse_expression("-2.5", "expr", [](const std::string&, SymbolKind&, int&) { return false; });
  ASSERT_EQ(e->op, Op::Negate);
  ASSERT_EQ(e->args.size(), 1u);
  EXPECT_EQ(e->args[0]->op, Op::Number);
  EXPECT_EQ(e->args[0]->number, 2.5);
}

TEST(Expression, ListsItsFunctions) {
  std::map<std::string, int> arity;
  for (const FunctionInfo& f : expression_functions()) arity[f.name] = f.arity;
  EXPECT_EQ(arity.size(), 19u);
  EXPECT_EQ(arity.at("atan2"), 2);
  EXPECT_EQ(arity.at("cbrt"), 1);
}

TEST(ModelSpecRefusal, SyntaxErrors) {
  json model = pendulum();
  model["flow"]["omega"] = "-g / L *";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 8: expected an operand after \"*\""));
  model["flow"]["omega"] = "-g / L * ) ";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 10: expected an operand after \"*\", found \")\""));
  model["flow"]["omega"] = "sin(phi";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 8: expected \")\" to close the \"(\" at column 4"));
  model["flow"]["omega"] = "phi)";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 4: unmatched \")\""));
  model["flow"]["omega"] = "2 phi";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 3: expected an operator"));
  model["flow"]["omega"] = "phi ** 2";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 6: expected an operand after \"*\", found \"*\""));
  model["flow"]["omega"] = "phi # 2";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 5: unexpected character \"#\""));
  model["flow"]["omega"] = "  ";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "empty"));
  model["flow"]["omega"] = "+phi";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 1: expected an operand, found \"+\""));
  model["flow"]["omega"] = "phi + .";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 7: \".\" is not a number"));
}

TEST(ModelSpecRefusal, PathWithoutPrefix) {
  json model = pendulum();
  model["guards"][0]["reset"]["omega"] = "-e * omeg";
  EXPECT_TRUE(refused(model, "guards[0].reset.omega", "column 6: unknown name \"omeg\"", ""));
}

TEST(ModelSpecRefusal, UnknownNames) {
  json model = pendulum();
  model["guards"][0]["reset"]["omega"] = "-e * omeg";
  EXPECT_TRUE(refused(model, "model.define.guards[0].reset.omega",
                      "column 6: unknown name \"omeg\" (did you mean \"omega\"?)"));
  model = pendulum();
  model["flow"]["phi"] = "inf";
  EXPECT_TRUE(refused(model, "model.define.flow.phi", "column 1: unknown name \"inf\""));
  model["flow"]["phi"] = "nan";
  EXPECT_TRUE(refused(model, "model.define.flow.phi", "column 1: unknown name \"nan\""));
  model["flow"]["phi"] = "sin";
  EXPECT_TRUE(refused(model, "model.define.flow.phi", "\"sin\" is a function"));
}

TEST(ModelSpecRefusal, DuplicateNames) {
  json model = pendulum();
  model["states"] = {"phi", "phi"};
  EXPECT_TRUE(refused(model, "model.define.states[1]", "\"phi\" is already model.define.states[0]"));
  model = pendulum();
  model["parameters"][1]["name"] = "phi0";
  EXPECT_TRUE(refused(model, "model.define.parameters[1].name", "already model.define.parameters[0].name"));
  model = pendulum();
  model["constants"]["L"] = 1.0;
  EXPECT_TRUE(refused(model, "model.define.constants.L", "both a parameter (model.define.parameters[2].name)"));
  model = pendulum();
  model["modes"] = {"swing", "swing"};
  EXPECT_TRUE(refused(model, "model.define.modes[1]", "already model.define.modes[0]"));
  model = pendulum();
  model["guards"][1] = model["guards"][0];
  EXPECT_TRUE(refused(model, "model.define.guards[1].name", "already the name of model.define.guards[0].name"));
}

TEST(ModelSpecRefusal, NameThatIsStateAndParameter) {
  json model = pendulum();
  model["parameters"][3]["name"] = "omega";
  EXPECT_TRUE(refused(model, "model.define.parameters[3].name",
                      "\"omega\" is both a state (model.define.states[1]) and a parameter"));
}

TEST(ModelSpecRefusal, NamesThatAreNotIdentifiers) {
  for (const char* name : {"2x", "my state", "", "x-y"}) {
    json model = pendulum();
    model["states"][1] = name;
    EXPECT_TRUE(refused(model, "model.define.states[1]", "is not a name"));
  }
  json model = pendulum();
  model["modes"] = {"swing", "exp"};
  EXPECT_TRUE(refused(model, "model.define.modes[1]", "\"exp\" is a function"));
}

TEST(ModelSpecRefusal, Functions) {
  json model = pendulum();
  model["flow"]["omega"] = "-g / L * sine(phi)";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 10: unknown function \"sine\""));
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "the functions are exp, log, sqrt"));
  model["flow"]["omega"] = "min(phi, omega)";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "(did you mean \"fmin\"?)"));
  model["flow"]["omega"] = "sin(phi, omega)";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 1: sin takes 1 argument, given 2"));
  model["flow"]["omega"] = "atan2(phi)";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 1: atan2 takes 2 arguments, given 1"));
  model["flow"]["omega"] = "cos()";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "cos takes 1 argument, given 0"));
  model["flow"]["omega"] = "L(phi)";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "\"L\" is not a function"));
}

TEST(ModelSpecRefusal, NonFiniteLiterals) {
  json model = pendulum();
  model["flow"]["omega"] = "phi * 1e400";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 7: the number 1e400 is too large"));
  model = pendulum();
  model["flow"]["omega"] = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "must be a finite number"));
  model = pendulum();
  model["constants"]["g"] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(refused(model, "model.define.constants.g", "must be a finite number"));
}

TEST(ModelSpecRefusal, Time) {
  json model = pendulum();
  model["flow"]["omega"] = "-g * t";
  EXPECT_TRUE(refused(model, "model.define.flow.omega",
                      "column 6: \"t\" is not a name here: the flow is autonomous; add a clock state"));
  model = pendulum();
  model["states"][0] = "t";
  EXPECT_TRUE(refused(model, "model.define.states[0]", "the flow is autonomous"));
  model = pendulum();
  model["constants"]["t"] = 0.0;
  EXPECT_TRUE(refused(model, "model.define.constants.t", "the flow is autonomous"));
}

TEST(ModelSpecRefusal, ComparisonsAndConditionals) {
  for (const char* op : {"<", ">", "<=", ">=", "==", "!=", "&&", "||", "?", ":", "="}) {
    json model = pendulum();
    model["flow"]["omega"] = std::string("phi ") + op + " 0";
    EXPECT_TRUE(
        refused(model, "model.define.flow.omega",
                std::string("column 5: \"") + op + "\": comparisons and conditionals are not expressions here"));
  }
  json model = pendulum();
  model["flow"]["omega"] = "!phi";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "column 1: \"!\": comparisons and conditionals"));
  for (const char* word : {"if", "where"}) {
    model["flow"]["omega"] = std::string("1 + ") + word + "(phi, 1, 2)";
    EXPECT_TRUE(refused(model, "model.define.flow.omega",
                        std::string("column 5: \"") + word +
                            "\": comparisons and conditionals are not expressions "
                            "here; use guards and modes"));
  }
}

TEST(ModelSpecRefusal, GuardActiveInNoMode) {
  json model = pendulum();
  model["guards"][0]["modes"] = json::array();
  EXPECT_TRUE(refused(model, "model.define.guards[0].modes", "is empty: a guard must be active in some mode"));
}

TEST(ModelSpecRefusal, UnknownModes) {
  json model = pendulum();
  model["initial_mode"] = "swim";
  EXPECT_TRUE(refused(model, "model.define.initial_mode", "unknown mode \"swim\" (the modes are swing)"));
  model = pendulum();
  model["guards"][0]["modes"] = {"swing", "swim"};
  EXPECT_TRUE(refused(model, "model.define.guards[0].modes[1]", "unknown mode \"swim\""));
  model = pendulum();
  model["guards"][0]["next_mode"] = "swim";
  EXPECT_TRUE(refused(model, "model.define.guards[0].next_mode", "unknown mode \"swim\""));
  model = thermostat();
  model["flow"]["of"] = model["flow"]["off"];
  model["flow"].erase("off");
  EXPECT_TRUE(refused(model, "model.define.flow.of", "unknown mode \"of\" (the modes are on, off)"));
}

TEST(ModelSpecRefusal, TooManyGuards) {
  json model = pendulum();
  for (int j = 1; j < kMaxGuards; ++j) model["guards"][j] = {{"expression", "phi"}};
  EXPECT_NO_THROW(parse_model_spec(model, "model.define"));
  model["guards"][kMaxGuards] = {{"expression", "phi"}};
  EXPECT_TRUE(refused(model, "model.define.guards", "has 33 guards; a model has at most 32"));
}

TEST(ModelSpecRefusal, EmptyStatesOrParameters) {
  json model = pendulum();
  model["states"] = json::array();
  EXPECT_TRUE(refused(model, "model.define.states", "must list at least one state"));
  model = pendulum();
  model["parameters"] = json::array();
  EXPECT_TRUE(refused(model, "model.define.parameters", "must list at least one parameter"));
}

TEST(ModelSpecRefusal, StateInInitialState) {
  json model = pendulum();
  model["initial_state"]["omega"] = "omega0 + 2 * phi";
  EXPECT_TRUE(refused(model, "model.define.initial_state.omega",
                      "\"phi\" is a state: initial_state may use only parameters and constants"));
}

TEST(ModelSpecRefusal, ResetOfAnUnknownState) {
  json model = pendulum();
  model["guards"][0]["reset"]["omegaa"] = "0";
  EXPECT_TRUE(
      refused(model, "model.define.guards[0].reset.omegaa", "\"omegaa\" is not a state (the states are phi, omega)"));
}

TEST(ModelSpecRefusal, ExpressionsThatAreNeitherTextNorNumbers) {
  for (const json& value : {json(true), json::array({1}), json()}) {
    json model = pendulum();
    model["flow"]["phi"] = value;
    EXPECT_TRUE(refused(model, "model.define.flow.phi", "must be an expression: a string or a number"));
  }
  json model = pendulum();
  model["guards"][0]["expression"] = json::object();
  EXPECT_TRUE(refused(model, "model.define.guards[0].expression", "must be an expression"));
}

TEST(ModelSpecRefusal, MissingExpressions) {
  json model = pendulum();
  model["flow"].erase("omega");
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "is required: every state needs a flow expression"));
  model = pendulum();
  model["initial_state"].erase("phi");
  EXPECT_TRUE(refused(model, "model.define.initial_state.phi", "is required: every state needs an initial value"));
  model = thermostat();
  model["flow"]["off"] = json::object();
  EXPECT_TRUE(refused(model, "model.define.flow.off.T", "every state needs a flow expression in every mode"));
  model = thermostat();
  model["flow"].erase("off");
  EXPECT_TRUE(refused(model, "model.define.flow.off", "is required: a per-mode flow gives every mode one"));
  model = pendulum();
  model["guards"][0].erase("expression");
  EXPECT_TRUE(refused(model, "model.define.guards[0].expression", "is required"));
}

TEST(ModelSpecRefusal, Domains) {
  for (const char* domain : {"> zero", "=> 0", "[1 2]", "[0, 1", "(0, inf)", "> nan", "> 0x10", ">= 1e400", "finit",
                             "finite!", "> 1 2", ""}) {
    json model = pendulum();
    model["parameters"][2]["domain"] = domain;
    EXPECT_TRUE(refused(model, "model.define.parameters[2].domain", "is not a domain")) << domain;
  }
  json model = pendulum();
  model["parameters"][2]["domain"] = "[1, 0]";
  EXPECT_TRUE(refused(model, "model.define.parameters[2].domain", "\"[1, 0]\" is empty"));
  model["parameters"][2]["domain"] = 0;
  EXPECT_TRUE(refused(model, "model.define.parameters[2].domain", "must be a string"));
}

TEST(ModelSpec, ReadsDomainsLeniently) {
  json model = pendulum();
  model["parameters"][0]["domain"] = ">=1e-3";
  model["parameters"][1]["domain"] = " ( -2 , .5 ] ";
  model["parameters"][2]["domain"] = "<= 3";
  model["parameters"][3]["domain"] = " finite ";
  const ModelSpec spec = parse_model_spec(model, "");
  const Domain& a = spec.parameters[0].domain;
  EXPECT_TRUE(a.has_lower && a.lower_closed && !a.has_upper);
  EXPECT_EQ(a.lower, 1e-3);
  const Domain& b = spec.parameters[1].domain;
  EXPECT_TRUE(b.has_lower && !b.lower_closed && b.has_upper && b.upper_closed);
  EXPECT_EQ(b.lower, -2.0);
  EXPECT_EQ(b.upper, 0.5);
  const Domain& c = spec.parameters[2].domain;
  EXPECT_TRUE(!c.has_lower && c.has_upper && c.upper_closed);
  EXPECT_EQ(c.upper, 3.0);
  EXPECT_FALSE(spec.parameters[3].domain.has_lower || spec.parameters[3].domain.has_upper);
}

TEST(ModelSpecRefusal, UnknownKeys) {
  json model = pendulum();
  model["gaurds"] = json::array();
  EXPECT_TRUE(refused(model, "model.define.gaurds", "is not a key of a model definition"));
  model = pendulum();
  model["guards"][0]["drection"] = "rising";
  EXPECT_TRUE(refused(model, "model.define.guards[0].drection", "is not a key of a guard"));
  model = pendulum();
  model["parameters"][0]["domian"] = "> 0";
  EXPECT_TRUE(refused(model, "model.define.parameters[0].domian", "is not a key of a parameter"));
  model = pendulum();
  model["guards"][0]["direction"] = "down";
  EXPECT_TRUE(refused(model, "model.define.guards[0].direction", "\"down\" is not one of \"falling\", \"rising\""));
}

TEST(ModelSpecRefusal, ExpressionsNestedTooDeeply) {
  json model = pendulum();
  model["flow"]["omega"] = std::string(1000, '(') + "phi" + std::string(1000, ')');
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "nests more than 500 levels deep"));
  model["flow"]["omega"] = std::string(1000, '-') + "phi";
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "nests more than 500 levels deep"));
  std::string sum = "phi";
  for (int k = 0; k < 1000; ++k) sum += " + phi";
  model["flow"]["omega"] = sum;
  EXPECT_TRUE(refused(model, "model.define.flow.omega", "nests more than 500 levels deep"));
}
