#pragma once
// Forward-mode dual numbers with a compile-time number of derivative slots. Models are
// written once over a generic scalar; evaluating them on Dual<D> gives D partial
// derivatives at once. The value part of every operation is computed exactly as the
// plain-double operation is, so a run with sensitivities follows the same trajectory.
//
// Elementary functions (below), each for double and for Dual<D>, host and device: exp, log,
// sqrt, cbrt, abs, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, pow, hypot, fmin,
// fmax. The double overloads call the C library's ::f (under nvcc, CUDA's device math
// functions; the std:: overloads are not device functions), and the dual overload computes its
// value with that same call. CPU and GPU math libraries may differ in the last bits.
//
// Where a function has no derivative, the rules are:
//   abs(x) at x = 0: slope +1 (the x >= 0 piece);
//   fmin/fmax at a tie: the first argument's derivatives; with one NaN argument, the other's
//     (value and derivatives, as ::fmin/::fmax return the other argument);
//   hypot at (0, 0): zero derivatives (a subgradient; hypot(x, 0) is |x|);
//   pow(a, b): d/da is 0 where b = 0 and d/db is 0 where a^b = 0; a derivative slot that is
//     zero in a (or b) contributes zero even where the slope in a (or b) is inf or NaN, so
//     pow(x, 2.0) with x < 0 and pow(0.0, b) with b > 0 have finite derivatives;
//   elsewhere (sqrt, cbrt at 0, asin/acos at +-1, atan2 at the origin, log at 0) the derivative
//     is the formula's inf or NaN, which sensitivity outputs then show.
// Integer powers: pow(x, 3) takes the double exponent 3.0; ::pow is defined (not NaN) for a
// negative base with an integral exponent.
//
// Calling them from a model: inside namespace saltation (the built-in models) unqualified calls
// find these overloads. A model in its own namespace brings them in with using-declarations in
// that namespace (not the global one, where they would clash with ::sin):
//     namespace lab {
//     using saltation::sin;
//     ... S f = -sin(q[0]);   // S = double: saltation::sin(double); S = Dual<D>: the dual one
//     }
// or calls them qualified, saltation::sin(x). For Dual<D> arguments, argument-dependent lookup
// finds them anyway; the declarations matter for S = double.
#include <cmath>

#include "saltation/config.hpp"
#include "saltation/numeric.hpp"  // is_finite, which models use alongside these functions

namespace saltation {

template <int D>
struct Dual {
  static_assert(D >= 1, "a dual number needs at least one derivative slot");
  double v;
  double d[D];

  SALTATION_HD Dual() : v(0.0) { zero(); }
  SALTATION_HD Dual(double x) : v(x) { zero(); }  // NOLINT: implicit lift of constants is the point
  // The independent variable number `slot` with value x.
  static SALTATION_HD Dual variable(double x, int slot) {
    Dual r(x);
    r.d[slot] = 1.0;
    return r;
  }
  SALTATION_HD void zero() {
    for (int k = 0; k < D; ++k) d[k] = 0.0;
  }
  SALTATION_HD Dual& operator+=(const Dual& b) { return *this = *this + b; }
  SALTATION_HD Dual& operator-=(const Dual& b) { return *this = *this - b; }
  SALTATION_HD Dual& operator*=(const Dual& b) { return *this = *this * b; }
  SALTATION_HD Dual& operator/=(const Dual& b) { return *this = *this / b; }

