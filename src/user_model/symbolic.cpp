#include "symbolic.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace saltation::user_model {
namespace {

ExprPtr make(Op op, std::vector<ExprPtr> args, std::string name = "") {
  auto e = std::make_shared<Expr>();
  e->op = op;
  e->args = std::move(args);
  e->name = std::move(name);
  return e;
}

bool is_constant(const ExprPtr& e) { return e->op == Op::Number; }

ExprPtr add(const ExprPtr& a, const ExprPtr& b) { return binary(Op::Add, a, b); }
ExprPtr sub(const ExprPtr& a, const ExprPtr& b) { return binary(Op::Subtract, a, b); }
ExprPtr mul(const ExprPtr& a, const ExprPtr& b) { return binary(Op::Multiply, a, b); }
ExprPtr div(const ExprPtr& a, const ExprPtr& b) { return binary(Op::Divide, a, b); }
ExprPtr fn(const char* f, const ExprPtr& a) { return call(f, {a}); }

// The derivative of a call f(args), given the arguments' derivatives.
ExprPtr call_derivative(const Expr& e, const std::vector<ExprPtr>& d) {
  const std::string& f = e.name;
  const ExprPtr& u = e.args[0];
  const ExprPtr& du = d[0];
  const ExprPtr self = make(Op::Call, e.args, f);
  if (f == "exp") return mul(self, du);
  if (f == "log") return div(du, u);
  if (f == "sqrt") return mul(div(number(0.5), self), du);
  if (f == "cbrt") return mul(div(number(1.0), mul(number(3.0), mul(self, self))), du);
  // The dual numbers' abs is -a below 0 and a from 0 on; generated code asks the same question.
  if (f == "abs") return mul(call("abs_slope", {u}), du);
  if (f == "sin") return mul(fn("cos", u), du);
  if (f == "cos") return negate(mul(fn("sin", u), du));
  if (f == "tan") return mul(add(number(1.0), mul(self, self)), du);
  if (f == "asin") return div(du, fn("sqrt", sub(number(1.0), mul(u, u))));
  if (f == "acos") return negate(div(du, fn("sqrt", sub(number(1.0), mul(u, u)))));
  if (f == "atan") return div(du, add(number(1.0), mul(u, u)));
  if (f == "sinh") return mul(fn("cosh", u), du);
  if (f == "cosh") return mul(fn("sinh", u), du);
  if (f == "tanh") return mul(sub(number(1.0), mul(self, self)), du);
  const ExprPtr& v = e.args[1];
  const ExprPtr& dv = d[1];
  if (f == "atan2")  // d atan2(u, v) = (v du - u dv) / (u^2 + v^2)
    return div(sub(mul(v, du), mul(u, dv)), add(mul(v, v), mul(u, u)));
  if (f == "hypot") return div(add(mul(u, du), mul(v, dv)), self);
  if (f == "pow") {
    // As the dual numbers: a constant exponent brings no log of the base in.
    ExprPtr r = number(0.0);
    if (!is_number(du, 0.0)) r = mul(mul(v, call("pow", {u, sub(v, number(1.0))})), du);
    if (!is_number(dv, 0.0)) r = add(r, mul(mul(self, fn("log", u)), dv));
    return r;
  }
  if (f == "fmin" || f == "fmax") return call(f == "fmin" ? "min_slope" : "max_slope", {u, v, du, dv});
  return nullptr;  // the parser admits no other function
}

}  // namespace

ExprPtr number(double value) {
  auto e = std::make_shared<Expr>();
  e->op = Op::Number;
  e->number = value;
  return e;
}

ExprPtr symbol(SymbolKind kind, int index, const std::string& name) {
  auto e = std::make_shared<Expr>();
  e->op = Op::Symbol;
  e->symbol = kind;
  e->index = index;
  e->name = name;
  return e;
}

bool is_number(const ExprPtr& e, double value) { return e->op == Op::Number && e->number == value; }

ExprPtr negate(const ExprPtr& a) {
  if (is_constant(a)) return number(-a->number);
  if (a->op == Op::Negate) return a->args[0];
  return make(Op::Negate, {a});
}

