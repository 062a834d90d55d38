#pragma once
// Forward-mode dual numbers with a compile-time number of derivative slots. Models are
// written once over a generic scalar; evaluating them on Dual<D> gives D partial
// derivatives at once. The value part of every operation is computed exactly as the
// plain-double operation is, so a run with sensitivities follows the same trajectory.
#include <cmath>

#include "saltation/config.hpp"

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
  friend SALTATION_HD Dual operator+(const Dual& a, double b) { Dual r = a; r.v = a.v + b; return r; }
  friend SALTATION_HD Dual operator+(double a, const Dual& b) { Dual r = b; r.v = a + b.v; return r; }
  friend SALTATION_HD Dual operator-(const Dual& a, double b) { Dual r = a; r.v = a.v - b; return r; }
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

}  // namespace saltation

namespace saltation {
// Portable on host and device (no reliance on a host macro); the build never uses -ffast-math.
SALTATION_HD inline bool is_finite(double x) { return x - x == 0.0; }
}  // namespace saltation