  friend SALTATION_HD Dual operator+(const Dual& a) { return a; }
  friend SALTATION_HD Dual operator-(const Dual& a) {
    Dual r;
    r.v = -a.v;
    for (int k = 0; k < D; ++k) r.d[k] = -a.d[k];
    return r;
  }
  friend SALTATION_HD Dual operator+(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v + b.v;
    for (int k = 0; k < D; ++k) r.d[k] = a.d[k] + b.d[k];
    return r;
  }
  friend SALTATION_HD Dual operator-(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v - b.v;
    for (int k = 0; k < D; ++k) r.d[k] = a.d[k] - b.d[k];
    return r;
  }
  friend SALTATION_HD Dual operator*(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v * b.v;
    for (int k = 0; k < D; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
    return r;
  }
  friend SALTATION_HD Dual operator/(const Dual& a, const Dual& b) {
    Dual r;
    r.v = a.v / b.v;
    const double inv = 1.0 / b.v;
    for (int k = 0; k < D; ++k) r.d[k] = (a.d[k] - r.v * b.d[k]) * inv;
    return r;
  }
  friend SALTATION_HD Dual operator+(const Dual& a, double b) {
    Dual r = a;
    r.v = a.v + b;
    return r;
  }
  friend SALTATION_HD Dual operator+(double a, const Dual& b) {
    Dual r = b;
    r.v = a + b.v;
    return r;
  }
  friend SALTATION_HD Dual operator-(const Dual& a, double b) {
    Dual r = a;
    r.v = a.v - b;
    return r;
  }
  friend SALTATION_HD Dual operator-(double a, const Dual& b) {
    Dual r;
    r.v = a - b.v;
    for (int k = 0; k < D; ++k) r.d[k] = -b.d[k];
    return r;
  }
  friend SALTATION_HD Dual operator*(const Dual& a, double b) {
    Dual r;
    r.v = a.v * b;
    for (int k = 0; k < D; ++k) r.d[k] = a.d[k] * b;
    return r;
  }
  friend SALTATION_HD Dual operator*(double a, const Dual& b) {
    Dual r;
    r.v = a * b.v;
    for (int k = 0; k < D; ++k) r.d[k] = a * b.d[k];
    return r;
  }
  friend SALTATION_HD Dual operator/(const Dual& a, double b) {
    Dual r;
    r.v = a.v / b;
    for (int k = 0; k < D; ++k) r.d[k] = a.d[k] / b;
    return r;
  }
  friend SALTATION_HD Dual operator/(double a, const Dual& b) {
    Dual r;
    r.v = a / b.v;
    const double s = -r.v / b.v;
    for (int k = 0; k < D; ++k) r.d[k] = s * b.d[k];
    return r;
  }
  // Comparisons look at values only: branches in a model pick a smooth piece.
  friend SALTATION_HD bool operator<(const Dual& a, const Dual& b) { return a.v < b.v; }
  friend SALTATION_HD bool operator>(const Dual& a, const Dual& b) { return a.v > b.v; }
  friend SALTATION_HD bool operator<=(const Dual& a, const Dual& b) { return a.v <= b.v; }
  friend SALTATION_HD bool operator>=(const Dual& a, const Dual& b) { return a.v >= b.v; }
  friend SALTATION_HD bool operator<(const Dual& a, double b) { return a.v < b; }
  friend SALTATION_HD bool operator>(const Dual& a, double b) { return a.v > b; }
  friend SALTATION_HD bool operator<=(const Dual& a, double b) { return a.v <= b; }
  friend SALTATION_HD bool operator>=(const Dual& a, double b) { return a.v >= b; }
};

// Elementary functions for models, for plain doubles and duals alike. Models call them
// unqualified from inside namespace saltation.
SALTATION_HD inline double value_of(double x) { return x; }
SALTATION_HD inline double exp(double x) { return ::exp(x); }
SALTATION_HD inline double sqrt(double x) { return ::sqrt(x); }
SALTATION_HD inline double log(double x) { return ::log(x); }
SALTATION_HD inline double abs(double x) { return ::fabs(x); }

template <int D>
SALTATION_HD double value_of(const Dual<D>& x) {
  return x.v;
}
template <int D>
SALTATION_HD Dual<D> exp(const Dual<D>& a) {
  Dual<D> r;
  r.v = ::exp(a.v);
  for (int k = 0; k < D; ++k) r.d[k] = r.v * a.d[k];
  return r;
}
template <int D>
SALTATION_HD Dual<D> exp_by_table(const Dual<D>& a) {
  Dual<D> r;
  r.v = exp_by_table(a.v);
  for (int k = 0; k < D; ++k) r.d[k] = r.v * a.d[k];
  return r;
}
template <int D>
SALTATION_HD Dual<D> sqrt(const Dual<D>& a) {
  Dual<D> r;
  r.v = ::sqrt(a.v);
  const double s = 0.5 / r.v;
  for (int k = 0; k < D; ++k) r.d[k] = s * a.d[k];
  return r;
}
template <int D>
SALTATION_HD Dual<D> log(const Dual<D>& a) {
  Dual<D> r;
  r.v = ::log(a.v);
  for (int k = 0; k < D; ++k) r.d[k] = a.d[k] / a.v;
  return r;
}
template <int D>
SALTATION_HD Dual<D> abs(const Dual<D>& a) {
  return a.v < 0.0 ? -a : a;
}

SALTATION_HD inline double cbrt(double x) { return ::cbrt(x); }
SALTATION_HD inline double sin(double x) { return ::sin(x); }
SALTATION_HD inline double cos(double x) { return ::cos(x); }
SALTATION_HD inline double tan(double x) { return ::tan(x); }
SALTATION_HD inline double asin(double x) { return ::asin(x); }
SALTATION_HD inline double acos(double x) { return ::acos(x); }
SALTATION_HD inline double atan(double x) { return ::atan(x); }
SALTATION_HD inline double sinh(double x) { return ::sinh(x); }
SALTATION_HD inline double cosh(double x) { return ::cosh(x); }
SALTATION_HD inline double tanh(double x) { return ::tanh(x); }
SALTATION_HD inline double atan2(double y, double x) { return ::atan2(y, x); }
SALTATION_HD inline double pow(double a, double b) { return ::pow(a, b); }
SALTATION_HD inline double hypot(double a, double b) { return ::hypot(a, b); }
SALTATION_HD inline double fmin(double a, double b) { return ::fmin(a, b); }
SALTATION_HD inline double fmax(double a, double b) { return ::fmax(a, b); }

namespace detail {
// The chain rule for a function of one argument: value f(a), slope f'(a).
template <int D>
SALTATION_HD Dual<D> chain(double value, double slope, const Dual<D>& a) {
  Dual<D> r(value);
  for (int k = 0; k < D; ++k) r.d[k] = slope * a.d[k];
  return r;
}
}  // namespace detail

template <int D>
SALTATION_HD Dual<D> cbrt(const Dual<D>& a) {
  const double r = ::cbrt(a.v);
  return detail::chain(r, 1.0 / (3.0 * r * r), a);
}
template <int D>
SALTATION_HD Dual<D> sin(const Dual<D>& a) {
  return detail::chain(::sin(a.v), ::cos(a.v), a);
}
template <int D>
SALTATION_HD Dual<D> cos(const Dual<D>& a) {
  return detail::chain(::cos(a.v), -::sin(a.v), a);
}
template <int D>
SALTATION_HD Dual<D> tan(const Dual<D>& a) {
  const double r = ::tan(a.v);
  return detail::chain(r, 1.0 + r * r, a);
}
template <int D>
SALTATION_HD Dual<D> asin(const Dual<D>& a) {
  return detail::chain(::asin(a.v), 1.0 / ::sqrt(1.0 - a.v * a.v), a);
}
template <int D>
SALTATION_HD Dual<D> acos(const Dual<D>& a) {
  return detail::chain(::acos(a.v), -1.0 / ::sqrt(1.0 - a.v * a.v), a);
}
template <int D>
SALTATION_HD Dual<D> atan(const Dual<D>& a) {
  return detail::chain(::atan(a.v), 1.0 / (1.0 + a.v * a.v), a);
}
template <int D>
SALTATION_HD Dual<D> sinh(const Dual<D>& a) {
  return detail::chain(::sinh(a.v), ::cosh(a.v), a);
}
template <int D>
SALTATION_HD Dual<D> cosh(const Dual<D>& a) {
  return detail::chain(::cosh(a.v), ::sinh(a.v), a);
}
template <int D>
SALTATION_HD Dual<D> tanh(const Dual<D>& a) {
  const double r = ::tanh(a.v);
  return detail::chain(r, 1.0 - r * r, a);
}

// Two-argument functions: the Dual-Dual overload does the work; a double argument is lifted to a
// dual constant (its derivative slots are zero).
template <int D>
SALTATION_HD Dual<D> atan2(const Dual<D>& y, const Dual<D>& x) {
  Dual<D> r(::atan2(y.v, x.v));
  const double r2 = x.v * x.v + y.v * y.v;
  for (int k = 0; k < D; ++k) r.d[k] = (x.v * y.d[k] - y.v * x.d[k]) / r2;
  return r;
}
template <int D>
SALTATION_HD Dual<D> pow(const Dual<D>& a, const Dual<D>& b) {
  Dual<D> r(::pow(a.v, b.v));
  // d/da = b a^(b-1) (0 for b = 0, where a^b is constant), d/db = a^b log a (0 where a^b = 0).
  const double slope_a = b.v == 0.0 ? 0.0 : b.v * ::pow(a.v, b.v - 1.0);
  const double slope_b = r.v == 0.0 ? 0.0 : r.v * ::log(a.v);
  // Zero slots skipped: a constant exponent must not bring log of a negative base (NaN) in.
  for (int k = 0; k < D; ++k)
    r.d[k] = (a.d[k] == 0.0 ? 0.0 : slope_a * a.d[k]) + (b.d[k] == 0.0 ? 0.0 : slope_b * b.d[k]);
  return r;
}
template <int D>
SALTATION_HD Dual<D> hypot(const Dual<D>& a, const Dual<D>& b) {
  Dual<D> r(::hypot(a.v, b.v));
  if (r.v == 0.0) return r;  // the origin: zero derivatives (see the rules above)
  for (int k = 0; k < D; ++k) r.d[k] = (a.v * a.d[k] + b.v * b.d[k]) / r.v;
  return r;
}
// Ties take the first argument; a NaN argument yields the other one, as ::fmin/::fmax do.
template <int D>
SALTATION_HD Dual<D> fmin(const Dual<D>& a, const Dual<D>& b) {
  Dual<D> r = (b.v < a.v || a.v != a.v) ? b : a;
  r.v = ::fmin(a.v, b.v);
  return r;
}
template <int D>
SALTATION_HD Dual<D> fmax(const Dual<D>& a, const Dual<D>& b) {
  Dual<D> r = (b.v > a.v || a.v != a.v) ? b : a;
  r.v = ::fmax(a.v, b.v);
  return r;
}

#define SALTATION_DUAL_MIXED_ARGUMENTS(f)              \
  template <int D>                                     \
  SALTATION_HD Dual<D> f(const Dual<D>& a, double b) { \
    return f(a, Dual<D>(b));                           \
  }                                                    \
  template <int D>                                     \
  SALTATION_HD Dual<D> f(double a, const Dual<D>& b) { \
    return f(Dual<D>(a), b);                           \
  }
SALTATION_DUAL_MIXED_ARGUMENTS(atan2)
SALTATION_DUAL_MIXED_ARGUMENTS(pow)
SALTATION_DUAL_MIXED_ARGUMENTS(hypot)
SALTATION_DUAL_MIXED_ARGUMENTS(fmin)
SALTATION_DUAL_MIXED_ARGUMENTS(fmax)
#undef SALTATION_DUAL_MIXED_ARGUMENTS

}  // namespace saltation
