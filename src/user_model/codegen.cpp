#include "codegen.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "symbolic.hpp"

namespace saltation::user_model {
namespace {

// A double literal that reads back as the same double.
std::string literal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

// A C++ string literal of any text (names are identifiers already; messages may hold anything).
std::string quoted(const std::string& text) {
  std::string s = "\"";
  for (unsigned char ch : text) {
    if (ch == '"' || ch == '\\') {
      s += '\\';
      s += static_cast<char>(ch);
    } else if (ch >= 0x20 && ch < 0x7f) {
      s += static_cast<char>(ch);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", ch);
      s += buf;
    }
  }
  return s + "\"";
}

const char* op_text(Op op) {
  switch (op) {
    case Op::Add: return " + ";
    case Op::Subtract: return " - ";
    case Op::Multiply: return " * ";
    default: return " / ";
  }
}

// Where an expression's names live in the code printed: q[k], th[p] and c[i] by default.
struct Arrays {
  const char* states = "q";
  const char* params = "th";
};

// The exponent n of x ^ n where it is a number 2 <= n <= 8: taken by n - 1 multiplications
// (integer_power), cheaper than pow and in vectors in the SIMD lanes; 0 for any other power.
int small_integer_exponent(const ExprPtr& e) {
  const ExprPtr& n = e->args[1];
  if (n->op != Op::Number || n->number < 2.0 || n->number > 8.0 || n->number != static_cast<int>(n->number)) return 0;
  return static_cast<int>(n->number);
}

// The functions taken from saltation::elementary (elementary.hpp), which run in vectors in the SIMD
// lanes with the scalar driver's bits; the others are the C library's (through dual.hpp), which
// the lanes call lane by lane.
bool in_elementary(const std::string& function) {
  return function == "exp" || function == "log" || function == "sin" || function == "cos";
}

// The expression as C++ over the states, the parameters and the constants c. The slope helpers
// the derivatives use live in user_model/slopes.hpp.
std::string cpp(const ExprPtr& e, const Arrays& at = {}) {
  switch (e->op) {
    case Op::Number: return literal(e->number);
    case Op::Symbol: {
      const char* array = e->symbol == SymbolKind::State       ? at.states
                          : e->symbol == SymbolKind::Parameter ? at.params
                                                               : "c";
      return std::string(array) + "[" + std::to_string(e->index) + "]";
    }
    case Op::Negate: return "(-" + cpp(e->args[0], at) + ")";
    case Op::Power:
      if (const int n = small_integer_exponent(e))
        return "saltation::user_model::integer_power<" + std::to_string(n) + ">(" + cpp(e->args[0], at) + ")";
      return "pow(" + cpp(e->args[0], at) + ", " + cpp(e->args[1], at) + ")";
    case Op::Call: {
      const bool helper = e->name == "abs_slope" || e->name == "min_slope" || e->name == "max_slope";
      std::string s = (helper                   ? "saltation::user_model::"
                       : in_elementary(e->name) ? "saltation::elementary::"
                                                : "") +
                      e->name + "(";
      for (std::size_t k = 0; k < e->args.size(); ++k) s += (k ? ", " : "") + cpp(e->args[k], at);
      return s + ")";
    }
    default: return "(" + cpp(e->args[0], at) + op_text(e->op) + cpp(e->args[1], at) + ")";
  }
}

std::string domain_check(const Domain& d, int p) {
  const std::string x = "th[" + std::to_string(p) + "]";
  std::string test;
  if (d.has_lower) test += x + (d.lower_closed ? " >= " : " > ") + literal(d.lower);
  if (d.has_upper) test += (test.empty() ? "" : " && ") + x + (d.upper_closed ? " <= " : " < ") + literal(d.upper);
  return test.empty() ? "" : "    if (!(" + test + ")) return " + std::to_string(p) + ";\n";
}

std::string domain_words(const Domain& d) {
  if (!d.has_lower && !d.has_upper) return "finite";
  if (d.has_lower && d.has_upper) return "in " + d.text;
  return "finite and " + d.text;
}

bool same_flow_in_every_mode(const ModelSpec& spec) {
  for (const auto& mode : spec.flow)
    for (std::size_t k = 0; k < mode.size(); ++k)
      if (mode[k] != spec.flow[0][k]) return false;
  return true;
}

// The reset of guard j as post-event expressions of every state (unchanged ones are q[k]).
std::vector<ExprPtr> reset_of(const ModelSpec& spec, const Guard& g) {
  std::vector<ExprPtr> r;
  for (std::size_t k = 0; k < spec.states.size(); ++k)
    r.push_back(g.reset[k] ? g.reset[k] : symbol(SymbolKind::State, static_cast<int>(k), spec.states[k]));
  return r;
}

// The parameters any mode's flow reads, in theta's order: flow_param's table.
std::vector<int> flow_params(const ModelSpec& spec) {
  std::vector<bool> used(spec.parameters.size(), false);
  for (const auto& mode : spec.flow)
    for (const ExprPtr& f : mode) mark_names(f, SymbolKind::Parameter, used);
  std::vector<int> read;
  for (std::size_t p = 0; p < used.size(); ++p)
    if (used[p]) read.push_back(static_cast<int>(p));
  return read;
}

class Writer {
 public:
  explicit Writer(const ModelSpec& spec)
      : spec_(spec),
        N(static_cast<int>(spec.states.size())),
        P(static_cast<int>(spec.parameters.size())),
        M(static_cast<int>(spec.guards.size())),
        modes_(static_cast<int>(spec.modes.size())) {}

