#pragma once
// Forward-mode dual numbers with a compile-time number of derivative slots. Models are
// written once over a generic scalar; evaluating them on Dual<D> gives D partial
// derivatives at once. The value part of every operation is computed exactly as the
// plain-double operation is, so a run with sensitivities follows the same trajectory.
// The value type T is double, or the CPU's SIMD-lane vector (lane_vec-inl.h): Dual<D, LaneVec>
// carries W trajectories' duals, each lane's bits those of Dual<D> (the operations below are
// lane-wise, and choices are made by select on comparisons, never by branches).
//
// Elementary functions (below), each for double and for Dual<D>, host and device: exp, log,
// sqrt, cbrt, abs, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, pow, hypot, fmin,
// fmax. The double overloads call the C library's ::f (under nvcc, CUDA's device math
// functions; the std:: overloads are not device functions), except fmin and fmax, written out
// below; each dual overload computes its value with its double version. CPU and GPU math
// libraries may differ in the last bits.
//
// Where a function has no derivative, the rules are:
//   abs(x) at x = 0: slope +1 (the x >= 0 piece);
//   fmin/fmax at a tie: the first argument (value and derivatives, +0 and -0 included); with one
//     NaN argument, the other one;
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
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/numeric.hpp"  // is_finite, which models use alongside these functions; select

namespace saltation {

// The double versions, first: the dual functions below call them (and a lane vector's) unqualified.
SALTATION_HD inline double value_of(double x) { return x; }
SALTATION_HD inline double exp(double x) { return ::exp(x); }
SALTATION_HD inline double sqrt(double x) { return ::sqrt(x); }
SALTATION_HD inline double log(double x) { return ::log(x); }
SALTATION_HD inline double abs(double x) { return ::fabs(x); }
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
// fmin and fmax written out, not the library's: ties take the first argument (of +0 and -0 too),
// a NaN argument yields the other one, the same bits on every backend and in the CPU's lanes
// (where the library's fmin of -0 and +0 and GCC's inline one had differed).
SALTATION_HD inline double fmin(double a, double b) { return (b < a || a != a) ? b : a; }
SALTATION_HD inline double fmax(double a, double b) { return (b > a || a != a) ? b : a; }

template <int D, class T = double>
struct Dual {
  static_assert(D >= 1, "a dual number needs at least one derivative slot");
  using Value = T;
  static constexpr int kSlots = D;
  T v;
  T d[D];

