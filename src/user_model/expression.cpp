// The expression parser: a scanner and a recursive-descent parser over the grammar
//   sum     = product { ("+" | "-") product }
//   product = unary { ("*" | "/") unary }
//   unary   = "-" unary | power
//   power   = primary [ "^" unary ]        (right-associative; -x^2 is -(x^2), 2^-1 is allowed)
//   primary = number | name | function "(" sum { "," sum } ")" | "(" sum ")"
// Every refusal names the 1-based column of the culprit.
#include "saltation/user_model/expression.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "saltation/errors.hpp"

namespace saltation::user_model {

const std::vector<FunctionInfo>& expression_functions() {
  static const std::vector<FunctionInfo> functions = {{"exp", 1},  {"log", 1},   {"sqrt", 1}, {"cbrt", 1}, {"abs", 1},
                                                      {"sin", 1},  {"cos", 1},   {"tan", 1},  {"asin", 1}, {"acos", 1},
                                                      {"atan", 1}, {"atan2", 2}, {"sinh", 1}, {"cosh", 1}, {"tanh", 1},
                                                      {"pow", 2},  {"hypot", 2}, {"fmin", 2}, {"fmax", 2}};
  return functions;
}

namespace {

// Deeper trees are refused: the parser, the tree's destructor and the generator all recurse on
// them, and a hostile file must not exhaust the stack.
constexpr int kMaxDepth = 500;

const FunctionInfo* find_function(const std::string& name) {
  for (const FunctionInfo& f : expression_functions())
    if (name == f.name) return &f;
  return nullptr;
}

std::string function_list() {
  std::string list;
  for (const FunctionInfo& f : expression_functions()) list += (list.empty() ? "" : ", ") + std::string(f.name);
  return list;
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The first name one edit (delete, insert, swap, replace) away from `name` that `exists`, or "".
template <class Exists>
std::string one_edit_away(const std::string& name, const Exists& exists) {
  static const std::string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
  const std::size_t n = name.size();
  auto hit = [&](const std::string& candidate) { return !candidate.empty() && exists(candidate); };
  for (std::size_t i = 0; i < n; ++i)
    if (std::string c = name.substr(0, i) + name.substr(i + 1); hit(c)) return c;
  for (std::size_t i = 0; i <= n; ++i)
    for (char a : alphabet)
      if (std::string c = name.substr(0, i) + a + name.substr(i); hit(c)) return c;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    std::string c = name;
    std::swap(c[i], c[i + 1]);
    if (hit(c)) return c;
  }
  for (std::size_t i = 0; i < n; ++i)
    for (char a : alphabet) {
      std::string c = name;
      c[i] = a;
      if (c != name && hit(c)) return c;
    }
  return "";
}

enum class Tok { End, Number, Name, Plus, Minus, Star, Slash, Caret, LeftParen, RightParen, Comma };

struct Token {
  Tok kind = Tok::End;
  std::size_t begin = 0, end = 0;  // the token's bytes in the text
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& path, const NameResolver& resolve)
      : text_(text), path_(path), resolve_(resolve) {
    advance();
  }

  ExprPtr parse() {
    if (token_.kind == Tok::End) fail(0, "the expression is empty");
    Parsed e = sum();
    if (token_.kind == Tok::RightParen) fail(token_.begin, "unmatched \")\"");
    if (token_.kind != Tok::End) fail(token_.begin, "expected an operator (+ - * / ^) before " + quoted(token_));
    return e.expr;
  }

 private:
  struct Parsed {
    ExprPtr expr;
    int depth = 0;
  };

  Parsed sum() {
    Parsed left = product();
    while (token_.kind == Tok::Plus || token_.kind == Tok::Minus) {
      const Token op = take();
      left = node(op, op.kind == Tok::Plus ? Op::Add : Op::Subtract, {left, product()});
    }
    return left;
  }

  Parsed product() {
    Parsed left = unary();
    while (token_.kind == Tok::Star || token_.kind == Tok::Slash) {
      const Token op = take();
      left = node(op, op.kind == Tok::Star ? Op::Multiply : Op::Divide, {left, unary()});
    }
    return left;
  }

  // Every recursion passes through here, so the nesting bound is kept here.
  Parsed unary() {
    if (++nesting_ > kMaxDepth)
      fail(token_.begin, "the expression nests more than " + std::to_string(kMaxDepth) + " levels deep");
    Parsed e;
    if (token_.kind == Tok::Minus) {
      const Token op = take();
      e = node(op, Op::Negate, {unary()});
    } else {
      e = power();
    }
    --nesting_;
    return e;
  }