  std::string header(const std::string& space) {
    const Derived derived = derived_members(spec_);
    o_ << "// Generated by saltation from the model file of \"" << spec_.name << "\": do not edit.\n"
       << "#include <string>\n\n#include \"saltation/dual.hpp\"\n#include \"saltation/elementary.hpp\"\n#include "
          "\"saltation/errors.hpp\"\n"
       << "#include \"saltation/model.hpp\"\n#include \"saltation/user_model/slopes.hpp\"\n\n"
       << "namespace " << space << " {\n\n"
       << "using saltation::abs, saltation::acos, saltation::asin, saltation::atan, saltation::atan2, "
          "saltation::cbrt,\n"
       << "    saltation::cos, saltation::cosh, saltation::exp, saltation::fmax, saltation::fmin, saltation::hypot,\n"
       << "    saltation::log, saltation::pow, saltation::sin, saltation::sinh, saltation::sqrt, saltation::tan,\n"
       << "    saltation::tanh;\n\n"
       << "struct Model {\n"
       << "  static constexpr int N = " << N << ", P = " << P << ", M = " << M << ", F = " << derived.flow_params
       << ";\n"
       << "  static constexpr int kConstants = " << spec_.constants.size() << ";\n"
       << "  static constexpr const char* name = " << quoted(spec_.name) << ";\n"
       << "  static constexpr bool affine_flow = " << (derived.affine_flow ? "true" : "false") << ";\n"
       << "  static constexpr bool polynomial_guards = " << (derived.polynomial_guards ? "true" : "false") << ";\n\n";
    o_ << "  double c[" << std::max<std::size_t>(1, spec_.constants.size()) << "] = {";
    for (std::size_t k = 0; k < spec_.constants.size(); ++k) o_ << (k ? ", " : "") << literal(spec_.constants[k].value);
    o_ << "};  // the constants, in the file's order: run-time data\n"
       << "  int initial_mode = " << spec_.initial_mode << ";\n\n";
    flow_param();
    initial_state();
    flow();
    guard();
    direction();
    reset();
    invalid_param();
    guard_gradient();
    event_partials();
    names();
    o_ << "};\n\n}  // namespace " << space << "\n";
    return o_.str();
  }