  SALTATION_HD Dual() : v(0.0) { zero(); }
  SALTATION_HD Dual(double x) : v(x) { zero(); }  // NOLINT: implicit lift of constants is the point
  template <class U = T, std::enable_if_t<!std::is_same<U, double>::value, int> = 0>
  SALTATION_HD Dual(const T& x) : v(x) {  // NOLINT: as from double
    zero();
  }
  // The independent variable number `slot` with value x.
  static SALTATION_HD Dual variable(const T& x, int slot) {
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
    const T inv = 1.0 / b.v;
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
  // A factor of the value type (a lane vector: each lane's own step size) as a double one is, not
  // lifted to a dual number, whose zero slots would turn -0 into +0 and meet inf with NaN.
  template <class U = T, std::enable_if_t<!std::is_same<U, double>::value, int> = 0>
  friend SALTATION_HD Dual operator*(const T& a, const Dual& b) {
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
    const T s = -r.v / b.v;
    for (int k = 0; k < D; ++k) r.d[k] = s * b.d[k];
    return r;
  }
  // Comparisons look at values only: branches in a model pick a smooth piece. Their outcome is
  // the value type's (bool for double, a lane mask for lane vectors).
  friend SALTATION_HD auto operator<(const Dual& a, const Dual& b) { return a.v < b.v; }
  friend SALTATION_HD auto operator>(const Dual& a, const Dual& b) { return a.v > b.v; }
  friend SALTATION_HD auto operator<=(const Dual& a, const Dual& b) { return a.v <= b.v; }
  friend SALTATION_HD auto operator>=(const Dual& a, const Dual& b) { return a.v >= b.v; }
  friend SALTATION_HD auto operator<(const Dual& a, double b) { return a.v < T(b); }
  friend SALTATION_HD auto operator>(const Dual& a, double b) { return a.v > T(b); }
  friend SALTATION_HD auto operator<=(const Dual& a, double b) { return a.v <= T(b); }
  friend SALTATION_HD auto operator>=(const Dual& a, double b) { return a.v >= T(b); }
};

template <int D, class T>
SALTATION_HD T value_of(const Dual<D, T>& x) {
  return x.v;
}
// a where m holds, else b (numeric.hpp's select, slot by slot).
template <int D, class T, class Mask>
SALTATION_HD Dual<D, T> select(const Mask& m, const Dual<D, T>& a, const Dual<D, T>& b) {
  Dual<D, T> r;
  r.v = select(m, a.v, b.v);
  for (int k = 0; k < D; ++k) r.d[k] = select(m, a.d[k], b.d[k]);
  return r;
}

namespace detail {
// The chain rule for a function of one argument: value f(a), slope f'(a).
template <int D, class T>
SALTATION_HD Dual<D, T> chain(const typename Dual<D, T>::Value& value, const typename Dual<D, T>::Value& slope,
                              const Dual<D, T>& a) {
  Dual<D, T> r(value);
  for (int k = 0; k < D; ++k) r.d[k] = slope * a.d[k];
  return r;
}
}  // namespace detail

// Elementary functions for models, for plain doubles and duals alike. Models call them
// unqualified from inside namespace saltation.
template <int D, class T>
SALTATION_HD Dual<D, T> exp(const Dual<D, T>& a) {
  const T e = exp(a.v);
  return detail::chain(e, e, a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> exp_by_table(const Dual<D, T>& a) {
  const T e = exp_by_table(a.v);
  return detail::chain(e, e, a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> sqrt(const Dual<D, T>& a) {
  const T r = sqrt(a.v);
  return detail::chain(r, 0.5 / r, a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> log(const Dual<D, T>& a) {
  Dual<D, T> r(log(a.v));
  for (int k = 0; k < D; ++k) r.d[k] = a.d[k] / a.v;
  return r;
}
template <int D, class T>
SALTATION_HD Dual<D, T> abs(const Dual<D, T>& a) {
  return select(a.v < T(0.0), -a, a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> cbrt(const Dual<D, T>& a) {
  const T r = cbrt(a.v);
  return detail::chain(r, 1.0 / (3.0 * r * r), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> sin(const Dual<D, T>& a) {
  return detail::chain(sin(a.v), cos(a.v), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> cos(const Dual<D, T>& a) {
  return detail::chain(cos(a.v), -sin(a.v), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> tan(const Dual<D, T>& a) {
  const T r = tan(a.v);
  return detail::chain(r, 1.0 + r * r, a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> asin(const Dual<D, T>& a) {
  return detail::chain(asin(a.v), 1.0 / sqrt(1.0 - a.v * a.v), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> acos(const Dual<D, T>& a) {
  return detail::chain(acos(a.v), -1.0 / sqrt(1.0 - a.v * a.v), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> atan(const Dual<D, T>& a) {
  return detail::chain(atan(a.v), 1.0 / (1.0 + a.v * a.v), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> sinh(const Dual<D, T>& a) {
  return detail::chain(sinh(a.v), cosh(a.v), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> cosh(const Dual<D, T>& a) {
  return detail::chain(cosh(a.v), sinh(a.v), a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> tanh(const Dual<D, T>& a) {
  const T r = tanh(a.v);
  return detail::chain(r, 1.0 - r * r, a);
}

// Two-argument functions: the Dual-Dual overload does the work; a double argument is lifted to a
// dual constant (its derivative slots are zero).
template <int D, class T>
SALTATION_HD Dual<D, T> atan2(const Dual<D, T>& y, const Dual<D, T>& x) {
  Dual<D, T> r(atan2(y.v, x.v));
  const T r2 = x.v * x.v + y.v * y.v;
  for (int k = 0; k < D; ++k) r.d[k] = (x.v * y.d[k] - y.v * x.d[k]) / r2;
  return r;
}
template <int D, class T>
SALTATION_HD Dual<D, T> pow(const Dual<D, T>& a, const Dual<D, T>& b) {
  Dual<D, T> r(pow(a.v, b.v));
  const T zero(0.0);
  // d/da = b a^(b-1) (0 for b = 0, where a^b is constant), d/db = a^b log a (0 where a^b = 0).
  const T slope_a = select(b.v == zero, zero, b.v * pow(a.v, b.v - 1.0));
  const T slope_b = select(r.v == zero, zero, r.v * log(a.v));
  // Zero slots skipped: a constant exponent must not bring log of a negative base (NaN) in.
  for (int k = 0; k < D; ++k)
    r.d[k] = select(a.d[k] == zero, zero, slope_a * a.d[k]) + select(b.d[k] == zero, zero, slope_b * b.d[k]);
  return r;
}
template <int D, class T>
SALTATION_HD Dual<D, T> hypot(const Dual<D, T>& a, const Dual<D, T>& b) {
  Dual<D, T> r(hypot(a.v, b.v));
  const T zero(0.0);
  const auto origin = r.v == zero;  // zero derivatives there (see the rules above)
  for (int k = 0; k < D; ++k) r.d[k] = select(origin, zero, (a.v * a.d[k] + b.v * b.d[k]) / r.v);
  return r;
}
// Ties take the first argument; a NaN argument yields the other one (the double versions above).
template <int D, class T>
SALTATION_HD Dual<D, T> fmin(const Dual<D, T>& a, const Dual<D, T>& b) {
  return select(b.v < a.v || !(a.v == a.v), b, a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> fmax(const Dual<D, T>& a, const Dual<D, T>& b) {
  return select(b.v > a.v || !(a.v == a.v), b, a);
}

#define SALTATION_DUAL_MIXED_ARGUMENTS(f)                    \
  template <int D, class T>                                  \
  SALTATION_HD Dual<D, T> f(const Dual<D, T>& a, double b) { \
    return f(a, Dual<D, T>(b));                              \
  }                                                          \
  template <int D, class T>                                  \
  SALTATION_HD Dual<D, T> f(double a, const Dual<D, T>& b) { \
    return f(Dual<D, T>(a), b);                              \
  }
SALTATION_DUAL_MIXED_ARGUMENTS(atan2)
SALTATION_DUAL_MIXED_ARGUMENTS(pow)
SALTATION_DUAL_MIXED_ARGUMENTS(hypot)
SALTATION_DUAL_MIXED_ARGUMENTS(fmin)
SALTATION_DUAL_MIXED_ARGUMENTS(fmax)
#undef SALTATION_DUAL_MIXED_ARGUMENTS

}  // namespace saltation