  Parsed power() {
    Parsed base = primary();
    if (token_.kind != Tok::Caret) return base;
    const Token op = take();
    return node(op, Op::Power, {base, unary()});
  }

  Parsed primary() {
    const Token t = token_;
    switch (t.kind) {
      case Tok::Number: advance(); return number(t);
      case Tok::Name: advance(); return token_.kind == Tok::LeftParen ? call(t) : name(t);
      case Tok::LeftParen: {
        advance();
        Parsed inside = sum();
        if (token_.kind != Tok::RightParen) missing_close(t);
        advance();
        return inside;
      }
      default: missing_operand();
    }
  }

  Parsed number(const Token& t) {
    const std::string literal = text_.substr(t.begin, t.end - t.begin);
    auto e = std::make_shared<Expr>();
    e->op = Op::Number;
    e->number = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(e->number)) fail(t.begin, "the number " + literal + " is too large for a double");
    return {e, 1};
  }

  Parsed name(const Token& t) {
    const std::string name = text_.substr(t.begin, t.end - t.begin);
    if (name == "t")
      fail(t.begin, "\"t\" is not a name here: the flow is autonomous; add a clock state (e.g. \"clock\" with flow 1)");
    if (find_function(name)) fail(t.begin, "\"" + name + "\" is a function: call it as " + name + "(...)");
    auto e = std::make_shared<Expr>();
    e->op = Op::Symbol;
    e->name = name;
    if (!resolve_(name, e->symbol, e->index)) {
      const std::string close = one_edit_away(name, [&](const std::string& candidate) {
        SymbolKind kind;
        int index;
        return resolve_(candidate, kind, index);
      });
      fail(t.begin, "unknown name \"" + name + "\"" +
                        (close.empty() ? " (names are the model's states, parameters and constants)"
                                       : " (did you mean \"" + close + "\"?)"));
    }
    return {e, 1};
  }

  Parsed call(const Token& t) {
    const std::string name = text_.substr(t.begin, t.end - t.begin);
    if (name == "if" || name == "where") refuse_conditional(t.begin, name);
    const FunctionInfo* function = find_function(name);
    if (!function) {
      SymbolKind kind;
      int index;
      if (resolve_(name, kind, index))
        fail(t.begin, "\"" + name + "\" is not a function; the functions are " + function_list());
      const std::string close =
          one_edit_away(name, [](const std::string& candidate) { return find_function(candidate) != nullptr; });
      fail(t.begin, "unknown function \"" + name + "\"" + (close.empty() ? "" : " (did you mean \"" + close + "\"?)") +
                        "; the functions are " + function_list());
    }
    const Token open = take();
    auto e = std::make_shared<Expr>();
    e->op = Op::Call;
    e->name = name;
    int depth = 0;
    if (token_.kind != Tok::RightParen) {
      for (;;) {
        Parsed arg = sum();
        e->args.push_back(arg.expr);
        depth = std::max(depth, arg.depth);
        if (token_.kind != Tok::Comma) break;
        advance();
      }
    }
    if (token_.kind != Tok::RightParen) missing_close(open);
    advance();
    const int given = static_cast<int>(e->args.size());
    if (given != function->arity)
      fail(t.begin, name + " takes " + std::to_string(function->arity) + " argument" +
                        (function->arity == 1 ? "" : "s") + ", given " + std::to_string(given));
    return checked_depth(t, e, depth + 1);
  }

  Parsed node(const Token& op_token, Op op, std::initializer_list<Parsed> operands) {
    auto e = std::make_shared<Expr>();
    e->op = op;
    int depth = 0;
    for (const Parsed& operand : operands) {
      e->args.push_back(operand.expr);
      depth = std::max(depth, operand.depth);
    }
    return checked_depth(op_token, e, depth + 1);
  }

  Parsed checked_depth(const Token& at, ExprPtr e, int depth) const {
    if (depth > kMaxDepth)
      fail(at.begin, "the expression nests more than " + std::to_string(kMaxDepth) + " levels deep");
    return {std::move(e), depth};
  }