 private:
  void flow_param() {
    const std::vector<int> read = flow_params(spec_);
    std::string cases;
    for (std::size_t f = 0; f < read.size(); ++f)
      cases += "      case " + std::to_string(f) + ": return " + std::to_string(read[f]) + ";\n";
    o_ << "  // The parameters the flow reads, from its expressions.\n"
       << "  SALTATION_HD static int flow_param(int" << (read.empty() ? "" : " f") << ") {\n";
    if (!read.empty()) o_ << "    switch (f) {\n" << cases << "    }\n";
    o_ << "    return -1;\n  }\n\n";
  }

  void initial_state() {
    o_ << "  template <class S, class Th>\n  SALTATION_HD void initial_state(const Th& th, S* q) const {\n";
    for (int k = 0; k < N; ++k) o_ << "    q[" << k << "] = S(" << cpp(spec_.initial_state[k]) << ");\n";
    o_ << "  }\n";
  }

  void flow_of(const std::vector<ExprPtr>& f, const char* indent) {
    for (int k = 0; k < N; ++k) o_ << indent << "f[" << k << "] = S(" << cpp(f[k]) << ");\n";
  }

  void flow() {
    o_ << "  template <class S, class Th>\n  SALTATION_HD void flow(const S* q, int mode, const Th& th, S* f) const {\n"
       << "    (void)mode;\n    (void)th;\n";
    if (same_flow_in_every_mode(spec_)) {
      flow_of(spec_.flow[0], "    ");
    } else {
      o_ << "    switch (mode) {\n";
      for (int m = 0; m < modes_; ++m) {
        o_ << "      " << (m + 1 < modes_ ? "case " + std::to_string(m) + ":" : std::string("default:")) << " {  // "
           << spec_.modes[m] << "\n";
        flow_of(spec_.flow[m], "        ");
        o_ << "        return;\n      }\n";
      }
      o_ << "    }\n";
    }
    o_ << "  }\n";
  }

  void guard() {
    o_ << "  template <class S, class Th>\n  SALTATION_HD S guard(int j, const S* q, int, const Th& th) const {\n"
       << "    (void)q;\n    (void)th;\n    switch (j) {\n";
    for (int j = 0; j < M; ++j)
      o_ << "      case " << j << ": return S(" << cpp(spec_.guards[j].expression) << ");  // " << spec_.guards[j].name
         << "\n";
    o_ << "    }\n    return S(0.0);\n  }\n";
  }

  void direction() {
    o_ << "  SALTATION_HD int direction(int j, int mode) const {\n    (void)mode;\n    switch (j) {\n";
    for (int j = 0; j < M; ++j) {
      const Guard& g = spec_.guards[j];
      std::string active;
      bool everywhere = true;
      for (int m = 0; m < modes_; ++m) {
        everywhere = everywhere && g.active[m];
        if (g.active[m]) active += (active.empty() ? "" : " || ") + std::string("mode == ") + std::to_string(m);
      }
      o_ << "      case " << j << ": return ";
      if (everywhere) o_ << g.direction << ";\n";
      else o_ << "(" << active << ") ? " << g.direction << " : 0;\n";
    }
    o_ << "    }\n    return 0;\n  }\n";
  }

  void reset() {
    o_ << "  template <class S, class Th>\n"
          "  SALTATION_HD int reset(int j, const S* q, int mode, const Th& th, S* q_plus) const {\n"
          "    (void)th;\n    switch (j) {\n";
    for (int j = 0; j < M; ++j) {
      const Guard& g = spec_.guards[j];
      o_ << "      case " << j << ": {  // " << g.name << ": every value from the pre-event state\n";
      for (int k = 0; k < N; ++k)
        if (g.reset[k]) o_ << "        const S r" << k << " = S(" << cpp(g.reset[k]) << ");\n";
      for (int k = 0; k < N; ++k)
        o_ << "        q_plus[" << k
           << "] = " << (g.reset[k] ? "r" + std::to_string(k) : "q[" + std::to_string(k) + "]") << ";\n";
      o_ << "        return " << (g.next_mode >= 0 ? std::to_string(g.next_mode) : std::string("mode"))
         << ";\n      }\n";
    }
    o_ << "    }\n    for (int k = 0; k < N; ++k) q_plus[k] = q[k];\n    return mode;\n  }\n\n";
  }

