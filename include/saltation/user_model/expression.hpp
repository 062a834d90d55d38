#pragma once
// The expressions of a model file (docs/models.md): numbers, names, + - * / ^, unary minus,
// parentheses and the dual numbers' functions. The user's text is parsed into this tree and never
// reaches a compiler: the generator prints C++ from the tree.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace saltation::user_model {

enum class Op { Number, Symbol, Negate, Add, Subtract, Multiply, Divide, Power, Call };

// What a name stands for in the model: q[index], theta[index] or constant `index`.
enum class SymbolKind { State, Parameter, Constant };

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  Op op = Op::Number;
  double number = 0.0;                    // Op::Number
  SymbolKind symbol = SymbolKind::State;  // Op::Symbol
  int index = -1;                         // Op::Symbol
  std::string name;                       // Op::Symbol: the name as written; Op::Call: the function
  std::vector<ExprPtr> args;              // operands (one for Negate, two for binary ops, the call's arguments)
};

// The function names an expression may call and their argument counts.
struct FunctionInfo {
  const char* name;
  int arity;
};
const std::vector<FunctionInfo>& expression_functions();

// Resolves a name to what it stands for; returns false for a name the model does not have.
using NameResolver = std::function<bool(const std::string& name, SymbolKind& kind, int& index)>;

// Parses `text`, resolving names with `resolve`. Throws InvalidInput(path, -1, "column C: ...")
// naming the column (1-based) for a syntax error, an unknown name or function, a wrong argument
// count, a non-finite or overflowing literal, `t`, comparisons and conditionals, and a tree nested
// more than 500 deep (parsing, destroying and printing it all recurse).
ExprPtr parse_expression(const std::string& text, const std::string& path, const NameResolver& resolve);

}  // namespace saltation::user_model
