#pragma once
// Symbolic work on a model file's expressions: building them with the obvious simplifications,
// differentiating them, and the questions the generator asks (which names an expression reads,
// whether a flow is affine in the state).
#include <string>
#include <vector>

#include "saltation/user_model/expression.hpp"

namespace saltation::user_model {

ExprPtr number(double value);
ExprPtr symbol(SymbolKind kind, int index, const std::string& name);
// Folds numbers and drops 0 and 1 where the result is the other operand.
ExprPtr negate(const ExprPtr& a);
ExprPtr binary(Op op, const ExprPtr& a, const ExprPtr& b);
ExprPtr call(const std::string& function, std::vector<ExprPtr> args);

bool is_number(const ExprPtr& e, double value);

// d e / d (the name `kind`, `index`), with the dual numbers' conventions where a derivative has
// a kink (abs, fmin, fmax, pow with a constant exponent).
ExprPtr derivative(const ExprPtr& e, SymbolKind kind, int index);

// Marks used[index] for every name of `kind` that e reads.
void mark_names(const ExprPtr& e, SymbolKind kind, std::vector<bool>& used);
bool reads(const ExprPtr& e, SymbolKind kind);

// True when e is affine in the states: a sum of terms each free of states or one state times a
// state-free factor (decided on the tree, so x * x / x counts as not affine).
bool affine_in_states(const ExprPtr& e);

// True when e is a polynomial in the states: states combined by +, -, *, division by state-free
// factors and non-negative integer powers, with any state-free subexpressions as coefficients.
bool polynomial_in_states(const ExprPtr& e);

}  // namespace saltation::user_model