  void invalid_param() {
    o_ << "  template <class Th>\n  SALTATION_HD int invalid_param(const Th& th) const {\n"
       << "    for (int p = 0; p < P; ++p)\n      if (!saltation::is_finite(th[p])) return p;\n";
    for (int p = 0; p < P; ++p) o_ << domain_check(spec_.parameters[p].domain, p);
    o_ << "    return -1;\n  }\n\n";
  }

  // d g_j / dq from symbolic derivatives, and g_j itself by the very expression guard() prints.
  void guard_gradient() {
    o_ << "  // Analytic members: derivatives of the file's expressions, printed like them.\n"
       << "  template <class Th>\n"
          "  SALTATION_HD double guard_gradient(int j, const double* q, int, const Th& th, double* g_q) const {\n"
       << "    (void)th;\n    switch (j) {\n";
    for (int j = 0; j < M; ++j) {
      o_ << "      case " << j << ":\n";
      for (int k = 0; k < N; ++k)
        o_ << "        g_q[" << k << "] = " << cpp(derivative(spec_.guards[j].expression, SymbolKind::State, k))
           << ";\n";
      o_ << "        return double(" << cpp(spec_.guards[j].expression) << ");\n";
    }
    o_ << "    }\n    for (int k = 0; k < N; ++k) g_q[k] = 0.0;\n    return 0.0;\n  }\n";
  }

  void event_partials() {
    // The context keeps the event's state and parameters (R_q reads both) and the guard's value
    // and gradient, formed once per event (event_guard_gradient).
    o_ << "  struct EventContext {\n    int j = 0;\n    double q[N] = {}, th[P] = {};\n"
       << "    double g = 0.0, g_q[N] = {};\n  };\n"
       << "  template <class Th>\n"
          "  SALTATION_HD EventContext event_context(int j, const double* q, int mode, const Th& th) const {\n"
       << "    EventContext ctx;\n    ctx.j = j;\n    for (int k = 0; k < N; ++k) ctx.q[k] = q[k];\n"
       << "    for (int p = 0; p < P; ++p) ctx.th[p] = th[p];\n"
       << "    ctx.g = guard_gradient(j, q, mode, th, ctx.g_q);\n    return ctx;\n  }\n";
    // R_q: d q+ / d q-, row-major.
    o_ << "  SALTATION_HD void event_state_jacobian(const EventContext& ctx, double* R_q) const {\n"
       << "    for (int k = 0; k < N * N; ++k) R_q[k] = 0.0;\n"
       << "    switch (ctx.j) {\n";
    for (int j = 0; j < M; ++j) {
      o_ << "      case " << j << ":\n";
      const std::vector<ExprPtr> r = reset_of(spec_, spec_.guards[j]);
      for (int row = 0; row < N; ++row)
        for (int k = 0; k < N; ++k) {
          const ExprPtr d = derivative(r[row], SymbolKind::State, k);
          if (!is_number(d, 0.0)) o_ << "        R_q[" << row * N + k << "] = " << cpp(d, {"ctx.q", "ctx.th"}) << ";\n";
        }
      o_ << "        return;\n";
    }
    o_ << "    }\n  }\n";
    // g_theta and R_theta for parameters p0 .. p0 + count - 1.
    o_ << "  template <class Th>\n"
          "  SALTATION_HD void event_param_partials(const EventContext& ctx, int p0, int count, const Th& th,\n"
          "                                         double* g_theta, double* R_theta, int stride) const {\n"
       << "    (void)th;\n"
       << "    for (int c = 0; c < count; ++c) {\n      double g_p = 0.0, R_p[N] = {};\n"
       << "      switch (ctx.j) {\n";
    for (int j = 0; j < M; ++j) {
      o_ << "        case " << j << ":\n          switch (p0 + c) {\n";
      const std::vector<ExprPtr> r = reset_of(spec_, spec_.guards[j]);
      for (int p = 0; p < P; ++p) {
        std::string body;
        const ExprPtr dg = derivative(spec_.guards[j].expression, SymbolKind::Parameter, p);
        if (!is_number(dg, 0.0)) body += "              g_p = " + cpp(dg, {"ctx.q", "th"}) + ";\n";
        for (int row = 0; row < N; ++row) {
          const ExprPtr d = derivative(r[row], SymbolKind::Parameter, p);
          if (!is_number(d, 0.0))
            body += "              R_p[" + std::to_string(row) + "] = " + cpp(d, {"ctx.q", "th"}) + ";\n";
        }
        if (!body.empty()) o_ << "            case " << p << ":\n" << body << "              break;\n";
      }
      o_ << "          }\n          break;\n";
    }
    o_ << "      }\n      g_theta[c] = g_p;\n      for (int r = 0; r < N; ++r) R_theta[r * stride + c] = R_p[r];\n"
       << "    }\n  }\n";
    o_ << "  SALTATION_HD double event_guard_gradient(const EventContext& ctx, double* g_q) const {\n"
       << "    for (int k = 0; k < N; ++k) g_q[k] = ctx.g_q[k];\n    return ctx.g;\n  }\n";
  }