  // Where an operand should start and none does: at the end of the text the column is the
  // operator's, so that "x *" reads `column 3: expected an operand after "*"`.
  [[noreturn]] void missing_operand() const {
    if (token_.kind == Tok::End) fail(previous_.begin, "expected an operand after " + quoted(previous_));
    const bool at_start = previous_.kind == Tok::End;
    std::string what = "expected an operand" + (at_start ? std::string() : " after " + quoted(previous_)) + ", found " +
                       quoted(token_);
    if (previous_.kind == Tok::Star && token_.kind == Tok::Star) what += " (write ^ for a power)";
    if (token_.kind == Tok::Plus) what += " (there is no unary plus)";
    fail(token_.begin, what);
  }

  [[noreturn]] void missing_close(const Token& open) const {
    fail(token_.kind == Tok::End ? text_.size() : token_.begin,
         "expected \")\" to close the \"(\" at column " + std::to_string(open.begin + 1) +
             (token_.kind == Tok::End ? std::string() : ", found " + quoted(token_)));
  }

  [[noreturn]] void refuse_conditional(std::size_t at, const std::string& what) const {
    fail(at, "\"" + what +
                 "\": comparisons and conditionals are not expressions here; use guards and modes "
                 "(an event switches the mode, each mode has its own flow)");
  }

  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw InvalidInput(path_, -1, "column " + std::to_string(at + 1) + ": " + what);
  }

  std::string quoted(const Token& t) const {
    if (t.kind == Tok::End) return "the end";
    return "\"" + text_.substr(t.begin, t.end - t.begin) + "\"";
  }

  Token take() {
    const Token t = token_;
    advance();
    return t;
  }

  void advance() {
    previous_ = token_;
    token_ = scan();
  }

  Token scan() {
    std::size_t i = pos_;
    while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) ++i;
    Token t{Tok::End, i, i};
    if (i == text_.size()) return t;
    const char c = text_[i];
    std::size_t end = i + 1;
    if (is_digit(c) || c == '.') {
      end = number_end(i);
      t.kind = Tok::Number;
    } else if (is_name_start(c)) {
      while (end < text_.size() && is_name_char(text_[end])) ++end;
      t.kind = Tok::Name;
    } else {
      switch (c) {
        case '+': t.kind = Tok::Plus; break;
        case '-': t.kind = Tok::Minus; break;
        case '*': t.kind = Tok::Star; break;
        case '/': t.kind = Tok::Slash; break;
        case '^': t.kind = Tok::Caret; break;
        case '(': t.kind = Tok::LeftParen; break;
        case ')': t.kind = Tok::RightParen; break;
        case ',': t.kind = Tok::Comma; break;
        default: refuse_character(i);
      }
    }
    t.end = end;
    pos_ = end;
    return t;
  }

  // digits [ "." digits ] [ ("e" | "E") [sign] digits ], with a digit before or after the point.
  std::size_t number_end(std::size_t i) const {
    const std::size_t begin = i;
    std::size_t digits = 0;
    for (; i < text_.size() && is_digit(text_[i]); ++i) ++digits;
    if (i < text_.size() && text_[i] == '.')
      for (++i; i < text_.size() && is_digit(text_[i]); ++i) ++digits;
    if (digits == 0) fail(begin, "\".\" is not a number");
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      std::size_t j = i + 1;
      if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
      if (j < text_.size() && is_digit(text_[j])) {
        i = j;
        while (i < text_.size() && is_digit(text_[i])) ++i;
      }
    }
    return i;
  }

  [[noreturn]] void refuse_character(std::size_t i) const {
    static const std::string comparisons[] = {"<=", ">=", "==", "!=", "&&", "||", "<",
                                              ">",  "=",  "!",  "?",  ":",  "&",  "|"};
    for (const std::string& op : comparisons)
      if (text_.compare(i, op.size(), op) == 0) refuse_conditional(i, op);
    // A UTF-8 sequence is quoted whole so that the message stays valid UTF-8.
    const unsigned char lead = static_cast<unsigned char>(text_[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    const std::string character = text_.substr(i, length);
    if (lead < 0x20 || lead == 0x7F) fail(i, "unexpected control character " + std::to_string(lead));
    fail(i, "unexpected character \"" + character + "\"");
  }

  const std::string& text_;
  const std::string& path_;
  const NameResolver& resolve_;
  std::size_t pos_ = 0;
  Token token_, previous_;
  int nesting_ = 0;
};

}  // namespace

ExprPtr parse_expression(const std::string& text, const std::string& path, const NameResolver& resolve) {
  return Parser(text, path, resolve).parse();
}

}  // namespace saltation::user_model