ExprPtr binary(Op op, const ExprPtr& a, const ExprPtr& b) {
  switch (op) {
    case Op::Add:
      if (is_number(a, 0.0)) return b;
      if (is_number(b, 0.0)) return a;
      break;
    case Op::Subtract:
      if (is_number(b, 0.0)) return a;
      if (is_number(a, 0.0)) return negate(b);
      break;
    case Op::Multiply:
      if (is_number(a, 0.0) || is_number(b, 0.0)) return number(0.0);
      if (is_number(a, 1.0)) return b;
      if (is_number(b, 1.0)) return a;
      if (is_number(a, -1.0)) return negate(b);
      if (is_number(b, -1.0)) return negate(a);
      break;
    case Op::Divide:
      if (is_number(a, 0.0)) return number(0.0);
      if (is_number(b, 1.0)) return a;
      break;
    default: break;
  }
  return make(op, {a, b});
}

ExprPtr call(const std::string& function, std::vector<ExprPtr> args) {
  return make(Op::Call, std::move(args), function);
}

ExprPtr derivative(const ExprPtr& e, SymbolKind kind, int index) {
  switch (e->op) {
    case Op::Number: return number(0.0);
    case Op::Symbol: return number(e->symbol == kind && e->index == index ? 1.0 : 0.0);
    case Op::Negate: return negate(derivative(e->args[0], kind, index));
    default: break;
  }
  std::vector<ExprPtr> d;
  for (const ExprPtr& a : e->args) d.push_back(derivative(a, kind, index));
  bool all_zero = true;
  for (const ExprPtr& x : d) all_zero = all_zero && is_number(x, 0.0);
  if (all_zero) return number(0.0);
  const ExprPtr& a = e->args[0];
  switch (e->op) {
    case Op::Add: return add(d[0], d[1]);
    case Op::Subtract: return sub(d[0], d[1]);
    case Op::Multiply: return add(mul(d[0], e->args[1]), mul(a, d[1]));
    case Op::Divide:  // (a' - (a / b) b') / b, as the dual numbers form it
      if (is_number(d[1], 0.0)) return div(d[0], e->args[1]);
      return div(sub(d[0], mul(e, d[1])), e->args[1]);
    case Op::Power: {
      Expr as_call = *e;
      as_call.name = "pow";
      return call_derivative(as_call, d);
    }
    case Op::Call: return call_derivative(*e, d);
    default: return nullptr;
  }
}

void mark_names(const ExprPtr& e, SymbolKind kind, std::vector<bool>& used) {
  if (e->op == Op::Symbol && e->symbol == kind) used[e->index] = true;
  for (const ExprPtr& a : e->args) mark_names(a, kind, used);
}

bool reads(const ExprPtr& e, SymbolKind kind) {
  if (e->op == Op::Symbol) return e->symbol == kind;
  for (const ExprPtr& a : e->args)
    if (reads(a, kind)) return true;
  return false;
}

namespace {

// How an expression depends on the states, from the least to the most general form.
enum class StateForm { Free, Affine, Polynomial, Other };

StateForm state_form(const ExprPtr& e) {
  if (!reads(e, SymbolKind::State)) return StateForm::Free;
  const auto form_of = [&](int k) { return state_form(e->args[k]); };
  switch (e->op) {
    case Op::Symbol: return StateForm::Affine;
    case Op::Negate: return form_of(0);
    case Op::Add:
    case Op::Subtract: return std::max(form_of(0), form_of(1));
    case Op::Multiply: {
      const StateForm a = form_of(0), b = form_of(1);
      if (a == StateForm::Free || b == StateForm::Free) return std::max(a, b);
      return std::max({a, b, StateForm::Polynomial});
    }
    case Op::Divide: return form_of(1) == StateForm::Free ? form_of(0) : StateForm::Other;
    case Op::Power: {
      const Expr& n = *e->args[1];
      const bool natural = n.op == Op::Number && n.number >= 0.0 && n.number == std::floor(n.number);
      return natural && form_of(0) <= StateForm::Polynomial ? StateForm::Polynomial : StateForm::Other;
    }
    default:  // a function of the state
      return StateForm::Other;
  }
}

}  // namespace

bool affine_in_states(const ExprPtr& e) { return state_form(e) <= StateForm::Affine; }
bool polynomial_in_states(const ExprPtr& e) { return state_form(e) <= StateForm::Polynomial; }

}  // namespace saltation::user_model