  void names() {
    o_ << "\n  static std::string state_name(int k) {\n    static const char* const names[] = {";
    for (int k = 0; k < N; ++k) o_ << (k ? ", " : "") << quoted(spec_.states[k]);
    o_ << "};\n    return names[k];\n  }\n  static std::string param_name(int p) {\n"
       << "    static const char* const names[] = {";
    for (int p = 0; p < P; ++p) o_ << (p ? ", " : "") << quoted(spec_.parameters[p].name);
    o_ << "};\n    return names[p];\n  }\n  static std::string param_domain(int p) {\n"
       << "    static const char* const domains[] = {";
    for (int p = 0; p < P; ++p) o_ << (p ? ", " : "") << quoted(domain_words(spec_.parameters[p].domain));
    o_ << "};\n    return domains[p];\n  }\n"
       << "  void validate_config() const {\n";
    for (std::size_t k = 0; k < spec_.constants.size(); ++k)
      o_ << "    if (!saltation::is_finite(c[" << k << "])) throw saltation::InvalidInput("
         << quoted("config." + spec_.constants[k].name) << ", -1, \"must be finite\");\n";
    o_ << "  }\n";
  }

  const ModelSpec& spec_;
  const int N, P, M, modes_;
  std::ostringstream o_;
};

}  // namespace

Derived derived_members(const ModelSpec& spec) {
  Derived d;
  d.flow_params = static_cast<int>(flow_params(spec).size());
  d.affine_flow = true;
  for (const auto& mode : spec.flow)
    for (const ExprPtr& f : mode) d.affine_flow = d.affine_flow && affine_in_states(f);
  d.polynomial_guards = true;
  for (const Guard& g : spec.guards) d.polynomial_guards = d.polynomial_guards && polynomial_in_states(g.expression);
  return d;
}

std::string model_header(const ModelSpec& spec, const std::string& space) { return Writer(spec).header(space); }

std::string plugin_source(const ModelSpec& spec, const std::string& key, bool cuda) {
  std::ostringstream o;
  o << "// A model file compiled at run time (docs/models.md): the model struct and its drivers.\n"
    << "#include \"saltation/user_model/plugin.hpp\"\n\n"
    << model_header(spec, "saltation_generated") << "\n";
  // On the device one thread per trajectory; on the CPU the SIMD lanes of the target the
  // toolchain compiles for.
  const char* driver = cuda ? "solve.cuh" : "saltation/cpu_lanes_static.hpp";
  const char* trait = cuda ? "has_cuda_driver" : "has_static_cpu_lanes";
  o << "#include \"" << driver << "\"\n\nnamespace saltation {\ntemplate <>\n"
    << "struct " << trait << "<saltation_generated::Model> : std::true_type {};\n}  // namespace saltation\n\n";
  o << "SALTATION_USER_MODEL_PLUGIN(saltation_generated::Model, " << quoted(key) << ")\n";
  return o.str();
}

}  // namespace saltation::user_model
